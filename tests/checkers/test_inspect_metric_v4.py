"""inspect-metric@4: each (sample, epoch) recorded once (advisory RB-2026-0045 on @2).
Inspect runs each sample once per epoch and writes one record for it."""

from __future__ import annotations

import json

import checkers
from bundler.run.runner import run_checker
from checkers.api import Verdict
from tests.helpers import REPO

SOURCE = REPO / "tests/advisories/sources/RB-2026-0045/inputs"
PARAMS = {"scorer": "match", "reducer": "mean", "metric": "accuracy"}


def run(key: str, log: bytes) -> Verdict:
    found = checkers.get(key)
    assert found is not None
    return run_checker(found, {"log": log}, PARAMS)


def test_a_record_written_six_times_is_not_six_epochs() -> None:
    forged = (SOURCE / "forged.json").read_bytes()
    assert run("inspect-metric@2", forged).status == "pass"  # RB-2026-0045
    verdict = run("inspect-metric@4", forged)
    assert verdict.codes == ("inspect.record_repeated",)
    assert "'s1' epoch 1 (6 records" in verdict.reasons[0].message
    assert verdict.details["repeated_records"] == 10


def test_the_runs_own_records_decide_as_version_2() -> None:
    control = (SOURCE / "control.json").read_bytes()
    at2, at4 = run("inspect-metric@2", control), run("inspect-metric@4", control)
    assert at2.codes == at4.codes == ("inspect.header_metric_mismatch",)
    honest = json.loads(control)
    honest["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 0.5
    honest["results"]["scores"][0]["metrics"]["stderr"]["value"] = 0.20412414523193148
    assert run("inspect-metric@4", json.dumps(honest).encode()).status == "pass"


def test_a_real_eval_log_passes_as_with_version_2() -> None:
    log = (REPO / "tests/data/inspect/mixed.eval").read_bytes()
    at2, at4 = run("inspect-metric@2", log), run("inspect-metric@4", log)
    assert at4.status == at2.status and at4.message == at2.message
