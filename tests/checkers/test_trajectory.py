"""trajectory-skeleton@1 and the learning behind it (checkers/trajectory/skeleton.py).

trajectory-skeleton@2 and model format 2 (seed 003): unique state ids, canonical
identity text, repeated essential steps, kept-apart states in the verdict; and
classification-metrics@2's F1."""

from __future__ import annotations

import datetime
import json
from typing import Any

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import checkers
from bundler.cli import main
from bundler.run.runner import run_checker
from checkers.api import CheckerInputError
from checkers.trajectory.skeleton import (
    MODEL_FORMAT,
    MODEL_FORMAT_2,
    Equivalence,
    Model,
    canonical_text,
    learn,
    match,
    parse_trace,
    read_back,
)
from tests.checkers.checker_calls import run as run_at2

SKELETON = checkers.get("trajectory-skeleton@1")
assert SKELETON is not None


def doc(name: str, labels: list[str], **header: Any) -> dict[str, Any]:
    return {"trace": name, **header, "states": [{"label": label} for label in labels]}


def trace(name: str, labels: list[str]) -> Any:
    return parse_trace(doc(name, labels))


LABEL = Equivalence()

# the seed's editor search task: a loading screen that faster runs skip
SEARCH_REFS = [
    ["editor", "search dialog", "loading", "search results"],
    ["editor", "search dialog", "search results"],
    ["editor", "command palette", "search dialog", "loading", "search results"],
]


def search_model() -> Model:
    return learn([trace(f"r{i}", labels) for i, labels in enumerate(SEARCH_REFS)], LABEL)


def run(inputs: dict[str, Any], **params: Any) -> Any:
    return run_checker(SKELETON, inputs, params)


# ------------------------------------------------------------------- traces


def test_yaml_and_jsonl_forms_of_a_trace_have_the_same_hash() -> None:
    document = {
        "trace": "r1",
        "task": "t",
        "states": [
            {"label": "a", "attrs": {"view": "x"}},
            {"label": "b", "action": {"type": "key"}},
        ],
    }
    records = [
        (1, {"trace": "r1", "task": "t"}),
        (2, document["states"][0]),
        (3, document["states"][1]),
    ]
    assert parse_trace(document).sha256 == parse_trace(records).sha256
    assert [s.label for s in parse_trace(records).steps] == ["a", "b"]


def test_jsonl_trace_must_start_with_a_header() -> None:
    with pytest.raises(CheckerInputError) as caught:
        parse_trace([(1, {"label": "a"}), (2, {"label": "b"})])
    assert caught.value.code == "input.invalid"
    assert "line 1" in caught.value.message


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"trace": "x", "states": []}, "non-empty list"),
        ({"states": [{"label": "a"}]}, "'trace' name"),
        ({"trace": "x", "states": [{"label": "a", "atrs": {}}]}, "states[0]: unknown field"),
        ({"trace": "x", "states": [{"attrs": {}}]}, "non-empty 'label'"),
        ({"trace": "x", "states": [{"label": "a", "attrs": [1]}]}, "'attrs' must be a mapping"),
        ("just text", "a trace is a mapping"),
    ],
)
def test_malformed_trace_is_input_invalid_naming_the_place(value: Any, fragment: str) -> None:
    with pytest.raises(CheckerInputError) as caught:
        parse_trace(value)
    assert caught.value.code == "input.invalid"
    assert fragment in caught.value.message


# -------------------------------------------------------------- equivalence


def test_normaliser_strips_a_volatile_timer_so_two_loading_screens_are_one_state() -> None:
    eq = Equivalence.from_params(["label"], [{"field": "label", "pattern": r"\s*\d+(\.\d+)? s$"}])
    a, b = parse_trace(doc("t", ["Searching… 0.6 s", "Searching… 14.2 s"])).steps
    assert eq.identify(a) == eq.identify(b) == {"label": "Searching…"}


def test_attributes_outside_the_identity_are_ignored_and_inside_it_keep_states_apart() -> None:
    eq = Equivalence.from_params(["label", "view"], [])
    steps = parse_trace(
        {
            "trace": "t",
            "states": [
                {"label": "editor", "attrs": {"view": "main", "shot": "1.png"}},
                {"label": "editor", "attrs": {"view": "main", "shot": "2.png"}},
                {"label": "editor", "attrs": {"view": "diff"}},
            ],
        }
    ).steps
    assert eq.identify(steps[0]) == eq.identify(steps[1])
    assert eq.identify(steps[0]) != eq.identify(steps[2])


@pytest.mark.parametrize(
    ("identity", "normalise", "fragment"),
    [
        ([], [], "non-empty list"),
        (["label", "label"], [], "twice"),
        (["label"], [{"pattern": "("}], "bad regular expression"),
        (["label"], [{"field": "view", "pattern": "x"}], "not an identity field"),
        (["label"], [{"pattern": "x", "flags": "i"}], "unknown key"),
        (["label"], [{"replace": "x"}], "needs a 'pattern'"),
    ],
)
def test_bad_equivalence_params_are_params_invalid(
    identity: list[Any], normalise: list[Any], fragment: str
) -> None:
    with pytest.raises(CheckerInputError) as caught:
        Equivalence.from_params(identity, normalise)
    assert caught.value.code == "params.invalid"
    assert fragment in caught.value.message


