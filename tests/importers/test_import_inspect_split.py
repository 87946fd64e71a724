"""Issue 45 item 5: an Inspect log imported in the split layout, redacted of its transcripts.

`import inspect --split` keeps the log (with its transcripts) under inputs/transcripts/ and
checks the figures on a scores file without transcripts. Redacted of the transcripts, the
bundle still supports its headline figure and its counts claim; only the claims that read
the transcripts (the re-scoring, and that the scores file is the log's) are withheld.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bundler.authoring.build import build
from bundler.authoring.redact import redact
from bundler.importers.inspect_eval import import_inspect
from bundler.run.verify import verify
from checkers.inspect_log.log import read_log
from tests.inspect_support import inspect_logs

__all__ = ["inspect_logs"]  # the fixture, used by name


@pytest.fixture(scope="module")
def split(inspect_logs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("inspect-split")
    imported = import_inspect(inspect_logs / "mixed.eval", root / "source", split=True)
    full = build(root / "source", root / "mixed.bundle.tar.zst", 1700000000).path
    redacted = redact(
        full, ["inputs/transcripts/**"], root / "redacted.bundle.tar.zst", "transcripts"
    )
    return {"imported": imported, "full": full, "redacted": redacted, "root": root}


def test_the_full_split_bundle_supports_every_claim(split: dict[str, Any]) -> None:
    verification = verify(split["full"])
    assert verification.status == "supported", [
        (c.claim.id, c.why) for c in verification.claims if c.status != "supported"
    ]
    keys = {c.checker for c in verification.extracted.manifest.cases}
    assert {"inspect-metric@5", "inspect-scores@1", "inspect-rescore@3"} <= keys
    assert "inspect-metric@4" not in keys


def test_the_scores_file_holds_no_transcript(split: dict[str, Any]) -> None:
    source = split["root"] / "source"
    scores = list((source / "inputs" / "scores").iterdir())
    assert len(scores) == 1
    log = read_log(scores[0].read_bytes())
    assert log.records
    assert all(not r.completion and not r.target for r in log.records)
    assert all(s.answer is None for r in log.records for s in r.scores.values())
    for control in (source / "inputs" / "controls").iterdir():
        kept = read_log(control.read_bytes())
        assert all(not r.completion and not r.target for r in kept.records), control.name


def test_redacted_of_its_transcripts_it_still_supports_its_figures_and_counts(
    split: dict[str, Any],
) -> None:
    verification = verify(split["redacted"].path)
    statuses = {c.claim.id: c.status for c in verification.claims}
    headline = [
        c.claim.id for c in verification.claims if c.claim.statement.startswith("Headline figure")
    ]
    assert headline and all(statuses[h] == "supported" for h in headline)
    assert statuses["sample-counts"] == "supported"
    withheld = {c.claim.id for c in verification.claims if c.withheld}
    assert withheld, "the re-scoring claims read the transcripts"
    assert all(i.startswith("rescore-") or i == "scores-match-log" for i in withheld), withheld
    assert all(statuses[i] == "inconclusive" for i in withheld)
    others = set(statuses) - withheld
    assert all(statuses[i] == "supported" for i in others), {
        i: statuses[i] for i in others if statuses[i] != "supported"
    }
    assert verification.exit_code == 4


def test_a_scores_checker_refuses_a_file_that_holds_transcripts(inspect_logs: Path) -> None:
    from tests.checkers.checker_calls import run

    data = (inspect_logs / "mixed.json").read_bytes()
    verdict = run(
        "inspect-status@3",
        {"scores": data},
    )
    assert verdict.status == "error"
    assert "holds a transcript" in verdict.message


def test_inspect_scores_passes_on_the_logs_scores_and_fails_on_changed_ones(
    inspect_logs: Path,
) -> None:
    import dataclasses

    from checkers.inspect_log.log import Score, to_json_log
    from checkers.inspect_log.scores import project, scores_bytes
    from tests.checkers.checker_calls import run

    data = (inspect_logs / "mixed.json").read_bytes()
    log = read_log(data)
    assert run("inspect-scores@1", {"log": data, "scores": scores_bytes(log)}).status == "pass"
    scores = project(log)
    first = scores.records[0]
    name = next(iter(first.scores))
    flipped = "I" if first.scores[name].value != "I" else "C"
    changed = (
        dataclasses.replace(first, scores={**first.scores, name: Score(flipped, None)}),
        *scores.records[1:],
    )
    verdict = run("inspect-scores@1", {"log": data, "scores": to_json_log(scores, changed)})
    assert verdict.status == "fail"
    assert verdict.codes == ("inspect.scores_not_the_logs",)
    fewer = run("inspect-scores@1", {"log": data, "scores": to_json_log(scores, changed[1:])})
    assert fewer.codes == ("inspect.scores_not_the_logs",)
