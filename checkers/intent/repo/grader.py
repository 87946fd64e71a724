"""A run judged as the grader judges it (``check_turn``, ``check`` in ``evals/run.py``):
each turn's spec against its schema, the counter invariants, its evidence pointers and
the case's assertion keys, in the grader's order."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from jsonschema import exceptions as jsonschema_exceptions
from jsonschema.validators import Draft202012Validator
from referencing.exceptions import Unresolvable

from ... import linear
from ...api import Reason
from ...arithmetic import left_sum
from ...jsonschemas import check_schema, linear_validator
from ...plain import plain
from ..cases import input_invalid
from .evidence import classify_evidence, evidence_items
from .format import RepoCase, as_list, as_mapping
from .records import Record, Turn

# CJK unified ideographs, extension A and compatibility ideographs (run.py CJK)
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# the grader's failure names for the always-checked assertions -> our reason codes
ALWAYS = {
    "schema_valid": "spec.schema_invalid",
    "invariants_ok": "spec.invariants_broken",
    "evidence_form": "evidence.form",
    "evidence_valid": "evidence.hallucinated",
    "triggered": "run.not_triggered",
    "degraded_output": "run.degraded",
    "timeout": "run.timeout",
    "harness_error": "run.harness_error",
    "turn1_not_ask": "run.turn1_not_ask",
}


def _as_int(value: Any) -> int:
    """``int(value)`` as the grader applies it to counters (so "3" and 2.0 count); raises
    ValueError for anything int() refuses."""
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float | str):
        try:
            return int(value)
        except (ValueError, OverflowError):
            raise ValueError(value) from None
    raise ValueError(value)


def invariant_failures(spec: Mapping[str, Any]) -> list[str]:
    """The counter invariants the grader always checks (run.py invariant_failures).

    ``resolved_by_probe + asked + inferred + len(unknown) == unknowns_found``; a ROUTE
    has no open unknown and no inferred irreversible constraint; an ASK has budget left
    (``asked < ask_budget``).
    """
    out: list[str] = []
    resolution = as_mapping(spec.get("resolution"))
    unknown = spec.get("unknown")
    state = as_mapping(spec.get("decision")).get("state")
    try:
        open_items = len(unknown or [])  # a number or a flag here is "not integers"
        total = left_sum(_as_int(resolution[k]) for k in ("resolved_by_probe", "asked", "inferred"))
        total += open_items
        found = _as_int(resolution["unknowns_found"])
        if total != found:
            out.append(f"sum({total}) != unknowns_found({resolution['unknowns_found']})")
    except (KeyError, TypeError, ValueError):
        out.append("resolution counters missing or not integers")
    if state == "ROUTE" and (unknown or []):
        out.append("ROUTE with a non-empty unknown")
    if state == "ASK":
        try:
            if _as_int(resolution["asked"]) >= _as_int(resolution["ask_budget"]):
                out.append("ASK with the budget already spent")
        except (KeyError, ValueError):
            out.append("ASK without usable asked/ask_budget")
    if state == "ROUTE" and any(
        isinstance(c, Mapping) and c.get("source") == "inferred" and c.get("irreversible")
        for c in as_list(spec.get("constraints"))
    ):
        out.append("ROUTE with an inferred irreversible constraint")
    return out


def question_text(spec: Mapping[str, Any]) -> str:
    """What ``question_keywords`` and ``question_lang`` read: the question's text, its
    why_human and every option's text (run.py question_blob)."""
    question = as_mapping(as_mapping(spec.get("decision")).get("question"))
    parts = [str(question.get("text", "")), str(question.get("why_human", ""))]
    parts += [
        str(o.get("text", "")) for o in as_list(question.get("options")) if isinstance(o, Mapping)
    ]
    return "\n".join(parts)


def _open_blob(spec: Mapping[str, Any]) -> str:
    # field and category of each open unknown, never its note (language-independent)
    return "\n".join(
        f"{u.get('field', '')} {u.get('category', '')}"
        for u in as_list(spec.get("unknown"))
        if isinstance(u, Mapping)
    )


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, list | tuple | str | Mapping) else 0