# ----------------------------------------------------------------- learning


def test_loading_screen_is_optional_and_search_dialog_essential() -> None:
    model = search_model()
    assert model.skeleton == ("editor", "search-dialog", "search-results")
    assert set(model.optional) == {"loading", "command-palette"}
    assert all(model.state(s).why == "dominator" for s in model.skeleton)
    assert model.precedence == (("editor", "search-dialog"), ("search-dialog", "search-results"))
    # hand-computed dominator tree of the merged graph
    assert model.immediate_dominators == {
        "editor": "start",
        "command-palette": "editor",
        "search-dialog": "editor",
        "loading": "search-dialog",
        "search-results": "search-dialog",
        "success": "search-results",
    }
    assert model.guard == ()


def test_prefix_tree_and_merge_decisions_are_recorded() -> None:
    model = search_model()
    # 12 observations; prefix tree: editor shared by all three runs (1 node), then
    # 3 + 1 + 4 nodes on the branches = 9 nodes; merged into 5 states
    assert model.prefix_tree == {"nodes": 9, "observations": 12, "states": 5}
    merges = {m["state"]: m for m in model.merges}
    assert merges["editor"]["merged"] is False  # one prefix-tree node, shared prefix
    assert merges["search-results"]["merged"] is True
    assert merges["search-results"]["prefix_tree_nodes"] == 3
    assert [(o["trace"], o["step"]) for o in merges["search-results"]["observations"]] == [
        ("r0", 4),
        ("r1", 3),
        ("r2", 5),
    ]
    assert "equal normalised identity" in merges["search-results"]["decision"]


def test_states_kept_apart_by_an_identity_attribute_are_recorded() -> None:
    eq = Equivalence.from_params(["label", "view"], [])
    refs = [
        parse_trace(
            {
                "trace": n,
                "states": [
                    {"label": "editor", "attrs": {"view": "main"}},
                    {"label": "editor", "attrs": {"view": "diff"}},
                ],
            }
        )
        for n in ("a", "b")
    ]
    model = learn(refs, eq)
    assert [s.id for s in model.states] == ["editor", "editor-2"]
    assert model.kept_apart[0]["differ_on"] == ["view"]
    # ids follow the sorted identities (diff < main), the skeleton the runs' order
    assert model.state("editor").identity == {"label": "editor", "view": "diff"}
    assert model.skeleton == ("editor-2", "editor")


def test_learning_does_not_depend_on_reference_order() -> None:
    traces = [trace(f"r{i}", labels) for i, labels in enumerate(SEARCH_REFS)]
    assert learn(traces, LABEL).to_dict() == learn(traces[::-1], LABEL).to_dict()


def test_model_round_trips_through_json() -> None:
    model = search_model()
    text = json.dumps(model.to_dict())
    assert Model.from_dict(json.loads(text)).to_dict() == model.to_dict()


@pytest.mark.parametrize(
    ("refs", "fragment"),
    [
        ([doc("a", ["x"])], "at least 2"),
        ([doc("a", ["x"]), doc("a", ["y"])], "used twice"),
        ([doc("a", ["x"]), doc("b", ["x"], outcome="failure")], "successful runs"),
        ([doc("a", ["x", "y"]), doc("b", ["z"])], "share no state"),
    ],
)
def test_learning_refuses_unusable_references(refs: list[Any], fragment: str) -> None:
    with pytest.raises(CheckerInputError) as caught:
        learn([parse_trace(r) for r in refs], LABEL)
    assert fragment in caught.value.message


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        # a normaliser that deletes the whole label: every screen becomes one state
        ({"normalise": [{"pattern": ".+"}]}, "nothing left to identify"),
        # an identity attribute no trace records: every screen is {view: null}
        ({"identity": ["view"]}, "nothing left to identify"),
    ],
)
def test_identity_erased_by_the_params_is_refused_not_a_skeleton_that_passes_anything(
    params: dict[str, Any], fragment: str
) -> None:
    refs = [doc(f"r{i}", labels) for i, labels in enumerate(SEARCH_REFS)]
    verdict = run({"references": refs, "trace": doc("t", ["anything at all"])}, **params)
    assert (verdict.status, verdict.codes) == ("error", ("input.invalid",)), verdict.message
    assert fragment in verdict.message
    assert "step 1" in verdict.message  # names where


def test_stored_model_with_an_empty_identity_state_is_refused() -> None:
    stored = search_model().to_dict()
    editor = next(s for s in stored["states"] if s["id"] == "editor")
    editor["identity"] = {"label": ""}
    verdict = run({"model": stored, "trace": doc("t", ["x"])})
    assert (verdict.status, verdict.codes) == ("error", ("input.invalid",)), verdict.message


