"""`reprobundle import inspect` on runs that did not go to plan, made by the real Inspect:
failed, cancelled, --limit, retried, --score-on-error. Each builds, and every sentence the
importer writes is read back against the facts of the log it describes."""

from __future__ import annotations

import json
import re
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

import checkers
from bundler.authoring.build import build
from bundler.errors import BuildRefused, SourceError
from bundler.format.advisories import of_checker
from bundler.importers.inspect_eval import import_inspect
from bundler.importers.inspect_figures import RULES_OF
from bundler.run.runner import run_checker
from bundler.run.verify import verify
from checkers.inspect_log import rules
from checkers.inspect_log.log import InspectLog, read_log
from tests.importers.layouts import LAYOUTS, inspect_version
from tests.inspect_support import inspect_logs, truth

__all__ = ["inspect_logs"]  # the fixture, used by name

RUNS = [
    "failed.json",
    "cancelled.eval",
    "limit.json",
    "retried.json",
    "score-on-error.json",
    "eval-set.json",
    "retried.eval",
    "cancelled-epochs.eval",
]
EVERY_LOG = ["mixed.eval", "mixed.json", "all-errored.eval", *RUNS]


def imported(
    logs: Path, name: str, root: Path, split: bool = True
) -> tuple[dict[str, Any], InspectLog]:
    import_inspect(logs / name, root / "source", split=split)
    document: dict[str, Any] = yaml.safe_load((root / "source" / "bundle.yaml").read_text())
    return document, read_log((logs / name).read_bytes())


def claim(document: dict[str, Any], claim_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in document["claims"] if c["id"] == claim_id)
    return found


@LAYOUTS
@pytest.mark.parametrize("name", RUNS)
def test_every_unfinished_or_partial_run_imports_builds_and_verifies_with_no_advisory_accepted(
    inspect_logs: Path, tmp_path: Path, name: str, split: bool
) -> None:
    import_inspect(inspect_logs / name, tmp_path / "source", split=split)
    # no advisory accepted: every case names a version no advisory covers (an unfinished
    # run's counts used to be checked by the advised inspect-counts@1, and build refused it)
    document = yaml.safe_load((tmp_path / "source" / "bundle.yaml").read_text())
    assert [c["id"] for c in document["cases"] if of_checker(c["checker"])] == []
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"
    verified = verify(tmp_path / "b.bundle.tar.gz", workdir=tmp_path / "work")
    assert verified.status == "supported" and verified.exit_code == 0
    assert verified.accepted_advisories == ()


