"""The Intent-Router repository's own eval format, judged as its grader judges it (seed 004).

``intent-expectations@1`` was built from the article alone, on cases reconstructed in its
shapes. The repository's ``evals/`` folder is public: its ``cases.yaml``, its grader
``evals/run.py`` and its ``evals/README.md``. This module reads that ``cases.yaml`` as it is
and judges a recorded run the way that grader does, rule for rule; the ``@2`` checkers in
``checkers/intent/expectations.py`` are thin views over it. Nothing of the repository is
copied here: the rules are restated from reading the grader (``check_turn``, ``check``,
``invariant_failures``, ``render_report`` in ``evals/run.py`` at commit 0843d82) and its
README, and every place this module knowingly differs from the grader is said where it
happens (search for "grader:").

Vocabulary, as the grader uses it:

- a **case** is one item of ``cases.yaml``: ``id``, ``prompt``, ``mode``, ``fixture``,
  optional follow-up ``turns``, ``expect`` (judged on the last turn), ``expect_turn1`` (on
  the first turn of a multi-turn case) and ``metrics`` (measured, never judged);
- a **record** is what the runner keeps of one run of a case: its ``turns``, each with the
  ``spec`` parsed out of the reply's last ``yaml`` fence (or null), the turn ``status``
  (``ok``, ``no_fence``, ``degraded_output``, ``timeout``, ``harness_error``) and the reply
  ``text``, plus the ``runner_failures`` (``turn1_not_ask``);
- a **failure** is one name the grader appends: an assertion key (``max_asked``), an
  always-checked one (``schema_valid``, ``invariants_ok``, ``evidence_form``,
  ``evidence_valid``, ``triggered``, ``degraded_output``) or an environmental one
  (``timeout``, ``harness_error``, ``turn1_timeout``...). A run passes when it has none.

Pure: loaded data in, values out; malformed input raises ``CheckerInputError``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from jsonschema import exceptions as jsonschema_exceptions
from jsonschema.validators import Draft202012Validator
from referencing.exceptions import Unresolvable

from ...api import Reason
from ...jsonschemas import check_schema
from ...plain import plain
from ..cases import input_invalid

# --------------------------------------------------------------------------- the format

# Keys a case may carry (run.py CASE_KEYS) and the assertion keys the grader evaluates
# (run.py EXPECT_KEYS, check_turn); a key outside these is refused by name, as the
# grader's validate_cases refuses it at load time.
CASE_KEYS = ("id", "prompt", "mode", "fixture", "turns", "expect", "expect_turn1", "metrics")
TURN_STATUSES = ("ok", "no_fence", "degraded_output", "timeout", "harness_error")
ENVIRONMENTAL = ("timeout", "harness_error")
RUNNER_FAILURES = ("turn1_not_ask",)
_RECORD_KEYS = {"turns", "runner_failures", "raw", "workspace_fixture"}
_TURN_KEYS = {"spec", "status", "text", "stderr", "exit"}

# evidence pointers that are not workspace paths and need no file (run.py EVIDENCE_TOKEN_OK,
# decision 6/7): git:<sha 7-40 hex> | git:#<pr> | user:delegated | record:<system>/<id>...
# | doc:<slug>[#section]; and the general pointer path[:line[-line]][#anchor]
_RESERVED = (
    r"git:(?:#\d+|[0-9a-f]{7,40})",
    r"user:delegated",
    r"record:[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)+",
    r"doc:[A-Za-z0-9._-]+(?:#\S+)?",
)
_POINTER = r"[^\s:#]+(?::\d+(?:-\d+)?)?(?:#\S+)?"
# ``$`` as the grader writes it: it also matches before one trailing newline
_TOKEN = re.compile("^(?:" + "|".join((*_RESERVED, _POINTER)) + ")$")
_RESERVED_PREFIXES = ("git:", "record:", "doc:")
# tokens that parse but are not repository content: the root, git internals, the
# installed skill copies, the skill's saved specs, the harness config (NON_POINTER_*)
NOT_POINTERS_EXACT = (".",)
NOT_POINTER_PREFIXES = ("./", ".git/", ".claude/", ".agents/", ".intent/", "opencode.json")
# ``ns:rest`` where ns has no "/" and no ".": a namespace, unless ``ns`` is a file and
# ``rest`` a line number (``Makefile:3``)
_NAMESPACE = re.compile(r"^([A-Za-z0-9._-]+):(.+)$")
_LINES = re.compile(r"\d+(?:-\d+)?")
_LINE_SUFFIX = re.compile(r":\d+(?:-\d+)?\s*$")
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


def _int(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"expected a whole number >= 0, observed {value!r}"
    return None


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, observed {value!r}"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else f"expected a string, observed {value!r}"


def _regex(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return f"expected a regular expression (a string), observed {value!r}"
    try:
        re.compile(value)
    except re.error as exc:
        return f"{value!r} is not a regular expression: {exc}"
    return None


def _strings(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        return f"expected a list of strings, observed {value!r}"
    if not value:
        return "an empty list checks nothing"
    return None


def _words(value: Any) -> str | None:
    # the grader compares str(w): an unquoted 420 in YAML is the word "420"
    ok = isinstance(value, list) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) and str(v) for v in value
    )
    if not ok:
        return f"expected a list of words, observed {value!r}"
    if not value:
        return "an empty list can never match (the grader passes on ANY match)"
    return None


def _lang(value: Any) -> str | None:
    # grader: only "zh" is checked; any other value would check nothing, so it is refused
    if value != "zh":
        return f"the grader checks only question_lang: zh (CJK in the question); observed {value!r}"
    return None


EXPECT_KEYS: Mapping[str, Callable[[Any], str | None]] = {
    "should_trigger": _bool,
    "state": _text,
    "state_in": _strings,
    "cause": _text,
    "asked_eq": _int,
    "max_asked": _int,
    "min_resolved_by_probe": _int,
    "resolved_by_probe_eq": _int,
    "probed_constraints_eq": _int,
    "max_inferred": _int,
    "unknown_empty": _bool,
    "has_source": _strings,
    "open_fields_min": _int,
    "evidence_must_include": _strings,
    "evidence_regex": _regex,
    "question_keywords": _words,
    "text_keywords": _words,
    "output_regex": _regex,
    "question_lang": _lang,
    "not_target": _text,
    "open_field_regex": _regex,
    "open_issue": _text,
}


@dataclass(frozen=True)
class RepoCase:
    """One item of the repository's ``cases.yaml``."""

    id: str
    fixture: str
    expect: Mapping[str, Any]
    expect_turn1: Mapping[str, Any] | None = None
    turns: tuple[str, ...] = ()
    metrics: Mapping[str, str] = field(default_factory=dict)

    @property
    def spec_expected(self) -> bool:
        """False only for a quiet case (``should_trigger: false``): silence is the pass."""
        return self.expect.get("should_trigger") is not False


