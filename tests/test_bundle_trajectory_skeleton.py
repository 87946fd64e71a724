"""End to end: bundles/trajectory-skeleton builds, verifies with every claim supported,
and a copy with one expected verdict flipped is contradicted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bundler.build import build, make_manifest
from bundler.cli import main
from bundler.errors import BuildRefused
from bundler.manifest import MANIFEST_NAME, README_NAME
from bundler.pack import Member, write_tar_gz
from bundler.source import read_source

SOURCE = Path(__file__).resolve().parent.parent / "bundles" / "trajectory-skeleton"
EPOCH = 1764460800


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(SOURCE, tmp_path_factory.mktemp("built") / "ts.bundle.tar.gz", EPOCH).path


def verify_json(bundle: Path, tmp_path: Path) -> tuple[int, dict[str, object]]:
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["verify", str(bundle), "-q", "--json", str(report)])
    return result.exit_code, json.loads(report.read_text())


def test_bundle_verifies_with_every_claim_supported(built: Path, tmp_path: Path) -> None:
    code, report = verify_json(built, tmp_path)
    assert code == 0
    claims = {c["id"]: c["status"] for c in report["claims"]}  # type: ignore[attr-defined]
    assert claims == {
        "noise-is-tolerated": "supported",
        "missing-and-misordered-steps-fail": "supported",
        "stored-model-is-verified": "supported",
        "merge-guard-keeps-required-steps": "supported",
        "skeleton-beats-self-assessment-here": "supported",
    }


def test_predictions_table_matches_the_labelled_cases() -> None:
    """The skeleton column of the figures is exactly what the re-run cases expect."""
    source = yaml.safe_load((SOURCE / "bundle.yaml").read_text())
    expected = {c["id"].removeprefix("labelled-"): c["expect"]
                for c in source["cases"] if c["id"].startswith("labelled-")}
    table = yaml.safe_load((SOURCE / "inputs" / "search" / "predictions.yaml").read_text())
    column = {i["id"]: i["predictions"]["trajectory-skeleton"] for i in table["items"]}
    assert column == expected
    for item in table["items"]:
        header = yaml.safe_load(
            (SOURCE / "inputs" / "search" / "labelled" / f"{item['id']}.yaml").read_text())
        said = "pass" if header["self_assessment"] == "success" else "fail"
        assert item["predictions"]["self-assessment"] == said


def flipped_source(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    shutil.copytree(SOURCE, source)
    text = (source / "bundle.yaml").read_text()
    needle = "  - id: labelled-t06\n"
    start = text.index(needle)
    case = text[start:text.index("  - id:", start + len(needle))]
    flipped = case.replace("expect: fail\n", "expect: pass\n").replace(
        "    expect_reasons: [trajectory.order]\n", "")
    assert flipped != case
    (source / "bundle.yaml").write_text(text.replace(case, flipped))
    return source


def pack_without_home_verify(source: Path, out: Path) -> Path:
    """What build does, minus the refusal: a bundle whose claims do not all hold."""
    plan = read_source(source)
    manifest, readme = make_manifest(plan, EPOCH)
    members = [Member(f"{manifest.top}/{MANIFEST_NAME}", data=manifest.to_bytes())]
    for entry in manifest.files:
        if entry.path == README_NAME:
            members.append(Member(f"{manifest.top}/{README_NAME}", data=readme))
        else:
            members.append(Member(f"{manifest.top}/{entry.path}", source=plan.root / entry.path,
                                  size=entry.size))
    with out.open("wb") as stream:
        write_tar_gz(stream, members, EPOCH)
    return out


def test_flipped_expectation_is_refused_by_build(tmp_path: Path) -> None:
    with pytest.raises(BuildRefused):
        build(flipped_source(tmp_path), tmp_path / "x.bundle.tar.gz", EPOCH)


def test_flipped_expectation_is_contradicted_at_verify(tmp_path: Path) -> None:
    bundle = pack_without_home_verify(flipped_source(tmp_path), tmp_path / "x.bundle.tar.gz")
    code, report = verify_json(bundle, tmp_path)
    assert code == 1
    claims = {c["id"]: c["status"] for c in report["claims"]}  # type: ignore[attr-defined]
    assert claims["missing-and-misordered-steps-fail"] == "contradicted"
    assert claims["skeleton-beats-self-assessment-here"] == "contradicted"
    assert claims["noise-is-tolerated"] == "supported"
