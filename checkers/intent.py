"""Intent expectations on recorded agent output (seed 004, "intent-router").

"The agent guessed my intent wrong" is not decidable; a case is. A case names a
request, the state the agent must reach (ASK, ROUTE or ABORT), and observable
expectations on what it asked, what it resolved by probing the repository itself and
which files it cited as evidence. These checkers judge *recorded* outputs against such
cases: no model is called, so a pass says what the recorded run did, not what a
re-run would do.

Three rules from the seed are built in and cannot be switched off by a param:

- an evidence pointer to a file that does not exist in the fixture repository
  (``evidence.hallucinated``) fails its case **and the whole suite**, whatever else
  passed: an invented citation outlives a wrong answer because it is taken as proof;
- a value that is not a pointer at all (prose, the repository root, ``.git/``) is a
  form violation (``evidence.form``), counted apart: it fails the case, never the
  suite on its own;
- a timeout or a harness error is the environment's failure, not the agent's: the
  case is inconclusive, never a behavioural failure. "Not triggered" (no spec) and
  "degraded output" (a spec that does not parse) are behavioural failures. The four
  failure modes are counted apart.

``suite-threshold@1`` cannot see the verdicts of other bundle cases (a checker only
sees its own inputs), so it takes the same three inputs as ``intent-expectations@1``
and recomputes every per-case result with the same function, :func:`judge_suite`,
before applying the threshold. One function, two views: a per-case result can never
differ between the two checkers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .api import CheckerInputError, InputKind, Param, Reason, Role, Verdict, checker

DEFAULT_STATES = ("ASK", "ROUTE", "ABORT")

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

_INPUT_ROLES = [
    Role(
        "cases",
        InputKind.DATA,
        "the eval cases: a list (or {cases: [...]}) of {id, prompt, mode, fixture, "
        "category, expect: {state, question_keywords, open_field_regex, "
        "min_resolved_by_probe, max_asked, evidence_must_include}}",
    ),
    Role(
        "outputs",
        InputKind.DATA,
        "the recorded agent outputs: a list (or {outputs: [...]}) of {case, status, "
        "state, questions, open_fields, resolved_by_probe, evidence, transcript}",
    ),
    Role(
        "fixture",
        InputKind.TREE,
        "the fixture repositories evidence must point into: one folder per fixture "
        "name used by the cases (e.g. user-api/src/routes/users.ts)",
    ),
]
_STATES_PARAM = Param(
    "states",
    "the states a case may expect (extend for a router with more states)",
    (list, tuple),
    DEFAULT_STATES,
)
_EVIDENCE_REASONS = {
    "evidence.form": "an evidence value is not a pointer into the fixture (prose, the "
    "repository root, a folder, .git/, an absolute path, a bad line range)",
    "evidence.hallucinated": "a well-formed evidence pointer names a file (or lines) that "
    "does not exist in the fixture; fails the case and the whole suite",
}


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


def _invalid(message: str) -> CheckerInputError:
    """Malformed evidence: an ``error`` verdict (``input.invalid``), never pass nor fail."""
    return CheckerInputError("input.invalid", message)


def _plain(value: Any) -> Any:
    """A JSON-serialisable copy of a loaded YAML value (dates and such become str)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def _records(doc: Any, key: str, role: str) -> list[Any]:
    if isinstance(doc, Mapping) and key in doc:
        doc = doc[key]
    if not isinstance(doc, list):
        raise _invalid(f"{role}: expected a list of {key} (or {{{key}: [...]}})")
    if not doc:
        raise _invalid(f"{role}: no {key}: nothing to judge is not a pass")
    return doc