def _expect_block(value: Any, where: str, problems: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append(f"{where}: must be a mapping of assertion keys")
        return {}
    block: dict[str, Any] = {}
    for key, want in value.items():
        check = EXPECT_KEYS.get(str(key))
        if check is None:
            problems.append(
                f"{where}: unknown assertion key {key!r} (neither this checker nor the "
                "grader evaluates it; a misspelt key would otherwise check nothing)"
            )
            continue
        why = check(want)
        if why:
            problems.append(f"{where}.{key}: {why}")
        block[str(key)] = want
    if block.get("should_trigger") is False and len(block) > 1:
        others = sorted(k for k in block if k != "should_trigger")
        problems.append(
            f"{where}: should_trigger: false ends the judgement (silence is the pass), so "
            f"{others} would never be checked; remove them or make it a case that expects a spec"
        )
    return block


def parse_cases(doc: Any) -> list[RepoCase]:
    """The repository's ``cases.yaml`` (a list of cases) as cases; every problem at once.

    Refused, naming each one: a case without an id or with an id used twice, an unknown
    case key or assertion key, an assertion value of the wrong type, a regex that does
    not compile, ``expect_turn1`` on a case without ``turns``, keys beside
    ``should_trigger: false``, and a fixture or metric that is not a string.
    """
    if not isinstance(doc, list):
        raise input_invalid("cases: expected the list of cases of cases.yaml")
    if not doc:
        raise input_invalid("cases: no case: nothing to judge is not a pass")
    problems: list[str] = []
    cases: list[RepoCase] = []
    seen: set[str] = set()
    for index, raw in enumerate(doc):
        if not isinstance(raw, Mapping):
            problems.append(f"case #{index + 1}: expected a mapping")
            continue
        cid = raw.get("id")
        if not isinstance(cid, str) or not cid:
            problems.append(f"case #{index + 1}: case has no id (a non-empty string)")
            continue
        if cid in seen:
            problems.append(f"{cid}: id used twice")
        seen.add(cid)
        problems += [f"{cid}: unknown case key {k!r}" for k in raw if k not in CASE_KEYS]
        fixture = raw.get("fixture", "empty")
        if not isinstance(fixture, str) or not fixture:
            problems.append(f"{cid}.fixture: expected a fixture name, observed {fixture!r}")
            fixture = "empty"
        turns = raw.get("turns") or []
        if not isinstance(turns, list) or not all(
            isinstance(t, str | int | float) and not isinstance(t, bool) for t in turns
        ):
            problems.append(f"{cid}.turns: expected a list of follow-up answers")
            turns = []
        metrics = raw.get("metrics") or {}
        if not isinstance(metrics, Mapping) or not all(
            isinstance(v, str) for v in metrics.values()
        ):
            problems.append(f"{cid}.metrics: expected a mapping of name -> evidence prefix")
            metrics = {}
        expect = _expect_block(raw.get("expect"), f"{cid}.expect", problems)
        first = None
        if "expect_turn1" in raw:
            first = _expect_block(raw["expect_turn1"], f"{cid}.expect_turn1", problems)
            if not turns:
                problems.append(
                    f"{cid}.expect_turn1: applies to the first turn of a multi-turn case; "
                    "without turns the grader never checks it"
                )
        cases.append(
            RepoCase(
                cid,
                fixture,
                expect,
                first or None,
                tuple(str(t) for t in turns),
                {str(k): v for k, v in metrics.items()},
            )
        )
    if problems:
        raise input_invalid("cases.yaml: " + "; ".join(problems))
    return cases


# --------------------------------------------------------------------------- records


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
        decision = _mapping(self.spec.get("decision")) if self.spec is not None else {}
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


# --------------------------------------------------------------------------- evidence


def evidence_items(spec: Mapping[str, Any]) -> list[str]:
    """Every evidence value of the spec: constraints, then trace steps (falsy ones skipped)."""
    items: list[str] = []
    for key in ("constraints", "trace"):
        for entry in _list(spec.get(key)):
            if isinstance(entry, Mapping) and entry.get("evidence"):
                items.append(str(entry["evidence"]))
    return items


def classify_evidence(pointer: str, files: frozenset[str]) -> tuple[str, str]:
    """``(kind, why)`` for one evidence value: ``path``, ``reserved``, ``form`` or
    ``hallucinated`` (only the last fails the whole suite).

    As the grader (run.py check_turn, decision 7): form is decided by a whitelist first —
    a single whitespace-free token in one of the reserved forms or ``path[:line[-line]]
    [#anchor]``, and not the repository root, ``./...``, ``.git/``, ``.claude/``,
    ``.agents/``, ``.intent/`` or ``opencode.json``. ``ns:digits`` whose ``ns`` (no "/",
    no ".") is not a file is a mistyped namespace (form, never a hallucination);
    ``ns:other`` is a form violation. Then a path (anchor and line range removed) that is
    not a file of the workspace is a hallucination. Line numbers are never compared with
    the file's length, and a folder is not a file.
    """
    if " " in pointer or not _TOKEN.match(pointer):
        return "form", "not a single pointer token (prose, or no form the grader allows)"
    if pointer in NOT_POINTERS_EXACT or pointer.startswith(NOT_POINTER_PREFIXES):
        return (
            "form",
            "the repository root, .git/, a skill copy, a saved spec or the harness config",
        )
    if pointer.startswith(_RESERVED_PREFIXES) or pointer == "user:delegated":
        return "reserved", "a reserved non-path form"
    shape = _NAMESPACE.match(pointer)
    if shape and "/" not in shape[1] and "." not in shape[1]:
        if not _LINES.fullmatch(shape[2]):
            return "form", f"unknown namespace {shape[1]!r}"
        if shape[1] not in files:
            return "form", f"{shape[1]!r} is neither a file nor a known namespace"
    path = _LINE_SUFFIX.sub("", pointer.split("#", 1)[0]).strip()
    if path in files:
        return "path", ""
    return "hallucinated", f"no file {path} in the workspace"


def workspace_files(tree: Any, fixture: str) -> frozenset[str]:
    """The files evidence may name: the fixture's files, ``.git/`` internals excluded.

    The grader checks against a freshly prepared workspace; what it adds besides the
    fixture (``.git/``, the skill copies, ``opencode.json``) is excluded from evidence
    by form, so the fixture's own files are the whole set. ``empty`` has none.
    """
    if fixture == "empty":
        return frozenset()
    if not isinstance(tree, Mapping):
        raise input_invalid(f"fixture: case fixture {fixture!r} needs the fixture folder input")
    prefix = fixture + "/"
    files = frozenset(
        path[len(prefix) :]
        for path in tree
        if isinstance(path, str)
        and path.startswith(prefix)
        and not path.startswith(prefix + ".git/")
    )
    if not files:
        raise input_invalid(f"fixture not found: no files under {prefix} in the fixture folder")
    return files


# --------------------------------------------------------------------------- judging


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


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
    resolution = _mapping(spec.get("resolution"))
    unknown = spec.get("unknown")
    state = _mapping(spec.get("decision")).get("state")
    try:
        open_items = len(unknown or [])  # a number or a flag here is "not integers"
        total = sum(_as_int(resolution[k]) for k in ("resolved_by_probe", "asked", "inferred"))
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
        for c in _list(spec.get("constraints"))
    ):
        out.append("ROUTE with an inferred irreversible constraint")
    return out


