"""The runner's records of a run: its turns (the parsed spec, the status, the reply text)
and its own failures, checked against the runner's rule for turn one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cases import input_invalid
from .format import RepoCase, as_mapping

TURN_STATUSES = ("ok", "no_fence", "degraded_output", "timeout", "harness_error")
ENVIRONMENTAL = ("timeout", "harness_error")
RUNNER_FAILURES = ("turn1_not_ask",)
_RECORD_KEYS = {"turns", "runner_failures", "raw", "workspace_fixture"}
_TURN_KEYS = {"spec", "status", "text", "stderr", "exit"}


@dataclass(frozen=True)
class Turn:
    """One session of a run, as the runner keeps it."""

    spec: Mapping[str, Any] | None
    status: str
    text: str = ""

    @property
    def environmental(self) -> bool:
        return self.status in ENVIRONMENTAL

    @property
    def state(self) -> Any:
        decision = as_mapping(self.spec.get("decision")) if self.spec is not None else {}
        return decision.get("state")


@dataclass(frozen=True)
class Record:
    """One run of one case: its turns and the runner's own failures."""

    turns: tuple[Turn, ...]
    runner_failures: tuple[str, ...] = ()


def _turn(raw: Any, where: str) -> Turn:
    if not isinstance(raw, Mapping):
        raise input_invalid(f"{where}: expected a mapping {{spec, status, text}}")
    unknown = sorted(str(k) for k in raw if k not in _TURN_KEYS)
    if unknown:
        raise input_invalid(f"{where}: unknown key(s) {unknown} (a turn has {sorted(_TURN_KEYS)})")
    status = raw.get("status", "no_fence")  # grader: turn.get("status", "no_fence")
    if status not in TURN_STATUSES:
        raise input_invalid(
            f"{where}.status: expected one of {list(TURN_STATUSES)}, observed {status!r}"
        )
    spec = raw.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise input_invalid(f"{where}.spec: expected the parsed spec (a mapping) or null")
    if status == "ok" and spec is None:
        raise input_invalid(f"{where}: status ok needs the parsed spec")
    if status in ("no_fence", "degraded_output") and spec is not None:
        raise input_invalid(
            f"{where}: status {status} means no spec was parsed, but one is recorded"
        )
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise input_invalid(f"{where}.text: expected the reply text (a string)")
    for key, kind in (("stderr", str), ("exit", int)):
        if key in raw and (not isinstance(raw[key], kind) or isinstance(raw[key], bool)):
            raise input_invalid(f"{where}.{key}: expected {kind.__name__}")
    return Turn(spec, status, text)


def parse_record(raw: Any, case: RepoCase, where: str) -> Record:
    """A run as the runner records it, checked against the runner's rules for turns.

    Either the full record ``{turns: [...], runner_failures: [...]}`` (what
    ``run_case_once`` returns) or one bare turn ``{spec, status, text}`` (the shape the
    grader's selftest judges, schema examples included). In the full record the runner's
    rule for turn one holds: the follow-up turns are sent only when turn one ASKed and did
    not die environmentally, and otherwise ``turn1_not_ask`` is recorded (computed when
    ``runner_failures`` is left out); a full record that contradicts the rule was not made
    by the runner and is refused. A bare turn carries no runner failure, as in the grader's
    ``check`` (it is then judged as the last turn, against ``expect``).
    """
    if not isinstance(raw, Mapping):
        raise input_invalid(f"{where}: expected a record (a mapping)")
    if "turns" in raw:
        unknown = sorted(str(k) for k in raw if k not in _RECORD_KEYS)
        if unknown:
            raise input_invalid(f"{where}: unknown key(s) {unknown}")
        if not isinstance(raw["turns"], list) or not raw["turns"]:
            raise input_invalid(f"{where}.turns: expected a non-empty list of turns")
        turns = tuple(_turn(t, f"{where}.turns[{i}]") for i, t in enumerate(raw["turns"]))
        fixture = raw.get("workspace_fixture", case.fixture)
        if fixture != case.fixture:
            raise input_invalid(
                f"{where}.workspace_fixture: the run used fixture {fixture!r}, "
                f"case {case.id} names {case.fixture!r}"
            )
        recorded = raw.get("runner_failures")
    else:
        return Record((_turn(raw, where),))
    return runner_rule(turns, case, recorded, where)


def runner_rule(turns: tuple[Turn, ...], case: RepoCase, recorded: Any, where: str) -> Record:
    """A full run checked against the runner's rule for turns (see ``parse_record``)."""
    if recorded is not None and (
        not isinstance(recorded, list) or not all(f in RUNNER_FAILURES for f in recorded)
    ):
        raise input_invalid(
            f"{where}.runner_failures: expected a list of {list(RUNNER_FAILURES)}, "
            f"observed {recorded!r}"
        )
    if len(turns) > 1 + len(case.turns):
        raise input_invalid(
            f"{where}: {len(turns)} turns recorded, the case has {len(case.turns)} follow-up "
            f"answer(s), so the runner sends at most {1 + len(case.turns)}"
        )
    first = turns[0]
    stopped = bool(case.turns) and not first.environmental and first.state != "ASK"
    if stopped and len(turns) > 1:
        raise input_invalid(
            f"{where}: turn 1 did not ASK (state {first.state!r}), so the runner sends no "
            "follow-up, yet later turns are recorded"
        )
    expected = ["turn1_not_ask"] if stopped else []
    if recorded is not None and sorted(recorded) != expected:
        raise input_invalid(
            f"{where}.runner_failures: the runner's rule for turn one gives {expected}, "
            f"the record says {recorded}"
        )
    return Record(turns, tuple(expected))


def parse_records(doc: Any, cases: Sequence[RepoCase]) -> dict[str, list[Record] | None]:
    """``{case id: record | [record, ...] (repeats) | null (not run)}``; unknown ids refused."""
    if not isinstance(doc, Mapping) or not doc:
        raise input_invalid(
            "outputs: expected a mapping of case id -> the runner's record (or a list of "
            "records for repeats, or null for a case not run)"
        )
    by_id = {c.id: c for c in cases}
    stray = sorted(str(k) for k in doc if k not in by_id)
    if stray:
        raise input_invalid(f"outputs: record(s) for case(s) not in cases.yaml: {stray}")
    out: dict[str, list[Record] | None] = {}
    for cid, value in doc.items():
        if value is None:
            out[cid] = None
            continue
        runs = value if isinstance(value, list) else [value]
        if not runs:
            raise input_invalid(f"outputs.{cid}: an empty list of runs (use null for not run)")
        many = len(runs) > 1
        out[cid] = [
            parse_record(r, by_id[cid], f"outputs.{cid}" + (f"[{i}]" if many else ""))
            for i, r in enumerate(runs)
        ]
    return out
