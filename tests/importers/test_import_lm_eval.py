"""`reprobundle import lm-eval`: from real lm-evaluation-harness output to a verified bundle.

The runs under tests/data/lm_eval/ were made by lm-eval 0.4.13 itself (tests/data/lm_eval/
make.sh, with the task configs beside it): full/ (every document, --log_samples), limit/
(--limit 3) and nosamples/ (no --log_samples).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from bundler.errors import BuildRefused, SourceError, UsageError
from bundler.importers import ImportLimits
from bundler.importers.lm_eval import import_lm_eval
from bundler.run.inputs import LoadLimits
from bundler.run.limits import CaseBudget
from bundler.run.verify import verify
from tests.importers.layouts import LAYOUTS, flag
from tests.importers.layouts import folder as log_folder
from tests.inspect_support import WRONG, paths_of, with_wrong_type

DATA = Path(__file__).parents[1] / "data" / "lm_eval"
EPOCH = 1700000000


def results_of(run: str) -> Path:
    (found,) = (DATA / run).glob("*/results_*.json")
    return found


def source_of(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((path / "bundle.yaml").read_text("utf-8"))
    return document


def copy_run(run: str, tmp_path: Path) -> Path:
    """A copy of a run's folder (results and samples side by side) to edit."""
    folder = tmp_path / run
    shutil.copytree(results_of(run).parent, folder)
    return folder


def only(folder: Path, pattern: str) -> Path:
    (found,) = folder.glob(pattern)
    return found


def edit_lines(path: Path, change: Any) -> None:
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    change(records)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")


# the split layout's versions of the whole layout's, and the checker it adds
SPLIT_VERSIONS = {"lm-eval-counts@2": "lm-eval-counts@3", "lm-eval-metric@4": "lm-eval-metric@5"}


def version(key: str, split: bool) -> str:
    return SPLIT_VERSIONS.get(key, key) if split else key


def split_claims(tasks: tuple[str, ...], split: bool) -> list[str]:
    """The claim the split layout adds per task with samples: its scores are the samples'."""
    return [f"{t}-scores-match-samples" for t in tasks] if split else []


def is_split(source: Path) -> bool:
    return (source / "inputs" / "transcripts").is_dir()