def question_text(spec: Mapping[str, Any]) -> str:
    """What ``question_keywords`` and ``question_lang`` read: the question's text, its
    why_human and every option's text (run.py question_blob)."""
    question = _mapping(_mapping(spec.get("decision")).get("question"))
    parts = [str(question.get("text", "")), str(question.get("why_human", ""))]
    parts += [
        str(o.get("text", "")) for o in _list(question.get("options")) if isinstance(o, Mapping)
    ]
    return "\n".join(parts)


def _open_blob(spec: Mapping[str, Any]) -> str:
    # field and category of each open unknown, never its note (language-independent)
    return "\n".join(
        f"{u.get('field', '')} {u.get('category', '')}"
        for u in _list(spec.get("unknown"))
        if isinstance(u, Mapping)
    )


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, list | tuple | str | Mapping) else 0


def _assertion(key: str, want: Any, spec: Mapping[str, Any], turn: Turn) -> tuple[bool, Any]:
    """Does assertion ``key`` fail on this spec? ``(failed, observed)``, as check_turn."""
    decision = _mapping(spec.get("decision"))
    resolution = _mapping(spec.get("resolution"))
    constraints = [c for c in _list(spec.get("constraints")) if isinstance(c, Mapping)]
    unknown = [u for u in _list(spec.get("unknown")) if isinstance(u, Mapping)]
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
        n = sum(1 for c in constraints if c.get("source") == "probed")
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
        return not any(re.search(want, p) for p in pointers), pointers
    if key == "open_field_regex":
        blob = _open_blob(spec)
        return not re.search(want, blob, re.IGNORECASE), blob
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
        return not re.search(want, turn.text, re.IGNORECASE), turn.text[:200]
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
        return Reason(self.code, f"{where}: {self.message}", _plain(details))


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
    resolution = _mapping(spec.get("resolution"))
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


