"""Built-in cases across processes give the very same report as one process."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bundler.reports.document import to_json
from bundler.run import runner
from bundler.run.verify import VerifyOptions, verify

SUBMITTED: list[int] = []


class RecordingPool(concurrent.futures.ProcessPoolExecutor):
    """A real process pool that counts the chunks sent to it."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        SUBMITTED.append(len(args[0]))
        return super().submit(fn, *args, **kwargs)


def report_without_volatile_fields(bundle: Path, jobs: int) -> dict[str, Any]:
    report = to_json(verify(bundle, VerifyOptions(jobs=jobs)))
    report.pop("verify_environment")
    return report


@pytest.mark.parametrize("name", ["intent-router", "config-change", "trajectory-skeleton"])
def test_parallel_and_serial_reports_are_identical(
    name: str, example_bundle: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = example_bundle(name)
    serial = report_without_volatile_fields(bundle, jobs=1)
    SUBMITTED.clear()
    monkeypatch.setattr(runner, "PARALLEL_FROM", 1)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", RecordingPool)
    parallel = report_without_volatile_fields(bundle, jobs=2)
    assert sum(SUBMITTED) == len(serial["cases"]) > 2  # every case went through the pool
    assert parallel == serial


def test_few_cases_stay_in_process(
    quickstart_bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = quickstart_bundle
    SUBMITTED.clear()
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", RecordingPool)
    assert verify(bundle, VerifyOptions(jobs=2)).status == "supported"
    assert SUBMITTED == []