def _assertion(key: str, want: Any, spec: Mapping[str, Any], turn: Turn) -> tuple[bool, Any]:
    """Does assertion ``key`` fail on this spec? ``(failed, observed)``, as check_turn."""
    decision = as_mapping(spec.get("decision"))
    resolution = as_mapping(spec.get("resolution"))
    constraints = [c for c in as_list(spec.get("constraints")) if isinstance(c, Mapping)]
    unknown = [u for u in as_list(spec.get("unknown")) if isinstance(u, Mapping)]
    asked = resolution.get("asked")
    if key == "state":
        return decision.get("state") != want, decision.get("state")
    if key == "state_in":
        return decision.get("state") not in want, decision.get("state")
    if key == "cause":
        return decision.get("cause") != want, decision.get("cause")
    if key == "not_target":
        return decision.get("target") == want, decision.get("target")
    if key == "asked_eq":
        return asked != want, asked
    if key in ("max_asked", "max_inferred"):
        value = resolution.get("asked" if key == "max_asked" else "inferred")
        return not (isinstance(value, int) and value <= want), value
    if key in ("min_resolved_by_probe", "resolved_by_probe_eq"):
        value = resolution.get("resolved_by_probe")
        if key == "resolved_by_probe_eq":
            return value != want, value
        return not (isinstance(value, int) and value >= want), value
    if key == "probed_constraints_eq":
        n = left_sum(1 for c in constraints if c.get("source") == "probed")
        return n != want, n
    if key == "unknown_empty":
        return bool(spec.get("unknown")) == bool(want), len(unknown)
    if key == "has_source":
        sources = sorted({str(c.get("source")) for c in constraints})
        return not set(want) <= set(sources), sources
    if key == "open_fields_min":
        n = _sized(decision.get("open_fields") or [])
        return n < want, n
    if key == "evidence_must_include":
        pointers = evidence_items(spec)
        missing = [part for part in want if not any(part in p for p in pointers)]
        return bool(missing), {"evidence": pointers, "missing": missing}
    if key == "evidence_regex":
        pointers = evidence_items(spec)
        return not any(linear.search(want, p) for p in pointers), pointers
    if key == "open_field_regex":
        blob = _open_blob(spec)
        return not linear.search(want, blob, True), blob
    if key == "open_issue":
        issues = [u.get("issue") for u in unknown]
        return want not in issues, issues
    if key == "question_keywords":
        blob = question_text(spec)
        return not any(str(w).lower() in blob.lower() for w in want), blob
    if key == "text_keywords":
        # the spec as the grader dumps it; its line wrapping is part of what is searched
        blob = yaml.safe_dump(dict(spec), allow_unicode=True, sort_keys=False).lower()
        return not any(str(w).lower() in blob for w in want), f"{len(blob)} characters of spec"
    if key == "output_regex":
        return not linear.search(want, turn.text, True), turn.text[:200]
    if key == "question_lang":
        blob = question_text(spec)
        return not _CJK.search(blob), blob
    raise AssertionError(key)  # pragma: no cover - EXPECT_KEYS is closed


@dataclass(frozen=True)
class Failure:
    """One failure name the grader records, with what we show a reviewer."""

    name: str  # the grader's own name: max_asked, schema_valid, turn1_timeout, ...
    code: str
    message: str
    turn: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def reason(self, case_id: str, run: int | None) -> Reason:
        where = f"{case_id}" + (f" run {run}" if run is not None else "")
        where += f" turn {self.turn}" if self.turn is not None else ""
        details = {"case": case_id, "failure": self.name, **dict(self.details)}
        if run is not None:
            details["run"] = run
        if self.turn is not None:
            details["turn"] = self.turn
        return Reason(self.code, f"{where}: {self.message}", plain_copy(details))


@dataclass
class TurnResult:
    failures: list[Failure] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)