def test_merge_guard_keeps_a_step_that_merging_routed_around() -> None:
    # both runs pass through E and B, in different orders; merging them creates the path
    # A -> B -> D that neither run took, so neither E nor B dominates success
    refs = [trace("one", ["A", "E", "B", "D"]), trace("two", ["A", "B", "E", "D"])]
    model = learn(refs, LABEL)
    graph = nx.DiGraph([(e["from"], e["to"]) for e in model.to_dict()["edges"]])
    idom = nx.immediate_dominators(graph, "start")
    assert (idom["success"], idom["d"]) == ("d", "a")  # dominators alone: A and D only
    assert set(model.skeleton) == {"a", "b", "e", "d"}
    assert {g["state"]: model.state(g["state"]).why for g in model.guard} == {
        "b": "guard",
        "e": "guard",
    }
    for entry in model.guard:
        assert entry["state"] not in entry["bypass"]
        assert "no reference trace took" in entry["message"]
    # B and E may come in either order, both after A and before D
    assert ("a", "b") in model.precedence and ("e", "d") in model.precedence
    assert ("b", "e") not in model.precedence and ("e", "b") not in model.precedence
    # the run that skips E fails, although a dominators-only skeleton would pass it
    skipped = match(model, trace("skip", ["A", "B", "D"]))
    assert [(p.code, p.state) for p in skipped.problems] == [("trajectory.missing", "e")]
    assert match(model, trace("either", ["A", "E", "B", "D"])).passed
    assert match(model, trace("or", ["A", "B", "E", "D"])).passed


def test_merge_guard_catches_an_optional_state_seen_before_and_after_a_step() -> None:
    # the loading screen appears before "search results" in one run and after it in
    # another: the merged graph then has editor -> loading -> done, around the results
    refs = [
        trace("r1", ["editor", "loading", "results", "done"]),
        trace("r2", ["editor", "results", "loading", "done"]),
        trace("r3", ["editor", "results", "done"]),
    ]
    model = learn(refs, LABEL)
    assert model.state("results").why == "guard"
    assert "loading" in model.optional
    assert not match(model, trace("t", ["editor", "loading", "done"])).passed


def test_reference_with_a_loop_still_learns_its_skeleton() -> None:
    refs = [trace("r1", ["a", "b", "a", "b", "c"]), trace("r2", ["a", "b", "c"])]
    model = learn(refs, LABEL)
    assert model.skeleton == ("a", "b", "c")
    assert match(model, trace("t", ["a", "b", "a", "c"])).passed


# ----------------------------------------------------------------- matching


def test_extra_states_between_essential_ones_are_noise() -> None:
    result = match(
        search_model(),
        trace(
            "t", ["editor", "tooltip", "search dialog", "notification", "loading", "search results"]
        ),
    )
    assert result.passed
    assert result.coverage == 1.0
    assert dict(result.positions) == {"editor": 1, "search-dialog": 3, "search-results": 6}
    assert "3 other step(s) are allowed noise" in result.explain()


def test_missing_state_is_named_with_the_state_it_should_follow() -> None:
    result = match(search_model(), trace("t", ["editor", "search dialog", "loading"]))
    assert [p.code for p in result.problems] == ["trajectory.missing"]
    assert result.problems[0].message == (
        "state 'search results' never reached after 'search dialog'"
    )
    assert result.matched == 2 and round(result.coverage, 3) == 0.667


def test_state_reached_only_before_its_predecessor_is_an_order_failure() -> None:
    result = match(search_model(), trace("t", ["editor", "search results", "search dialog"]))
    assert [(p.code, p.state) for p in result.problems] == [("trajectory.order", "search-results")]
    assert result.problems[0].details["must_follow"] == "search-dialog"


def test_every_problem_is_reported_not_only_the_first() -> None:
    result = match(search_model(), trace("t", ["loading"]))
    assert [p.state for p in result.problems] == ["editor", "search-dialog", "search-results"]
    assert result.problems[0].message == "state 'editor' never reached"
    assert result.coverage == 0.0


# ------------------------------------------------------------------ checker


