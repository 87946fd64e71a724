"""The forged sources of the lm-eval advisories (issue 41, item 7): each builds and
verifies as supported under the advised @1 version, and the same evidence under the
fixing version is not supported. (The advisories' own harness runs every source under
``tests/advisories/sources/``; this file keeps the lm-eval ones honest on their own.)"""

from __future__ import annotations

import inspect
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bundler.authoring.build import build
from bundler.errors import BuildRefused
from bundler.run.verify import VerifyOptions, verify
from tests.advisories.lm_eval_forgeries import SOURCES, forgeries, text
from tests.helpers import REPO

IDS = sorted(forgeries())


def advisory(ident: str) -> dict[str, Any]:
    found: dict[str, Any] = tomllib.loads(
        (REPO / "checkers" / "advisories" / f"{ident}.toml").read_text("utf-8")
    )
    return found


def accepting(ident: str) -> dict[str, Any]:
    """``accept_advisories`` for a build or verify that takes it: the advised version
    is what these sources are about."""
    if "accept_advisories" in inspect.signature(build).parameters:
        return {"accept_advisories": [ident]}
    return {}


@pytest.mark.parametrize("ident", IDS)
def test_the_committed_inputs_are_what_the_generator_writes(ident: str) -> None:
    for path, value in forgeries()[ident].items():
        assert (SOURCES / ident / path).read_text("utf-8") == text(value, path), path


@pytest.mark.parametrize("ident", IDS)
def test_each_advisory_file_names_its_forged_version_and_the_fixing_one(ident: str) -> None:
    found = advisory(ident)
    assert found["id"] == ident
    source = (SOURCES / ident / "bundle.yaml").read_text("utf-8")
    (affected,) = found["affected"]
    assert f"checker: {affected}\n" in source
    for test in found["tests"]:
        path, name = test.split("::")
        assert f"def {name}(" in (REPO / path).read_text("utf-8"), test


@pytest.mark.parametrize("ident", IDS)
def test_each_lm_eval_forgery_builds_and_verifies_under_its_advised_version(
    ident: str, tmp_path: Path
) -> None:
    source = tmp_path / ident
    shutil.copytree(SOURCES / ident, source)
    out = tmp_path / "forged.bundle.tar.zst"
    built = build(source, out, source_date_epoch=0, **accepting(ident))
    assert built.home.status == "supported"
    outcomes = {r.case.id: r.outcome for r in built.home.cases}
    assert {"forged", "control"} <= set(outcomes)
    assert set(outcomes.values()) == {"reproduced"}
    (tmp_path / "work").mkdir()
    options = VerifyOptions(accept_advisories=[ident])
    again = verify(out, options, workdir=tmp_path / "work")
    assert again.status == "supported" and again.exit_code == 0


@pytest.mark.parametrize("ident", IDS)
def test_each_lm_eval_forgery_is_not_supported_under_the_fixing_version(
    ident: str, tmp_path: Path
) -> None:
    found = advisory(ident)
    source = tmp_path / ident
    shutil.copytree(SOURCES / ident, source)
    yaml_file = source / "bundle.yaml"
    (affected,) = found["affected"]
    text = yaml_file.read_text("utf-8")
    yaml_file.write_text(text.replace(affected, found["fixed_in"][0]), "utf-8")
    with pytest.raises(BuildRefused) as refused:
        build(source, tmp_path / "fixed.bundle.tar.zst", source_date_epoch=0)
    diverged = {p.where for p in refused.value.problems if p.code == "case.diverged"}
    forged = {f"case {c}" for c in ("forged", "forged-deleted") if f"id: {c}\n" in text}
    assert forged and forged <= diverged, refused.value.diagnostics()
    contradicted = {p.where for p in refused.value.problems if p.code == "claim.contradicted"}
    assert contradicted == {"claim forged-claim"}
