"""promptfoo-stats@4: each row is its own result (advisory RB-2026-0044 on @2). promptfoo's
evaluator gives every test case, var combination and repeat its own testIdx and every
prompt its promptIdx, and writes one result per pair."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import checkers
from bundler.run.runner import run_checker
from checkers.api import Verdict

REAL = Path(__file__).resolve().parent.parent / "data" / "promptfoo"
V0121, V0123 = REAL / "results.json", REAL / "v0123" / "results.json"
CLAIMED = {"tests": 10, "successes": 6}


def run(key: str, document: Any, **params: Any) -> Verdict:
    found = checkers.get(key)
    assert found is not None
    return run_checker(found, {"results": json.dumps(document).encode()}, params)


def written_six_times() -> dict[str, Any]:
    """promptfoo 0.123.1's run (1 of 5 tests passed), its passing row written five more
    times, stats and prompt metrics edited to match: what a hand-written bundle can hold."""
    document = json.loads(V0123.read_text())
    rows = document["results"]["results"]
    (passing,) = [r for r in rows if r["success"]]
    rows += [copy.deepcopy(passing) for _ in range(5)]
    stats = document["results"]["stats"]
    stats["successes"] += 5
    for key in ("prompt", "completion"):
        stats["tokenUsage"][key] += 5 * passing["tokenUsage"][key]
    metrics = document["results"]["prompts"][0]["metrics"]
    metrics["testPassCount"] += 5
    components = passing["gradingResult"]["componentResults"]
    metrics["assertPassCount"] += 5 * sum(1 for c in components if c["pass"])
    return document  # type: ignore[no-any-return]


def test_a_result_written_six_times_is_not_six_tests() -> None:
    forged = written_six_times()
    assert run("promptfoo-stats@2", forged, claimed=CLAIMED).status == "pass"  # RB-2026-0044
    verdict = run("promptfoo-stats@4", forged, claimed=CLAIMED)
    assert verdict.codes == ("promptfoo.result_repeated",)
    assert "testIdx 4, promptIdx 0" in verdict.reasons[0].message
    assert verdict.details["repeated_rows"] == 5


@pytest.mark.parametrize("path", [V0121, V0123], ids=["0.121", "0.123.1"])
def test_real_results_decide_as_version_2(path: Path) -> None:
    document = json.loads(path.read_text())
    at2, at4 = run("promptfoo-stats@2", document), run("promptfoo-stats@4", document)
    assert at4.status == at2.status == "pass" and at4.message == at2.message


def test_a_stats_mismatch_keeps_its_reasons_beside_the_repeat() -> None:
    forged = written_six_times()
    forged["results"]["stats"]["successes"] = 1  # stats as the run wrote them
    verdict = run("promptfoo-stats@4", forged)
    assert verdict.codes[0] == "promptfoo.result_repeated"
    assert "promptfoo.stats.successes" in verdict.codes


@pytest.mark.parametrize("key", ["testIdx", "promptIdx"])
def test_a_row_without_its_index_cannot_be_told_apart(key: str) -> None:
    document = json.loads(V0123.read_text())
    del document["results"]["results"][2][key]
    verdict = run("promptfoo-stats@4", document)
    assert verdict.status == "error" and verdict.codes == ("input.invalid",)
    assert f"results[2].{key}" in verdict.message