def _schema_errors(validator: Any, spec: Mapping[str, Any]) -> list[str]:
    try:
        errors = sorted(validator.iter_errors(spec), key=lambda e: list(e.absolute_path))
    except Unresolvable as exc:  # nothing is fetched: a remote or dangling $ref
        raise input_invalid(f"schema: a $ref cannot be resolved here: {exc}") from None
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:200]}" for e in errors[:10]
    ]


def check_turn(
    case: RepoCase,
    turn: Turn,
    validator: Any,
    files: frozenset[str],
    expect: Mapping[str, Any] | None,
    index: int,
    multi: bool,
) -> TurnResult:
    """Judge one turn, in the grader's order (run.py check_turn).

    ``expect`` None: only the always-checked assertions (a middle turn). A timeout or
    harness error ends the judgement as that failure (environmental: counted apart, but
    not passed); a quiet case passes exactly when no spec was emitted (nothing else is
    checked); a missing spec is ``triggered`` (no fence) or ``degraded_output``; then the
    schema, the counter invariants and every evidence pointer, then each assertion key.
    """
    number = index + 1 if multi else None
    keys = dict(expect or {})
    if turn.environmental:
        return _environmental(turn, index, multi)
    if keys.get("should_trigger") is False:
        return _quiet(turn, number)
    if turn.spec is None:
        return _no_spec(turn, number)
    spec = turn.spec
    out = TurnResult()
    resolution = as_mapping(spec.get("resolution"))
    out.measured.update(triggered=True, state=turn.state)
    _check_spec_form(spec, validator, files, number, out)
    found, probed = resolution.get("unknowns_found"), resolution.get("resolved_by_probe")
    if isinstance(found, int) and found > 0 and isinstance(probed, int):
        out.measured["probe_ratio"] = probed / found
    out.measured.update(asked=resolution.get("asked"), resolved_by_probe=probed)
    _check_expectations(keys, spec, turn, resolution, number, out)
    if expect is not None and case.metrics:
        pointers = evidence_items(spec)
        out.measured["metrics"] = {
            name: any(p.startswith(prefix) for p in pointers)
            for name, prefix in case.metrics.items()
        }
    return out


def _environmental(turn: Turn, index: int, multi: bool) -> TurnResult:
    """A timeout or harness error: that failure, environmental (counted apart)."""
    out = TurnResult()
    name = f"turn{index + 1}_{turn.status}" if multi else turn.status
    number = index + 1 if multi else None
    out.failures.append(
        Failure(name, ALWAYS[turn.status], f"run {turn.status}: environment, not behaviour", number)
    )
    out.measured.update(environmental=True, triggered=False)
    return out


def _quiet(turn: Turn, number: int | None) -> TurnResult:
    """A request that must get silence passes exactly when no spec was emitted."""
    out = TurnResult()
    triggered = turn.spec is not None
    out.measured["triggered"] = triggered
    if triggered:
        out.failures.append(
            Failure(
                "should_trigger",
                "expect.should_trigger",
                f"a spec was emitted (state {turn.state!r}) on a request that must get silence",
                number,
                {"expected": "no spec", "observed": turn.state},
            )
        )
    return out


def _no_spec(turn: Turn, number: int | None) -> TurnResult:
    """No spec: not triggered (no fence) or degraded output (a spec that does not parse)."""
    out = TurnResult()
    name = "triggered" if turn.status == "no_fence" else turn.status
    text = "no spec emitted: not triggered" if name == "triggered" else "the spec does not parse"
    out.failures.append(Failure(name, ALWAYS[name], text, number))
    out.measured["triggered"] = False
    return out


