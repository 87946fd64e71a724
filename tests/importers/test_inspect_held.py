"""What an Inspect log holds, in words (issue 41, item 8): ``inspect_held`` on records
made here (the real logs are read in tests/importers/test_import_inspect_runs.py)."""

from __future__ import annotations

from typing import Any

from bundler.importers.inspect_held import by_sample, held, never_ran, records_text
from checkers.inspect_log.log import InspectLog, Record


def log(pairs: list[tuple[Any, int]], ids: list[Any] | None = None, epochs: int = 1) -> InspectLog:
    records = tuple(
        Record(sample_id=s, epoch=e, target="4", completion="4", scores={}, error=None, where="")
        for s, e in pairs
    )
    spec = {"dataset": {"samples": len(ids or []), "sample_ids": ids}, "config": {"epochs": epochs}}
    return InspectLog("json", {"status": "cancelled", "eval": spec}, records)


def test_a_full_grid_is_said_as_samples_x_epochs() -> None:
    found = log([("a", 1), ("b", 1), ("a", 2), ("b", 2)], ["a", "b"], 2)
    assert records_text(found) == "4 sample records (2 samples x 2 epochs)"
    assert never_ran(found, 4) == (0, "")


def test_4_records_of_2_samples_x_3_epochs_are_not_said_to_be_the_grid() -> None:
    found = log([("s1", 1), ("s2", 1), ("s1", 2), ("s1", 3)], ["s1", "s2"], 3)
    assert records_text(found) == "4 sample records (2 samples: s1 in epochs 1-3; s2 in epoch 1)"
    assert never_ran(found, 6) == (2, "s2 in epochs 2-3")


def test_one_record_three_times_is_two_duplicates_and_two_samples_never_ran() -> None:
    found = log([("s1", 1)] * 3, ["s1", "s2", "s3"])
    assert held(found).duplicates == 2
    text = records_text(found)
    assert text.startswith("3 sample records (1 samples: s1 in epoch 1; 2 of them duplicates")
    assert "(s1 epoch 1 3 times), so 1 distinct" in text
    assert never_ran(found, 3) == (2, "s2, s3 in epoch 1")


def test_integer_sample_ids_are_named_as_written() -> None:
    found = log([(1, 1), (3, 1)], [1, 2, 3])
    assert never_ran(found, 3) == (1, "2 in epoch 1")


def test_a_plan_that_does_not_name_its_samples_gives_a_count_not_names() -> None:
    found = log([("s1", 1)] * 2)
    found.header["eval"]["dataset"] = {"samples": 3}
    assert never_ran(found, 3) == (2, "")


def test_many_samples_are_named_a_few_at_a_time() -> None:
    pairs = [(f"s{i}", e) for i in range(20) for e in range(1, i % 8 + 2)]
    text = by_sample(pairs)
    assert text.count(" in epoch") == 6 and text.endswith("and 2 more samples' epochs")