@dataclass
class CaseResult:
    """A case's verdict over its runs (more than half must pass), or not run."""

    case: RepoCase
    runs: list[RunResult] | None  # None: never dispatched (the runner's early stop)

    @property
    def verdict(self) -> bool | None:
        if self.runs is None:
            return None
        return sum(r.passed for r in self.runs) >= len(self.runs) // 2 + 1

    @property
    def pass_count(self) -> int:
        return sum(r.passed for r in self.runs or [])

    def reasons(self) -> list[Reason]:
        many = self.runs is not None and len(self.runs) > 1
        return [
            f.reason(self.case.id, i + 1 if many else None)
            for i, run in enumerate(self.runs or [])
            for f in run.failures
        ]

    @property
    def failure_names(self) -> list[str]:
        return sorted({f.name for r in self.runs or [] for f in r.failures})

    def to_dict(self) -> dict[str, Any]:
        runs = self.runs or []
        row: dict[str, Any] = _plain(
            {
                "case": self.case.id,
                "fixture": self.case.fixture,
                "result": {True: "pass", False: "fail", None: "not run"}[self.verdict],
                "passed_runs": f"{self.pass_count}/{len(runs)}" if self.runs is not None else None,
                "failed_assertions": self.failure_names,
                "states": [m.get("state") for r in runs for m in r.measured],
                "runs": [
                    {
                        "passed": r.passed,
                        "statuses": r.statuses,
                        "failures": [f.name for f in r.failures],
                        "measured": r.measured,
                    }
                    for r in runs
                ],
            }
        )
        return row