def test_checker_passes_a_noisy_trace_against_a_stored_model() -> None:
    verdict = run(
        {
            "model": search_model().to_dict(),
            "trace": doc("t", ["editor", "x", "search dialog", "search results"]),
        }
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["coverage"] == {"matched": 3, "essential": 3, "share": 1.0}
    assert verdict.details["skeleton_from"] == "stored model"
    json.dumps(verdict.details)


def test_checker_fails_missing_step_with_trajectory_missing() -> None:
    verdict = run(
        {"model": search_model().to_dict(), "trace": doc("t", ["editor", "search dialog"])}
    )
    assert verdict.status == "fail"
    assert verdict.codes == ("trajectory.missing",)
    assert "never reached after 'search dialog'" in verdict.message


def test_checker_fails_misordered_steps_with_trajectory_order() -> None:
    verdict = run(
        {
            "model": search_model().to_dict(),
            "trace": doc("t", ["editor", "search results", "search dialog"]),
        }
    )
    assert verdict.codes == ("trajectory.order",)


def test_checker_learns_from_references_when_no_model_is_given() -> None:
    refs = [doc(f"r{i}", labels) for i, labels in enumerate(SEARCH_REFS)]
    passing = run(
        {"references": refs, "trace": doc("t", ["editor", "search dialog", "search results"])}
    )
    failing = run({"references": refs, "trace": doc("t", ["editor", "search results"])})
    assert passing.status == "pass"
    assert passing.details["skeleton_from"] == "model learned from the references"
    assert failing.codes == ("trajectory.missing",)


def test_checker_learns_with_declared_identity_and_normalisers() -> None:
    refs = [
        doc("r1", ["open", "Searching… 0.5 s", "done"]),
        doc("r2", ["open", "Searching… 3.1 s", "done"]),
    ]
    probe = doc("t", ["open", "done"])
    plain = run({"references": refs, "trace": probe})
    normalised = run(
        {"references": refs, "trace": probe}, normalise=[{"pattern": r" \d+(\.\d+)? s$"}]
    )
    # without the normaliser the two loading screens are different states: optional
    assert plain.status == "pass"
    # with it they are one state every reference reached: essential
    assert normalised.codes == ("trajectory.missing",)


def test_stored_model_equal_to_relearned_one_passes() -> None:
    refs = [doc(f"r{i}", labels) for i, labels in enumerate(SEARCH_REFS)]
    verdict = run(
        {
            "model": search_model().to_dict(),
            "references": refs,
            "trace": doc("t", ["editor", "search dialog", "search results"]),
        }
    )
    assert verdict.status == "pass", verdict.message
    assert verdict.details["skeleton_from"] == "model re-learned from the references"


def test_tampered_model_is_refused_with_model_mismatch() -> None:
    stored = search_model().to_dict()
    stored["skeleton"] = [e for e in stored["skeleton"] if e["state"] != "search-dialog"]
    stored["precedence"] = [["editor", "search-results"]]
    for state in stored["states"]:
        if state["id"] == "search-dialog":
            state["essential"], state["why"] = False, None
    Model.from_dict(stored)  # a well-formed model, just not the learned one
    refs = [doc(f"r{i}", labels) for i, labels in enumerate(SEARCH_REFS)]
    verdict = run(
        {"model": stored, "references": refs, "trace": doc("t", ["editor", "search results"])}
    )
    assert verdict.codes == ("trajectory.missing", "trajectory.model_mismatch")
    mismatch = next(r for r in verdict.reasons if r.code == "trajectory.model_mismatch")
    assert mismatch.details["count"] > 0
    assert "not what its 3 reference traces give" in mismatch.message


def test_model_from_other_references_is_refused() -> None:
    refs = [doc(f"r{i}", labels) for i, labels in enumerate(SEARCH_REFS)]
    changed = doc("r2", ["editor", "search dialog", "loading", "search results", "x"])
    verdict = run(
        {
            "model": search_model().to_dict(),
            "references": [*refs[:2], changed],
            "trace": doc("t", ["editor", "search dialog", "search results"]),
        }
    )
    assert verdict.codes == ("trajectory.model_mismatch",)
    assert verdict.reasons[0].details["differences"][0].startswith("sources[2]")


def test_checker_without_model_or_references_is_an_input_error() -> None:
    verdict = run({"trace": doc("t", ["a"])})
    assert (verdict.status, verdict.codes) == ("error", ("input.invalid",))


def test_params_that_contradict_the_model_are_refused() -> None:
    verdict = run(
        {"model": search_model().to_dict(), "trace": doc("t", ["a"])}, identity=["label", "view"]
    )
    assert (verdict.status, verdict.codes) == ("error", ("params.invalid",))
    same = run({"model": search_model().to_dict(), "trace": doc("t", ["a"])}, identity=["label"])
    assert same.status == "fail"


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(format="trajectory-model/9"),
        lambda m: m.pop("skeleton"),
        lambda m: m["skeleton"].pop(),
        lambda m: m.update(precedence=[["search-results", "editor"]]),
        lambda m: m["params"].update(identity=[]),
        lambda m: m["params"].update(identity=["label", "view"]),
        lambda m: (
            m.update(skeleton=[], precedence=[]) or [s.update(essential=False) for s in m["states"]]
        ),
    ],
)
def test_malformed_model_is_input_invalid(edit: Any) -> None:
    stored = search_model().to_dict()
    edit(stored)
    verdict = run({"model": stored, "trace": doc("t", ["editor"])})
    assert (verdict.status, verdict.codes) == ("error", ("input.invalid",)), verdict.message


# ------------------------------------------------------------------ properties

ESSENTIAL = ["open", "dialog", "typed", "results", "opened"]
NOISE = ["loading", "tooltip", "toast", "palette"]