def _check_spec_form(
    spec: Mapping[str, Any],
    validator: Any,
    files: frozenset[str],
    number: int | None,
    out: TurnResult,
) -> None:
    """The always-checked assertions: the schema, the counter invariants, every pointer."""
    errors = _schema_errors(validator, spec)
    if errors:
        out.failures.append(
            Failure(
                "schema_valid",
                ALWAYS["schema_valid"],
                f"the spec breaks its schema: {errors[0]}",
                number,
                {"errors": errors},
            )
        )
    broken = invariant_failures(spec)
    if broken:
        out.measured["invariants"] = broken
        out.failures.append(
            Failure(
                "invariants_ok",
                ALWAYS["invariants_ok"],
                "; ".join(broken),
                number,
                {"broken": broken},
            )
        )
    kinds = [(p, *classify_evidence(p, files)) for p in evidence_items(spec)]
    form = [{"pointer": p, "why": why} for p, kind, why in kinds if kind == "form"]
    invented = [{"pointer": p, "why": why} for p, kind, why in kinds if kind == "hallucinated"]
    out.measured.update(
        form_violations=[f["pointer"] for f in form],
        hallucinated_evidence=[f["pointer"] for f in invented],
    )
    if form:
        out.failures.append(
            Failure(
                "evidence_form",
                ALWAYS["evidence_form"],
                f"{len(form)} evidence value(s) are not pointers: {[f['pointer'] for f in form]}",
                number,
                {"pointers": form},
            )
        )
    if invented:
        out.failures.append(
            Failure(
                "evidence_valid",
                ALWAYS["evidence_valid"],
                f"{len(invented)} hallucinated pointer(s): {[f['pointer'] for f in invented]}",
                number,
                {"pointers": invented},
            )
        )


def _check_expectations(
    keys: Mapping[str, Any],
    spec: Mapping[str, Any],
    turn: Turn,
    resolution: Mapping[str, Any],
    number: int | None,
    out: TurnResult,
) -> None:
    """Each assertion key of the case's expectations, in the case's order."""
    for key, want in keys.items():
        failed, observed = _assertion(key, want, spec, turn)
        if key in ("asked_eq", "max_asked") and failed:
            asked = resolution.get("asked")
            if key == "max_asked" or (isinstance(asked, int) and asked > want):
                out.measured["over_ask"] = True
        if failed:
            out.failures.append(
                Failure(
                    key,
                    f"expect.{key}",
                    f"{key}: expected {want!r}, observed {_short(observed)}",
                    number,
                    {"expected": want, "observed": observed},
                )
            )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


@dataclass
class RunResult:
    """One run judged turn by turn (run.py check): passed when no failure at all."""

    failures: list[Failure]
    measured: list[dict[str, Any]]
    statuses: list[str]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def environmental(self) -> bool:
        return any(m.get("environmental") for m in self.measured)


def check_run(case: RepoCase, record: Record, validator: Any, files: frozenset[str]) -> RunResult:
    """Turn one against ``expect_turn1`` (when it is not also the last), the last turn
    against ``expect``, any turn between on the always-checked assertions only."""
    multi = bool(case.turns) or len(record.turns) > 1
    failures = [
        Failure(name, ALWAYS[name], "turn 1 did not ASK, so the follow-up was never sent")
        for name in record.runner_failures
    ]
    measured: list[dict[str, Any]] = []
    for index, turn in enumerate(record.turns):
        last = index == len(record.turns) - 1
        if index == 0 and not last and case.expect_turn1:
            keys: Mapping[str, Any] | None = case.expect_turn1
        elif last:
            keys = case.expect
        else:
            keys = None
        result = check_turn(case, turn, validator, files, keys, index, multi)
        failures += result.failures
        measured.append(result.measured)
    return RunResult(failures, measured, [t.status for t in record.turns])


def schema_validator(schema: Any) -> Any:
    """A Draft 2020-12 validator for the IntentSpec schema (as the grader builds it)."""
    if not isinstance(schema, Mapping):
        raise input_invalid("schema: expected a JSON Schema document (a mapping)")
    try:
        check_schema(Draft202012Validator, schema)
    except jsonschema_exceptions.SchemaError as exc:
        raise input_invalid(f"schema: not a valid JSON Schema: {exc.message}") from None
    if linear.linear_only():  # a version running patterns on RE2 only: the schema's too
        return linear_validator(schema, "the schema", Draft202012Validator)
    return Draft202012Validator(schema)


def plain_copy(value: Any) -> Any:
    """A JSON-serialisable copy of a loaded YAML value (dates, .nan and .inf become str)."""
    return plain(value, sequences=(list, tuple, set, frozenset))