def schema_validator(schema: Any) -> Any:
    """A Draft 2020-12 validator for the IntentSpec schema (as the grader builds it)."""
    if not isinstance(schema, Mapping):
        raise input_invalid("schema: expected a JSON Schema document (a mapping)")
    try:
        check_schema(Draft202012Validator, schema)
    except jsonschema_exceptions.SchemaError as exc:
        raise input_invalid(f"schema: not a valid JSON Schema: {exc.message}") from None
    return Draft202012Validator(schema)


def parse_outputs(doc: Any, cases: Sequence[RepoCase]) -> dict[str, list[Record] | None]:
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


def threshold(total: int) -> int:
    """At least ``ceil(0.8 x cases)`` must pass (run.py render_report; README section 4)."""
    return math.ceil(0.8 * total)


def summary(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The report's summary table (run.py render_report): counts per failure mode apart."""
    measured = [m for r in results for run in r.runs or [] for m in run.measured]
    spec_turns = [m for m in measured if m.get("state") is not None]
    ratios = [m["probe_ratio"] for m in spec_turns if isinstance(m.get("probe_ratio"), float)]

    def cases_with(status: str) -> int:
        return sum(any(status in run.statuses for run in r.runs or []) for r in results)

    not_triggered = sum(
        1
        for r in results
        if r.case.spec_expected and r.runs is not None
        for run in r.runs
        if run.statuses[-1] == "no_fence" and not run.environmental
    )
    return {
        "cases": len(results),
        "passed": sum(r.verdict is True for r in results),
        "not_run": sum(r.verdict is None for r in results),
        "over_asks": sum(1 for m in measured if m.get("over_ask")),
        "degraded_output": cases_with("degraded_output"),
        "timeouts": cases_with("timeout"),
        "harness_errors": cases_with("harness_error"),
        "not_triggered": not_triggered,
        "evidence_form_violations": sum(len(m.get("form_violations") or []) for m in measured),
        "hallucinated_evidence": sum(len(m.get("hallucinated_evidence") or []) for m in measured),
        "hallucinated_cases": [
            r.case.id
            for r in results
            if any(m.get("hallucinated_evidence") for run in r.runs or [] for m in run.measured)
        ],
        "would_pass_if_parseable": sum(
            1 for r in results if r.verdict is False and set(r.failure_names) <= {"degraded_output"}
        ),
        "probe_ratio": round(sum(ratios) / len(ratios), 4) if ratios else 0.0,
        "spec_bearing_turns": f"{len(spec_turns)}/{len(measured)}",
    }


def _plain(value: Any) -> Any:
    """A JSON-serialisable copy of a loaded YAML value (dates, .nan and .inf become str)."""
    return plain(value, sequences=(list, tuple, set, frozenset))