@st.composite
def chain_case(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    """A chain of essential labels and 2-4 references: the chain with noise inserted
    (the first reference has none, so no noise state is in every reference)."""
    size = draw(st.integers(2, len(ESSENTIAL)))
    chain = ESSENTIAL[:size]
    refs = [list(chain)]
    for _ in range(draw(st.integers(1, 3))):
        run_ = list(chain)
        for noise in draw(st.lists(st.sampled_from(NOISE), max_size=4)):
            run_.insert(draw(st.integers(0, len(run_))), noise)
        refs.append(run_)
    return chain, refs


def learned(refs: list[list[str]]) -> Model:
    return learn([trace(f"r{i}", r) for i, r in enumerate(refs)], LABEL)


@settings(max_examples=60, deadline=None)
@given(chain_case(), st.data())
def test_inserting_states_anywhere_never_breaks_a_passing_trace(
    case: tuple[list[str], list[list[str]]], data: st.DataObject
) -> None:
    chain, refs = case
    model = learned(refs)
    assert model.skeleton == tuple(chain)
    probe = list(data.draw(st.sampled_from(refs)))
    assert match(model, trace("t", probe)).passed
    for extra in data.draw(st.lists(st.sampled_from(NOISE + ESSENTIAL), max_size=6)):
        probe.insert(data.draw(st.integers(0, len(probe))), extra)
    assert match(model, trace("t", probe)).passed


@settings(max_examples=60, deadline=None)
@given(chain_case(), st.data())
def test_deleting_an_essential_state_always_fails(
    case: tuple[list[str], list[list[str]]], data: st.DataObject
) -> None:
    chain, refs = case
    model = learned(refs)
    probe = list(data.draw(st.sampled_from(refs)))
    gone = data.draw(st.sampled_from(chain))
    result = match(model, trace("t", [s for s in probe if s != gone]))
    assert not result.passed
    assert [(p.code, p.state) for p in result.problems] == [("trajectory.missing", gone)]


@settings(max_examples=60, deadline=None)
@given(chain_case(), st.data())
def test_swapping_two_essential_states_always_fails_on_order(
    case: tuple[list[str], list[list[str]]], data: st.DataObject
) -> None:
    chain, refs = case
    model = learned(refs)
    probe = list(data.draw(st.sampled_from(refs)))
    first, second = sorted(
        data.draw(st.lists(st.sampled_from(chain), min_size=2, max_size=2, unique=True))
    )
    i, j = probe.index(first), probe.index(second)
    probe[i], probe[j] = probe[j], probe[i]
    result = match(model, trace("t", probe))
    assert not result.passed
    assert {p.code for p in result.problems} == {"trajectory.order"}


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdef"), max_size=7), min_size=2, max_size=5))
def test_every_reference_passes_the_model_learned_from_it(runs: list[list[str]]) -> None:
    refs = [[*run_, "done"] for run_ in runs]  # random paths, loops included, to one end
    model = learned(refs)
    for i, labels in enumerate(refs):
        assert match(model, trace(f"r{i}", labels)).passed
    # essential = reached by every reference (dominators, plus what the guard kept)
    common = set.intersection(*(set(r) for r in refs))
    assert {model.label(s) for s in model.skeleton} == common
    # and the learned model does not depend on the order of the references
    traces = [trace(f"r{i}", labels) for i, labels in enumerate(refs)]
    assert learn(traces[::-1], LABEL).to_dict() == model.to_dict()


def test_yaml_timestamps_in_a_trace_are_hashed_and_compared_as_text() -> None:
    when = datetime.datetime(2026, 11, 24, 9, 14, tzinfo=datetime.UTC)
    refs = [
        {
            "trace": n,
            "states": [{"label": "a", "at": when, "attrs": {"day": when.date()}}, {"label": "b"}],
        }
        for n in ("r1", "r2")
    ]
    eq = Equivalence.from_params(["label", "day"], [])
    verdict = run({"references": refs, "trace": refs[0]}, identity=["label", "day"])
    assert verdict.status == "pass", verdict.message
    model = learn([parse_trace(r) for r in refs], eq)
    assert model.state("a").identity["day"] == "2026-11-24"
    stored = json.loads(json.dumps(model.to_dict()))
    assert run({"model": stored, "references": refs, "trace": refs[1]}).status == "pass"


SKELETON_1, SKELETON_2 = "trajectory-skeleton@1", "trajectory-skeleton@2"
LABEL_AT2 = Equivalence()


def doc_at2(name: str, labels: list[Any]) -> dict[str, Any]:
    states = [lab if isinstance(lab, dict) else {"label": lab} for lab in labels]
    return {"trace": name, "outcome": "success", "states": states}


def refs(*runs: list[Any]) -> list[dict[str, Any]]:
    return [doc_at2(f"r{i}", labels) for i, labels in enumerate(runs, start=1)]


def learned_at2(*runs: list[Any], model_format: str = MODEL_FORMAT_2) -> Model:
    traces = [parse_trace(r) for r in refs(*runs)]
    return learn(traces, LABEL_AT2, model_format)


# --------------------------------------------------------------------------- ids


def test_labels_that_slug_alike_never_share_a_state_id() -> None:
    # 'Save' with two views gets a clash suffix; the label 'save 2' slugs to 'save-2'
    # (format 1: the same id as the clash, so two states merge into one id)
    runs = [
        [
            {"label": "Save", "attrs": {"view": "a"}},
            {"label": "Save", "attrs": {"view": "b"}},
            "save 2",
        ],
        [
            {"label": "Save", "attrs": {"view": "a"}},
            {"label": "Save", "attrs": {"view": "b"}},
            "save 2",
        ],
    ]
    traces = [parse_trace(r) for r in refs(*runs)]
    by_view = Equivalence.from_params(["label", "view"], [])
    old = learn(traces, by_view)
    old_ids = [s.id for s in old.states]
    assert len(set(old_ids)) < len(old_ids)  # today's ids collide ...
    with pytest.raises(Exception, match="names a state twice"):
        Model.from_dict(json.loads(json.dumps(old.to_dict())))  # ... and check refuses the model
    new = learn(traces, by_view, MODEL_FORMAT_2)
    ids = [s.id for s in new.states]
    assert len(set(ids)) == len(ids) == 3
    assert sorted(ids) == ["save", "save--2", "save-2"]
    assert read_back(new)["format"] == MODEL_FORMAT_2


def test_a_label_that_slugs_to_a_reserved_name_keeps_its_own_id() -> None:
    model = learned_at2(["Start", "start state", "end"], ["Start", "start state", "end"])
    ids = sorted(s.id for s in model.states)
    assert len(set(ids)) == 3 and "start" not in ids and "success" not in ids


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "A", "a 2", "a-2", "a--2", "start", "Start State", "é", "."]),
        min_size=1,
        max_size=6,
    )
)
def test_state_ids_are_unique_for_any_labels(labels: list[str]) -> None:
    model = learned_at2([*labels, "done"], [*labels, "done"])
    ids = [s.id for s in model.states]
    assert len(set(ids)) == len(ids)
    read_back(model)


