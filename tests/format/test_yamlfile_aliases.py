"""YAML anchors and aliases read by checker versions that opt in (``aliases=True``):
expanded under a size cap, never refused as formatting; the strict default unchanged."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from bundler.run.inputs import load_inputs
from checkers import get, yamlfile


def problem(text: str, **options: Any) -> yamlfile.YamlProblem:
    with pytest.raises(yamlfile.YamlProblem) as caught:
        yamlfile.load(text, **options)
    return caught.value


ANCHORED = "defaults: &d {action: allow, timeout_ms: 250}\nrules:\n  - name: a\n    settings: *d\n"


def test_aliases_are_expanded_when_asked_and_refused_by_default() -> None:
    assert "aliases" in problem(ANCHORED).message
    data, marks = yamlfile.load(ANCHORED, aliases=True)
    assert data["rules"][0]["settings"] == {"action": "allow", "timeout_ms": 250}
    assert marks[("rules", 0, "settings")] == 1  # the line the value was written on
    assert marks[("rules", 0, "settings", "action")] == 1


def test_expansion_is_capped() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):  # 10^9 nodes expanded
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]")
    error = problem("\n".join(lines) + "\n", aliases=True)
    assert f"{yamlfile.MAX_ALIAS_NODES:,} extra nodes" in error.message


def test_a_modest_reuse_is_under_the_cap() -> None:
    text = "block: &b [1, 2, 3]\n" + "".join(f"k{i}: *b\n" for i in range(1000))
    data, _ = yamlfile.load(text, aliases=True)
    assert len(data) == 1001 and data["k999"] == [1, 2, 3]


def test_a_self_referring_alias_is_refused() -> None:
    assert "contains it" in problem("a: &a [1, *a]\n", aliases=True).message


def test_duplicate_keys_inside_an_aliased_node_are_still_refused() -> None:
    assert "duplicate key" in problem("a: &a {x: 1, x: 2}\nb: *a\n", aliases=True).message


def test_merge_keys_stay_refused() -> None:
    text = "base: &b {x: 1}\nrule:\n  <<: *b\n  y: 2\n"
    assert "merge keys" in problem(text, aliases=True).message


@pytest.mark.parametrize("directive", ["%YAML 1.2", "%YAML 2.0"])
def test_a_document_declaring_another_yaml_version_is_refused(directive: str) -> None:
    error = problem(f"{directive}\n---\nanswer: yes\n", aliases=True)
    assert "read as YAML 1.1" in error.message and error.line == 1


def test_yaml_1_1_rules_apply() -> None:
    data, _ = yamlfile.load("%YAML 1.1\n---\nanswer: yes\nmode: 010\n", aliases=True)
    assert data == {"answer": True, "mode": 8}


def test_the_runner_reads_with_each_roles_rules(tmp_path: Any) -> None:
    from bundler.format.manifest import Case

    (tmp_path / "before.yaml").write_text(
        "observed_at: 2026-11-12T09:58:41Z\nfields: &f {h: x}\nsame: *f\n"
    )
    (tmp_path / "after.yaml").write_text("observed_at: 2026-11-12T10:00:00Z\nfields: {h: x}\n")
    listed = {  # path -> SHA-256, as the runner re-hashes each input it reads
        name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        for name in ("before.yaml", "after.yaml")
    }
    for key, reads in (("state-unchanged@1", False), ("state-unchanged@2", True)):
        found = get(key)
        assert found is not None
        case = Case(
            id="c",
            checker=key,
            inputs={"before": "before.yaml", "after": "after.yaml"},
            params={},
            expect="pass",
        )
        if reads:
            assert load_inputs(found, case, tmp_path, listed)["before"]["same"] == {"h": "x"}
        else:
            with pytest.raises(Exception, match="aliases"):
                load_inputs(found, case, tmp_path, listed)


@pytest.mark.parametrize("aliases", [False, True])
@pytest.mark.parametrize("text", ["at: 2026-13-40\n", "at: 2026-02-30 10:00:00\n"])
def test_a_date_that_does_not_exist_is_a_problem_not_a_crash(text: str, aliases: bool) -> None:
    error = problem(text, aliases=aliases)
    assert "cannot read YAML value" in error.message and "quote" in error.message


def test_checkers_command_says_how_each_role_is_read() -> None:
    from click.testing import CliRunner

    from bundler.cli import main

    new = CliRunner().invoke(main, ["checkers", "fault-report@2"])
    old = CliRunner().invoke(main, ["checkers", "fault-report@1"])
    assert "YAML aliases expanded, NaN/Infinity read" in new.output
    assert "aliases" not in old.output and "NaN" not in old.output
