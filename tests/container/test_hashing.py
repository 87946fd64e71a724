"""Hashing many files on several threads gives what one thread gives, in order."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bundler.format.hashing import sha256_file, sha256_files


def files(tmp_path: Path, count: int) -> list[Path]:
    out = []
    for i in range(count):
        path = tmp_path / f"{i:04d}.bin"
        path.write_bytes(bytes([i % 251]) * (i * 37))
        out.append(path)
    return out


def test_digests_come_back_in_path_order(tmp_path: Path) -> None:
    paths = files(tmp_path, 500)
    got = sha256_files(paths)
    assert got == [sha256_file(p) for p in paths]
    assert got[7] == (hashlib.sha256(bytes([7]) * 259).hexdigest(), 259)


def test_the_first_error_in_path_order_is_raised(tmp_path: Path) -> None:
    paths = files(tmp_path, 500)
    paths[300].unlink()
    paths[100].unlink()
    with pytest.raises(FileNotFoundError) as caught:
        sha256_files(paths)
    assert caught.value.filename == str(paths[100])


def test_few_files_hash_on_the_calling_thread(tmp_path: Path) -> None:
    paths = files(tmp_path, 3)
    assert sha256_files(paths) == [sha256_file(p) for p in paths]
    assert sha256_files([]) == []
