"""The writer: never through a link, bounded descriptors, folders beyond the open-file limit."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bundler.authoring.build import build
from bundler.container import writer
from bundler.container.writer import Writer
from tests.helpers import copy_source


def test_the_writer_never_follows_a_link(tmp_path: Path) -> None:
    """Even given a folder that is a link (the rules never let one through), it refuses."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "sub").symlink_to(outside)
    files = Writer(root)
    try:
        with pytest.raises(OSError) as caught:
            files.write("sub/x.txt", [memoryview(b"ok")])
    finally:
        files.close()
    assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
    assert list(outside.iterdir()) == []


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "taken.txt").write_text("old")
    files = Writer(tmp_path)
    try:
        with pytest.raises(FileExistsError):
            files.write("taken.txt", [memoryview(b"new")])
    finally:
        files.close()
    assert (tmp_path / "taken.txt").read_text() == "old"


def test_what_is_written_is_what_is_hashed(tmp_path: Path) -> None:
    import hashlib

    pieces = [memoryview(os.urandom(n)) for n in (0, 1, 70_000, 3)]
    files = Writer(tmp_path)
    try:
        digest = files.write("a/b/c.bin", pieces)
    finally:
        files.close()
    data = (tmp_path / "a/b/c.bin").read_bytes()
    assert data == b"".join(pieces)
    assert digest == hashlib.sha256(data).hexdigest() == writer.sha256_of(pieces)


def test_folders_keep_only_a_bounded_number_of_descriptors_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer.Folders, "KEEP", 4)
    root_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    folders = writer.Folders(root_fd, create=True)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    most = 0
    try:
        for i in range(40):
            rel = f"a{i % 3}/b{i}/c"
            fd = writer.create("f", folders.get(rel))
            os.write(fd, str(i).encode())
            os.close(fd)
            most = max(most, len(folders._fds))
        if before is not None:
            assert len(os.listdir("/proc/self/fd")) <= before + 4 + 3 + 1
    finally:
        folders.close()
    assert most <= 4 + 3 + 1  # KEEP, the depth of one path, the root
    assert all((tmp_path / f"a{i % 3}/b{i}/c/f").read_text() == str(i) for i in range(40))


def test_a_bundle_with_more_folders_than_open_files_allowed_verifies(tmp_path: Path) -> None:
    """Many machines let a process open only 1,024 files; a bundle may hold more folders
    (written, since --workdir writes every file)."""
    resource = pytest.importorskip("resource")
    source = copy_source(tmp_path)
    for i in range(300):
        folder = source / "inputs" / "many" / f"d{i:03d}"
        folder.mkdir(parents=True)
        (folder / "f.txt").write_text(f"{i}\n")
    built = build(source, tmp_path / "folders.bundle.tar.gz", 1700000000).path

    def few_files() -> None:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (200, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        )

    work = tmp_path / "work"
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "verify", str(built), "-q", "--workdir", str(work)],
        capture_output=True,
        text=True,
        preexec_fn=few_files,
        check=False,
    )
    assert done.returncode == 0, done.stderr