@LAYOUTS
def test_failed_run_states_what_ran_what_did_not_and_why_as_a_finding(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document, log = imported(inspect_logs, "failed.json", tmp_path, split)
    assert log.status == "error" and log.results is None
    finding = claim(document, "finding-unfinished-run")
    statement = finding["statement"]
    assert "status is error (the run stopped on an error: RuntimeError('planted error'))" in (
        statement
    )
    assert "It planned 6 sample records (6 samples x 1 epochs); the log holds 4" in statement
    assert "2 completed, 2 ended with an error" in statement and "2 never ran" in statement
    cases = {c["id"]: c for c in document["cases"]}
    assert [cases[c]["expect"] for c in finding["cases"]] == ["fail", "fail"]
    assert cases["finding-not-run"]["params"] == {"claimed": {"not_run": 0}}
    counts = claim(document, "sample-counts")
    assert counts["statement"].startswith("The run planned 6 sample records (6 samples x 1")
    assert "2 completed, 2 errored, 2 never ran (s5, s6 in epoch 1)" in (counts["statement"])
    (case,) = [cases[c] for c in counts["cases"] if cases[c]["expect"] == "pass"]
    assert case["checker"] == inspect_version("inspect-counts@3", split)
    assert case["params"]["claimed"] == {
        "total_samples": 6,
        "records": 4,
        "duplicates": 0,
        "completed_samples": 2,
        "errored_samples": 2,
        "not_run": 2,
    }


@LAYOUTS
def test_cancelled_run_keeps_its_figures_over_what_completed_and_says_the_rest(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document, log = imported(inspect_logs, "cancelled.eval", tmp_path, split)
    assert log.status == "cancelled"
    statement = claim(document, "finding-unfinished-run")["statement"]
    assert "status is cancelled" in statement and "CancelledError" in statement
    figure = claim(document, "match-no-reducer")
    assert any("did not finish (status cancelled)" in limit for limit in figure["limits"])
    assert any("That the run finished" in s for s in document["scope"]["cannot_support"])


@LAYOUTS
def test_limited_run_says_so_in_every_claim(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document, _ = imported(inspect_logs, "limit.json", tmp_path, split)
    for found in document["claims"]:
        assert any("--limit 3" in limit for limit in found["limits"]), found["id"]


@LAYOUTS
def test_retried_run_says_the_last_attempt_is_what_counts(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document, _ = imported(inspect_logs, "retried.json", tmp_path, split)
    for found in document["claims"]:
        assert any("retried up to 2 times" in limit for limit in found["limits"]), found["id"]


@LAYOUTS
def test_score_on_error_run_is_not_said_to_leave_its_errors_out_of_the_figures(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document, log = imported(inspect_logs, "score-on-error.json", tmp_path, split)
    assert log.errored and all(r.scores for r in log.errored)
    finding = claim(document, "finding-errors-under-success")["statement"]
    assert "left out" not in finding
    assert "were scored (its config has score_on_error) and count in the figures" in finding


@LAYOUTS
def test_a_figure_no_changed_sample_can_move_is_stated_under_scope_not_claimed(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    """at_least_3 over 2 epochs is 0 whatever the scores: no control can fail its check,
    so a claim resting on it could never be supported (build used to refuse it)."""
    document = json.loads((inspect_logs / "mixed.json").read_text())
    document["results"]["scores"].append(
        {
            "name": "match",
            "scorer": "match",
            "reducer": "at_least_3",
            "scored_samples": 6,
            "unscored_samples": 0,
            "params": {},
            "metrics": {"accuracy": {"name": "accuracy", "value": 0.0, "params": {}}},
        }
    )
    (tmp_path / "at-least-3.json").write_text(json.dumps(document))
    done = import_inspect(tmp_path / "at-least-3.json", tmp_path / "source", split=split)
    assert "match-at-least-3" not in done.claims
    source = yaml.safe_load((tmp_path / "source" / "bundle.yaml").read_text())
    assert any(
        "match / at_least_3 / accuracy = 0.0" in s and "no claim rests on it" in s
        for s in source["scope"]["cannot_support"]
    )
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"


# -- every sentence against its log --------------------------------------------------------


def _numbers(pattern: str, text: str) -> list[tuple[int, ...]]:
    return [tuple(int(g) for g in m.groups()) for m in re.finditer(pattern, text)]


def _planned(log: InspectLog) -> int:
    total = (log.results or {}).get("total_samples")
    if isinstance(total, int):
        return total
    dataset = log.spec.get("dataset") or {}
    ids = dataset.get("sample_ids")
    samples = len(ids) if isinstance(ids, list) else dataset["samples"]
    return int(samples) * int((log.spec.get("config") or {}).get("epochs") or 1)


def _pairs(listing: str) -> set[tuple[Any, int]]:
    """``s1 in epochs 1-3; s2, s3 in epoch 1`` as (sample, epoch) pairs."""
    found: set[tuple[Any, int]] = set()
    for group in listing.split("; "):
        names, _, epochs = group.rpartition(" in ")
        numbers: list[int] = []
        for part in epochs.split(" ", 1)[1].split(", "):
            first, _, last = part.partition("-")
            numbers += range(int(first), int(last or first) + 1)
        found |= {(name, epoch) for name in names.split(", ") for epoch in numbers}
    return found


def _never_ran(log: InspectLog, pairs: Counter[tuple[Any, int]]) -> set[tuple[Any, int]]:
    """The planned (sample, epoch) pairs with no record, as the log's spec names them."""
    ids = (log.spec.get("dataset") or {}).get("sample_ids") or []
    epochs = int((log.spec.get("config") or {}).get("epochs") or 1)
    return {(str(i), e) for i in ids for e in range(1, epochs + 1)} - {
        (str(i), e) for i, e in pairs
    }


def _check_sentence(text: str, log: InspectLog) -> int:
    """Assert every fact ``text`` states of the log; returns how many it stated."""
    counts = rules.counts(log)
    errored = log.errored
    scored_errors = [r for r in errored if r.scores]
    facts = 0
    pairs = Counter((r.sample_id, r.epoch) for r in log.records)
    for held, samples, epochs in _numbers(
        r"holds (\d+) sample records \((\d+) samples x (\d+) epochs\)", text
    ):
        assert (held, samples, epochs) == (
            counts["total_samples"],
            counts["samples"],
            counts["epochs"],
        )
        # a grid only where the records are each sample in each epoch, once
        assert held == len(pairs) == samples * epochs
        facts += 1
    for held, samples, listing in re.findall(
        r"(\d+) sample records \((\d+) samples: ([^;)]*(?:; [^;)]*? in epochs? [\d, -]+)*)", text
    ):
        assert int(held) == len(log.records)
        assert int(samples) == len({sample for sample, _ in pairs})
        if " more" not in listing:
            assert _pairs(listing) == {(str(i), e) for i, e in pairs}, listing
        facts += 1
    for again, distinct in _numbers(r"(\d+) of them duplicates .*?, so (\d+) distinct", text):
        assert (again, distinct) == (len(log.records) - len(pairs), len(pairs))
        facts += 1
    for total, completed, bad in _numbers(r"total (\d+), completed (\d+), errored (\d+)", text):
        assert (total, completed, bad) == (
            len(log.records),
            len(log.records) - len(errored),
            len(errored),
        )
        facts += 1
    for bad, held in _numbers(r"(\d+) of (\d+) sample records errored", text):
        assert (bad, held) == (len(errored), len(log.records))
        facts += 1
    for (planned,) in _numbers(r"planned (\d+) sample records", text):
        assert planned == _planned(log)
        facts += 1
    # completed and errored: each sample and epoch once (a duplicate is not a second run)
    bad_pairs = {(r.sample_id, r.epoch) for r in errored}
    for held, completed in _numbers(
        r"the log holds (\d+) sample records.*?\): (\d+) completed", text
    ):
        assert (held, completed) == (len(log.records), len(set(pairs) - bad_pairs))
        facts += 1
    for (bad,) in _numbers(r"\d+ completed, (\d+) errored", text):
        assert bad == len(bad_pairs)
        facts += 1
    for (bad,) in _numbers(r"(\d+) ended with an error", text):
        assert bad == len(errored)
        facts += 1
    missing = _never_ran(log, pairs)
    for (never,) in _numbers(r"(\d+) (?:planned sample records )?never ran", text):
        assert never == len(missing)
        facts += 1
    for listing in re.findall(r"never ran \(([^)]*)\)", text):
        if " more" not in listing:
            assert _pairs(listing) == missing, listing
        facts += 1
    if re.search(r"(?:it|the run) planned", text, re.IGNORECASE):
        assert ("never ran" in text) == bool(missing), "a sample that never ran goes unsaid"
        assert not missing or "never ran (" in text, "a sample that never ran goes unnamed"
        facts += 1
    if "left out of every figure" in text and "have no score" not in text:
        assert errored and not scored_errors, "errors said left out, but they were scored"
        facts += 1
    if "were scored" in text and "errored records were scored and are counted" not in text:
        assert scored_errors and len(scored_errors) == len(errored)
        facts += 1
    for (scored,) in _numbers(r"(\d+) errored records were scored and are counted", text):
        assert scored == len(scored_errors)
        facts += 1
    for status in re.findall(r"(?:its status is|\(status) (\w+)", text):
        assert status == log.status
        facts += 1
    if "--limit" in text:
        assert (log.spec.get("config") or {}).get("limit") is not None
        facts += 1
    for wrote in re.findall(r"written by inspect_ai ([\w.+-]+?)[,.]? ", text + " "):
        assert wrote == (log.spec.get("packages") or {}).get("inspect_ai")
        assert ("the same version" in text) == (wrote == RULES_OF)
        facts += 1
    if "DIRTY REVISION" in text or "clean working tree" in text:
        assert bool((log.spec.get("revision") or {}).get("dirty")) == ("DIRTY" in text)
        facts += 1
    return facts


def _check_figure_claim(found: dict[str, Any], cases: dict[str, Any], log: InspectLog) -> int:
    """The figure claim's numbers: the values its cases claim, over the samples they have."""
    params = [
        cases[c]["params"] for c in found["cases"] if cases[c]["checker"] == "inspect-metric@1"
    ]
    if not params:
        return 0
    first = params[0]
    reducer = first["reducer"] or None
    scorer = first["scorer"]
    dropped = rules.figure(log, scorer, reducer, first["metric"])
    (over,) = _numbers(r"over (\d+) samples, re-derived", found["statement"])[0]
    assert over == dropped["scored_samples"]
    pool = rules.pooled(log, scorer)
    for no_score, epochs in _numbers(
        r"(\d+) of (\d+) epoch records have no", " ".join(found["limits"])
    ):
        assert (no_score, epochs) == (pool["epochs"] - pool["scored_epochs"], pool["epochs"])
    unscored_errors = sum(1 for r in log.errored if scorer not in r.scores)
    for (errored,) in _numbers(r"score \((\d+) of them errored\)", " ".join(found["limits"])):
        assert errored == unscored_errors
    if "score (errored)" in " ".join(found["limits"]):
        assert unscored_errors == pool["epochs"] - pool["scored_epochs"]
    for p in params:
        shown = re.search(rf"{re.escape(p['metric'])} ([-\d.e]+)", found["statement"])
        assert shown and abs(float(shown.group(1)) - p["claimed"]) <= 5e-4 * max(
            1, abs(p["claimed"])
        )
        stated = (rules.header_entry(log, scorer, reducer) or {}).get("metrics", {})
        assert p["claimed"] == stated[p["metric"]]["value"]
    return 1 + len(params)


@LAYOUTS
@pytest.mark.parametrize("name", EVERY_LOG)
def test_every_generated_sentence_is_true_of_the_log_it_describes(
    inspect_logs: Path, tmp_path: Path, name: str, split: bool
) -> None:
    document, log = imported(inspect_logs, name, tmp_path, split)
    _every_sentence_true(document, log)


def _every_sentence_true(document: dict[str, Any], log: InspectLog) -> None:
    cases = {c["id"]: c for c in document["cases"]}
    facts = 0
    for found in document["claims"]:
        for text in [found["statement"], *found["limits"]]:
            facts += _check_sentence(text, log)
        facts += _check_figure_claim(found, cases, log)
    for text in document["scope"]["cannot_support"]:
        facts += _check_sentence(text, log)
    assert facts >= len(document["claims"])  # every claim states something checked here


@LAYOUTS
def test_a_log_written_by_another_inspect_version_is_said_to_be_rescored_with_other_rules(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document = json.loads((inspect_logs / "mixed.json").read_text())
    document["eval"]["packages"]["inspect_ai"] = "0.3.100"
    (tmp_path / "older.json").write_text(json.dumps(document))
    import_inspect(tmp_path / "older.json", tmp_path / "source", split=split)
    source = yaml.safe_load((tmp_path / "source" / "bundle.yaml").read_text())
    said = [
        limit for c in source["claims"] for limit in c["limits"] if "re-implementation" in limit
    ]
    assert said and all(
        f"as of inspect-ai {RULES_OF}; the log was written by inspect_ai 0.3.100, another "
        "version" in limit
        for limit in said
    )


@LAYOUTS
def test_a_cancelled_run_that_wrote_no_sample_is_refused_saying_so(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document = json.loads((inspect_logs / "failed.json").read_text())
    document.update(status="cancelled", samples=[])
    (tmp_path / "nothing.json").write_text(json.dumps(document))
    with pytest.raises(SourceError, match="did not finish: status cancelled, and no sample"):
        import_inspect(tmp_path / "nothing.json", tmp_path / "source", split=split)


@LAYOUTS
def test_a_record_without_a_score_that_did_not_error_is_not_called_errored(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document = json.loads((inspect_logs / "mixed.json").read_text())
    unerrored = next(
        s for s in document["samples"] if not s.get("error") and "match" in s["scores"]
    )
    del unerrored["scores"]["match"]
    (tmp_path / "missing.json").write_text(json.dumps(document))
    source, _ = imported(tmp_path, "missing.json", tmp_path, split)
    limits = " ".join(claim(source, "match-mean")["limits"])
    assert "2 of 12 epoch records have no match score (1 of them errored)" in limits


# -- a real eval-retry log (issue 41, item 9) ----------------------------------------------


@LAYOUTS
def test_real_eval_retry_log_with_a_sample_written_twice_imports_builds_and_verifies(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    """inspect-ai 0.3.285's eval_retry() writes samples/s3_epoch_1.json (and s4's) twice
    in the zip: import refused it ("listed twice in the zip's directory")."""
    from bundler.run.verify import verify

    names = [i.filename for i in zipfile.ZipFile(inspect_logs / "retried.eval").infolist()]
    assert names.count("samples/s3_epoch_1.json") == 2
    done = import_inspect(inspect_logs / "retried.eval", tmp_path / "source", split=split)
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"
    (tmp_path / "work").mkdir()
    verification = verify(result.path, workdir=tmp_path / "work")
    assert verification.status == "supported" and verification.exit_code == 0
    assert done.claims  # the figures, counts and status


@LAYOUTS
def test_real_eval_retry_log_is_read_as_inspect_reads_it_with_inspects_figures(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document, log = imported(inspect_logs, "retried.eval", tmp_path, split)
    ours = [
        {"id": r.sample_id, "epoch": r.epoch, "error": r.error is not None} for r in log.records
    ]
    theirs = [
        {"id": t["id"], "epoch": t["epoch"], "error": t["error"] is not None}
        for t in truth(inspect_logs, "retried.eval")
    ]
    key = lambda r: (r["epoch"], str(r["id"]))  # noqa: E731
    assert sorted(ours, key=key) == sorted(theirs, key=key)
    assert not any(r.error for r in log.records)  # the re-run s3, not its errored attempt
    header = log.results or {}
    assert header["total_samples"] == header["completed_samples"] == 40
    figures = {
        (c["params"]["scorer"], c["params"]["metric"]): c["params"]["claimed"]
        for c in document["cases"]
        if c["checker"] == inspect_version("inspect-metric@4", split) and c["expect"] == "pass"
    }
    assert figures[("match", "accuracy")] == 0.5  # what Inspect wrote: 20 of 40 right
    for (scorer, metric), claimed in figures.items():
        entry = rules.header_entry(log, scorer, None)
        assert entry is not None and claimed == entry["metrics"][metric]["value"]


@LAYOUTS
def test_real_eval_retry_is_stated_with_each_superseded_attempt_named(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    document, _ = imported(inspect_logs, "retried.eval", tmp_path, split)
    for found in document["claims"]:
        if found["id"] == "finding-retried-run":
            continue  # the retry is its statement
        said = " ".join(found["limits"])
        assert "Retried run: the .eval zip holds 2 superseded sample entries" in said
        assert "Inspect reads the last entry of each name" in said
        assert "samples/s3_epoch_1.json (errored: RuntimeError('planted error'))" in said
    assert any("superseded attempts" in s for s in document["scope"]["cannot_support"])
    finding = claim(document, "finding-retried-run")
    assert finding["statement"].startswith(
        "The log was written by a retry: its .eval zip holds 42 sample entries, 2 of them "
        "superseded by a later entry of the same name (samples/s3_epoch_1.json (errored: "
    )
    assert "Inspect reads 40 sample records, the last entry of each name" in finding["statement"]
    cases = {c["id"]: c for c in document["cases"]}
    assert cases["finding-retried-run"]["params"] == {"claimed": {"records": 42}}
    assert cases["finding-retried-run"]["checker"] == inspect_version("inspect-counts@3", split)
    assert cases["finding-retried-run"]["kind"] == "finding"


# -- unfinished runs described truly (issue 41, item 8) -------------------------------------


@LAYOUTS
def test_cancelled_run_of_2_samples_x_3_epochs_is_not_described_as_the_full_grid(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    """The real run was interrupted in its fifth attempt: s1 in epochs 1-3 (the third
    cancelled), s2 in epochs 1-2. It used to read "5 sample records (2 samples x 3
    epochs)", six records' worth."""
    document, log = imported(inspect_logs, "cancelled-epochs.eval", tmp_path, split)
    assert log.status == "cancelled" and len(log.records) == 5
    counts = claim(document, "sample-counts")["statement"]
    assert "5 sample records (2 samples: s1 in epochs 1-3; s2 in epochs 1-2)" in counts
    # the grid is the plan's, never the records'
    assert counts.count("x 3 epochs") == 1
    assert counts.startswith("The run planned 6 sample records (2 samples x 3 epochs)")
    assert "1 never ran (s2 in epoch 3)" in counts
    finding = claim(document, "finding-unfinished-run")["statement"]
    assert "It planned 6 sample records (2 samples x 3 epochs); the log holds 5" in finding
    assert "1 never ran (s2 in epoch 3)" in finding


@LAYOUTS
def test_a_log_holding_one_sample_record_three_times_counts_duplicates_and_what_never_ran(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    """A run of s1-s3 whose log holds s1's record three times: it used to read "total 3,
    completed 3 ... of the 3 it planned", with no word that s2 and s3 never ran."""
    document = json.loads((inspect_logs / "failed.json").read_text())
    first = next(s for s in document["samples"] if s["id"] == "s1")
    document["samples"] = [first, first, first]
    document["eval"]["dataset"].update(samples=3, sample_ids=["s1", "s2", "s3"])
    (tmp_path / "thrice.json").write_text(json.dumps(document))
    source, log = imported(tmp_path, "thrice.json", tmp_path, split)
    held = "3 sample records (1 samples: s1 in epoch 1; 2 of them duplicates of a record "
    counts = claim(source, "sample-counts")["statement"]
    assert held in counts and "so 1 distinct" in counts
    cannot = " ".join(source["scope"]["cannot_support"])
    assert "of the 3 it planned; 2 planned sample records never ran (s2, s3 in epoch 1)" in (cannot)
    limited = [lim for c in source["claims"] for lim in c["limits"] if "did not finish" in lim]
    assert limited and all("2 never ran (s2, s3 in epoch 1)" in lim for lim in limited)
    _every_sentence_true(source, log)


# -- inspect-counts@3 on real logs (issue 41: import never writes an advised version) ------


@pytest.mark.parametrize("name", EVERY_LOG)
def test_every_real_log_passes_inspect_counts_v3_with_inspects_own_counts(
    inspect_logs: Path, name: str
) -> None:
    """Finished or not: the planned total and the completed count are the ones Inspect's
    header states, and what never ran is what the log's plan names without a record."""
    data = (inspect_logs / name).read_bytes()
    log = read_log(data)
    found = checkers.get("inspect-counts@3")
    assert found is not None
    verdict = run_checker(found, {"log": data}, {})
    assert verdict.status == "pass", verdict.message
    counts = verdict.details["samples"]
    results = log.results or {}
    assert counts["total_samples"] == _planned(log)
    if "completed_samples" in results:
        assert counts["completed_samples"] == results["completed_samples"]
    pairs = Counter((r.sample_id, r.epoch) for r in log.records)
    assert counts["not_run"] == len(_never_ran(log, pairs))
    assert (counts["not_run"] > 0) == (log.status != "success")


@LAYOUTS
def test_a_forged_header_on_a_real_failed_run_contradicts_its_counts_claim(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    """The real failed run (s1-s2 completed, s3-s4 errored, s5-s6 never ran) with a header
    saying all 6 completed: the importer's old check (inspect-counts@1 on the records'
    own counts) passes it; inspect-counts@3 fails it, and build refuses the claim."""
    document = json.loads((inspect_logs / "failed.json").read_text())
    document["results"] = {"total_samples": 6, "completed_samples": 6, "scores": []}
    forged = json.dumps(document).encode()
    old = checkers.get("inspect-counts@1")
    new = checkers.get("inspect-counts@3")
    assert old is not None and new is not None
    claimed = {"total_samples": 4, "completed_samples": 2, "errored_samples": 2}
    assert run_checker(old, {"log": forged}, {"claimed": claimed}).status == "pass"
    verdict = run_checker(new, {"log": forged}, {})
    assert verdict.codes == ("inspect.header_count_mismatch",)
    assert verdict.reasons[0].details == {"figure": "completed_samples", "header": 6, "samples": 2}
    (tmp_path / "forged.json").write_bytes(forged)
    imported = import_inspect(tmp_path / "forged.json", tmp_path / "source", split=split)
    assert any(n.startswith("counts:") and "contradicted" in n for n in imported.notes)
    with pytest.raises(BuildRefused) as refused:
        build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert ("claim sample-counts", "claim.contradicted") in {
        (p.where, p.code) for p in refused.value.problems
    }


@LAYOUTS
def test_a_log_left_started_imports_builds_and_verifies_with_no_advisory_accepted(
    inspect_logs: Path, tmp_path: Path, split: bool
) -> None:
    """The real failed run's log as Inspect leaves it while running (status started, no
    results, no error): its counts claim says what the plan chose and what never ran."""
    document = json.loads((inspect_logs / "failed.json").read_text())
    document["status"] = "started"
    document.pop("error", None)
    (tmp_path / "started.json").write_text(json.dumps(document))
    source, log = imported(tmp_path, "started.json", tmp_path, split)
    counts = claim(source, "sample-counts")
    assert "2 never ran (s5, s6 in epoch 1)" in counts["statement"]
    assert not [c["id"] for c in source["cases"] if of_checker(c["checker"])]
    _every_sentence_true(source, log)
    assert build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000).home.status == (
        "supported"
    )
    verified = verify(tmp_path / "b.bundle.tar.gz", workdir=tmp_path / "work")
    assert verified.status == "supported" and verified.exit_code == 0