def test_learn_command_refuses_to_write_a_model_check_would_refuse(tmp_path: Any) -> None:
    for i in (1, 2):
        states = [
            {"label": "Save", "attrs": {"view": "a"}},
            {"label": "Save", "attrs": {"view": "b"}},
            {"label": "save 2"},
        ]
        (tmp_path / f"r{i}.json").write_text(json.dumps({"trace": f"r{i}", "states": states}))
    out = tmp_path / "model.json"
    args = [
        "trajectory",
        "learn",
        str(tmp_path / "r1.json"),
        str(tmp_path / "r2.json"),
        "-o",
        str(out),
    ]
    args += ["--identity", "label", "--identity", "view"]
    result = CliRunner().invoke(main, [*args, "--model-format", "1"])
    assert result.exit_code == 2, result.output
    assert "would be refused" in result.output and not out.exists()
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["format"] == MODEL_FORMAT_2
    check = CliRunner().invoke(main, ["trajectory", "check", str(out), str(tmp_path / "r1.json")])
    assert check.exit_code == 0, check.output


# --------------------------------------------------------------------------- canonical text


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("Search\u00a0results", "Search results"),
        ("  Search   results \n", "Search results"),
        ("Search\u202fresults", "Search results"),
        ("Cafe\u0301", "Caf\u00e9"),
        ("Search results", "Search results"),
    ],
)
def test_canonical_text(raw: str, canonical: str) -> None:
    assert canonical_text(raw) == canonical


def test_spelling_variants_of_one_label_are_one_state_before_the_normalisers() -> None:
    ref_a = ["editor", "Search\u00a0results", "done"]
    ref_b = ["editor", "Search results ", "done"]
    candidate = {"trace": "c", "states": [{"label": "editor"}, {"label": "done"}]}
    inputs = {"references": refs(ref_a, ref_b), "trace": candidate}
    # format 1 sees two states, so neither is essential, and a run that skips both passes
    assert run_at2(SKELETON_1, inputs).status == "pass"
    verdict = run_at2(SKELETON_2, inputs)
    assert verdict.codes == ("trajectory.missing",)
    assert "'Search results' never reached" in verdict.message
    twin = {
        "trace": "c",
        "states": [{"label": "editor"}, {"label": "Search  results"}, {"label": "done"}],
    }
    assert run_at2(SKELETON_2, {**inputs, "trace": twin}).status == "pass"


def test_composed_and_decomposed_accents_are_one_state() -> None:
    model = learned_at2(["Caf\u00e9", "done"], ["Cafe\u0301", "done"])
    assert [s.label for s in model.states if s.essential] == ["Caf\u00e9", "done"]


def test_states_kept_apart_are_in_the_verdict() -> None:
    runs = [
        [
            {"label": "results", "attrs": {"view": "list"}},
            {"label": "results", "attrs": {"view": "grid"}},
        ],
        [
            {"label": "results", "attrs": {"view": "list"}},
            {"label": "results", "attrs": {"view": "grid"}},
        ],
    ]
    inputs = {"references": refs(*runs), "trace": doc_at2("c", runs[0])}
    assert "kept_apart" not in run_at2(SKELETON_1, inputs, identity=["label", "view"]).details
    verdict = run_at2(SKELETON_2, inputs, identity=["label", "view"])
    assert verdict.status == "pass"
    assert verdict.details["kept_apart"][0]["label"] == "results"
    assert verdict.details["kept_apart"][0]["differ_on"] == ["view"]
    assert "kept apart" in verdict.message


