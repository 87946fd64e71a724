"""Hashing many files on several threads gives what one thread gives, in order."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from bundler.format.hashing import read_and_hash_files, sha256_file, sha256_files


def files(tmp_path: Path, count: int, base: int = 0) -> list[Path]:
    out = []
    for i in range(count):
        path = tmp_path / f"{i:04d}.bin"
        path.write_bytes(bytes([i % 251]) * (base + i * 37))
        out.append(path)
    return out


def threads_started(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    started: list[threading.Thread] = []
    start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda t: (started.append(t), start(t))[1])
    return started


# files of a few bytes to a few kilobytes (hashed on the calling thread), and of some
# kilobytes each (on a thread per core: hashlib lets go of the GIL above 2 KiB)
@pytest.mark.parametrize(("base", "threads"), [(0, False), (4096, True)])
def test_digests_come_back_in_path_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: int, threads: bool
) -> None:
    paths = files(tmp_path, 500, base)
    started = threads_started(monkeypatch)
    got = sha256_files(paths)
    assert bool(started) == (threads and (os.cpu_count() or 1) > 1)
    assert got == [sha256_file(p) for p in paths]
    assert got[7] == (hashlib.sha256(bytes([7]) * (base + 259)).hexdigest(), base + 259)


@pytest.mark.parametrize("base", [0, 4096])
def test_the_first_error_in_path_order_is_raised(tmp_path: Path, base: int) -> None:
    paths = files(tmp_path, 500, base)
    paths[300].unlink()
    paths[100].unlink()
    with pytest.raises(FileNotFoundError) as caught:
        sha256_files(paths)
    assert caught.value.filename == str(paths[100])


def test_few_files_hash_on_the_calling_thread(tmp_path: Path) -> None:
    paths = files(tmp_path, 3)
    assert sha256_files(paths) == [sha256_file(p) for p in paths]
    assert sha256_files([]) == []


def test_small_files_are_kept_as_hashed_while_the_budget_lasts(tmp_path: Path) -> None:
    paths = files(tmp_path, 300)  # 0 to 11,063 bytes
    got = read_and_hash_files(paths, keep_below=5000, keep_at_most=200_000)
    assert [(digest, size) for digest, size, _ in got] == [sha256_file(p) for p in paths]
    kept = {i: data for i, (_, _, data) in enumerate(got) if data is not None}
    assert kept and all(data == paths[i].read_bytes() for i, data in kept.items())
    assert all(len(data) < 5000 for data in kept.values())
    assert sum(map(len, kept.values())) <= 200_000 + 5000 * 4  # a share may end one file over
    assert len(kept) < sum(1 for p in paths if p.stat().st_size < 5000)  # the budget ran out


def test_a_folder_in_place_of_a_file_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError) as caught:
        sha256_file(tmp_path / "d")
    assert caught.value.filename == str(tmp_path / "d")
