"""`reprobundle import inspect` on runs that did not go to plan, made by the real Inspect:
failed, cancelled, --limit, retried, --score-on-error. Each builds, and every sentence the
importer writes is read back against the facts of the log it describes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.authoring.build import build
from bundler.errors import SourceError
from bundler.importers.inspect_eval import import_inspect
from bundler.importers.inspect_figures import RULES_OF
from checkers.inspect_log import rules
from checkers.inspect_log.log import InspectLog, read_log
from tests.inspect_support import inspect_logs

__all__ = ["inspect_logs"]  # the fixture, used by name

RUNS = [
    "failed.json",
    "cancelled.eval",
    "limit.json",
    "retried.json",
    "score-on-error.json",
    "eval-set.json",
]
EVERY_LOG = ["mixed.eval", "mixed.json", "all-errored.eval", *RUNS]


def imported(logs: Path, name: str, root: Path) -> tuple[dict[str, Any], InspectLog]:
    import_inspect(logs / name, root / "source")
    document: dict[str, Any] = yaml.safe_load((root / "source" / "bundle.yaml").read_text())
    return document, read_log((logs / name).read_bytes())


def claim(document: dict[str, Any], claim_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in document["claims"] if c["id"] == claim_id)
    return found


@pytest.mark.parametrize("name", RUNS)
def test_every_unfinished_or_partial_run_imports_and_builds_with_every_claim_supported(
    inspect_logs: Path, tmp_path: Path, name: str
) -> None:
    import_inspect(inspect_logs / name, tmp_path / "source")
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"


def test_failed_run_states_what_ran_what_did_not_and_why_as_a_finding(
    inspect_logs: Path, tmp_path: Path
) -> None:
    document, log = imported(inspect_logs, "failed.json", tmp_path)
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
    assert cases["finding-not-run"]["params"] == {"claimed": {"total_samples": 6}}
    counts = claim(document, "sample-counts")
    assert "total 4, completed 2, errored 2" in counts["statement"]


def test_cancelled_run_keeps_its_figures_over_what_completed_and_says_the_rest(
    inspect_logs: Path, tmp_path: Path
) -> None:
    document, log = imported(inspect_logs, "cancelled.eval", tmp_path)
    assert log.status == "cancelled"
    statement = claim(document, "finding-unfinished-run")["statement"]
    assert "status is cancelled" in statement and "CancelledError" in statement
    figure = claim(document, "match-no-reducer")
    assert any("did not finish (status cancelled)" in limit for limit in figure["limits"])
    assert any("That the run finished" in s for s in document["scope"]["cannot_support"])


def test_limited_run_says_so_in_every_claim(inspect_logs: Path, tmp_path: Path) -> None:
    document, _ = imported(inspect_logs, "limit.json", tmp_path)
    for found in document["claims"]:
        assert any("--limit 3" in limit for limit in found["limits"]), found["id"]


def test_retried_run_says_the_last_attempt_is_what_counts(
    inspect_logs: Path, tmp_path: Path
) -> None:
    document, _ = imported(inspect_logs, "retried.json", tmp_path)
    for found in document["claims"]:
        assert any("retried up to 2 times" in limit for limit in found["limits"]), found["id"]


def test_score_on_error_run_is_not_said_to_leave_its_errors_out_of_the_figures(
    inspect_logs: Path, tmp_path: Path
) -> None:
    document, log = imported(inspect_logs, "score-on-error.json", tmp_path)
    assert log.errored and all(r.scores for r in log.errored)
    finding = claim(document, "finding-errors-under-success")["statement"]
    assert "left out" not in finding
    assert "were scored (its config has score_on_error) and count in the figures" in finding


def test_a_figure_no_changed_sample_can_move_is_stated_under_scope_not_claimed(
    inspect_logs: Path, tmp_path: Path
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
    done = import_inspect(tmp_path / "at-least-3.json", tmp_path / "source")
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


def _check_sentence(text: str, log: InspectLog) -> int:
    """Assert every fact ``text`` states of the log; returns how many it stated."""
    counts = rules.counts(log)
    errored = log.errored
    scored_errors = [r for r in errored if r.scores]
    facts = 0
    for held, samples, epochs in _numbers(
        r"holds (\d+) sample records \((\d+) samples x (\d+) epochs\)", text
    ):
        assert (held, samples, epochs) == (
            counts["total_samples"],
            counts["samples"],
            counts["epochs"],
        )
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
    for held, completed in _numbers(r"the log holds (\d+): (\d+) completed", text):
        assert (held, completed) == (len(log.records), len(log.records) - len(errored))
        facts += 1
    for (bad,) in _numbers(r"(\d+) ended with an error", text):
        assert bad == len(errored)
        facts += 1
    for (never,) in _numbers(r"(\d+) never ran", text):
        assert never == _planned(log) - len(log.records)
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


@pytest.mark.parametrize("name", EVERY_LOG)
def test_every_generated_sentence_is_true_of_the_log_it_describes(
    inspect_logs: Path, tmp_path: Path, name: str
) -> None:
    document, log = imported(inspect_logs, name, tmp_path)
    cases = {c["id"]: c for c in document["cases"]}
    facts = 0
    for found in document["claims"]:
        for text in [found["statement"], *found["limits"]]:
            facts += _check_sentence(text, log)
        facts += _check_figure_claim(found, cases, log)
    for text in document["scope"]["cannot_support"]:
        facts += _check_sentence(text, log)
    assert facts >= len(document["claims"])  # every claim states something checked here


def test_a_log_written_by_another_inspect_version_is_said_to_be_rescored_with_other_rules(
    inspect_logs: Path, tmp_path: Path
) -> None:
    document = json.loads((inspect_logs / "mixed.json").read_text())
    document["eval"]["packages"]["inspect_ai"] = "0.3.100"
    (tmp_path / "older.json").write_text(json.dumps(document))
    import_inspect(tmp_path / "older.json", tmp_path / "source")
    source = yaml.safe_load((tmp_path / "source" / "bundle.yaml").read_text())
    said = [
        limit for c in source["claims"] for limit in c["limits"] if "re-implementation" in limit
    ]
    assert said and all(
        f"as of inspect-ai {RULES_OF}; the log was written by inspect_ai 0.3.100, another "
        "version" in limit
        for limit in said
    )


def test_a_cancelled_run_that_wrote_no_sample_is_refused_saying_so(
    inspect_logs: Path, tmp_path: Path
) -> None:
    document = json.loads((inspect_logs / "failed.json").read_text())
    document.update(status="cancelled", samples=[])
    (tmp_path / "nothing.json").write_text(json.dumps(document))
    with pytest.raises(SourceError, match="did not finish: status cancelled, and no sample"):
        import_inspect(tmp_path / "nothing.json", tmp_path / "source")


def test_a_record_without_a_score_that_did_not_error_is_not_called_errored(
    inspect_logs: Path, tmp_path: Path
) -> None:
    document = json.loads((inspect_logs / "mixed.json").read_text())
    unerrored = next(
        s for s in document["samples"] if not s.get("error") and "match" in s["scores"]
    )
    del unerrored["scores"]["match"]
    (tmp_path / "missing.json").write_text(json.dumps(document))
    source, _ = imported(tmp_path, "missing.json", tmp_path)
    limits = " ".join(claim(source, "match-mean")["limits"])
    assert "2 of 12 epoch records have no match score (1 of them errored)" in limits
