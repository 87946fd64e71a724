"""intent-expectations@2 and suite-threshold@2: the Intent-Router repository's cases.yaml
judged as its grader (evals/run.py) judges it. Every case here is our own, written in the
repository's format; the rules they pin are listed in checkers/README.md."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import get
from checkers.api import CheckerInputError, Verdict
from checkers.intent.repo import classify_evidence, invariant_failures, threshold
from tests.helpers import REPO

SCHEMA = json.loads(
    (REPO / "bundles" / "intent-router" / "inputs" / "intentspec.schema.json").read_text()
)
FILES = {
    "user-api/src/cache/redis.ts": b"export const redis = 1;\n",
    "user-api/src/routes/users.ts": b"a\nb\nc\n",
    "user-api/docs/adr/0007-no-in-process-caches.md": b"# ADR 0007\n",
    "user-api/.github/workflows/ci.yml": b"on: push\n",
    "user-api/Makefile": b"all:\n",
    "user-api/package.json": b"{}\n",
    "user-api/.git/HEAD": b"ref: refs/heads/main\n",
}
CASE = get("intent-expectations@2")
SUITE = get("suite-threshold@2")
assert CASE is not None and SUITE is not None


def ask_spec(**changes: Any) -> dict[str, Any]:
    """A valid ASK spec: two unknowns probed, one open, one question with options."""
    spec: dict[str, Any] = {
        "spec_version": "0.1",
        "request": "add caching to the user API",
        "intent": "add_caching",
        "objects": ["src/routes/users.ts"],
        "constraints": [
            {"source": "probed", "text": "shared redis", "evidence": "src/cache/redis.ts:1-2"},
            {"source": "probed", "text": "three reads", "evidence": "src/routes/users.ts"},
        ],
        "unknown": [
            {"field": "cache.invalidation_failure", "kind": "ask", "category": "failure_behavior"}
        ],
        "decision": {
            "state": "ASK",
            "confidence": 0.6,
            "question": {
                "text": "What should happen when an invalidation fails?",
                "why_human": "a preference",
                "recommended": "A",
                "options": [{"id": "A", "text": "serve stale"}, {"id": "B", "text": "bypass"}],
            },
        },
        "resolution": {
            "unknowns_found": 3,
            "resolved_by_probe": 2,
            "asked": 0,
            "inferred": 0,
            "ask_budget": 3,
        },
        "trace": [{"step": "emit", "detail": "asked one question"}],
    }
    spec.update(changes)
    return spec


def route_spec() -> dict[str, Any]:
    spec = ask_spec(unknown=[])
    spec["decision"] = {"state": "ROUTE", "confidence": 0.8, "target": "implement"}
    spec["constraints"].append({"source": "asked", "text": "bypass", "evidence": "user:delegated"})
    spec["resolution"].update(asked=1)
    return spec


def turn(spec: dict[str, Any] | None, status: str = "ok", text: str = "") -> dict[str, Any]:
    if status == "ok" and spec is None:
        status = "no_fence"
    return {"spec": spec, "status": status, "text": text}


def run_case(
    expect: dict[str, Any],
    record: Any,
    *,
    fixture: str = "user-api",
    extra: dict[str, Any] | None = None,
) -> Verdict:
    case = {"id": "c", "prompt": "p", "mode": "auto", "fixture": fixture, "expect": expect}
    case.update(extra or {})
    inputs = {"cases": [case], "outputs": {"c": record}, "schema": SCHEMA, "fixture": FILES}
    return CASE.function(inputs, {"case": "c"})


def codes(verdict: Verdict) -> list[str]:
    return list(verdict.codes)


# ------------------------------------------------------------------ each key: pass and fail


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(spec: dict[str, Any]) -> None:
        node: Any = spec
        *parents, last = path.split(".")
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return apply


def _nothing(spec: dict[str, Any]) -> None:
    return None


# key, expected value, change to the valid ASK spec that still passes, one that fails
KEYS: list[tuple[str, Any, Callable[[dict[str, Any]], None], Callable[[dict[str, Any]], None]]] = [
    ("state", "ASK", _nothing, _set("decision.state", "HALT")),
    ("state_in", ["ASK", "ROUTE"], _nothing, _set("decision.state", "HALT")),
    ("cause", "underspecified", _set("decision.cause", "underspecified"), _nothing),
    ("asked_eq", 0, _nothing, _set("resolution.asked", 1)),
    ("max_asked", 1, _set("resolution.asked", 1), _set("resolution.asked", 2)),
    ("min_resolved_by_probe", 2, _nothing, _set("resolution.resolved_by_probe", 1)),
    ("resolved_by_probe_eq", 2, _nothing, _set("resolution.resolved_by_probe", 3)),
    ("probed_constraints_eq", 2, _nothing, _set("constraints.1.source", "explicit")),
    ("max_inferred", 0, _nothing, _set("resolution.inferred", 1)),
    ("unknown_empty", False, _nothing, _set("unknown", [])),
    ("has_source", ["probed"], _nothing, _set("constraints", [])),
    ("open_fields_min", 1, _set("decision.open_fields", ["goal"]), _nothing),
    (
        "evidence_must_include",
        ["redis.ts"],
        _nothing,
        _set("constraints.0.evidence", "package.json"),
    ),
    ("evidence_regex", "^src/cache/", _nothing, _set("constraints.0.evidence", "package.json")),
    ("question_keywords", ["stale"], _nothing, _set("decision.question.options", [])),
    ("text_keywords", [420], _set("request", "pin #420"), _nothing),
    ("output_regex", "Prototype", _nothing, _nothing),
    ("question_lang", "zh", _set("decision.question.text", "要怎么做？"), _nothing),
    ("not_target", "implement", _nothing, _set("decision.target", "implement")),
    ("open_field_regex", "invalid", _nothing, _set("unknown.0.field", "cache.ttl")),
    (
        "open_issue",
        "premise",
        _set("unknown.0.issue", "premise"),
        _set("unknown.0.issue", "conflict"),
    ),
    ("should_trigger", False, _nothing, _nothing),
]


@pytest.mark.parametrize(("key", "want", "ok", "bad"), KEYS, ids=[k[0] for k in KEYS])
def test_each_assertion_key_passes_and_fails_as_the_grader(
    key: str, want: Any, ok: Callable[..., None], bad: Callable[..., None]
) -> None:
    good, wrong = ask_spec(), ask_spec()
    ok(good)
    bad(wrong)
    for spec in (good, wrong):  # keep the counters balanced: only the key may fail
        r = spec["resolution"]
        r["unknowns_found"] = r["resolved_by_probe"] + r["asked"] + r["inferred"]
        r["unknowns_found"] += len(spec["unknown"])
        r["ask_budget"] = r["asked"] + 1
    text_ok, text_bad = "a prototype first", "a full rewrite"
    if key == "should_trigger":  # a quiet case: silence passes, any spec fails
        good_record, bad_record = turn(None), turn(ask_spec())
    else:
        good_record, bad_record = turn(good, text=text_ok), turn(wrong, text=text_bad)
    passed = run_case({key: want}, good_record)
    failed = run_case({key: want}, bad_record)
    assert passed.status == "pass", passed.reasons
    assert failed.status == "fail"
    assert f"expect.{key}" in codes(failed)


def test_every_key_the_grader_knows_has_a_pass_and_a_fail_test() -> None:
    from checkers.intent.repo import EXPECT_KEYS

    assert {k[0] for k in KEYS} == set(EXPECT_KEYS)


def test_question_keywords_read_the_options_and_why_human_too() -> None:
    spec = ask_spec()
    spec["decision"]["question"]["text"] = "Which behaviour do you want?"
    spec["decision"]["question"]["options"][0]["text"] = "serve the STALE value"
    assert run_case({"question_keywords": ["stale"]}, turn(spec)).status == "pass"


def test_open_field_regex_reads_field_and_category_never_the_note() -> None:
    spec = ask_spec()
    spec["unknown"][0] = {"field": "cache.x", "kind": "ask", "note": "invalidation"}
    assert codes(run_case({"open_field_regex": "invalid"}, turn(spec))) == [
        "expect.open_field_regex"
    ]
    spec["unknown"][0]["category"] = "failure_behavior"
    assert run_case({"open_field_regex": "FAIL"}, turn(spec)).status == "pass"


def test_evidence_must_include_is_a_substring_of_any_pointer_in_both_spellings() -> None:
    spec = ask_spec()
    spec["constraints"][0]["evidence"] = "record:orders/8821"
    assert run_case({"evidence_must_include": ["orders/8821"]}, turn(spec)).status == "pass"
    assert codes(run_case({"evidence_must_include": ["orders/8821.json"]}, turn(spec))) == [
        "expect.evidence_must_include"
    ]


# ------------------------------------------------------------------ always-checked assertions


def test_a_spec_that_breaks_the_schema_fails_schema_valid() -> None:
    spec = ask_spec()
    del spec["trace"]
    assert codes(run_case({"state": "ASK"}, turn(spec))) == ["spec.schema_invalid"]


def test_unbalanced_counters_fail_even_with_no_assertion_about_them() -> None:
    spec = ask_spec()
    spec["resolution"]["unknowns_found"] = 4
    verdict = run_case({"state": "ASK"}, turn(spec))
    assert codes(verdict) == ["spec.invariants_broken"]
    assert "sum(3) != unknowns_found(4)" in verdict.reasons[0].message


def test_an_invalid_schema_is_refused() -> None:
    inputs = {
        "cases": [{"id": "c", "fixture": "empty", "expect": {"state": "ASK"}}],
        "outputs": {"c": turn(None)},
        "schema": {"type": 12},
    }
    with pytest.raises(CheckerInputError, match="not a valid JSON Schema"):
        CASE.function(inputs, {"case": "c"})


# ------------------------------------------------------------------ evidence classification

# pointer, kind, as the grader's decision 7 and its selftest table
TABLE = [
    ("src/cache/redis.ts", "path"),
    ("src/cache/redis.ts:12", "path"),
    ("src/cache/redis.ts:9000-9001", "path"),  # line numbers are never compared with the file
    ("docs/adr/0007-no-in-process-caches.md#decision", "path"),
    ("src/routes/users.ts:1-2#get-list", "path"),
    (".github/workflows/ci.yml", "path"),  # a dotfile is a workspace pointer
    ("Makefile:3", "path"),  # ns:digits settled by an existing file
    ("git:#412", "reserved"),
    ("git:1a2b3c4", "reserved"),
    ("user:delegated", "reserved"),
    ("record:orders/8821", "reserved"),
    ("doc:returns-policy#remedy", "reserved"),
    ("doc:returns-policy", "reserved"),
    (".", "form"),  # the repository root
    ("./src/cache/redis.ts", "form"),  # a ./ prefix
    (".git/HEAD", "form"),
    (".claude/skills/intent-router/SKILL.md", "form"),  # tool folders
    (".agents/skills/intent-router/SKILL.md", "form"),
    (".intent/add_caching.intent.yaml", "form"),
    ("opencode.json", "form"),
    ("delegated by user", "form"),  # prose
    ("see src/cache/redis.ts", "form"),
    ("git:HEAD", "form"),  # a git ref must be a hex sha or #pr
    ("gti:#412", "form"),  # a misspelt namespace
    ("ticket:4402", "form"),  # an unknown namespace with digits: never a hallucination
    ("record:orders", "form"),  # record: needs system/id
    ("Makefile:3#x", "form"),  # ns:rest that is not a line
    ("src/a.ts:1:2", "form"),
    ("src/cache/lru.ts", "hallucinated"),
    ("src/cache/lru.ts:3-4", "hallucinated"),
    ("src/cache", "hallucinated"),  # a folder is not a file
    ("SRC/cache/redis.ts", "hallucinated"),
    ("/etc/passwd", "hallucinated"),
    ("../outside.ts", "hallucinated"),
    ("package.json:2", "path"),  # a dotted name before ':' is a path, never a namespace
]
WORKSPACE = frozenset(p.removeprefix("user-api/") for p in FILES if "/.git/" not in p)


@pytest.mark.parametrize(("pointer", "kind"), TABLE, ids=[t[0] for t in TABLE])
def test_evidence_is_classified_as_the_grader_classifies_it(pointer: str, kind: str) -> None:
    assert classify_evidence(pointer, WORKSPACE)[0] == kind


def test_only_a_hallucination_fails_the_suite_a_form_violation_fails_its_case() -> None:
    form, invented = ask_spec(), ask_spec()
    form["trace"] = [{"step": "probe", "detail": "x", "evidence": "."}]
    invented["trace"] = [{"step": "probe", "detail": "x", "evidence": "src/nope.ts"}]
    assert codes(run_case({}, turn(form))) == ["evidence.form"]
    assert codes(run_case({}, turn(invented))) == ["evidence.hallucinated"]
    cases = [{"id": f"c{i}", "fixture": "user-api", "expect": {}} for i in range(5)]
    outputs = {f"c{i}": turn(ask_spec()) for i in range(5)}
    outputs["c0"] = turn(form)
    base = {"cases": cases, "schema": SCHEMA, "fixture": FILES}
    assert SUITE.function({**base, "outputs": outputs}, {"total": 5}).status == "pass"
    outputs["c0"] = turn(invented)
    verdict = SUITE.function({**base, "outputs": outputs}, {"total": 5})
    assert codes(verdict) == ["suite.hallucinated_evidence"]  # 4 of 5 pass: threshold met


def test_the_empty_fixture_has_no_file_so_every_path_is_hallucinated() -> None:
    verdict = run_case({}, turn(ask_spec()), fixture="empty")
    assert codes(verdict) == ["evidence.hallucinated"]


def test_a_missing_fixture_folder_is_refused() -> None:
    with pytest.raises(CheckerInputError, match="fixture not found"):
        run_case({}, turn(ask_spec()), fixture="support-queue")


# ------------------------------------------------------------------ quiet, failure modes


def test_a_quiet_case_passes_on_silence_and_checks_nothing_else() -> None:
    assert run_case({"should_trigger": False}, turn(None, text="it opens a client")).status == (
        "pass"
    )
    assert codes(run_case({"should_trigger": False}, turn(ask_spec()))) == ["expect.should_trigger"]


def test_a_case_expecting_a_spec_with_none_is_not_triggered_or_degraded() -> None:
    assert codes(run_case({"state": "ASK"}, turn(None))) == ["run.not_triggered"]
    assert codes(run_case({"state": "ASK"}, turn(None, "degraded_output"))) == ["run.degraded"]


def test_a_timeout_is_not_passed_and_counted_as_environmental() -> None:
    verdict = run_case({"state": "ASK"}, turn(None, "timeout"))
    assert codes(verdict) == ["run.timeout"]
    assert codes(run_case({"state": "ASK"}, turn(None, "harness_error"))) == ["run.harness_error"]


# ------------------------------------------------------------------ multi-turn


TWO = {"turns": ["B"], "expect_turn1": {"state": "ASK", "max_asked": 0}}


def test_multi_turn_judges_turn_one_and_the_last_turn_on_their_own_keys() -> None:
    record = {"turns": [turn(ask_spec()), turn(route_spec())], "runner_failures": []}
    assert run_case({"state": "ROUTE", "asked_eq": 1}, record, extra=TWO).status == "pass"
    # turn one breaks its own expectation, the last turn is fine
    first = ask_spec()
    first["resolution"].update(asked=1, unknowns_found=4)
    verdict = run_case({"state": "ROUTE"}, {"turns": [turn(first), turn(route_spec())]}, extra=TWO)
    assert codes(verdict) == ["expect.max_asked"]
    assert verdict.reasons[0].details["turn"] == 1


def test_turn_one_that_does_not_ask_stops_the_run_with_turn1_not_ask() -> None:
    verdict = run_case({"state": "ROUTE"}, {"turns": [turn(route_spec())]}, extra=TWO)
    assert codes(verdict) == ["run.turn1_not_ask"]


def test_a_record_against_the_runners_rule_for_turn_one_is_refused() -> None:
    record = {"turns": [turn(route_spec()), turn(route_spec())], "runner_failures": []}
    with pytest.raises(CheckerInputError, match="sends no follow-up"):
        run_case({"state": "ROUTE"}, record, extra=TWO)
    with pytest.raises(CheckerInputError, match="rule for turn one gives"):
        run_case(
            {"state": "ROUTE"}, {"turns": [turn(route_spec())], "runner_failures": []}, extra=TWO
        )


def test_a_timeout_on_turn_one_of_a_multi_turn_case_is_turn1_timeout() -> None:
    verdict = run_case({"state": "ROUTE"}, {"turns": [turn(None, "timeout")]}, extra=TWO)
    assert codes(verdict) == ["run.timeout"]
    assert verdict.reasons[0].details["failure"] == "turn1_timeout"


def test_more_than_half_of_repeated_runs_must_pass() -> None:
    good, bad = turn(ask_spec()), turn(None)
    assert run_case({"state": "ASK"}, [good, bad, good]).status == "pass"
    assert run_case({"state": "ASK"}, [good, bad]).status == "fail"


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ({"expect": {"max_ask": 1}}, "unknown assertion key 'max_ask'"),
        ({"expect": {}, "category": "ask"}, "unknown case key 'category'"),
        ({"expect": {"question_lang": "en"}}, "only question_lang: zh"),
        ({"expect": {"should_trigger": False, "state": "ROUTE"}}, "would never be checked"),
        ({"expect": {}, "expect_turn1": {"state": "ASK"}}, "without turns"),
        ({"expect": {"max_asked": "1"}}, "whole number"),
        ({"expect": {"output_regex": "("}}, "not a regular expression"),
        ({"expect": {"has_source": []}}, "empty list"),
    ],
)
def test_a_key_or_value_the_grader_would_not_check_is_refused_by_name(
    case: dict[str, Any], message: str
) -> None:
    with pytest.raises(CheckerInputError, match=message):
        run_case(case.pop("expect"), turn(ask_spec()), extra=case)


def test_a_case_without_an_output_entry_is_refused_and_null_is_not_run() -> None:
    inputs = {
        "cases": [{"id": "c", "expect": {}}, {"id": "d", "expect": {}}],
        "outputs": {"d": None},
        "schema": SCHEMA,
    }
    with pytest.raises(CheckerInputError, match="no entry for case"):
        SUITE.function(inputs, {"total": 0})
    verdict = CASE.function(inputs, {"case": "d"})
    assert verdict.status == "error" and codes(verdict) == ["run.not_run"]


# ------------------------------------------------------------------ threshold


@pytest.mark.parametrize("n", range(1, 41))
def test_the_threshold_is_ceil_of_four_fifths_of_the_file(n: int) -> None:
    assert threshold(n) == math.ceil(4 * n / 5) == -(-4 * n // 5)


def _suite(results: list[str]) -> dict[str, Any]:
    cases = [
        {"id": f"c{i}", "fixture": "user-api", "expect": {"state": "ASK"}}
        for i in range(len(results))
    ]
    kinds = {"pass": turn(ask_spec()), "fail": turn(None), "timeout": turn(None, "timeout")}
    outputs: dict[str, Any] = {
        f"c{i}": (None if r == "not_run" else kinds[r]) for i, r in enumerate(results)
    }
    return {"cases": cases, "outputs": outputs, "schema": SCHEMA, "fixture": FILES}


def test_seventeen_cases_need_fourteen_and_a_timeout_is_not_a_pass() -> None:
    met = SUITE.function(_suite(["pass"] * 14 + ["fail", "timeout", "not_run"]), {"total": 17})
    assert met.status == "pass"
    assert met.details["threshold"] == "14/17"
    assert met.details["summary"]["timeouts"] == 1
    assert met.details["summary"]["not_triggered"] == 1
    assert met.details["summary"]["not_run"] == 1
    missed = SUITE.function(_suite(["pass"] * 13 + ["timeout"] * 4), {"total": 17})
    assert codes(missed) == ["suite.below_threshold"]


def test_the_threshold_follows_the_file_and_total_guards_against_a_shrunk_file() -> None:
    assert SUITE.function(_suite(["pass"] * 8 + ["fail"] * 2), {"total": 0}).status == "pass"
    with pytest.raises(CheckerInputError, match="holds 10 case"):
        SUITE.function(_suite(["pass"] * 10), {"total": 17})


def test_a_multi_case_file_in_the_repository_format_is_judged_case_by_case() -> None:
    inputs = _suite(["pass", "fail", "timeout"])
    inputs["cases"][2]["expect"] = {"should_trigger": False}
    inputs["outputs"]["c2"] = turn(None)
    verdict = SUITE.function(inputs, {"total": 3})
    rows = {row["case"]: row["result"] for row in verdict.details["cases"]}
    assert rows == {"c0": "pass", "c1": "fail", "c2": "pass"}
    assert verdict.status == "fail"  # 2 of 3, the threshold is 3


# ------------------------------------------------------------------ counter invariants


counters = st.fixed_dictionaries(
    {k: st.integers(0, 50) for k in ("resolved_by_probe", "asked", "inferred")}
)


@settings(max_examples=200, deadline=None)
@given(counters, st.integers(0, 5), st.integers(1, 5))
def test_balanced_counters_always_hold(c: dict[str, int], open_items: int, spare: int) -> None:
    spec = ask_spec()
    spec["unknown"] = [{"field": f"f{i}", "kind": "ask"} for i in range(open_items)]
    spec["resolution"] = {
        **c,
        "unknowns_found": sum(c.values()) + open_items,
        "ask_budget": c["asked"] + spare,
    }
    assert invariant_failures(spec) == []


@settings(max_examples=200, deadline=None)
@given(
    counters,
    st.integers(0, 5),
    st.sampled_from(["resolved_by_probe", "asked", "inferred", "unknowns_found"]),
    st.integers(1, 9),
)
def test_any_counter_off_by_any_amount_breaks_the_invariant(
    c: dict[str, int], open_items: int, key: str, delta: int
) -> None:
    spec = ask_spec()
    spec["unknown"] = [{"field": f"f{i}", "kind": "ask"} for i in range(open_items)]
    spec["resolution"] = {**c, "unknowns_found": sum(c.values()) + open_items, "ask_budget": 99}
    spec["resolution"][key] += delta
    broken = invariant_failures(spec)
    assert broken and broken[0].startswith("sum(")


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10), st.integers(0, 10))
def test_an_ask_needs_budget_left(asked: int, budget: int) -> None:
    spec = ask_spec()
    spec["resolution"].update(asked=asked, ask_budget=budget, unknowns_found=3 + asked)
    assert ("ASK with the budget already spent" in invariant_failures(spec)) == (asked >= budget)


def test_a_route_with_an_open_unknown_or_an_inferred_irreversible_constraint_is_broken() -> None:
    spec = route_spec()
    assert invariant_failures(spec) == []
    open_route = copy.deepcopy(spec)
    open_route["unknown"] = [{"field": "x", "kind": "ask"}]
    open_route["resolution"]["unknowns_found"] += 1
    assert invariant_failures(open_route) == ["ROUTE with a non-empty unknown"]
    spec["constraints"].append(
        {
            "source": "inferred",
            "text": "drop",
            "evidence": "src/cache/redis.ts",
            "irreversible": True,
        }
    )
    spec["resolution"].update(inferred=1, unknowns_found=4)
    assert invariant_failures(spec) == ["ROUTE with an inferred irreversible constraint"]


@pytest.mark.parametrize("value", ["3", 3.0, None, [], "three", float("inf")])
def test_counters_of_other_types_never_raise(value: Any) -> None:
    spec = ask_spec()
    spec["resolution"]["asked"] = value
    assert isinstance(invariant_failures(spec), list)


# ------------------------------------------------------------------ counterexamples


@pytest.mark.parametrize(
    ("checker", "params"),
    [(CASE, {"case": "add-caching-auto"}), (SUITE, {"total": 0}), (SUITE, {"total": 17})],
)
def test_the_counterexample_makes_the_checker_fail_with_its_own_code(
    checker: Any, params: dict[str, Any]
) -> None:
    inputs = checker.counterexample(params)
    verdict = checker.function(inputs, params)
    assert verdict.status == "fail"
    assert set(verdict.codes) <= set(checker.reasons)


# ------------------------------------------------------------------ hostile records

_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**30),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(["ASK", "ROUTE", ".", "src/cache/redis.ts", "git:#1", "ns:1", "a b", "x\n"]),
)
_NAMES = st.sampled_from(
    ["decision", "resolution", "unknown", "constraints", "trace", "evidence", "state", "asked",
     "question", "options", "text", "source", "issue", "field", "open_fields", "unknowns_found",
     "resolved_by_probe", "inferred", "ask_budget", "irreversible", "target"]
)  # fmt: skip
_VALUE = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_NAMES, inner, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_NAMES, _VALUE, max_size=6), st.sampled_from([k[0] for k in KEYS]))
def test_hostile_specs_give_a_verdict_of_plain_data_or_an_input_error(
    parts: dict[str, Any], key: str
) -> None:
    spec = ask_spec()
    spec.update(parts)
    want = next(k[1] for k in KEYS if k[0] == key)
    try:
        verdict = run_case({key: want}, turn(spec))
    except CheckerInputError:
        return
    json.dumps(verdict.details, allow_nan=False)
    for reason in verdict.reasons:
        json.dumps(dict(reason.details), allow_nan=False)


# ------------------------------------------------------------------ persisted transcripts


def _fence(spec: dict[str, Any]) -> str:
    import yaml

    return "Intent spec:\n\n```yaml\n" + yaml.safe_dump(spec, sort_keys=False) + "```\n"


def _block(stdout: str, code: int = 0, stderr: str = "") -> str:
    return (
        f"$ opencode run --format json 'add caching'\n[exit {code}]\n{stdout}\n[stderr]\n{stderr}"
    )


def _opencode(*events: dict[str, Any]) -> str:
    return "\n".join(json.dumps(e) for e in events)


SKILL_ECHO = {
    "type": "tool_use",
    "part": {"type": "tool", "state": {"output": _fence(route_spec())}},
}


def run_transcripts(expect: dict[str, Any], files: dict[str, str], **extra: Any) -> Verdict:
    case = {"id": "c", "fixture": "user-api", "expect": expect, **extra}
    inputs = {
        "cases": [case],
        "transcripts": {name: text.encode() for name, text in files.items()},
        "schema": SCHEMA,
        "fixture": FILES,
    }
    return CASE.function(inputs, {"case": "c"})


def test_a_transcript_is_read_back_as_the_runner_reads_it() -> None:
    reply = {"type": "text", "part": {"type": "text", "text": _fence(ask_spec())}}
    opencode = _block(_opencode(SKILL_ECHO, reply))
    assert run_transcripts({"state": "ASK"}, {"c-1.txt": opencode}).status == "pass"
    claude = _block(json.dumps({"session_id": "s1", "result": _fence(ask_spec())}))
    assert run_transcripts({"state": "ASK"}, {"c-1.txt": claude}).status == "pass"


def test_a_fence_in_tool_output_is_never_the_spec_so_a_quiet_run_stays_quiet() -> None:
    quiet = {"type": "text", "part": {"type": "text", "text": "Done; no spec needed."}}
    files = {"c-1.txt": _block(_opencode(SKILL_ECHO, quiet))}
    assert run_transcripts({"should_trigger": False}, files).status == "pass"
    assert codes(run_transcripts({"state": "ASK"}, files)) == ["run.not_triggered"]


def test_transcript_statuses_timeout_harness_error_and_degraded_output() -> None:
    timeout = {"c-1.txt": _block("", 124, "timeout after 480s")}
    assert codes(run_transcripts({"state": "ASK"}, timeout)) == ["run.timeout"]
    limited = {"c-1.txt": _block("", 1, "error 429: rate limit")}
    assert codes(run_transcripts({"state": "ASK"}, limited)) == ["run.harness_error"]
    broken = json.dumps({"result": "```yaml\na: [1,\n```"})
    assert codes(run_transcripts({"state": "ASK"}, {"c-1.txt": _block(broken)})) == ["run.degraded"]


def test_a_two_turn_transcript_and_repeats_by_file_name() -> None:
    turn_one = _block(json.dumps({"session_id": "s", "result": _fence(ask_spec())}))
    turn_two = _block(json.dumps({"session_id": "s", "result": _fence(route_spec())}))
    files = {"c-1.txt": turn_one + "\n\n" + turn_two}
    assert run_transcripts({"state": "ROUTE"}, files, **TWO).status == "pass"
    only_one = {"c-1.txt": turn_two}  # turn one routed: the runner stopped there
    assert codes(run_transcripts({"state": "ROUTE"}, only_one, **TWO)) == ["run.turn1_not_ask"]
    runs = {"c-1.txt": turn_one, "c-2.txt": _block("", 124), "c-3.txt": turn_one}
    assert run_transcripts({"state": "ASK"}, runs).status == "pass"  # 2 of 3


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"c-1.txt": "no block here"}, "no '\\$ command'"),
        ({"other-1.txt": _block("")}, "not in cases.yaml"),
        ({"notes.md": _block("")}, "not a transcript"),
        ({"c-1.txt": _block(json.dumps({"result": "```yaml\na: &x [1]\nb: *x\n```"}))}, "alias"),
    ],
)
def test_a_transcript_that_is_not_one_is_refused(files: dict[str, str], message: str) -> None:
    with pytest.raises(CheckerInputError, match=message):
        run_transcripts({"state": "ASK"}, files)


def test_outputs_and_transcripts_together_are_refused() -> None:
    inputs = {
        "cases": [{"id": "c", "expect": {}}],
        "outputs": {"c": turn(None)},
        "transcripts": {"c-1.txt": _block("").encode()},
        "schema": SCHEMA,
    }
    with pytest.raises(CheckerInputError, match="not both"):
        CASE.function(inputs, {"case": "c"})


# ------------------------------------------- version 3: patterns on RE2 only (issue 42, item 4)


def run_at(version: int, expect: dict[str, Any], record: Any, schema: Any = None) -> Verdict:
    from bundler.run.runner import run_checker

    found = get(f"intent-expectations@{version}")
    assert found is not None
    case = {"id": "c", "prompt": "p", "mode": "auto", "fixture": "user-api", "expect": expect}
    inputs = {
        "cases": [case],
        "outputs": {"c": record},
        "schema": SCHEMA if schema is None else schema,
        "fixture": FILES,
    }
    return run_checker(found, inputs, {"case": "c"})


@pytest.mark.parametrize(
    "key", ["output_regex", "evidence_regex", "open_field_regex"], ids=lambda k: k
)
def test_out_of_subset_case_regex_is_not_rerun_under_intent_expectations_v3(key: str) -> None:
    record = turn(ask_spec(), text="a prototype first")
    verdict = run_at(3, {key: r"(?=a)a"}, record)
    assert verdict.codes == ("pattern.not_rerun",), verdict
    assert "'(?=a)a' is not re-run" in verdict.message
    assert run_at(2, {key: r"(?=a)a"}, record).status in ("pass", "fail")  # @2: Python's re


def test_out_of_subset_schema_pattern_is_not_rerun_under_intent_expectations_v3() -> None:
    schema = copy.deepcopy(SCHEMA)
    schema.setdefault("properties", {})["request"] = {"type": "string", "pattern": r"(x)\1"}
    record = turn(ask_spec(), text="a prototype first")
    assert run_at(3, {}, record, schema).codes == ("pattern.not_rerun",)


@pytest.mark.parametrize(("key", "want", "ok", "bad"), KEYS, ids=[k[0] for k in KEYS])
def test_intent_expectations_v3_gives_v2_verdicts_inside_the_subset(
    key: str, want: Any, ok: Callable[..., None], bad: Callable[..., None]
) -> None:
    good, wrong = ask_spec(), ask_spec()
    ok(good)
    bad(wrong)
    for record in (turn(good, text="a prototype first"), turn(wrong, text="a full rewrite")):
        old, new = run_at(2, {key: want}, record), run_at(3, {key: want}, record)
        assert (new.status, new.codes, new.message) == (old.status, old.codes, old.message)