# --------------------------------------------------------------------------- repeats

EDIT = ["open", "edit title", "save", "edit body", "save", "close"]


def test_a_step_every_reference_repeats_after_another_must_be_repeated() -> None:
    references = refs(EDIT, ["open", "loading", *EDIT[1:]])
    unsaved = doc_at2("c", ["open", "edit title", "save", "edit body", "close"])  # body never saved
    inputs = {"references": references, "trace": unsaved}
    assert run_at2(SKELETON_1, inputs).status == "pass"  # the false accept
    verdict = run_at2(SKELETON_2, inputs)
    assert verdict.codes == ("trajectory.repeat_missing",)
    assert "'save' not reached again after 'edit body'" in verdict.message
    assert verdict.details["repeats"] == [["edit-body", "save"]]
    assert (
        run_at2(SKELETON_2, {**inputs, "trace": doc_at2("c", ["open", "x", *EDIT[1:]])}).status
        == "pass"
    )


def test_a_step_only_some_references_repeat_is_not_required_again() -> None:
    references = refs(EDIT, ["open", "edit title", "save", "edit body", "close"])
    model = learn([parse_trace(r) for r in references], LABEL_AT2, MODEL_FORMAT_2)
    assert model.repeats == ()
    assert match(
        model, parse_trace(doc_at2("c", ["open", "edit title", "save", "edit body", "close"]))
    ).passed


def test_saving_once_after_both_edits_meets_the_repeat_when_a_reference_did_so() -> None:
    references = refs(EDIT, ["open", "edit title", "edit body", "save", "close"])
    model = learn([parse_trace(r) for r in references], LABEL_AT2, MODEL_FORMAT_2)
    assert model.repeats == (("edit-body", "save"),)  # both references save after the body
    assert match(
        model, parse_trace(doc_at2("c", ["open", "edit title", "edit body", "save", "close"]))
    ).passed
    late = match(
        model, parse_trace(doc_at2("c", ["open", "edit title", "save", "edit body", "close"]))
    )
    assert [p.code for p in late.problems] == ["trajectory.repeat_missing"]


def test_repeats_round_trip_and_a_format_1_model_is_refused_by_version_2() -> None:
    model = learned_at2(EDIT, EDIT)
    document = read_back(model)
    assert document["repeats"] == [["edit-body", "save"]]
    old = learned_at2(EDIT, EDIT, model_format=MODEL_FORMAT)
    assert "repeats" not in old.to_dict()
    verdict = run_at2(SKELETON_2, {"model": old.to_dict(), "trace": doc_at2("c", EDIT)})
    assert verdict.codes == ("input.invalid",) and "learn it again" in verdict.message
    assert run_at2(SKELETON_1, {"model": document, "trace": doc_at2("c", EDIT)}).codes == (
        "input.invalid",
    )


# --------------------------------------------------------------------------- properties

NOISE_AT2 = st.text(alphabet="xyz", min_size=1, max_size=3).map(lambda s: f"noise {s}")


