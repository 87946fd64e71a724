"""The source folder's walk takes each entry's type from the folder listing (no lstat a
file) and gives exactly what the walk by ``os.walk`` and ``lstat`` gave: the same files,
and the same refused entries with the same reasons in the same order (the order their
problems are reported in)."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest

from bundler.authoring.source import _walk


def walk_by_lstat(root: Path) -> tuple[list[str], dict[str, str]]:
    """The walk as it was: ``os.walk``, then ``lstat`` of every entry."""
    files: list[str] = []
    refused: dict[str, str] = {}
    for folder, dirs, names in os.walk(root, followlinks=False):
        rel_folder = os.path.relpath(folder, root)
        for name in sorted(dirs + names):
            rel = name if rel_folder == "." else f"{rel_folder}/{name}"
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if stat.S_ISLNK(mode):
                refused[rel] = "is a link; bundles hold regular files only"
            elif stat.S_ISREG(mode):
                files.append(rel)
            elif not stat.S_ISDIR(mode):
                refused[rel] = "is not a regular file"
    return sorted(files), refused


def random_tree(root: Path, rng: random.Random) -> None:
    """Folders, files, links to files, to folders and to nothing, and FIFOs, nested."""
    folders = [root]
    for i in range(rng.randint(1, 60)):
        parent = rng.choice(folders)
        name = rng.choice(["a", "B", "c.txt", "d-1", "Z", "e.yaml", "f", "g0"]) + str(i)
        path = parent / name
        kind = rng.choice(["file", "file", "file", "folder", "folder", "link", "fifo"])
        if kind == "file":
            path.write_bytes(b"x" * rng.randint(0, 3))
        elif kind == "folder":
            path.mkdir()
            folders.append(path)
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            target = rng.choice([*folders, root / "missing", *root.rglob("*")])
            os.symlink(target, path)


@pytest.mark.parametrize("seed", range(40))
def test_walk_by_folder_listing_is_the_walk_by_lstat(tmp_path: Path, seed: int) -> None:
    random_tree(tmp_path, random.Random(seed))
    files, refused = _walk(tmp_path)
    want_files, want_refused = walk_by_lstat(tmp_path)
    assert files == want_files
    assert list(refused.items()) == list(want_refused.items())  # in the same order


def test_walk_of_a_folder_that_cannot_be_listed_finds_nothing(tmp_path: Path) -> None:
    assert _walk(tmp_path / "missing") == walk_by_lstat(tmp_path / "missing") == ([], {})
