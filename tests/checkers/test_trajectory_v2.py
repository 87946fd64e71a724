"""trajectory-skeleton@2 and model format 2 (seed 003): unique state ids, canonical
identity text, repeated essential steps, kept-apart states in the verdict; and
classification-metrics@2's F1."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from v2_support import run

from bundler.cli import main
from checkers.skeleton import (
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

SKELETON_1, SKELETON_2 = "trajectory-skeleton@1", "trajectory-skeleton@2"
LABEL = Equivalence()


def doc(name: str, labels: list[Any]) -> dict[str, Any]:
    states = [lab if isinstance(lab, dict) else {"label": lab} for lab in labels]
    return {"trace": name, "outcome": "success", "states": states}


def refs(*runs: list[Any]) -> list[dict[str, Any]]:
    return [doc(f"r{i}", labels) for i, labels in enumerate(runs, start=1)]


def learned(*runs: list[Any], model_format: str = MODEL_FORMAT_2) -> Model:
    traces = [parse_trace(r) for r in refs(*runs)]
    return learn(traces, LABEL, model_format)


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
    model = learned(["Start", "start state", "end"], ["Start", "start state", "end"])
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
    model = learned([*labels, "done"], [*labels, "done"])
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
    assert run(SKELETON_1, inputs).status == "pass"
    verdict = run(SKELETON_2, inputs)
    assert verdict.codes == ("trajectory.missing",)
    assert "'Search results' never reached" in verdict.message
    twin = {
        "trace": "c",
        "states": [{"label": "editor"}, {"label": "Search  results"}, {"label": "done"}],
    }
    assert run(SKELETON_2, {**inputs, "trace": twin}).status == "pass"


def test_composed_and_decomposed_accents_are_one_state() -> None:
    model = learned(["Caf\u00e9", "done"], ["Cafe\u0301", "done"])
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
    inputs = {"references": refs(*runs), "trace": doc("c", runs[0])}
    assert "kept_apart" not in run(SKELETON_1, inputs, identity=["label", "view"]).details
    verdict = run(SKELETON_2, inputs, identity=["label", "view"])
    assert verdict.status == "pass"
    assert verdict.details["kept_apart"][0]["label"] == "results"
    assert verdict.details["kept_apart"][0]["differ_on"] == ["view"]
    assert "kept apart" in verdict.message


# --------------------------------------------------------------------------- repeats

EDIT = ["open", "edit title", "save", "edit body", "save", "close"]


def test_a_step_every_reference_repeats_after_another_must_be_repeated() -> None:
    references = refs(EDIT, ["open", "loading", *EDIT[1:]])
    unsaved = doc("c", ["open", "edit title", "save", "edit body", "close"])  # body never saved
    inputs = {"references": references, "trace": unsaved}
    assert run(SKELETON_1, inputs).status == "pass"  # the false accept
    verdict = run(SKELETON_2, inputs)
    assert verdict.codes == ("trajectory.repeat_missing",)
    assert "'save' not reached again after 'edit body'" in verdict.message
    assert verdict.details["repeats"] == [["edit-body", "save"]]
    assert run(SKELETON_2, {**inputs, "trace": doc("c", ["open", "x", *EDIT[1:]])}).status == "pass"


def test_a_step_only_some_references_repeat_is_not_required_again() -> None:
    references = refs(EDIT, ["open", "edit title", "save", "edit body", "close"])
    model = learn([parse_trace(r) for r in references], LABEL, MODEL_FORMAT_2)
    assert model.repeats == ()
    assert match(
        model, parse_trace(doc("c", ["open", "edit title", "save", "edit body", "close"]))
    ).passed


def test_saving_once_after_both_edits_meets_the_repeat_when_a_reference_did_so() -> None:
    references = refs(EDIT, ["open", "edit title", "edit body", "save", "close"])
    model = learn([parse_trace(r) for r in references], LABEL, MODEL_FORMAT_2)
    assert model.repeats == (("edit-body", "save"),)  # both references save after the body
    assert match(
        model, parse_trace(doc("c", ["open", "edit title", "edit body", "save", "close"]))
    ).passed
    late = match(model, parse_trace(doc("c", ["open", "edit title", "save", "edit body", "close"])))
    assert [p.code for p in late.problems] == ["trajectory.repeat_missing"]


def test_repeats_round_trip_and_a_format_1_model_is_refused_by_version_2() -> None:
    model = learned(EDIT, EDIT)
    document = read_back(model)
    assert document["repeats"] == [["edit-body", "save"]]
    old = learned(EDIT, EDIT, model_format=MODEL_FORMAT)
    assert "repeats" not in old.to_dict()
    verdict = run(SKELETON_2, {"model": old.to_dict(), "trace": doc("c", EDIT)})
    assert verdict.codes == ("input.invalid",) and "learn it again" in verdict.message
    assert run(SKELETON_1, {"model": document, "trace": doc("c", EDIT)}).codes == ("input.invalid",)


# --------------------------------------------------------------------------- properties

NOISE = st.text(alphabet="xyz", min_size=1, max_size=3).map(lambda s: f"noise {s}")


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
            labels.insert(at, f"{draw(NOISE)} r{i}")
        runs.append([*labels, "done"])
    return core, runs


@settings(max_examples=40, deadline=None)
@given(repeated_core(), st.data())
def test_noise_never_breaks_a_pass(
    case: tuple[list[str], list[list[str]]], data: st.DataObject
) -> None:
    _, runs = case
    model = learned(*runs)
    probe = list(data.draw(st.sampled_from(runs)))
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        at = data.draw(st.integers(min_value=0, max_value=len(probe)))
        probe.insert(at, data.draw(st.sampled_from(["loading", "toast", *probe])))
    assert match(model, parse_trace(doc("probe", probe))).passed


@settings(max_examples=40, deadline=None)
@given(repeated_core(), st.data())
def test_dropping_an_essential_occurrence_always_fails(
    case: tuple[list[str], list[list[str]]], data: st.DataObject
) -> None:
    core, runs = case
    model = learned(*runs)
    probe = list(data.draw(st.sampled_from(runs)))
    # each core label once, and the final repeat: dropping any of these occurrences fails
    positions = [i for i, label in enumerate(probe) if label in core]
    drop = data.draw(st.sampled_from(positions))
    del probe[drop]
    result = match(model, parse_trace(doc("probe", probe)))
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
        run("classification-metrics@1", {"predictions": alarms}, claimed=claimed).status == "pass"
    )
    verdict = run("classification-metrics@2", {"predictions": alarms}, claimed=claimed)
    assert verdict.codes == ("metrics.mismatch",)
    assert [r.details["figure"] for r in verdict.reasons] == ["f1"]
    fixed = {"m": {"f1": 0.0, "recall": "undefined", "precision": 0.0}}
    assert run("classification-metrics@2", {"predictions": alarms}, claimed=fixed).status == "pass"


def test_f1_is_undefined_only_when_it_is_zero_over_zero() -> None:
    quiet = table([("pass", "pass"), ("pass", "pass")])  # TP 0, FP 0, FN 0
    claimed = {"m": {"f1": "undefined"}}
    assert run("classification-metrics@2", {"predictions": quiet}, claimed=claimed).status == "pass"
    missed = table([("fail", "pass")])  # FN 1: precision undefined, F1 = 0 / 1
    assert (
        run("classification-metrics@1", {"predictions": missed}, claimed=claimed).status == "pass"
    )
    assert (
        run("classification-metrics@2", {"predictions": missed}, claimed={"m": {"f1": 0.0}}).status
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
    verdict = run(
        "classification-metrics@2", {"predictions": table(rows)}, claimed={"m": {"n": len(rows)}}
    )
    f1 = verdict.details["methods"]["m"]["figures"]["f1"]["value"]
    assert f1 == (2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else None)


def test_the_edit_example_is_a_false_accept_of_version_1() -> None:
    from bundler.format import yamlfile
    from tests.helpers import REPO

    def load(path: str) -> object:
        text = (REPO / "bundles/trajectory-skeleton/inputs/edit" / path).read_text()
        return yamlfile.load(text)[0]

    inputs = {
        "references": [load("references/e1.yaml"), load("references/e2.yaml")],
        "trace": load("tests/body-never-saved.yaml"),
    }
    # format 1: the two spellings of "saved ✓" are two states, so no save is essential
    assert run(SKELETON_1, inputs).status == "pass"
    assert run(SKELETON_2, inputs).codes == ("trajectory.repeat_missing",)