@pytest.fixture(scope="module", params=[True, False], ids=["split", "whole-log"])
def full_bundle(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> tuple[Path, Any, Any]:
    root = tmp_path_factory.mktemp("full")
    imported = import_lm_eval(DATA / "full", root / "source", split=request.param)
    result = build(root / "source", root / "full.bundle.tar.gz", EPOCH)
    return root / "source", imported, result


def test_full_run_imports_builds_and_verifies(full_bundle: tuple[Path, Any, Any]) -> None:
    source, imported, result = full_bundle
    assert imported.notes == []
    home = result.home
    assert home.status == "supported"
    assert {c.claim.id for c in home.claims} == {
        f"{t}-{w}" for t in ("tiny-mc", "tiny-gen") for w in ("counts", "hashes", "figures")
    } | set(split_claims(("tiny-mc", "tiny-gen"), is_split(source)))
    assert all(r.outcome == "reproduced" for r in home.cases)


@LAYOUTS
@pytest.mark.parametrize("run", ["full", "limit", "nosamples", "unicode"])
def test_each_real_run_verifies_from_its_built_bundle(
    run: str, tmp_path: Path, split: bool
) -> None:
    import_lm_eval(DATA / run, tmp_path / "source", split=split)
    built = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    (tmp_path / "work").mkdir()
    verification = verify(built.path, workdir=tmp_path / "work")
    assert verification.status == "supported" and verification.exit_code == 0
    assert all(c.outcome == "reproduced" for c in verification.cases)


def test_every_figure_equals_lm_evals_own(full_bundle: tuple[Path, Any, Any]) -> None:
    source, _, _ = full_bundle
    stated = json.loads(results_of("full").read_text("utf-8"))["results"]
    figures = {
        (c["params"]["task"], f"{c['params']['metric']},{c['params']['filter']}"): c["params"][
            "claimed"
        ]
        for c in source_of(source)["cases"]
        if c["checker"] == version("lm-eval-metric@4", is_split(source)) and c["expect"] == "pass"
    }
    assert figures == {
        ("tiny_mc", "acc,none"): stated["tiny_mc"]["acc,none"],
        ("tiny_mc", "acc_norm,none"): stated["tiny_mc"]["acc_norm,none"],
        ("tiny_gen", "exact_match,strict"): stated["tiny_gen"]["exact_match,strict"],
        ("tiny_gen", "exact_match,first"): stated["tiny_gen"]["exact_match,first"],
    }
    assert figures[("tiny_mc", "acc,none")] == 2 / 7  # what lm-eval printed: 0.2857 ± 0.1844
    claims = {c["id"]: c for c in source_of(source)["claims"]}
    assert "acc,none 0.2857 ± 0.1844" in claims["tiny-mc-figures"]["statement"]


def test_the_run_files_are_copied_unchanged(full_bundle: tuple[Path, Any, Any]) -> None:
    source, _, _ = full_bundle
    for original in results_of("full").parent.iterdir():
        where = log_folder(is_split(source)) if original.name.startswith("samples_") else "inputs"
        assert (source / where / original.name).read_bytes() == original.read_bytes()


def test_every_passing_case_has_a_control_with_its_checker_and_params(
    full_bundle: tuple[Path, Any, Any],
) -> None:
    source, _, _ = full_bundle
    cases = source_of(source)["cases"]
    for case in (c for c in cases if c["expect"] == "pass"):
        assert any(
            c["expect"] == "fail"
            and c["checker"] == case["checker"]
            and c["params"] == case["params"]
            and any("/controls/" in path for path in c["inputs"].values())
            for c in cases
        ), case["id"]


def test_bootstrap_stderr_and_other_aggregations_are_listed_as_cannot_support(
    full_bundle: tuple[Path, Any, Any],
) -> None:
    source, _, _ = full_bundle
    cannot = "\n".join(source_of(source)["scope"]["cannot_support"])
    assert "tiny_mc mcc,none = -0.0625: aggregation matthews_corrcoef" in cannot
    assert "The stderr of tiny_mc mcc,none" in cannot and "bootstrap" in cannot
    assert "That dummy gives these outputs again" in cannot


@LAYOUTS
def test_a_limit_run_says_so_in_every_claims_limits(tmp_path: Path, split: bool) -> None:
    imported = import_lm_eval(results_of("limit"), tmp_path / "source", split=split)
    assert imported.notes == []
    document = source_of(tmp_path / "source")
    for claim in document["claims"]:
        assert any(limit.startswith("A --limit 3 run: 3 of the task") for limit in claim["limits"])
    counts = {c["id"]: c for c in document["claims"]}["tiny-mc-counts"]
    assert "3 of its 7 documents were evaluated (--limit 3)" in counts["statement"]
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    assert result.home.status == "supported"


@LAYOUTS
def test_a_run_without_samples_lists_its_figures_as_cannot_support(
    tmp_path: Path, split: bool
) -> None:
    imported = import_lm_eval(DATA / "nosamples", tmp_path / "source", split=split)
    assert imported.claims == ["tiny-mc-counts", "tiny-gen-counts"]
    document = source_of(tmp_path / "source")
    cannot = "\n".join(document["scope"]["cannot_support"])
    for figure in ("acc,none", "acc_norm,none", "exact_match,strict", "exact_match,first"):
        assert figure in cannot
    assert cannot.count("without --log_samples") == 2
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    assert result.home.status == "supported"


@LAYOUTS
def test_header_accuracy_disagreeing_with_samples_contradicts_that_claim(
    tmp_path: Path, split: bool
) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    results = json.loads(results_file.read_text("utf-8"))
    results["results"]["tiny_mc"]["acc,none"] = 0.5  # the samples give 2/7
    results_file.write_text(json.dumps(results, indent=2, ensure_ascii=False), "utf-8")
    imported = import_lm_eval(folder, tmp_path / "source", split=split)
    assert any("tiny-mc-acc-none" in n and "tiny_mc acc,none" in n for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    bad = {(p.where, p.code) for p in refused.value.problems}
    assert {w for w, c in bad if c == "claim.contradicted"} == {"claim tiny-mc-figures"}
    assert not (tmp_path / "b.bundle.tar.gz").exists()


@LAYOUTS
def test_a_forged_doc_fails_its_hash_and_contradicts_the_hashes_claim(
    tmp_path: Path, split: bool
) -> None:
    folder = copy_run("full", tmp_path)
    edit_lines(only(folder, "samples_tiny_gen_*.jsonl"), lambda r: r[1]["doc"].update(answer="x"))
    imported = import_lm_eval(folder, tmp_path / "source", split=split)
    assert any("tiny-gen-hashes" in n and "doc_hash" in n for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    contradicted = {p.where for p in refused.value.problems if p.code == "claim.contradicted"}
    assert contradicted == {"claim tiny-gen-hashes"}


@LAYOUTS
def test_a_forged_task_hash_contradicts_the_hashes_claim(tmp_path: Path, split: bool) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    results = json.loads(results_file.read_text("utf-8"))
    results["task_hashes"]["tiny_mc"] = "0" * 64
    results_file.write_text(json.dumps(results), "utf-8")
    imported = import_lm_eval(folder, tmp_path / "source", split=split)
    assert any("tiny-mc-hashes" in n and "task_hashes" in n for n in imported.notes)


@pytest.mark.parametrize("split", [True, False, None], ids=["split", "whole-log", "default"])
def test_cli_import_then_build(tmp_path: Path, split: bool | None) -> None:
    cli = CliRunner()
    args = ["import", "lm-eval", str(DATA / "full"), "-o", str(tmp_path / "s")]
    done = cli.invoke(main, args if split is None else [*args, flag(split)])
    assert done.exit_code == 0, done.output
    assert ("20 cases, 8 claims" if split is not False else "16 cases, 6 claims") in done.output
    built = cli.invoke(main, ["build", str(tmp_path / "s"), "-o", str(tmp_path / "b.tar.gz")])
    assert built.exit_code == 0, built.output
    again = cli.invoke(main, ["import", "lm-eval", str(DATA / "full"), "-o", str(tmp_path / "s")])
    assert again.exit_code == 2 and "not an empty folder" in again.output


# -- hostile files: refused with a message, never a traceback, nothing outside -o ---------


def cli_import(path: Path, out: Path) -> Any:
    return CliRunner().invoke(main, ["import", "lm-eval", str(path), "-o", str(out)])


def refused_by_cli(path: Path, tmp_path: Path, words: str) -> None:
    done = cli_import(path, tmp_path / "out")
    assert done.exit_code == 2, done.output
    assert words in done.output
    assert not (tmp_path / "out").exists()


def write_results(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(exist_ok=True)
    path = folder / "results_2026-01-01T00-00-00.000001.json"
    path.write_text(text, "utf-8")
    return path


def refused_within(path: Path, tmp_path: Path, load: LoadLimits, words: str) -> None:
    """``import_lm_eval`` of ``path`` within the caps ``load`` is refused with ``words``,
    and writes nothing (the CLI prints the same message, exit 2: refused_by_cli)."""
    with pytest.raises(SourceError, match=words):
        import_lm_eval(path, tmp_path / "out", limits=ImportLimits(load=load))
    assert not (tmp_path / "out").exists()


def test_a_results_file_past_the_input_size_cap_is_refused_before_parsing(tmp_path: Path) -> None:
    path = write_results(tmp_path, json.dumps({"results": {"t": {}}, "pad": "x" * 2000}))
    refused_within(path, tmp_path, LoadLimits(bytes=1000), "an input is at most 1000")


def test_a_results_file_with_more_values_than_verify_reads_is_refused(tmp_path: Path) -> None:
    path = write_results(tmp_path, json.dumps({"results": {"t": {}}, "pad": [0] * 500}))
    refused_within(path, tmp_path, LoadLimits(values=100), "more than 100 values")


def test_reading_results_past_a_case_memory_limit_is_refused(tmp_path: Path) -> None:
    # the parse runs under one case's memory at verify, as the Inspect AI and promptfoo
    # importers' do (before, lm-eval's parse and checks ran with no case limit)
    path = write_results(tmp_path, json.dumps({"results": {"t": {}}, "pad": "x" * (64 << 20)}))
    small = ImportLimits(budget=CaseBudget(memory=4 << 20))
    with pytest.raises(SourceError, match="needed more than 4 MiB, past the limit of one case"):
        import_lm_eval(path, tmp_path / "out", limits=small)
    assert not (tmp_path / "out").exists()


def test_a_samples_file_with_more_values_than_verify_reads_is_refused(tmp_path: Path) -> None:
    folder = copy_run("full", tmp_path)
    refused_within(folder, tmp_path, LoadLimits(values=50), "more than 50 values")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[" * 5000 + "]" * 5000, "nested deeper than"),
        ('{"results": {}, "results": {}}', "duplicate key"),
        ("\xff not json", "not valid JSON"),
        ('{"results": []}', "not an object"),
        ('{"results": {"t": {}}}', "'n-samples' is not an object"),
    ],
)
def test_a_malformed_results_file_is_refused_by_name(tmp_path: Path, text: str, words: str) -> None:
    refused_by_cli(write_results(tmp_path, text), tmp_path, words)


@pytest.mark.parametrize("count", [True, 7.0, -1, "7", None])
def test_a_count_that_is_not_a_whole_number_is_refused(tmp_path: Path, count: Any) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    results = json.loads(results_file.read_text("utf-8"))
    results["n-samples"]["tiny_mc"]["original"] = count
    results_file.write_text(json.dumps(results), "utf-8")
    refused_by_cli(folder, tmp_path, "a boolean is not a count")


@pytest.mark.parametrize("doc_id", [True, "0", 1.5])
def test_a_samples_record_with_a_bad_doc_id_is_refused(tmp_path: Path, doc_id: Any) -> None:
    folder = copy_run("full", tmp_path)
    edit_lines(only(folder, "samples_tiny_mc_*.jsonl"), lambda r: r[0].update(doc_id=doc_id))
    refused_by_cli(folder, tmp_path, "doc_id")


def test_a_lone_surrogate_in_a_task_name_is_refused_not_a_traceback(tmp_path: Path) -> None:
    folder = copy_run("nosamples", tmp_path)
    results_file = only(folder, "results_*.json")
    text = results_file.read_text("utf-8").replace('"tiny_mc"', '"tiny_\\ud800"')
    results_file.write_text(text, "utf-8")
    refused_by_cli(folder, tmp_path, "lone surrogate")


def test_a_lone_surrogate_in_the_model_name_is_refused_not_a_traceback(tmp_path: Path) -> None:
    folder = copy_run("nosamples", tmp_path)
    results_file = only(folder, "results_*.json")
    text = results_file.read_text("utf-8").replace('"model": "dummy"', '"model": "\\udfff"')
    results_file.write_text(text, "utf-8")
    refused_by_cli(folder, tmp_path, "lone surrogate")


def test_a_task_named_like_a_path_writes_nothing_outside_the_output(tmp_path: Path) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    text = results_file.read_text("utf-8").replace('"tiny_gen"', '"../../escaped"')
    results_file.write_text(text, "utf-8")
    before = sorted(p for p in tmp_path.rglob("*"))
    done = cli_import(folder, tmp_path / "deep" / "out")
    assert done.exit_code == 0, done.output
    after = sorted(p for p in tmp_path.rglob("*") if "deep" not in p.parts)
    assert after == before
    assert not (tmp_path / "escaped").exists()


def test_a_linked_results_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results_2026-01-01T00-00-00.000001.json").symlink_to(results_of("full"))
    refused_by_cli(folder / "results_2026-01-01T00-00-00.000001.json", tmp_path, "cannot read")


def test_a_folder_with_two_runs_asks_for_one(tmp_path: Path) -> None:
    folder = copy_run("full", tmp_path)
    shutil.copy(results_of("limit"), folder)
    refused_by_cli(folder, tmp_path, "exactly one lm-eval results_*.json")


@LAYOUTS
def test_a_folder_with_no_run_is_refused(tmp_path: Path, split: bool) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="found 0"):
        import_lm_eval(tmp_path / "empty", tmp_path / "out", split=split)


@LAYOUTS
def test_a_nan_headline_is_listed_not_checked(tmp_path: Path, split: bool) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    text = results_file.read_text("utf-8").replace(
        '"acc,none": 0.2857142857142857', '"acc,none": NaN'
    )
    results_file.write_text(text, "utf-8")
    import_lm_eval(folder, tmp_path / "source", split=split)
    cannot = "\n".join(source_of(tmp_path / "source")["scope"]["cannot_support"])
    assert "tiny_mc acc,none = nan: not a finite number" in cannot
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    assert result.home.status == "supported"


@LAYOUTS
def test_a_bool_metric_value_is_listed_not_averaged(tmp_path: Path, split: bool) -> None:
    folder = copy_run("full", tmp_path)
    edit_lines(only(folder, "samples_tiny_mc_*.jsonl"), lambda r: r[0].update(acc=True))
    import_lm_eval(folder, tmp_path / "source", split=split)
    cannot = "\n".join(source_of(tmp_path / "source")["scope"]["cannot_support"])
    assert "tiny_mc acc,none" in cannot and "a boolean is not one" in cannot


@LAYOUTS
def test_source_error_names_the_file(tmp_path: Path, split: bool) -> None:
    path = write_results(tmp_path, '{"results": {"t": {}}, "n-samples": {"t": 3}}')
    with pytest.raises(SourceError, match="results_2026-01-01"):
        import_lm_eval(path, tmp_path / "out", split=split)


@LAYOUTS
def test_group_figures_are_listed_not_taken_for_a_task(tmp_path: Path, split: bool) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    results = json.loads(results_file.read_text("utf-8"))
    results["results"]["tiny_all"] = {"name": "tiny_all", "acc,none": 0.3, " ": " "}
    results["group_subtasks"] = {"tiny_all": ["tiny_mc", "tiny_gen"]}
    results_file.write_text(json.dumps(results), "utf-8")
    imported = import_lm_eval(folder, tmp_path / "source", split=split)
    assert imported.notes == [] and len(imported.claims) == (8 if split else 6)
    cannot = "\n".join(source_of(tmp_path / "source")["scope"]["cannot_support"])
    assert "The figures of group tiny_all (acc,none = 0.3): aggregated over its subtasks" in cannot


@LAYOUTS
def test_two_task_names_with_one_slug_keep_apart(tmp_path: Path, split: bool) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    results = json.loads(results_file.read_text("utf-8"))
    for key in ("results", "n-samples", "configs", "task_hashes"):
        results[key]["tiny-mc"] = results[key]["tiny_mc"]
    results_file.write_text(json.dumps(results), "utf-8")
    samples = only(folder, "samples_tiny_mc_*.jsonl")
    shutil.copy(samples, folder / samples.name.replace("tiny_mc", "tiny-mc"))
    imported = import_lm_eval(folder, tmp_path / "source", split=split)
    assert [c for c in imported.claims if c.endswith("counts")] == [
        "tiny-mc-counts",
        "tiny-gen-counts",
        "tiny-mc-2-counts",
    ]
    controls = sorted(p.name for p in (tmp_path / "source" / "inputs" / "controls").iterdir())
    assert len(controls) == 6 and "tiny-mc-2-one-record-changed.jsonl" in controls
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    assert result.home.status == "supported"


@LAYOUTS
def test_unescaped_line_separators_in_docs_are_no_line_breaks(tmp_path: Path, split: bool) -> None:
    """lm-eval writes samples with ensure_ascii=False: a doc's U+2028, U+2029 or U+0085
    stays as it is inside its line, where Python's splitlines would break the line."""
    samples = only(results_of("unicode").parent, "samples_tiny_text_*.jsonl")
    assert "\u2028" in samples.read_text("utf-8") and "\x85" in samples.read_text("utf-8")
    imported = import_lm_eval(DATA / "unicode", tmp_path / "source", split=split)
    assert imported.notes == []
    assert imported.claims == [
        "tiny-text-counts",
        "tiny-text-hashes",
        "tiny-text-figures",
        *split_claims(("tiny-text",), split),
    ]
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    assert result.home.status == "supported"


def mutants(document: Any) -> Any:
    """The document with one field (4 deep at most) given a value of another type, or
    True where a number was: one per field."""
    for path in paths_of(document):
        yield path, with_wrong_type(document, path, _true_for_a_number)


def _true_for_a_number(old: Any) -> Any:
    return True if isinstance(old, int | float) else WRONG.get(type(old), {"x": 1})


@LAYOUTS
def test_a_results_field_of_the_wrong_type_is_refused_or_listed_never_a_traceback(
    tmp_path: Path, split: bool
) -> None:
    folder = copy_run("full", tmp_path)
    results_file = only(folder, "results_*.json")
    original = json.loads(results_file.read_text("utf-8"))
    original["configs"] = {
        t: {"metric_list": c["metric_list"]} for t, c in original["configs"].items()
    }
    outcomes = {"refused": 0, "imported": 0}
    for i, (path, mutant) in enumerate(mutants(original)):
        results_file.write_text(json.dumps(mutant), "utf-8")
        try:
            import_lm_eval(folder, tmp_path / f"s{i}", split=split)
            outcomes["imported"] += 1
        except SourceError as exc:
            assert str(results_file) in str(exc), (path, exc)
            outcomes["refused"] += 1
    assert outcomes["refused"] > 5 and outcomes["imported"] > 5, outcomes


@LAYOUTS
def test_a_samples_field_of_the_wrong_type_is_refused_or_noted_never_a_traceback(
    tmp_path: Path, split: bool
) -> None:
    folder = copy_run("full", tmp_path)
    samples = only(folder, "samples_tiny_gen_*.jsonl")
    records = [json.loads(line) for line in samples.read_text("utf-8").splitlines()]
    outcomes = {"refused": 0, "imported": 0}
    for i, (path, mutant) in enumerate(mutants(records[0])):
        samples.write_text("".join(json.dumps(r) + "\n" for r in [mutant, *records[1:]]))
        try:
            imported = import_lm_eval(folder, tmp_path / f"s{i}", split=split)
            outcomes["imported"] += 1
            if path[0] in ("doc", "doc_hash", "target"):  # a note, or the claim left out
                assert imported.notes or "tiny-gen-hashes" not in imported.claims, path
        except SourceError as exc:
            assert "samples_tiny_gen" in str(exc), (path, exc)
            outcomes["refused"] += 1
    assert outcomes["refused"] >= 2 and outcomes["imported"] > 5, outcomes


@LAYOUTS
@pytest.mark.parametrize("run", ["full", "limit", "unicode"])
def test_every_generated_sentence_is_true_of_the_run_it_describes(
    run: str, tmp_path: Path, split: bool
) -> None:
    """Each claim's numbers read back from lm-eval's own files, independently of the
    importer: figures and stderrs as stated, denominators and counts as stored."""
    results_file = results_of(run)
    results = json.loads(results_file.read_text("utf-8"))
    import_lm_eval(results_file, tmp_path / "source", split=split)
    claims = {c["id"]: c for c in source_of(tmp_path / "source")["claims"]}
    limit = results["config"]["limit"]
    for task, counts in results["n-samples"].items():
        name = task.replace("_", "-")
        (samples,) = results_file.parent.glob(f"samples_{task}_*.jsonl")
        records = [json.loads(line) for line in samples.read_text("utf-8").split("\n") if line]
        statement = claims[f"{name}-counts"]["statement"]
        assert f"{counts['effective']} of its {counts['original']} documents" in statement
        assert ("no --limit" if limit is None else f"--limit {limit:g}") in statement
        assert f"each of its {len(records)} records" in claims[f"{name}-hashes"]["statement"]
        figures = claims[f"{name}-figures"]["statement"]
        for key, value in results["results"][task].items():
            metric, _, filter_name = key.partition(",")
            if filter_name and not metric.endswith("_stderr") and metric != "mcc":
                stderr = results["results"][task][f"{metric}_stderr,{filter_name}"]
                assert f"{key} {value:.4g} ± {stderr:.4g}" in figures
                n = sum(1 for r in records if r["filter"] == filter_name and metric in r)
                assert f"over {n} documents" in figures
        for claim in (c for c in claims.values() if c["id"].startswith(name)):
            said = any(lim.startswith("A --limit") for lim in claim["limits"])
            assert said == (limit is not None), claim["id"]


def test_a_fifo_in_place_of_a_samples_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    folder = copy_run("full", tmp_path)
    samples = only(folder, "samples_tiny_mc_*.jsonl")
    samples.unlink()
    os.mkfifo(samples)
    refused_by_cli(folder, tmp_path, "is not a regular file")


# -- issue 41, item 7: the import writes the versions that decide from all the evidence ----


def test_import_writes_the_lm_eval_versions_without_advisories(
    full_bundle: tuple[Path, Any, Any],
) -> None:
    source, _, _ = full_bundle
    split = is_split(source)
    used = {c["checker"] for c in source_of(source)["cases"]}
    assert used == {
        version("lm-eval-counts@2", split),
        "lm-eval-hashes@1",
        version("lm-eval-metric@4", split),
        *(["lm-eval-scores@1"] if split else []),
    }


@LAYOUTS
def test_a_real_run_with_wrong_answers_values_deleted_contradicts_its_figures(
    tmp_path: Path, split: bool
) -> None:
    """The acc of tiny_mc's wrong answers deleted, the header restated over the rest: @1
    averaged the rest and supported it."""
    folder = copy_run("full", tmp_path)
    kept: list[float] = []

    def delete_wrong(records: list[dict[str, Any]]) -> None:
        for r in records:
            if r["acc"] == 0:
                del r["acc"]
            else:
                kept.append(r["acc"])

    edit_lines(only(folder, "samples_tiny_mc_*.jsonl"), delete_wrong)
    results_file = only(folder, "results_*.json")
    results = json.loads(results_file.read_text("utf-8"))
    results["results"]["tiny_mc"]["acc,none"] = sum(kept) / len(kept)
    results["results"]["tiny_mc"]["acc_stderr,none"] = "N/A"
    results_file.write_text(json.dumps(results), "utf-8")
    imported = import_lm_eval(folder, tmp_path / "source", split=split)
    assert any("tiny-mc-acc-none" in n and "hold no acc" in n for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    contradicted = {p.where for p in refused.value.problems if p.code == "claim.contradicted"}
    assert contradicted == {"claim tiny-mc-figures"}


@LAYOUTS
def test_a_real_limit_run_whose_records_are_other_documents_contradicts_its_counts(
    tmp_path: Path, split: bool
) -> None:
    """--limit 3 takes documents 0-2; the records renumbered 4-6 (the hashes still hold)."""
    folder = copy_run("limit", tmp_path)
    edit_lines(
        only(folder, "samples_tiny_mc_*.jsonl"),
        lambda records: [r.update(doc_id=r["doc_id"] + 4) for r in records],
    )
    imported = import_lm_eval(folder, tmp_path / "source", split=split)
    assert any("tiny-mc-counts" in n and "lm-eval takes the first 3" in n for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", EPOCH)
    contradicted = {p.where for p in refused.value.problems if p.code == "claim.contradicted"}
    assert contradicted == {"claim tiny-mc-counts"}
