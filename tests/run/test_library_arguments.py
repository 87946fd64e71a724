"""The library refuses bad arguments as the command line does (issue 42, item 10): a
``BundlerError`` with a true message for a path it cannot use, nothing made through a
link it then refuses, no NaN, infinity or negative number taken as a limit, and an
``Archive`` that says so when another thread uses it."""

from __future__ import annotations

import math
import os
import threading
from pathlib import Path
from typing import Any

import pytest

import bundler
from bundler.errors import BundlerError, UsageError
from bundler.store.archive import Archive


def test_workdir_under_a_link_is_refused_before_anything_is_made(
    tmp_path: Path, quickstart_bundle: Path
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(UsageError) as caught:
        bundler.verify(quickstart_bundle, workdir=tmp_path / "link" / "w")
    assert "is a link" in str(caught.value)
    assert "a part of the path is a file" not in str(caught.value)
    assert list(real.iterdir()) == []  # nothing made behind the link


@pytest.mark.parametrize(
    "argument",
    [
        {"time_limit": math.nan},
        {"time_limit": -1.0},
        {"time_limit": math.inf},
        {"case_seconds": math.nan},
        {"case_seconds": -5},
        {"case_memory": -1},
        {"case_memory": 1.5},
        {"jobs": 0},
        {"jobs": -2},
        {"jobs": math.nan},
        {"jobs": True},
    ],
    ids=repr,
)
def test_verify_refuses_non_finite_and_negative_limits(
    quickstart_bundle: Path, argument: dict[str, Any]
) -> None:
    # a NaN time limit switched the overall deadline off (NaN > 0 is False)
    name = next(iter(argument))
    ((given, value),) = argument.items()
    with pytest.raises(UsageError) as caught:
        if given == "jobs":
            options = bundler.VerifyOptions(jobs=value)
        else:
            field = {"case_seconds": "seconds", "case_memory": "memory"}.get(given, given)
            options = bundler.VerifyOptions(budget=bundler.CaseBudget(**{field: value}))
        bundler.verify(quickstart_bundle, options)
    assert name in str(caught.value)


@pytest.mark.parametrize(
    "make",
    [
        lambda: bundler.Limits(members=-1),
        lambda: bundler.Limits(ratio=math.nan),  # type: ignore[arg-type]
        lambda: bundler.CodeLimits(timeout=math.nan),
        lambda: bundler.CodeLimits(timeout=-1.0),
        lambda: bundler.CodeLimits(processes=0),
        lambda: bundler.CodeLimits(memory_bytes=-1),
    ],
)
def test_limits_refuse_non_finite_and_negative_values(make: Any) -> None:
    with pytest.raises(UsageError):
        make()


def test_key_pair_in_a_folder_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UsageError, match="a part of the path is a file"):
        bundler.write_key_pair("k", tmp_path / "afile" / "keys", None)
    with pytest.raises(UsageError, match="exists and is not a folder"):
        bundler.write_key_pair("k", tmp_path / "afile", None)


def test_private_key_from_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "key.pem"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        bundler.read_private_key(fifo)


def test_archive_used_from_another_thread_says_so(tmp_path: Path) -> None:
    # one Archive shared by threads raised a raw sqlite3.ProgrammingError
    archive = Archive.init(tmp_path / "archive")
    caught: list[BaseException] = []

    def use() -> None:
        try:
            archive.list_bundles()
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=use)
    thread.start()
    thread.join()
    assert len(caught) == 1 and isinstance(caught[0], BundlerError), caught
    assert "opened in another thread" in str(caught[0])
    assert archive.list_bundles() == []  # the opening thread still uses it
    archive.close()


def test_bundle_path_through_a_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UsageError, match=r"a part of the path, .*afile, is a file"):
        bundler.check_integrity(tmp_path / "afile" / "b.bundle.tar.zst")


@pytest.mark.parametrize("jobs", [0, -1, math.nan, 2.5])
def test_archive_verify_refuses_a_bad_number_of_jobs(tmp_path: Path, jobs: Any) -> None:
    with Archive.init(tmp_path / "archive") as archive, pytest.raises(UsageError, match="jobs"):
        archive.verify(all_bundles=True, jobs=jobs)