@st.composite
def repeated_core(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    """Distinct essential labels, then one of the earlier ones again at the end: every
    reference has this core, with noise (never shared by all) inserted anywhere."""
    core = draw(st.lists(st.sampled_from("abcdefg"), min_size=2, max_size=5, unique=True))
    core = [*core, draw(st.sampled_from(core[:-1]))]
    runs = []
    for i in range(draw(st.integers(min_value=2, max_value=4))):
        labels = list(core)
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            at = draw(st.integers(min_value=0, max_value=len(labels)))
            labels.insert(at, f"{draw(NOISE_AT2)} r{i}")
        runs.append([*labels, "done"])
    return core, runs


@settings(max_examples=40, deadline=None)
@given(repeated_core(), st.data())
def test_noise_never_breaks_a_pass(
    case: tuple[list[str], list[list[str]]], data: st.DataObject
) -> None:
    _, runs = case
    model = learned_at2(*runs)
    probe = list(data.draw(st.sampled_from(runs)))
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        at = data.draw(st.integers(min_value=0, max_value=len(probe)))
        probe.insert(at, data.draw(st.sampled_from(["loading", "toast", *probe])))
    assert match(model, parse_trace(doc_at2("probe", probe))).passed


@settings(max_examples=40, deadline=None)
@given(repeated_core(), st.data())
def test_dropping_an_essential_occurrence_always_fails(
    case: tuple[list[str], list[list[str]]], data: st.DataObject
) -> None:
    core, runs = case
    model = learned_at2(*runs)
    probe = list(data.draw(st.sampled_from(runs)))
    # each core label once, and the final repeat: dropping any of these occurrences fails
    positions = [i for i, label in enumerate(probe) if label in core]
    drop = data.draw(st.sampled_from(positions))
    del probe[drop]
    result = match(model, parse_trace(doc_at2("probe", probe)))
    assert not result.passed, (core, probe)


# --------------------------------------------------------------------------- metrics


def table(rows: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "items": [
            {"id": f"i{n}", "truth": truth, "predictions": {"m": said}}
            for n, (truth, said) in enumerate(rows)
        ]
    }


def test_f1_is_zero_not_undefined_with_false_alarms_and_no_positive_item() -> None:
    alarms = table([("pass", "fail"), ("pass", "pass")])  # TP 0, FP 1, FN 0
    claimed = {"m": {"f1": "undefined", "recall": "undefined", "precision": 0.0}}
    assert (
        run_at2("classification-metrics@1", {"predictions": alarms}, claimed=claimed).status
        == "pass"
    )
    verdict = run_at2("classification-metrics@2", {"predictions": alarms}, claimed=claimed)
    assert verdict.codes == ("metrics.mismatch",)
    assert [r.details["figure"] for r in verdict.reasons] == ["f1"]
    fixed = {"m": {"f1": 0.0, "recall": "undefined", "precision": 0.0}}
    assert (
        run_at2("classification-metrics@2", {"predictions": alarms}, claimed=fixed).status == "pass"
    )


def test_f1_is_undefined_only_when_it_is_zero_over_zero() -> None:
    quiet = table([("pass", "pass"), ("pass", "pass")])  # TP 0, FP 0, FN 0
    claimed = {"m": {"f1": "undefined"}}
    assert (
        run_at2("classification-metrics@2", {"predictions": quiet}, claimed=claimed).status
        == "pass"
    )
    missed = table([("fail", "pass")])  # FN 1: precision undefined, F1 = 0 / 1
    assert (
        run_at2("classification-metrics@1", {"predictions": missed}, claimed=claimed).status
        == "pass"
    )
    assert (
        run_at2(
            "classification-metrics@2", {"predictions": missed}, claimed={"m": {"f1": 0.0}}
        ).status
        == "pass"
    )


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["fail", "pass"]), st.sampled_from(["fail", "pass"])),
        min_size=1,
        max_size=12,
    )
)
def test_f1_is_the_formula(rows: list[tuple[str, str]]) -> None:
    tp = sum(t == s == "fail" for t, s in rows)
    fp = sum(t == "pass" and s == "fail" for t, s in rows)
    fn = sum(t == "fail" and s == "pass" for t, s in rows)
    verdict = run_at2(
        "classification-metrics@2", {"predictions": table(rows)}, claimed={"m": {"n": len(rows)}}
    )
    f1 = verdict.details["methods"]["m"]["figures"]["f1"]["value"]
    assert f1 == (2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else None)


def test_the_edit_example_is_a_false_accept_of_version_1() -> None:
    from checkers import yamlfile
    from tests.helpers import REPO

    def load(path: str) -> object:
        text = (REPO / "bundles/trajectory-skeleton/inputs/edit" / path).read_text()
        return yamlfile.load(text)[0]

    inputs = {
        "references": [load("references/e1.yaml"), load("references/e2.yaml")],
        "trace": load("tests/body-never-saved.yaml"),
    }
    # format 1: the two spellings of "saved ✓" are two states, so no save is essential
    assert run_at2(SKELETON_1, inputs).status == "pass"
    assert run_at2(SKELETON_2, inputs).codes == ("trajectory.repeat_missing",)


# ------------------------------------- version 3: normalisers on RE2 only (issue 42, item 4)


def _normalised(version: int, pattern: str, replace: str = "") -> Any:
    found = checkers.get(f"trajectory-skeleton@{version}")
    assert found is not None
    references = [
        doc_at2("r1", ["open", "Searching 0.5 s", "done"]),
        doc_at2("r2", ["open", "Searching 3.1 s", "done"]),
    ]
    inputs = {"references": references, "trace": doc_at2("t", ["open", "done"])}
    normalise = [{"pattern": pattern, "replace": replace}]
    return run_checker(found, inputs, {"normalise": normalise})


def test_out_of_subset_normaliser_is_not_rerun_under_trajectory_skeleton_v3() -> None:
    verdict = _normalised(3, r"(?<=g) \d+(\.\d+)? s$")
    assert verdict.codes == ("pattern.not_rerun",)
    assert "is not re-run" in verdict.message and "group syntax" in verdict.message
    assert _normalised(2, r"(?<=g) \d+(\.\d+)? s$").codes == ("trajectory.missing",)


def test_normaliser_replacement_with_a_group_reference_is_not_rerun_under_v3() -> None:
    assert _normalised(3, r"( )\d+(\.\d+)? s$", r"\1").codes == ("pattern.not_rerun",)


@pytest.mark.parametrize(
    ("pattern", "replace"),
    [(r" \d+(\.\d+)? s$", ""), (r"\d", "#"), ("Searching.*", "S"), ("zzz", ""), ("o", "0")],
)
def test_trajectory_skeleton_v3_gives_v2_verdicts_for_in_subset_normalisers(
    pattern: str, replace: str
) -> None:
    old, new = _normalised(2, pattern, replace), _normalised(3, pattern, replace)
    assert (new.status, new.codes, new.message) == (old.status, old.codes, old.message)
