"""``reprobundle trajectory learn|check|show``, through click's CliRunner on the group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bundler.cli.trajectory import trajectory

REPO = Path(__file__).resolve().parents[2]
SEARCH = REPO / "bundles" / "trajectory-skeleton" / "inputs" / "search"
REGEX = REPO / "bundles" / "trajectory-skeleton" / "inputs" / "regex"


def write_trace(folder: Path, name: str, labels: list[str], suffix: str = ".yaml") -> Path:
    path = folder / f"{name}{suffix}"
    if suffix == ".jsonl":
        lines = [{"trace": name}] + [{"label": label} for label in labels]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    else:
        path.write_text(yaml.safe_dump({"trace": name, "states": [{"label": x} for x in labels]}))
    return path


@pytest.fixture
def refs(tmp_path: Path) -> list[Path]:
    return [
        write_trace(tmp_path, "r1", ["editor", "search dialog", "loading", "search results"]),
        write_trace(tmp_path, "r2", ["editor", "search dialog", "search results"], ".jsonl"),
    ]


def test_learn_writes_the_model_and_explains_the_skeleton(tmp_path: Path, refs: list[Path]) -> None:
    out = tmp_path / "models" / "search.json"
    result = CliRunner().invoke(trajectory, ["learn", *map(str, refs), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "skeleton learned from 2 reference traces" in result.output
    assert "1. editor  (dominates success)" in result.output
    assert "optional: loading" in result.output
    model = json.loads(out.read_text())
    assert [e["state"] for e in model["skeleton"]] == ["editor", "search-dialog", "search-results"]
    assert not list(out.parent.glob(".*"))  # no temp file left behind


def test_check_explains_a_pass_and_a_missing_step(tmp_path: Path, refs: list[Path]) -> None:
    model = tmp_path / "m.json"
    CliRunner().invoke(trajectory, ["learn", *map(str, refs), "-o", str(model)])
    good = write_trace(tmp_path, "good", ["editor", "toast", "search dialog", "search results"])
    bad = write_trace(tmp_path, "bad", ["editor", "search dialog", "loading"])
    passed = CliRunner().invoke(trajectory, ["check", str(model), str(good)])
    failed = CliRunner().invoke(trajectory, ["check", str(model), str(bad)])
    assert passed.exit_code == 0
    assert passed.output.startswith("PASS: trace 'good' passes: all 3 essential states reached")
    assert failed.exit_code == 1
    assert (
        "FAIL: trace 'bad' fails: state 'search results' never reached after "
        "'search dialog' (coverage 2 of 3 essential states)." in failed.output
    )
    report = json.loads(
        CliRunner().invoke(trajectory, ["check", str(model), str(bad), "--format", "json"]).output
    )
    assert report["status"] == "fail"
    assert report["reasons"][0]["code"] == "trajectory.missing"
    assert report["coverage"] == {"matched": 2, "essential": 3, "share": 0.666667}


def test_identity_and_normalise_options_define_state_equivalence(tmp_path: Path) -> None:
    refs = [
        write_trace(tmp_path, "r1", ["open", "Searching… 0.4 s", "done"]),
        write_trace(tmp_path, "r2", ["open", "Searching… 2.0 s", "done"]),
    ]
    out = tmp_path / "m.json"
    result = CliRunner().invoke(
        trajectory,
        [
            "learn",
            *map(str, refs),
            "-o",
            str(out),
            "--identity",
            "label",
            "--normalise",
            "label",
            r"\s*\d+(\.\d+)? s$",
        ],
    )
    assert result.exit_code == 0, result.output
    model = json.loads(out.read_text())
    assert [e["label"] for e in model["skeleton"]] == ["open", "Searching…", "done"]
    assert model["params"]["normalise"] == [
        {"field": "label", "pattern": r"\s*\d+(\.\d+)? s$", "replace": ""}
    ]


def test_mermaid_draws_essential_bold_and_optional_dashed(tmp_path: Path, refs: list[Path]) -> None:
    out = tmp_path / "m.json"
    result = CliRunner().invoke(
        trajectory, ["learn", *map(str, refs), "-o", str(out), "--format", "mermaid"]
    )
    lines = result.output.splitlines()
    assert lines[0] == "flowchart TD"
    assert '  s_search_dialog["search dialog"]' in lines
    assert "  class s_search_dialog essential" in lines
    assert "  class s_loading optional" in lines
    assert "  classDef essential font-weight:bold,stroke-width:3px" in lines
    assert "  classDef optional stroke-dasharray:5 5" in lines
    assert "  s_start -->|2| s_editor" in lines


def test_dot_draws_the_guarded_states_of_the_regex_model() -> None:
    result = CliRunner().invoke(trajectory, ["show", str(REGEX / "model.json"), "--format", "dot"])
    assert result.exit_code == 0
    assert result.output.startswith("digraph skeleton {")
    assert (
        '"regex-enabled" [label="regex enabled", style=bold, penwidth=3, '
        'color="#cc0000"];' in result.output
    )
    assert '"searching" [label="Searching…", style=dashed];' in result.output
    assert '"editor" [label="editor", style=bold, penwidth=3];' in result.output


def test_show_names_the_merge_guard_in_words() -> None:
    result = CliRunner().invoke(trajectory, ["show", str(REGEX / "model.json")])
    assert "3. regex enabled  (kept essential by the merge guard)" in result.output
    assert "in any order relative to each other: 'regex enabled' and 'query typed'" in result.output
    assert "which no reference trace took" in result.output


def test_bundled_models_are_what_learn_writes(tmp_path: Path) -> None:
    for folder in (SEARCH, REGEX):
        out = tmp_path / f"{folder.name}.json"
        refs = sorted((folder / "references").glob("*.yaml"))
        result = CliRunner().invoke(
            trajectory,
            ["learn", *map(str, refs), "--params", str(folder / "params.yaml"), "-o", str(out)],
        )
        assert result.exit_code == 0, result.output
        assert out.read_bytes() == (folder / "model.json").read_bytes()


def test_one_reference_is_a_usage_error(tmp_path: Path, refs: list[Path]) -> None:
    result = CliRunner().invoke(trajectory, ["learn", str(refs[0]), "-o", str(tmp_path / "m")])
    assert result.exit_code == 2
    assert "learning needs at least 2 reference traces, got 1" in result.output
    assert not (tmp_path / "m").exists()


def test_broken_yaml_is_named_with_its_line(tmp_path: Path, refs: list[Path]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("trace: x\nstates:\n  - label: a\n  - label: [b\n")
    result = CliRunner().invoke(
        trajectory, ["learn", str(refs[0]), str(broken), "-o", str(tmp_path / "m.json")]
    )
    assert result.exit_code == 2
    assert f"{broken}:" in result.output and "not valid YAML" in result.output
    assert "Traceback" not in result.output


def test_malformed_model_is_a_usage_error(tmp_path: Path, refs: list[Path]) -> None:
    model = tmp_path / "m.json"
    model.write_text('{"format": "something-else"}')
    result = CliRunner().invoke(trajectory, ["check", str(model), str(refs[0])])
    assert result.exit_code == 2
    assert "format = 'trajectory-model/1'" in result.output


def test_params_file_with_a_misspelt_key_is_refused(tmp_path: Path, refs: list[Path]) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("identiy: [label]\n")
    result = CliRunner().invoke(
        trajectory,
        ["learn", *map(str, refs), "--params", str(params), "-o", str(tmp_path / "m.json")],
    )
    assert result.exit_code == 2
    assert "expected a mapping with identity and normalise" in result.output


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("edges", [{}]),
        ("edges", [{"from": "editor", "to": "search-view", "traces": 3}]),
        ("merges", [{}]),
        ("guard", [{"state": "editor"}]),
        ("kept_apart", [{"label": "x"}]),
        ("prefix_tree", {}),
        ("prefix_tree", {"nodes": "many", "observations": 1, "states": 1}),
    ],
)
@pytest.mark.parametrize("fmt", ["text", "mermaid", "dot"])
def test_model_with_malformed_bookkeeping_is_a_usage_error_not_a_bug(
    tmp_path: Path, field: str, value: object, fmt: str
) -> None:
    """A hand-edited model file is input: exit 2 naming the problem, never exit 5."""
    model = json.loads((SEARCH / "model.json").read_text(encoding="utf-8"))
    model[field] = value
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    result = CliRunner().invoke(trajectory, ["show", str(path), "--format", fmt])
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output
    assert field in result.output


@pytest.mark.parametrize("role", ["trace", "model"])
def test_deeply_nested_input_is_a_usage_error_not_a_bug(tmp_path: Path, role: str) -> None:
    deep = tmp_path / "deep.yaml"
    nested = "[" * 5000 + "]" * 5000
    deep.write_text(f"trace: t\nstates:\n- label: a\n  attrs: {{x: {nested}}}\n")
    model = str(SEARCH / "model.json")
    args = ["check", model, str(deep)] if role == "trace" else ["check", str(deep), model]
    result = CliRunner().invoke(trajectory, args)
    assert result.exit_code == 2, result.output
    assert "nested too deeply" in result.output


def test_deeply_nested_params_file_is_a_usage_error(tmp_path: Path, refs: list[Path]) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("identity: " + "[" * 5000 + "]" * 5000 + "\n")
    result = CliRunner().invoke(
        trajectory,
        ["learn", *map(str, refs), "--params", str(params), "-o", str(tmp_path / "m.json")],
    )
    assert result.exit_code == 2, result.output
    assert "nested too deeply" in result.output


HOSTILE_LABEL = "\x1b]0;owned\x07\x1b[2J\u202eok\nPASS: forged"


def test_every_trajectory_command_escapes_labels_and_trace_names(tmp_path: Path) -> None:
    # issue 42, item 7: learn, show (text and Mermaid) and check printed raw ESC, OSC and
    # BEL from state labels and trace names; the DOT output already escaped them
    name = "r\x1b[31m1"
    refs = [
        write_trace(tmp_path, "r1", ["editor", HOSTILE_LABEL, "done"]),
        write_trace(tmp_path, "r2", ["editor", HOSTILE_LABEL, "done"]),
    ]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"trace": name, "states": [{"label": "editor"}]}))
    model = tmp_path / "m.json"
    runs = {}
    for fmt in ("text", "mermaid", "dot"):
        runs[f"learn {fmt}"] = ["learn", *map(str, refs), "-o", str(model), "--format", fmt]
        runs[f"show {fmt}"] = ["show", str(model), "--format", fmt]
    runs["check"] = ["check", str(model), str(bad)]
    for what, args in runs.items():
        result = CliRunner().invoke(trajectory, args)
        assert result.exit_code in (0, 1), (what, result.output)
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in result.output, (what, result.output)
        assert "\nPASS: forged" not in result.output, what
        assert "\\x1b" in result.output or what.startswith("show dot"), (what, result.output)
