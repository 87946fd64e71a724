"""`reprobundle import inspect`: from a real Inspect log to a verified bundle."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from bundler.errors import BuildRefused, BundleRejected, SourceError
from bundler.importers.inspect_eval import import_inspect
from bundler.run.verify import verify
from tests.helpers import read_entries, write_entries
from tests.importers.layouts import LAYOUTS, flag, folder, inspect_version, read_log
from tests.inspect_support import inspect_logs, paths_of, with_wrong_type

__all__ = ["inspect_logs"]  # the fixture, used by name


def source_of(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((path / "bundle.yaml").read_text())
    return document


# the claims the split layout adds: each deterministic scorer's re-scoring its own claim
# (it reads the transcripts), and that the scores file is the log's
SPLIT_CLAIMS = 5


@pytest.fixture(scope="module", params=[True, False], ids=["split", "whole-log"])
def mixed_bundle(
    inspect_logs: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("mixed")
    imported = import_inspect(inspect_logs / "mixed.eval", root / "source", split=request.param)
    result = build(root / "source", root / "mixed.bundle.tar.gz", 1700000000)
    return root / "source", (imported, result)


def is_split(source: Path) -> bool:
    return (source / "inputs" / "transcripts").is_dir()


def test_import_then_build_supports_every_claim(mixed_bundle: tuple[Path, Any]) -> None:
    source, (imported, result) = mixed_bundle
    assert result.home.status == "supported"
    claims = {c.claim.id for c in result.home.claims}
    assert {
        "sample-counts",
        "finding-errors-under-success",
        "match-mean",
        "match-pass-at-2",
        "exact-max",
        "model-graded-qa-mean",
    } <= set(claims)
    split = SPLIT_CLAIMS if is_split(source) else 0
    assert len(claims) == 2 + 5 * 3 + split  # counts, finding, 5 scorers x 3 reducers
    assert imported.notes == []
    assert all(r.outcome == "reproduced" for r in result.home.cases)


def test_the_log_is_kept_unchanged(inspect_logs: Path, mixed_bundle: tuple[Path, Any]) -> None:
    source, _ = mixed_bundle
    assert (source / folder(is_split(source)) / "mixed.eval").read_bytes() == (
        inspect_logs / "mixed.eval"
    ).read_bytes()


def test_claims_state_both_denominators_and_the_dirty_revision(
    mixed_bundle: tuple[Path, Any],
) -> None:
    source, _ = mixed_bundle
    claims = {c["id"]: c for c in source_of(source)["claims"]}
    pass_at_2 = claims["match-pass-at-2"]
    # match pass@2: s6 has one scored epoch (the other errored), so it drops out: 4/5 vs 4/6
    assert "accuracy 0.8 and stderr 0.2 over 5 samples" in pass_at_2["statement"]
    limits = "\n".join(pass_at_2["limits"])
    assert "(1 left out as unscored); 1 of 12 epoch records have no match score" in limits
    assert "With errors counted as failures: accuracy 0.6667 over 6 samples" in limits
    assert "6/11 = 0.5455 with errors dropped, 6/12 = 0.5 with errors counted" in limits
    assert claims["match-mean"]["statement"].startswith("Headline figure:")
    for claim in claims.values():
        assert any(limit.startswith("DIRTY REVISION") for limit in claim["limits"]), claim["id"]
    finding = claims["finding-errors-under-success"]["statement"]
    assert finding.startswith("The run says success while 1 of 12 sample records errored")


def test_deterministic_scorers_are_rescored_and_model_graded_is_out_of_scope(
    mixed_bundle: tuple[Path, Any],
) -> None:
    source, _ = mixed_bundle
    document = source_of(source)
    rescored = {
        c["params"]["method"] for c in document["cases"] if c["checker"] == "inspect-rescore@3"
    }
    assert rescored == {"match", "includes", "exact", "pattern"}
    pattern = next(c for c in document["cases"] if c["id"] == "rescore-pattern")
    assert pattern["params"]["options"] == {"pattern": r"ANSWER: (\d+)"}
    cannot = "\n".join(document["scope"]["cannot_support"])
    assert "'model_graded_qa' scores are right (they are a grader model's judgement)" in cannot
    assert "never the model" in cannot


def test_every_passing_case_has_a_control_with_its_checker_and_params(
    mixed_bundle: tuple[Path, Any],
) -> None:
    source, _ = mixed_bundle
    document = source_of(source)
    cases = document["cases"]
    by_id = {c["id"]: c for c in cases}
    controls = {
        (c["checker"], json.dumps(c["params"], sort_keys=True))
        for c in cases
        if c["expect"] == "fail" and "/controls/" in read_log(c["inputs"])
    }
    for case in cases:
        if case["expect"] == "pass":
            assert (case["checker"], json.dumps(case["params"], sort_keys=True)) in controls, case[
                "id"
            ]
    for claim in document["claims"]:
        passing = [by_id[c] for c in claim["cases"] if by_id[c]["expect"] == "pass"]
        for case in passing:
            assert f"{case['id']}-control" in claim["cases"], (claim["id"], case["id"])
    for control in (source / "inputs" / "controls").iterdir():  # small: only what is checked
        if control.suffix == ".json":
            assert "events" not in json.loads(control.read_text())["samples"][0]


@LAYOUTS
def test_json_log_gives_the_same_claims(inspect_logs: Path, tmp_path: Path, split: bool) -> None:
    imported = import_inspect(inspect_logs / "mixed.json", tmp_path / "source", split=split)
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"
    assert len(imported.claims) == 17 + (SPLIT_CLAIMS if split else 0)


@LAYOUTS
def test_log_where_every_sample_errored(inspect_logs: Path, tmp_path: Path, split: bool) -> None:
    imported = import_inspect(inspect_logs / "all-errored.eval", tmp_path / "source", split=split)
    assert imported.claims == [
        "sample-counts",
        "finding-errors-under-success",
        *(["scores-match-log"] if split else []),
    ]
    document = source_of(tmp_path / "source")
    finding = next(c for c in document["cases"] if c["id"] == "finding-errors-under-success")
    assert finding["checker"] == inspect_version("inspect-status@2", split)
    assert finding["expect_reasons"] == ["inspect.no_results", "inspect.records_errored"]
    statement = document["claims"][1]["statement"]
    assert "12 of 12 sample records errored and states no results at all" in statement
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"


@LAYOUTS
def test_header_figure_that_disagrees_with_its_samples_contradicts_that_claim(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    log = json.loads((inspect_logs / "mixed.json").read_text())
    entry = next(
        s for s in log["results"]["scores"] if s["name"] == "match" and s["reducer"] == "mean"
    )
    entry["metrics"]["accuracy"]["value"] = 0.75  # the samples give 0.5
    (tmp_path / "edited.json").write_text(json.dumps(log))
    imported = import_inspect(tmp_path / "edited.json", tmp_path / "source", split=split)
    assert any("match / mean / accuracy" in n and "contradicted" in n for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    bad = {(p.where, p.code) for p in refused.value.problems}
    assert ("claim match-mean", "claim.contradicted") in bad
    assert ("case match-mean-accuracy", "case.diverged") in bad
    assert {w for w, c in bad if c == "claim.contradicted"} == {"claim match-mean"}
    assert not (tmp_path / "b.bundle.tar.gz").exists()


def test_one_changed_byte_in_a_sample_rejects_the_bundle(
    mixed_bundle: tuple[Path, Any], tmp_path: Path
) -> None:
    source, (_, result) = mixed_bundle
    where = f"{folder(is_split(source))}/mixed.eval"
    entries = read_entries(result.path)
    log = next(e for e in entries if e.name.endswith(where))
    with zipfile.ZipFile(io.BytesIO(log.data)) as archive:
        info = next(i for i in archive.infolist() if i.filename.startswith("samples/"))
    data = bytearray(log.data)
    name_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)
    data[info.header_offset + 30 + name_len + extra_len + info.compress_size // 2] ^= 0x20
    log.data = bytes(data)
    bundle = write_entries(entries, tmp_path / "tampered.bundle.tar.gz")
    (tmp_path / "work").mkdir()
    with pytest.raises(BundleRejected) as rejected:
        verify(bundle, workdir=tmp_path / "work")
    assert [(p.where.split("/", 1)[1], p.code) for p in rejected.value.problems] == [
        (where, "file.hash")
    ]


@pytest.mark.parametrize("split", [True, False, None], ids=["split", "whole-log", "default"])
def test_cli_import_then_build(inspect_logs: Path, tmp_path: Path, split: bool | None) -> None:
    runner = CliRunner()
    args = ["import", "inspect", str(inspect_logs / "mixed.eval"), "-o", str(tmp_path / "src")]
    done = runner.invoke(main, args if split is None else [*args, flag(split)])
    assert done.exit_code == 0, done.output
    claims = 17 if split is False else 17 + SPLIT_CLAIMS  # split is the default
    assert f"{claims} claims" in done.output
    assert f"next: reprobundle build {tmp_path / 'src'}" in done.output
    assert (tmp_path / "src" / folder(split is not False) / "mixed.eval").is_file()
    again = runner.invoke(
        main, ["import", "inspect", str(inspect_logs / "mixed.eval"), "-o", str(tmp_path / "src")]
    )
    assert again.exit_code == 2 and "not an empty folder" in again.output


def test_cli_refuses_an_unknown_log_version(inspect_logs: Path, tmp_path: Path) -> None:
    log = json.loads((inspect_logs / "mixed.json").read_text())
    log["version"] = 3
    (tmp_path / "v3.json").write_text(json.dumps(log))
    done = CliRunner().invoke(
        main, ["import", "inspect", str(tmp_path / "v3.json"), "-o", str(tmp_path / "src")]
    )
    assert done.exit_code == 2
    assert "Inspect log version 3 is not one this reader knows" in done.output
    assert not (tmp_path / "src").exists()


def test_a_header_field_of_the_wrong_type_is_refused_by_name_never_a_traceback(
    inspect_logs: Path, tmp_path: Path
) -> None:
    original = json.loads((inspect_logs / "mixed.json").read_text())
    # small, for one import per mutant: two records, one scorer, two of its figures
    original["samples"] = original["samples"][:2]
    original["results"]["scores"] = original["results"]["scores"][:2]
    original["eval"]["scorers"] = original["eval"]["scorers"][:1]
    header_paths = [
        p
        for p in paths_of({k: v for k, v in original.items() if k != "samples"})
        if p[0] in ("status", "eval", "results")
    ]
    assert len(header_paths) > 40
    refused = 0
    for i, path in enumerate(header_paths):
        (tmp_path / f"m{i}.json").write_text(json.dumps(with_wrong_type(original, path)))
        try:
            import_inspect(tmp_path / f"m{i}.json", tmp_path / f"s{i}")
        except SourceError as exc:
            assert "must be" in str(exc) or "not" in str(exc), (path, exc)
            refused += 1
    assert refused > 10


def test_a_log_without_samples_is_refused_with_the_reason(
    inspect_logs: Path, tmp_path: Path
) -> None:
    log = json.loads((inspect_logs / "mixed.json").read_text())
    log["samples"] = []
    (tmp_path / "bare.json").write_text(json.dumps(log))
    with pytest.raises(SourceError, match="holds no samples"):
        import_inspect(tmp_path / "bare.json", tmp_path / "source")
    assert not (tmp_path / "source").exists()


def test_a_figure_of_a_score_no_sample_stores_is_out_of_scope_not_a_broken_case(
    inspect_logs: Path, tmp_path: Path
) -> None:
    log = json.loads((inspect_logs / "mixed.json").read_text())
    for sample in log["samples"]:  # as a scorer returning a dict of values stores them
        if "exact" in sample.get("scores", {}):
            sample["scores"]["exact"]["value"] = {"exact": sample["scores"]["exact"]["value"]}
        sample.get("scores", {}).pop("includes", None)
    (tmp_path / "dict.json").write_text(json.dumps(log))
    imported = import_inspect(tmp_path / "dict.json", tmp_path / "source")
    assert imported.notes == []
    cannot = "\n".join(source_of(tmp_path / "source")["scope"]["cannot_support"])
    assert "exact / mean / mean = 0.25: its scores are not scalar values" in cannot
    assert "includes / mean / accuracy" in cannot and "no sample stores a score" in cannot
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"


def test_imported_cases_use_the_newest_checkers_and_controls_fail_for_the_header(
    mixed_bundle: tuple[Path, Any],
) -> None:
    source, _ = mixed_bundle
    split = is_split(source)
    cases = source_of(source)["cases"]
    assert {c["checker"] for c in cases} == {
        inspect_version("inspect-counts@3", split),
        inspect_version("inspect-metric@4", split),
        "inspect-rescore@3",
        inspect_version("inspect-status@2", split),
        *(["inspect-scores@1"] if split else []),
    }
    reasons = {
        (c["checker"], tuple(c["expect_reasons"]))
        for c in cases
        if "/controls/" in read_log(c["inputs"])
    }
    assert reasons == {
        *([("inspect-scores@1", ("inspect.scores_not_the_logs",))] if split else []),
        (
            inspect_version("inspect-counts@3", split),
            # the records, the header's completed count, a planned record without one
            (
                "inspect.claimed_mismatch",
                "inspect.header_count_mismatch",
                "inspect.planned_not_run",
            ),
        ),
        (inspect_version("inspect-metric@4", split), ("inspect.header_metric_mismatch",)),
        ("inspect-rescore@3", ("inspect.score_mismatch",)),
    }
    figure = next(c for c in cases if c["id"] == "match-mean-accuracy")
    assert figure["params"] == {
        "scorer": "match",
        "reducer": "mean",
        "metric": "accuracy",
        "claimed": 0.5,
    }


def _clean_log(path: Path) -> Path:
    """A hand-written log of a clean run: two samples, one correct, no error."""
    samples = [
        {"id": s, "epoch": 1, "target": "4", "output": {"completion": c}, "scores": v}
        for s, c, v in (
            ("a", "it is 4", {"match": {"value": "C"}}),
            ("b", "5", {"match": {"value": "I"}}),
        )
    ]
    metrics = {"accuracy": {"name": "accuracy", "value": 0.5, "params": {}}}
    log = {
        "version": 2,
        "status": "success",
        "eval": {
            "task": "clean",
            "model": "mockllm/model",
            "scorers": [{"name": "match", "options": {}}],
        },
        "results": {
            "total_samples": 2,
            "completed_samples": 2,
            "scores": [
                {
                    "name": "match",
                    "scorer": "match",
                    "reducer": None,
                    "scored_samples": 2,
                    "unscored_samples": 0,
                    "metrics": metrics,
                }
            ],
        },
        "samples": samples,
    }
    path.write_text(json.dumps(log))
    return path


@LAYOUTS
def test_a_clean_run_is_claimed_with_a_control_that_has_an_errored_record(
    tmp_path: Path, split: bool
) -> None:
    imported = import_inspect(_clean_log(tmp_path / "clean.json"), tmp_path / "source", split=split)
    assert imported.notes == []
    assert "status" in imported.claims and not any("finding" in c for c in imported.claims)
    cases = {c["id"]: c for c in source_of(tmp_path / "source")["cases"]}
    assert cases["status"]["checker"] == inspect_version("inspect-status@2", split)
    assert cases["status"]["expect"] == "pass"
    assert cases["status-control"]["expect_reasons"] == ["inspect.records_errored"]
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"
    assert all(r.outcome == "reproduced" for r in result.home.cases)


@LAYOUTS
def test_a_header_count_that_disagrees_with_its_records_contradicts_the_counts_claim(
    tmp_path: Path, split: bool
) -> None:
    log = json.loads(_clean_log(tmp_path / "clean.json").read_text())
    log["results"]["total_samples"] = log["results"]["completed_samples"] = 1000
    (tmp_path / "forged.json").write_text(json.dumps(log))
    imported = import_inspect(tmp_path / "forged.json", tmp_path / "source", split=split)
    assert any(n.startswith("counts:") and "contradicted" in n for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    bad = {(p.where, p.code) for p in refused.value.problems}
    assert ("claim sample-counts", "claim.contradicted") in bad