def _str_list(value: Any, where: str, *, allow_empty: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid(f"{where}: expected a list of strings")
    if not allow_empty and not value:
        raise _invalid(f"{where}: must not be empty")
    return tuple(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _invalid(f"{where}: expected a whole number >= 0, observed {value!r}")
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
    for i, raw in enumerate(_records(doc, "cases", "cases")):
        where = f"cases[{i}]"
        if not isinstance(raw, Mapping):
            raise _invalid(f"{where}: expected a mapping")
        unknown = sorted(set(map(str, raw)) - _CASE_KEYS)
        if unknown:
            raise _invalid(f"{where}: unknown key(s) {unknown}")
        cid = raw.get("id")
        if not isinstance(cid, str) or not cid:
            raise _invalid(f"{where}: id must be a non-empty string")
        where = f"case {cid}"
        if cid in seen:
            raise _invalid(f"{where}: id used twice")
        seen.add(cid)
        for key in ("prompt", "fixture"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise _invalid(f"{where}: {key} must be a non-empty string")
        for key in ("mode", "category"):
            if key in raw and not isinstance(raw[key], str):
                raise _invalid(f"{where}: {key} must be a string")
        expect = raw.get("expect")
        if not isinstance(expect, Mapping):
            raise _invalid(f"{where}: expect must be a mapping")
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
        raise _invalid(
            f"{where}: unknown expectation(s) {unknown}; known: {list(EXPECTATIONS)}",
        )
    out: dict[str, Any] = {}
    state = expect.get("state")
    if state not in states:
        raise _invalid(
            f"{where}: expect.state must be one of {list(states)}, observed {state!r}",
        )
    out["state"] = state
    if "question_keywords" in expect:
        keywords = _str_list(
            expect["question_keywords"], f"{where}: question_keywords", allow_empty=False
        )
        if not all(k.strip() for k in keywords):
            raise _invalid(f"{where}: question_keywords holds a blank keyword")
        out["question_keywords"] = list(keywords)
    if "open_field_regex" in expect:
        rx = expect["open_field_regex"]
        try:
            if not isinstance(rx, str) or re.compile(rx, re.IGNORECASE).search(""):
                raise re.error("must be a string that does not match the empty string")
        except re.error as exc:
            raise _invalid(f"{where}: open_field_regex {rx!r}: {exc}") from None
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
    for i, raw in enumerate(_records(doc, "outputs", "outputs")):
        where = f"outputs[{i}]"
        if not isinstance(raw, Mapping):
            raise _invalid(f"{where}: expected a mapping")
        unknown = sorted(set(map(str, raw)) - _OUTPUT_KEYS)
        if unknown:
            raise _invalid(f"{where}: unknown key(s) {unknown}")
        cid = raw.get("case")
        if not isinstance(cid, str) or not cid:
            raise _invalid(f"{where}: case must be a non-empty string")
        where = f"output for {cid}"
        if cid in outputs:
            raise _invalid(f"{where}: recorded twice")
        status = raw.get("status")
        if status not in RUN_STATUSES:
            raise _invalid(
                f"{where}: status must be one of {list(RUN_STATUSES)}, observed {status!r}",
            )
        state = raw.get("state")
        if status == "completed" and (not isinstance(state, str) or not state):
            raise _invalid(f"{where}: a completed run must record its state")
        if state is not None and not isinstance(state, str):
            raise _invalid(f"{where}: state must be a string")
        transcript = raw.get("transcript")
        if transcript is not None and not isinstance(transcript, str):
            raise _invalid(f"{where}: transcript must be a string reference")
        for key in ("resolved_by_probe", "evidence"):
            if key in raw and not isinstance(raw[key], list):
                raise _invalid(f"{where}: {key} must be a list")
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
        raise _invalid("fixture: expected a mapping of relative path -> bytes")
    prefix = name + "/"
    files = {path[len(prefix) :]: data for path, data in tree.items() if path.startswith(prefix)}
    if not files:
        raise _invalid(f"fixture {name!r}: no files under {prefix} in the fixture tree")
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
        matching = [f for f in out.open_fields if re.search(want, f, re.IGNORECASE)]
        row = {"expected": want, "observed": list(out.open_fields)}
        return (
            bool(matching),
            row,
            f"no open field matches /{want}/ (open fields: {list(out.open_fields)})",
        )
    if key == "min_resolved_by_probe":
        n = len(out.resolved_by_probe)
        row = {"expected": f">= {want}", "observed": n}
        return n >= want, row, f"resolved {n} item(s) by probing, expected at least {want}"
    if key == "max_asked":
        n = len(out.questions)
        row = {"expected": f"<= {want}", "observed": n}
        return n <= want, row, f"asked {n} question(s), expected at most {want}"
    if key == "evidence_must_include":
        cited = {p.path for p in pointers if p.verdict == "ok"}
        missing = [path for path in want if path not in cited]
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
            raise _invalid(
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
        raise _invalid(f"outputs: output(s) for unknown case(s) {stray}")
    if only:
        if only not in known:
            raise _invalid(f"case {only!r} is not in the cases document")
        cases = [c for c in cases if c.id == only]
    missing = [c.id for c in cases if c.id not in outputs]
    if missing:
        raise _invalid(f"outputs: no recorded output for case(s) {missing}")
    return [judge_case(c, outputs[c.id], fixture_files(tree, c.fixture)) for c in cases]


def suite_counts(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Counts a reviewer needs: per result, per category, per failure mode, evidence."""
    by_category: dict[str, Counter[str]] = {}
    for r in results:
        by_category.setdefault(r.case.category, Counter())[r.result] += 1
    modes = Counter(r.failure_mode for r in results if r.failure_mode)
    return {
        "total": len(results),
        "passed": sum(r.result == "pass" for r in results),
        "failed": sum(r.result == "fail" for r in results),
        "inconclusive": sum(r.result == "inconclusive" for r in results),
        "by_category": {
            name: {
                "total": sum(c.values()),
                "passed": c["pass"],
                "failed": c["fail"],
                "inconclusive": c["inconclusive"],
            }
            for name, c in sorted(by_category.items())
        },
        "failure_modes": {mode: modes[mode] for mode in FAILURE_MODES},
        "evidence": {
            "form_violations": sum(len(r.form_violations) for r in results),
            "form_violation_cases": [r.case.id for r in results if r.form_violations],
            "hallucinated": sum(len(r.hallucinated) for r in results),
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
    probed = sum(len(o.resolved_by_probe) for o in done)
    asked = sum(len(o.questions) for o in done)
    return {
        "completed_runs": len(done),
        "questions_asked": asked,
        "resolved_by_probe": probed,
        "probe_ratio": round(probed / (probed + asked), 4) if probed + asked else None,
    }


# --------------------------------------------------------------------------- checkers


@checker(
    "intent-expectations",
    1,
    roles=list(_INPUT_ROLES),
    params=[
        Param(
            "case",
            "the id of the one case to judge; empty judges every case (each needs an output)",
            (str,),
            "",
        ),
        _STATES_PARAM,
    ],
    reasons={
        "expect.state": "the run reached another state than the case expects",
        "expect.keywords": "no question was asked, or a question mentions none of the keywords",
        "expect.open_field": "no open field of the spec matches open_field_regex",
        "expect.probe": "fewer items resolved by probing than min_resolved_by_probe",
        "expect.max_asked": "more questions asked than max_asked",
        "expect.evidence_missing": "a file in evidence_must_include is not cited",
        **_EVIDENCE_REASONS,
        "run.not_triggered": "the router was not triggered: no spec produced (behavioural failure)",
        "run.degraded": "a spec was produced but does not parse (behavioural failure)",
        "run.timeout": "the run timed out: environment, not behaviour; the case is inconclusive",
        "run.harness_error": "the harness failed, not the agent; the case is inconclusive",
    },
    libraries=("pyyaml",),
)
def intent_expectations(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Recorded agent output meets every expectation of its eval case.

    With ``case`` set, judges that case alone: ``pass`` when every expectation holds
    and every evidence pointer names an existing file of the case's fixture; ``fail``
    with one reason per expectation that does not hold, per malformed pointer
    (``evidence.form``) and per invented one (``evidence.hallucinated``); an ``error``
    (inconclusive) for a timeout or a harness error. With ``case`` empty, judges every
    case (each must have an output) and fails if any case fails. The details carry, per case,
    each expectation with ``held`` true/false, expected and observed values.

    ``question_keywords``: at least one question, and every question mentions one of
    the keywords (case-insensitive substring; a question about something else is off
    topic). ``open_field_regex``: at least one open field of the spec matches
    (case-insensitive search). ``evidence_must_include``: each listed file is cited
    (a pointer with a line range counts for its file). A pass says what the recorded
    run did; it does not say a re-run would do the same.
    """
    results = judge_suite(
        inputs["cases"],
        inputs["outputs"],
        inputs["fixture"],
        params["states"],
        only=params["case"],
    )
    rows = [r.to_dict() for r in results]
    counts = suite_counts(results)
    if params["case"]:
        (one,) = results
        if one.result == "inconclusive":
            code = ENVIRONMENT_FAILURES[one.output.status]
            return Verdict.errored(
                code,
                f"{one.case.id}: run {one.output.status}: inconclusive, not a behavioural verdict",
                case=rows[0],
            )
        if one.result == "fail":
            held = sum(1 for e in one.expectations.values() if e["held"])
            judged = (
                f"{held} of {len(one.expectations)} expectation(s) held"
                if one.output.status == "completed"
                else f"run {one.output.status}, expectations not evaluated"
            )
            return Verdict.failed(
                f"{one.case.id}: {judged}; failed on {', '.join(one.codes)}",
                one.reasons,
                case=rows[0],
            )
        return Verdict.passed(
            f"{one.case.id}: all {len(one.expectations)} expectation(s) held, "
            f"{len(one.pointers)} evidence pointer(s) exist",
            case=rows[0],
        )
    failed = [r for r in results if r.result == "fail"]
    if failed:
        return Verdict.failed(
            f"{len(failed)} of {len(results)} case(s) failed: "
            + ", ".join(r.case.id for r in failed),
            [reason for r in failed for reason in r.reasons],
            counts=counts,
            cases=rows,
        )
    unsure = [r for r in results if r.result == "inconclusive"]
    if unsure:
        return Verdict.errored(
            ENVIRONMENT_FAILURES[unsure[0].output.status],
            f"{len(unsure)} of {len(results)} case(s) inconclusive "
            f"({', '.join(f'{r.case.id}: {r.output.status}' for r in unsure)}), none failed",
            counts=counts,
            cases=rows,
        )
    return Verdict.passed(
        f"all {len(results)} case(s) met every expectation", counts=counts, cases=rows
    )


@checker(
    "suite-threshold",
    1,
    roles=list(_INPUT_ROLES),
    params=[
        Param("min_pass", "N: the least number of cases that must pass", (int,)),
        Param(
            "total",
            "M: the number of cases the suite must have (guards against a shrunk suite)",
            (int,),
        ),
        _STATES_PARAM,
    ],
    reasons={
        "suite.below_threshold": "fewer than min_pass passed, even counting every "
        "inconclusive case as a pass",
        "suite.hallucinated_evidence": "an evidence pointer is hallucinated: the whole suite fails",
        "suite.inconclusive": "below the threshold only because of timeouts or harness "
        "errors (an error verdict)",
    },
    libraries=("pyyaml",),
)
def suite_threshold(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The suite passes: at least N of M cases pass and no evidence is hallucinated.

    Per-case results are recomputed from the same inputs as ``intent-expectations@1``
    with the same function (a checker cannot see other cases' verdicts), so both
    checkers always agree on every case. Every case must have a recorded output.

    ``fail`` with ``suite.hallucinated_evidence`` when any pointer in any case is
    hallucinated, however many cases passed; ``fail`` with ``suite.below_threshold``
    when fewer than ``min_pass`` passed and the inconclusive cases could not make up
    the difference. A timeout or harness error never counts as a behavioural failure:
    when only they stand between the suite and its threshold, the verdict is an
    ``error`` (``suite.inconclusive``). Form violations fail their case but never the
    suite on their own. The details give counts per result, category, failure mode and
    evidence kind, a per-case table, and diagnostics (``probe_ratio``) that decide
    nothing.
    """
    n, m = params["min_pass"], params["total"]
    if isinstance(n, bool) or isinstance(m, bool) or not 1 <= n <= m:
        raise CheckerInputError(
            "params.invalid", f"need 1 <= min_pass <= total, observed {n} of {m}"
        )
    results = judge_suite(inputs["cases"], inputs["outputs"], inputs["fixture"], params["states"])
    if len(results) != m:
        raise _invalid(
            f"the suite has {len(results)} case(s), the threshold is stated for {m}",
        )
    counts = suite_counts(results)
    details = {
        "threshold": f"{n}/{m}",
        "counts": counts,
        "diagnostics": diagnostics(results),
        "cases": [r.to_dict() for r in results],
    }
    passed, unsure = counts["passed"], counts["inconclusive"]
    score = f"{passed} of {m} case(s) passed (threshold {n}/{m})"
    reasons: list[Reason] = []
    bad = counts["evidence"]
    if bad["hallucinated"]:
        reasons.append(
            Reason(
                "suite.hallucinated_evidence",
                f"{bad['hallucinated']} hallucinated evidence pointer(s) in "
                f"{bad['hallucinated_cases']}: "
                "one invented citation fails the whole suite",
                {"cases": bad["hallucinated_cases"], "pointers": bad["hallucinated"]},
            )
        )
    if passed + unsure < n:
        reasons.append(
            Reason(
                "suite.below_threshold",
                f"{score}; {counts['failed']} failed, {unsure} inconclusive",
                {"passed": passed, "min_pass": n, "total": m, "inconclusive": unsure},
            )
        )
    if reasons:
        return Verdict.failed(f"suite fails: {score}", reasons, **details)
    if passed < n:
        return Verdict.errored(
            "suite.inconclusive",
            f"{score}; {unsure} inconclusive case(s) (timeouts/harness errors) could decide it",
            **details,
        )
    return Verdict.passed(f"suite passes: {score}, no hallucinated evidence", **details)


# --------------------------------------------------------------------------- contamination


def _compile_markers(markers: Any, ignore_case: bool) -> list[tuple[str, re.Pattern[str]]]:
    if not isinstance(markers, list | tuple) or not markers:
        raise CheckerInputError(
            "params.invalid",
            "markers is empty: a contamination check with nothing to look for can never fail",
        )
    compiled = []
    for marker in markers:
        if not isinstance(marker, str):
            raise CheckerInputError("params.invalid", f"markers: {marker!r} is not a string")
        try:
            rx = re.compile(marker, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise CheckerInputError(
                "params.invalid", f"markers: {marker!r} is not a regex: {exc}"
            ) from None
        if rx.search(""):
            raise CheckerInputError(
                "params.invalid", f"markers: {marker!r} matches the empty string (every line)"
            )
        compiled.append((marker, rx))
    return compiled


@checker(
    "contamination",
    1,
    roles=[
        Role(
            "transcripts",
            InputKind.TREE,
            "the raw transcripts of the runs that must be clean (any UTF-8 text: JSONL, logs)",
        )
    ],
    params=[
        Param(
            "markers",
            "regexes whose presence in a transcript line shows contamination (e.g. the "
            "skill's output format in a run that must be bare, \"unavailable tool 'bash'\")",
            (list,),
        ),
        Param("ignore_case", "match markers case-insensitively", (bool,), False),
        Param("max_locations", "how many file:line locations to list per marker", (int,), 20),
    ],
    reasons={
        "contamination.detected": "a contamination marker occurs in a transcript "
        "(count and file:line given)",
    },
)
def contamination(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """No transcript line matches any contamination marker.

    A run said to be bare that prints the skill's output format was not bare; a run
    whose tool was reported unavailable did not run in the configuration it claims.
    Every line of every transcript is searched for every marker (a regex); ``fail``
    with one ``contamination.detected`` reason per marker that hit, giving the number
    of hits, the number per file and the first ``file:line`` locations. An empty
    marker list or an empty transcript folder is an error, never a clean pass: a
    contamination check that cannot fail is decoration. A pass means none of the
    listed markers occurs, not that the run was clean in every other way.
    """
    markers = _compile_markers(params["markers"], params["ignore_case"])
    limit = params["max_locations"]
    if isinstance(limit, bool) or limit < 0:
        raise CheckerInputError("params.invalid", f"max_locations must be >= 0, observed {limit}")
    tree = inputs["transcripts"]
    if not isinstance(tree, Mapping) or not tree:
        raise _invalid("transcripts: no transcript to check is not a clean pass")
    hits: dict[str, Counter[str]] = {marker: Counter() for marker, _ in markers}
    where: dict[str, list[str]] = {marker: [] for marker, _ in markers}
    first: dict[str, str] = {}
    lines_scanned = 0
    for name in sorted(tree):
        data = tree[name]
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else None
        except UnicodeDecodeError as exc:
            raise _invalid(f"transcripts: {name} is not UTF-8 text ({exc})") from None
        if text is None:
            raise _invalid(f"transcripts: {name} is not bytes")
        # split on "\n" only, so file:line matches what an editor shows
        for number, line in enumerate(text.removesuffix("\n").split("\n"), start=1):
            lines_scanned += 1
            for marker, rx in markers:
                found = len(rx.findall(line))
                if found:
                    hits[marker][name] += found
                    first.setdefault(marker, f"{name}:{number}")
                    if len(where[marker]) < limit:
                        where[marker].append(f"{name}:{number}")
    total = sum(sum(c.values()) for c in hits.values())
    details = {
        "files_scanned": len(tree),
        "lines_scanned": lines_scanned,
        "hits": total,
        "by_marker": {m: sum(c.values()) for m, c in hits.items()},
        "by_file": dict(sorted(sum(hits.values(), Counter()).items())),
    }
    reasons = [
        Reason(
            "contamination.detected",
            f"marker /{marker}/: {sum(c.values())} hit(s) in {len(c)} transcript(s), "
            f"first at {first[marker]}",
            {
                "marker": marker,
                "hits": sum(c.values()),
                "by_file": dict(sorted(c.items())),
                "locations": where[marker],
            },
        )
        for marker, c in hits.items()
        if c
    ]
    if reasons:
        return Verdict.failed(
            f"contamination: {total} hit(s) of {len(reasons)} marker(s)", reasons, **details
        )
    return Verdict.passed(
        f"no marker of {len(markers)} in {lines_scanned} line(s) of {len(tree)} transcript(s)",
        **details,
    )


# --------------------------------------------------------------------------- group rates

_RATE = re.compile(r"^(\d+)/(\d+)$")


def _claimed(value: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(value, Mapping) or not value:
        raise CheckerInputError("params.invalid", 'claimed: expected a table of group -> "k/n"')
    out = {}
    for group, rate in value.items():
        match = _RATE.match(rate) if isinstance(rate, str) else None
        if match is None or int(match[1]) > int(match[2]) or int(match[2]) < 1:
            raise CheckerInputError(
                "params.invalid",
                f'claimed.{group}: expected "k/n" with 0 <= k <= n, n >= 1, observed {rate!r}',
            )
        out[str(group)] = (int(match[1]), int(match[2]))
    return out


@checker(
    "group-rates",
    1,
    roles=[
        Role(
            "runs",
            InputKind.DATA,
            "recorded runs: a list (or {runs: [...]}) of {id, group, checks: {name: true|false}}",
        )
    ],
    params=[
        Param("check", "the name of the delivery check to count", (str,)),
        Param(
            "claimed",
            'the counts the report claims, per group: {bare = "0/5", skill = "3/3"}',
            (dict,),
        ),
    ],
    reasons={
        "rates.mismatch": "a group's observed count (k of n runs) differs from the claimed count",
        "rates.group_missing": "a claimed group has no recorded run",
        "rates.group_unclaimed": "a group has recorded runs but no claimed count",
    },
)
def group_rates(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Per group, the number of runs passing one delivery check equals the claimed count.

    Counts ``k of n`` per group (runs whose ``checks[check]`` is true, of all runs in
    the group) and compares both numbers with the claim: a claim of ``0/5`` is wrong if
    the group has 6 runs. Every run must record the check (a run that was not scored is
    an input error, not a failure). The details report the sample sizes. This checker
    gives counts only: no effect size, interval or significance, and with samples of
    5 and 3 none should be read into them.
    """
    check = params["check"]
    claimed = _claimed(params["claimed"])
    runs = _records(inputs["runs"], "runs", "runs")
    seen: set[str] = set()
    observed: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        if (
            not isinstance(run, Mapping)
            or not isinstance(run.get("id"), str)
            or not isinstance(run.get("group"), str)
        ):
            raise _invalid(
                f"runs[{i}]: expected {{id, group, checks}} with string id and group",
            )
        if run["id"] in seen:
            raise _invalid(f"run {run['id']}: recorded twice")
        seen.add(run["id"])
        checks = run.get("checks")
        if not isinstance(checks, Mapping) or not isinstance(checks.get(check), bool):
            raise _invalid(f"run {run['id']}: checks.{check} must be true or false")
        counts = observed.setdefault(run["group"], [0, 0])
        counts[0] += checks[check]
        counts[1] += 1
    groups = {
        g: {
            "observed": f"{observed[g][0]}/{observed[g][1]}" if g in observed else None,
            "claimed": f"{claimed[g][0]}/{claimed[g][1]}" if g in claimed else None,
            "sample_size": observed[g][1] if g in observed else 0,
        }
        for g in sorted(set(observed) | set(claimed))
    }
    details = {
        "check": check,
        "groups": groups,
        "note": "counts only, with sample sizes; no effect size, interval or significance",
    }
    reasons = []
    for g, row in groups.items():
        if row["observed"] is None:
            reasons.append(
                Reason(
                    "rates.group_missing",
                    f"group {g}: claimed {row['claimed']}, no recorded run",
                    {"group": g},
                )
            )
        elif row["claimed"] is None:
            reasons.append(
                Reason(
                    "rates.group_unclaimed",
                    f"group {g}: {row['observed']} recorded, no claim",
                    {"group": g},
                )
            )
        elif row["observed"] != row["claimed"]:
            reasons.append(
                Reason(
                    "rates.mismatch",
                    f"group {g}: {check} observed {row['observed']}, claimed {row['claimed']}",
                    {"group": g, **row},
                )
            )
    summary = ", ".join(f"{g} {row['observed'] or '-'}" for g, row in groups.items())
    if reasons:
        return Verdict.failed(f"{check}: {summary} does not match the claim", reasons, **details)
    return Verdict.passed(f"{check}: {summary} as claimed (counts only, no effect size)", **details)
