"""The case model of the intent family (seed 004): parse, classify evidence, judge.

Kept apart from the checkers in ``checkers/intent/expectations.py`` so that the one
function that decides a case, :func:`judge_case`, is plainly shared: ``intent-expectations@1`` shows
its result per case, ``suite-threshold@1`` recomputes it for every case before applying
the threshold. Pure: loaded data in, values out; malformed input raises
``CheckerInputError``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import linear
from ..api import CheckerInputError, Reason
from ..arithmetic import left_sum
from ..plain import plain

DEFAULT_STATES = ("ASK", "ROUTE", "ABORT")

# cases (runs) a counterexample may hold: building it stays fast
LARGEST_SUITE = 10_000

# Run statuses a recorded output may carry. "completed" is judged on its expectations.
BEHAVIOURAL_FAILURES = {"not_triggered": "run.not_triggered", "degraded": "run.degraded"}
ENVIRONMENT_FAILURES = {"timeout": "run.timeout", "harness_error": "run.harness_error"}
RUN_STATUSES = ("completed", *BEHAVIOURAL_FAILURES, *ENVIRONMENT_FAILURES)
FAILURE_MODES = (*BEHAVIOURAL_FAILURES, *ENVIRONMENT_FAILURES)

# expectation key -> reason code when it does not hold (order = report order)
EXPECTATIONS = {
    "state": "expect.state",
    "question_keywords": "expect.keywords",
    "open_field_regex": "expect.open_field",
    "min_resolved_by_probe": "expect.probe",
    "max_asked": "expect.max_asked",
    "evidence_must_include": "expect.evidence_missing",
}

_CASE_KEYS = {"id", "prompt", "mode", "fixture", "category", "expect", "notes"}
_OUTPUT_KEYS = {
    "case",
    "status",
    "state",
    "questions",
    "open_fields",
    "resolved_by_probe",
    "evidence",
    "transcript",
    "notes",
}
_STATE = re.compile(r"^[A-Z][A-Z_]*$")

# A pointer is a relative POSIX path, optionally with a line or line range:
# ``src/a.ts``, ``src/a.ts:12``, ``src/a.ts:12-40``, ``src/a.ts#L12-L40``.
_POINTER = re.compile(
    r"^(?P<path>.*?)(?::(?P<a>\d+)(?:-(?P<b>\d+))?|#L(?P<c>\d+)(?:-L?(?P<d>\d+))?)?$"
)
_SEGMENT = re.compile(r"^[A-Za-z0-9._@+=,~-]+$")

# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class EvalCase:
    """One eval case: the request and what the agent must do with it."""

    id: str
    prompt: str
    fixture: str
    expect: Mapping[str, Any]
    mode: str = ""
    category: str = "uncategorised"


@dataclass(frozen=True)
class RecordedOutput:
    """What the agent did on one case, as recorded by the harness."""

    case: str
    status: str
    state: str | None = None
    questions: tuple[str, ...] = ()
    open_fields: tuple[str, ...] = ()
    resolved_by_probe: tuple[Any, ...] = ()
    evidence: tuple[Any, ...] = ()
    transcript: str | None = None


@dataclass(frozen=True)
class Pointer:
    """An evidence value, classified against the fixture."""

    raw: Any
    path: str | None  # the file part, when the value is well-formed
    lines: tuple[int, int] | None
    verdict: str  # "ok" | "form" | "hallucinated"
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"pointer": _plain(self.raw), "verdict": self.verdict, "why": self.why}


@dataclass
class CaseResult:
    """The judgement of one case: ``pass``, ``fail`` or ``inconclusive``."""

    case: EvalCase
    output: RecordedOutput
    result: str
    reasons: list[Reason] = field(default_factory=list)
    expectations: dict[str, dict[str, Any]] = field(default_factory=dict)
    pointers: list[Pointer] = field(default_factory=list)

    @property
    def failure_mode(self) -> str | None:
        return None if self.output.status == "completed" else self.output.status

    @property
    def form_violations(self) -> list[Pointer]:
        return [p for p in self.pointers if p.verdict == "form"]

    @property
    def hallucinated(self) -> list[Pointer]:
        return [p for p in self.pointers if p.verdict == "hallucinated"]

    @property
    def codes(self) -> list[str]:
        """The reason codes; for an inconclusive case, the environment code (run.timeout)."""
        codes = {r.code for r in self.reasons}
        if self.result == "inconclusive":
            codes.add(ENVIRONMENT_FAILURES[self.output.status])
        return sorted(codes)

    def to_dict(self) -> dict[str, Any]:
        """The per-case row of the report: which expectation held and which did not."""
        return {
            "case": self.case.id,
            "category": self.case.category,
            "result": self.result,
            "run_status": self.output.status,
            "codes": self.codes,
            "expectations": self.expectations,
            "evidence": [p.to_dict() for p in self.pointers],
            "transcript": self.output.transcript,
        }


# --------------------------------------------------------------------------- parsing


def input_invalid(message: str) -> CheckerInputError:
    """Malformed evidence: an ``error`` verdict (``input.invalid``), never pass nor fail."""
    return CheckerInputError("input.invalid", message)


def _plain(value: Any) -> Any:
    """A JSON-serialisable copy of a loaded YAML value (dates and such become str)."""
    return plain(value, non_finite_as_text=False)


def _keyed_record(raw: Any, where: str, keys: set[str], id_key: str) -> str:
    """Check a record is a mapping of known keys with a non-empty ``id_key``; return it."""
    if not isinstance(raw, Mapping):
        raise input_invalid(f"{where}: expected a mapping")
    unknown = sorted(set(map(str, raw)) - keys)
    if unknown:
        raise input_invalid(f"{where}: unknown key(s) {unknown}")
    value = raw.get(id_key)
    if not isinstance(value, str) or not value:
        raise input_invalid(f"{where}: {id_key} must be a non-empty string")
    return value


def records(doc: Any, key: str, role: str) -> list[Any]:
    if isinstance(doc, Mapping) and key in doc:
        doc = doc[key]
    if not isinstance(doc, list):
        raise input_invalid(f"{role}: expected a list of {key} (or {{{key}: [...]}})")
    if not doc:
        raise input_invalid(f"{role}: no {key}: nothing to judge is not a pass")
    return doc


def _str_list(value: Any, where: str, *, allow_empty: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise input_invalid(f"{where}: expected a list of strings")
    if not allow_empty and not value:
        raise input_invalid(f"{where}: must not be empty")
    return tuple(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise input_invalid(f"{where}: expected a whole number >= 0, observed {value!r}")
    return value


def parse_states(value: Any) -> tuple[str, ...]:
    """The ``states`` param: upper-case names, at least one."""
    states = tuple(value)
    if not states or not all(isinstance(s, str) and _STATE.match(s) for s in states):
        raise CheckerInputError(
            "params.invalid", f"states: expected upper-case names, observed {states!r}"
        )
    return states


def parse_cases(doc: Any, states: Sequence[str]) -> list[EvalCase]:
    """The ``cases`` document as cases; every malformed expectation is an input error.

    Unknown keys are refused rather than ignored: a misspelt ``max_ask`` would
    otherwise check nothing and pass.
    """
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for i, raw in enumerate(records(doc, "cases", "cases")):
        cid = _keyed_record(raw, f"cases[{i}]", _CASE_KEYS, "id")
        where = f"case {cid}"
        if cid in seen:
            raise input_invalid(f"{where}: id used twice")
        seen.add(cid)
        for key in ("prompt", "fixture"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise input_invalid(f"{where}: {key} must be a non-empty string")
        for key in ("mode", "category"):
            if key in raw and not isinstance(raw[key], str):
                raise input_invalid(f"{where}: {key} must be a string")
        expect = raw.get("expect")
        if not isinstance(expect, Mapping):
            raise input_invalid(f"{where}: expect must be a mapping")
        cases.append(
            EvalCase(
                id=cid,
                prompt=raw["prompt"],
                fixture=raw["fixture"],
                expect=_parse_expect(expect, where, states),
                mode=raw.get("mode", ""),
                category=raw.get("category", "uncategorised"),
            )
        )
    return cases


def _parse_expect(expect: Mapping[str, Any], where: str, states: Sequence[str]) -> dict[str, Any]:
    unknown = sorted(set(map(str, expect)) - set(EXPECTATIONS))
    if unknown:
        raise input_invalid(
            f"{where}: unknown expectation(s) {unknown}; known: {list(EXPECTATIONS)}",
        )
    out: dict[str, Any] = {}
    state = expect.get("state")
    if state not in states:
        raise input_invalid(
            f"{where}: expect.state must be one of {list(states)}, observed {state!r}",
        )
    out["state"] = state
    if "question_keywords" in expect:
        keywords = _str_list(
            expect["question_keywords"], f"{where}: question_keywords", allow_empty=False
        )
        if not all(k.strip() for k in keywords):
            raise input_invalid(f"{where}: question_keywords holds a blank keyword")
        out["question_keywords"] = list(keywords)
    if "open_field_regex" in expect:
        rx = expect["open_field_regex"]
        try:
            if not isinstance(rx, str) or re.compile(rx, re.IGNORECASE).search(""):
                raise re.error("must be a string that does not match the empty string")
        except re.error as exc:
            raise input_invalid(f"{where}: open_field_regex {rx!r}: {exc}") from None
        out["open_field_regex"] = rx
    for key in ("min_resolved_by_probe", "max_asked"):
        if key in expect:
            out[key] = _count(expect[key], f"{where}: {key}")
    if "evidence_must_include" in expect:
        out["evidence_must_include"] = list(
            _str_list(
                expect["evidence_must_include"],
                f"{where}: evidence_must_include",
                allow_empty=False,
            )
        )
    return out


def parse_outputs(doc: Any, states: Sequence[str]) -> dict[str, RecordedOutput]:
    """The ``outputs`` document by case id."""
    outputs: dict[str, RecordedOutput] = {}
    for i, raw in enumerate(records(doc, "outputs", "outputs")):
        cid = _keyed_record(raw, f"outputs[{i}]", _OUTPUT_KEYS, "case")
        where = f"output for {cid}"
        if cid in outputs:
            raise input_invalid(f"{where}: recorded twice")
        status = raw.get("status")
        if status not in RUN_STATUSES:
            raise input_invalid(
                f"{where}: status must be one of {list(RUN_STATUSES)}, observed {status!r}",
            )
        state = raw.get("state")
        if status == "completed" and (not isinstance(state, str) or not state):
            raise input_invalid(f"{where}: a completed run must record its state")
        if state is not None and not isinstance(state, str):
            raise input_invalid(f"{where}: state must be a string")
        transcript = raw.get("transcript")
        if transcript is not None and not isinstance(transcript, str):
            raise input_invalid(f"{where}: transcript must be a string reference")
        for key in ("resolved_by_probe", "evidence"):
            if key in raw and not isinstance(raw[key], list):
                raise input_invalid(f"{where}: {key} must be a list")
        outputs[cid] = RecordedOutput(
            case=cid,
            status=status,
            state=state,
            questions=_str_list(raw.get("questions", []), f"{where}: questions"),
            open_fields=_str_list(raw.get("open_fields", []), f"{where}: open_fields"),
            resolved_by_probe=tuple(raw.get("resolved_by_probe", [])),
            evidence=tuple(raw.get("evidence", [])),
            transcript=transcript,
        )
    return outputs


def fixture_files(tree: Any, name: str) -> dict[str, bytes]:
    """The files of one fixture (the folder ``name/`` of the tree), by relative path."""
    if not isinstance(tree, Mapping) or not all(
        isinstance(k, str) and isinstance(v, bytes) for k, v in tree.items()
    ):
        raise input_invalid("fixture: expected a mapping of relative path -> bytes")
    prefix = name + "/"
    files = {path[len(prefix) :]: data for path, data in tree.items() if path.startswith(prefix)}
    if not files:
        raise input_invalid(f"fixture {name!r}: no files under {prefix} in the fixture tree")
    return files


# --------------------------------------------------------------------------- evidence


def _line_count(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def classify_pointer(value: Any, files: Mapping[str, bytes]) -> Pointer:
    """Is an evidence value a pointer, and does it point at something that exists?

    Form is decided first and without the fixture, so a form violation can never be
    counted as a hallucination: a pointer is a relative POSIX path of ASCII segments
    (letters, digits, ``._@+=,~-``; no spaces, so prose is never a pointer), not the
    root, no ``.``/``..``/empty segment, nothing under ``.git/``, optionally with a
    line (``:12``, ``#L12``) or range (``:12-40``, ``#L12-L40``). Then, against the
    fixture: a folder is a form violation (evidence names a file); a missing file, or
    a line range past the end of the file, is a hallucination.
    """
    if not isinstance(value, str):
        return Pointer(value, None, None, "form", f"not a string but {type(value).__name__}")
    if not value.strip():
        return Pointer(value, None, None, "form", "empty")
    if any(ch.isspace() for ch in value):
        return Pointer(value, None, None, "form", "contains whitespace: prose, not a path")
    match = _POINTER.match(value)
    assert match is not None  # the pattern matches every string without newlines
    path = match["path"]
    first = match["a"] or match["c"]
    last = match["b"] or match["d"] or first
    if path.startswith("./"):
        path = path[2:]
    if "\\" in path:
        return Pointer(value, None, None, "form", "backslash: not a POSIX path")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return Pointer(value, None, None, "form", "absolute path: not relative to the fixture")
    if path in ("", "."):
        return Pointer(value, None, None, "form", "the repository root, not a file")
    segments = path.split("/")
    if any(s.lower() == ".git" for s in segments):
        return Pointer(value, None, None, "form", "inside .git/: not repository content")
    if "" in segments:
        return Pointer(value, None, None, "form", "empty segment (// or a trailing /)")
    if any(s in (".", "..") for s in segments):
        return Pointer(value, None, None, "form", "'.' or '..' segment")
    bad = next((s for s in segments if not _SEGMENT.match(s)), None)
    if bad is not None:
        return Pointer(
            value, None, None, "form", f"segment {bad!r} has a character not allowed in a pointer"
        )
    lines = None
    if first is not None:
        lines = (int(first), int(last))
        if lines[0] < 1 or lines[1] < lines[0]:
            return Pointer(value, None, None, "form", f"bad line range {lines[0]}-{lines[1]}")
    if path not in files:
        if any(name.startswith(path + "/") for name in files):
            return Pointer(value, path, lines, "form", "a folder, not a file")
        return Pointer(value, path, lines, "hallucinated", f"no file {path} in the fixture")
    if lines is not None:
        count = _line_count(files[path])
        if lines[1] > count:
            return Pointer(
                value,
                path,
                lines,
                "hallucinated",
                f"{path} has {count} line(s), the pointer names line {lines[1]}",
            )
    return Pointer(value, path, lines, "ok", "")


# --------------------------------------------------------------------------- judging


def _distinct_items(items: Sequence[Any]) -> list[Any]:
    """The items resolved by probing, each counted once: a repeated item or a blank one
    (null, empty or whitespace-only text, an empty list or mapping) is not another fact
    the agent settled, so padding the list cannot meet ``min_resolved_by_probe``."""
    seen: dict[str, Any] = {}
    for item in items:
        if isinstance(item, str):
            item = " ".join(item.split())  # "TTL:  300 s" and "TTL: 300 s" are one item
        if item is None or (isinstance(item, str | list | dict) and not item):
            continue
        key = json.dumps(_plain(item), sort_keys=True, ensure_ascii=False)
        seen.setdefault(key, item)
    return list(seen.values())


def _hits(question: str, keywords: Sequence[str]) -> list[str]:
    low = question.casefold()
    return [k for k in keywords if k.casefold() in low]


def _expectation(
    case: EvalCase, out: RecordedOutput, key: str, pointers: list[Pointer]
) -> tuple[bool, dict[str, Any], str]:
    """One expectation: (held, report row, failure message)."""
    want = case.expect[key]
    if key == "state":
        held = out.state == want
        return (
            held,
            {"expected": want, "observed": out.state},
            f"expected state {want}, observed {out.state}",
        )
    if key == "question_keywords":
        off = [q for q in out.questions if not _hits(q, want)]
        held = bool(out.questions) and not off
        row = {"expected": want, "observed": list(out.questions), "off_topic": off}
        if not out.questions:
            return held, row, f"asked no question; expected one mentioning one of {want}"
        return (
            held,
            row,
            f"{len(off)} of {len(out.questions)} question(s) mention none of {want}: {off}",
        )
    if key == "open_field_regex":
        # RE2 where it reads the pattern as re does (the same answer, in linear time)
        matching = [f for f in out.open_fields if linear.search(want, f, True)]
        row = {"expected": want, "observed": list(out.open_fields)}
        return (
            bool(matching),
            row,
            f"no open field matches /{want}/ (open fields: {list(out.open_fields)})",
        )
    if key == "min_resolved_by_probe":
        items = _distinct_items(out.resolved_by_probe)
        n = len(items)
        row = {"expected": f">= {want}", "observed": n}
        ignored = len(out.resolved_by_probe) - n
        if ignored:
            row["ignored"] = f"{ignored} repeated or blank item(s)"
        return n >= want, row, f"resolved {n} item(s) by probing, expected at least {want}"
    if key == "max_asked":
        n = len(out.questions)
        row = {"expected": f"<= {want}", "observed": n}
        return n <= want, row, f"asked {n} question(s), expected at most {want}"
    if key == "evidence_must_include":
        cited = {p.path for p in pointers if p.verdict == "ok"}
        # judge_case has checked each required path is a file pointer; "./" is its only
        # spelling variant, as for the cited pointers
        missing = [path for path in want if path.removeprefix("./") not in cited]
        row = {"expected": want, "observed": sorted(p for p in cited if p), "missing": missing}
        return not missing, row, f"evidence does not cite {missing}"
    raise AssertionError(key)  # pragma: no cover - EXPECTATIONS is closed


def judge_case(case: EvalCase, out: RecordedOutput, files: Mapping[str, bytes]) -> CaseResult:
    """Judge one recorded output against its case. The single source of per-case truth.

    - ``completed``: every expectation is checked; each one that does not hold is a
      reason with its own code;
    - ``not_triggered`` / ``degraded``: a behavioural failure with that code; the
      expectations are "not evaluated" (there is no spec to evaluate them on);
    - ``timeout`` / ``harness_error``: inconclusive, never failed.

    Evidence pointers are checked whatever the status: a hallucinated pointer recorded
    before a timeout is still an invented citation, so it fails the case.
    """
    for path in case.expect.get("evidence_must_include", []):
        required = classify_pointer(path, files)
        if required.verdict != "ok" or required.lines is not None:
            raise input_invalid(
                f"case {case.id}: evidence_must_include {path!r} is not a file of fixture "
                f"{case.fixture} ({required.why or 'a line range'}): the case itself is broken",
            )
    pointers = [classify_pointer(v, files) for v in out.evidence]
    result = CaseResult(case, out, "pass", pointers=pointers)
    tag = {"case": case.id}
    if out.status == "completed":
        for key, code in EXPECTATIONS.items():
            if key not in case.expect:
                continue
            held, row, message = _expectation(case, out, key, pointers)
            result.expectations[key] = {"held": held, **_plain(row)}
            if not held:
                result.reasons.append(Reason(code, f"{case.id}: {message}", {**tag, **_plain(row)}))
    else:
        why = f"run {out.status}: not evaluated"
        result.expectations = {key: {"held": None, "why": why} for key in case.expect}
        if out.status in BEHAVIOURAL_FAILURES:
            text = {
                "not_triggered": "the router was not triggered: no spec produced",
                "degraded": "degraded output: the spec does not parse",
            }[out.status]
            result.reasons.append(
                Reason(BEHAVIOURAL_FAILURES[out.status], f"{case.id}: {text}", tag)
            )
    for p in result.form_violations:
        result.reasons.append(
            Reason(
                "evidence.form",
                f"{case.id}: evidence {p.raw!r} is not a pointer: {p.why}",
                {**tag, **p.to_dict()},
            )
        )
    for p in result.hallucinated:
        result.reasons.append(
            Reason(
                "evidence.hallucinated",
                f"{case.id}: evidence {p.raw!r} is hallucinated: {p.why}",
                {**tag, **p.to_dict()},
            )
        )
    if result.reasons:
        result.result = "fail"
    elif out.status in ENVIRONMENT_FAILURES:
        result.result = "inconclusive"
    return result


def judge_suite(
    cases_doc: Any,
    outputs_doc: Any,
    tree: Any,
    states: Sequence[str] = DEFAULT_STATES,
    *,
    only: str = "",
) -> list[CaseResult]:
    """Parse the three inputs and judge every case (or only the case ``only``).

    Every output must name a known case, and every judged case must have an output: a
    case without one is not judged at all (an error, never a pass nor a fail). With
    ``only``, the outputs document may hold just that case's record.
    """
    states = parse_states(states)
    cases = parse_cases(cases_doc, states)
    outputs = parse_outputs(outputs_doc, states)
    known = {c.id for c in cases}
    stray = sorted(set(outputs) - known)
    if stray:
        raise input_invalid(f"outputs: output(s) for unknown case(s) {stray}")
    if only:
        if only not in known:
            raise input_invalid(f"case {only!r} is not in the cases document")
        cases = [c for c in cases if c.id == only]
    missing = [c.id for c in cases if c.id not in outputs]
    if missing:
        raise input_invalid(f"outputs: no recorded output for case(s) {missing}")
    return [judge_case(c, outputs[c.id], fixture_files(tree, c.fixture)) for c in cases]


def suite_counts(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Counts a reviewer needs: per result, per category, per failure mode, evidence."""
    by_category: dict[str, Counter[str]] = {}
    for r in results:
        by_category.setdefault(r.case.category, Counter())[r.result] += 1
    modes = Counter(r.failure_mode for r in results if r.failure_mode)
    return {
        "total": len(results),
        "passed": left_sum(r.result == "pass" for r in results),
        "failed": left_sum(r.result == "fail" for r in results),
        "inconclusive": left_sum(r.result == "inconclusive" for r in results),
        "by_category": {
            name: {
                "total": left_sum(c.values()),
                "passed": c["pass"],
                "failed": c["fail"],
                "inconclusive": c["inconclusive"],
            }
            for name, c in sorted(by_category.items())
        },
        "failure_modes": {mode: modes[mode] for mode in FAILURE_MODES},
        "evidence": {
            "form_violations": left_sum(len(r.form_violations) for r in results),
            "form_violation_cases": [r.case.id for r in results if r.form_violations],
            "hallucinated": left_sum(len(r.hallucinated) for r in results),
            "hallucinated_cases": [r.case.id for r in results if r.hallucinated],
        },
    }


def diagnostics(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Numbers reported for a reviewer, never used to decide a verdict.

    ``probe_ratio`` = items resolved by probing / (items resolved by probing +
    questions asked), over completed runs: how much of the unknown the agent settled
    itself. Asking less is not asking right, so it decides nothing.
    """
    done = [r.output for r in results if r.output.status == "completed"]
    probed = left_sum(len(o.resolved_by_probe) for o in done)
    asked = left_sum(len(o.questions) for o in done)
    return {
        "completed_runs": len(done),
        "questions_asked": asked,
        "resolved_by_probe": probed,
        "probe_ratio": round(probed / (probed + asked), 4) if probed + asked else None,
    }
