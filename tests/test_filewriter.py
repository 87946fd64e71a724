"""Small files written and hashed by the second process: same verdicts, real errors."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import signal
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler import filewriter
from bundler.build import build
from bundler.errors import BundleRejected
from bundler.filewriter import FileProcess
from bundler.verify import verify
from bundler.writer import Writer
from tests.helpers import Entry, copy_source, read_entries, write_entries


@pytest.fixture
def every_file_to_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Writer, "PROCESS_AFTER", 0)


@pytest.mark.usefixtures("every_file_to_the_process")
def test_a_bundle_verifies_the_same_through_the_second_process(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    result = verify(quickstart_bundle, workdir=tmp_path / "work", keep=True)
    assert result.status == "supported"
    root = result.extracted.root
    for entry in result.extracted.manifest.files:
        data = (root / entry.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry.sha256


@pytest.mark.usefixtures("every_file_to_the_process")
def test_a_changed_byte_is_caught_by_the_digest_the_process_sends_back(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    target = next(e for e in entries if e.name.endswith("inputs/expected.yaml"))
    target.data = bytes([target.data[0] ^ 1]) + target.data[1:]
    bad = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    with pytest.raises(BundleRejected) as caught:
        verify(bad, workdir=tmp_path / "work")
    assert [p.code for p in caught.value.problems] == ["file.hash"]
    assert not (tmp_path / "work").exists()  # made by verify, so removed by it


@pytest.mark.usefixtures("every_file_to_the_process")
def test_a_write_error_in_the_process_comes_back_with_its_errno(tmp_path: Path) -> None:
    (tmp_path / "taken.txt").write_text("already here")
    writer = Writer(tmp_path)
    try:
        writer.write("fine.txt", 2, iter([memoryview(b"ok")]))
        writer.write("taken.txt", 3, iter([memoryview(b"new")]))
        with pytest.raises(OSError) as caught:
            writer.finish()
    finally:
        writer.close()
    assert caught.value.errno == errno.EEXIST
    assert (tmp_path / "taken.txt").read_text() == "already here"


@pytest.mark.usefixtures("every_file_to_the_process")
def test_a_process_that_dies_is_an_error_not_a_pass(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    try:
        digest = writer.write("a.txt", 2, iter([memoryview(b"ok")]))
        assert writer._process is not None
        writer._process._process.kill()
        with pytest.raises(OSError, match="ended unexpectedly"):
            writer.finish()
    finally:
        writer.close()
    assert digest.hexdigest() == ""


@pytest.mark.usefixtures("every_file_to_the_process")
def test_stopping_midway_ends_the_process(tmp_path: Path) -> None:
    writer = Writer(tmp_path)
    writer.write("a.txt", 2, iter([memoryview(b"ok")]))
    assert writer._process is not None
    process = writer._process._process
    writer.close()  # a rejection: no finish
    assert process.returncode is not None


def test_the_writer_never_follows_a_link(tmp_path: Path) -> None:
    """Even given a folder that is a link (the reader never sends one), it refuses."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "sub").symlink_to(outside)
    stream = io.BytesIO(
        filewriter.HEADER.pack(3, 5, 2) + b"subx.txt" + b"ok" + filewriter.HEADER.pack(0, 0, 0)
    )
    reply = io.BytesIO()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert (
            filewriter.serve(filewriter.Pieces(lambda: memoryview(stream.read(7))), reply, fd) == 1
        )
    finally:
        os.close(fd)
    assert reply.getvalue()[:1] == b"E"
    assert struct.unpack(">I", reply.getvalue()[1:5])[0] in (errno.ELOOP, errno.ENOTDIR)
    assert list(outside.iterdir()) == []


def _problems_after_changing(
    entries: list[Entry], names: set[str], tmp_path: Path
) -> list[tuple[str, str]]:
    """Change a byte of each named member and verify: (where, code) of each problem."""
    for entry in entries:
        if entry.name in names:
            entry.data = entry.data.replace(b"file", b"FILE")
    bad = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    with pytest.raises(BundleRejected) as caught:
        verify(bad, workdir=tmp_path / "work")
    return sorted((p.where, p.code) for p in caught.value.problems)


def _stream(files: dict[str, bytes]) -> bytes:
    out = b""
    for rel, data in files.items():
        folder, _, name = rel.encode().rpartition(b"/")
        out += filewriter.HEADER.pack(len(folder), len(name), len(data)) + folder + name + data
    return out + filewriter.HEADER.pack(0, 0, 0)


def test_headers_names_and_data_may_straddle_any_piece_boundary(tmp_path: Path) -> None:
    files = {"a.txt": b"first file", "sub/b.bin": bytes(range(256)) * 3, "c": b""}
    (tmp_path / "sub").mkdir()
    stream = io.BytesIO(_stream(files))
    sizes = iter([1, 2, 3, 5, 7, 11, 13] * 200)
    reply = io.BytesIO()
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        pieces = filewriter.Pieces(lambda: memoryview(stream.read(next(sizes))))
        assert filewriter.serve(pieces, reply, fd) == 0
    finally:
        os.close(fd)
    assert reply.getvalue() == b"D" + b"".join(hashlib.sha256(d).digest() for d in files.values())
    assert all((tmp_path / rel).read_bytes() == data for rel, data in files.items())


@contextlib.contextmanager
def _file_process(folder: str | Path) -> Iterator[FileProcess]:
    """A second process writing into ``folder``, stopped and closed afterwards."""
    root_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    process = FileProcess(root_fd)
    try:
        yield process
    finally:
        process.close()
        os.close(root_fd)


def test_the_ring_is_reused_for_more_bytes_than_it_holds(tmp_path: Path) -> None:
    """Five times the ring's size, in odd pieces: every slot is handed back and refilled,
    and every byte lands where it belongs."""
    ring = filewriter.SLOT * filewriter.SLOTS
    big = os.urandom(5 * ring + 12345)
    small = [os.urandom(i * 997) for i in range(40)]
    with _file_process(tmp_path) as process:
        view = memoryview(big)
        pieces = [view[i : i + 300_001] for i in range(0, len(big), 300_001)]
        digests = [process.write("", "big.bin", len(big), pieces)]
        digests += [
            process.write("", f"s{i}", len(d), [memoryview(d)]) for i, d in enumerate(small)
        ]
        process.finish()
    for digest, (name, data) in zip(
        digests, [("big.bin", big)] + [(f"s{i}", d) for i, d in enumerate(small)], strict=True
    ):
        assert digest.value == hashlib.sha256(data).digest()
        assert (tmp_path / name).read_bytes() == data


def test_a_writer_that_dies_while_the_reader_waits_for_a_slot_is_an_error(
    tmp_path: Path,
) -> None:
    with _file_process(tmp_path) as process:
        process._process.kill()
        data = memoryview(bytes(filewriter.SLOT * (filewriter.SLOTS + 2)))
        with pytest.raises(OSError, match="ended unexpectedly"):
            process.write("", "a.bin", len(data), [data])
            process.finish()


def test_the_reader_knows_when_the_writer_lags_behind(tmp_path: Path) -> None:
    """More than half the ring waiting for a stopped writer is "behind"; less is not."""
    data = memoryview(os.urandom(filewriter.SLOT))
    with _file_process(tmp_path) as process:
        pid = process._process.pid
        try:
            os.kill(pid, signal.SIGSTOP)
            states = []
            for i in range(filewriter.SLOTS // 2 + 1):
                states.append(process.behind())
                process.write("", f"f{i}", len(data), [data])
            states.append(process.behind())
            assert states == [False] * (filewriter.SLOTS // 2) + [True, True]
            os.kill(pid, signal.SIGCONT)
            process.finish()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert all((tmp_path / f"f{i}").read_bytes() == data for i in range(filewriter.SLOTS // 2 + 1))


def test_files_the_reader_writes_while_the_writer_lags_are_checked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader takes every other file itself (as when the writer lags): the verdict is
    the same, and a changed byte is caught on either side."""
    sent: list[str] = []
    real_write = FileProcess.write
    turns = iter(range(1 << 20))

    def spy(self: FileProcess, folder: str, name: str, size: int, chunks: Any) -> Any:
        sent.append(f"{folder}/{name}")
        return real_write(self, folder, name, size, chunks)

    monkeypatch.setattr(Writer, "PROCESS_AFTER", 0)
    monkeypatch.setattr(FileProcess, "behind", lambda self: next(turns) % 2 == 1)
    monkeypatch.setattr(FileProcess, "write", spy)
    source = copy_source(tmp_path)
    for i in range(20):
        (source / "inputs" / f"extra{i:02d}.txt").write_text(f"file {i}\n")
    built = build(source, tmp_path / "lag.bundle.tar.gz", 1700000000).path
    sent.clear()  # (build verified at home in a process of its own)
    assert verify(built, workdir=tmp_path / "ok").status == "supported"
    entries = read_entries(built)
    extras = [e.name for e in entries if "/inputs/extra" in e.name]
    by_process = next(name for name in extras if name in sent)
    by_reader = next(name for name in extras if name not in sent)
    assert _problems_after_changing(entries, {by_process, by_reader}, tmp_path) == sorted(
        [(by_process, "file.hash"), (by_reader, "file.hash")]
    )


def test_a_notice_naming_no_slot_is_an_error_not_a_read_elsewhere(tmp_path: Path) -> None:
    notices = io.BytesIO(filewriter.NOTICE.pack(filewriter.SLOTS, 10))
    shared = memoryview(bytearray(filewriter.SLOT * filewriter.SLOTS))
    reply = io.BytesIO()
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        pieces = filewriter.Pieces(filewriter.slots(notices, -1, shared))
        assert filewriter.serve(pieces, reply, fd) == 1
    finally:
        os.close(fd)
    assert reply.getvalue().startswith(b"E") and b"names slot 16" in reply.getvalue()


def test_a_bundle_past_the_threshold_uses_both_writers_and_each_digest_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first files are written by the reader, the rest by the second process; a byte
    changed on either side of the switch is caught."""
    started: list[int] = []
    real_init = FileProcess.__init__

    def spy(self: FileProcess, root_fd: int) -> None:
        started.append(root_fd)
        real_init(self, root_fd)

    monkeypatch.setattr(FileProcess, "__init__", spy)
    source = copy_source(tmp_path)
    extra = source / "inputs" / "many"
    extra.mkdir()
    for i in range(Writer.PROCESS_AFTER + 100):
        (extra / f"{i:04d}.txt").write_text(f"file {i}\n")
    built = build(source, tmp_path / "many.bundle.tar.gz", 1700000000).path
    assert verify(built, workdir=tmp_path / "ok").status == "supported"
    assert len(started) == 1  # (build verifies at home in a process of its own)

    entries = read_entries(built)
    names = [e.name for e in entries if "/inputs/many/" in e.name]
    early, late = names[10], names[-10]  # before and after the switch to the process
    assert _problems_after_changing(entries, {early, late}, tmp_path) == [
        (early, "file.hash"),
        (late, "file.hash"),
    ]


@pytest.mark.usefixtures("every_file_to_the_process")
def test_without_a_second_process_the_reader_writes_every_file_itself(
    quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cannot_start(self: FileProcess, root_fd: int) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(FileProcess, "__init__", cannot_start)
    result = verify(quickstart_bundle, workdir=tmp_path / "work", keep=True)
    assert result.status == "supported"
    root = result.extracted.root
    assert all((root / f.path).is_file() for f in result.extracted.manifest.files)


def _files(root: Path, count: int) -> list[str]:
    rels = [f"d{i % 7}/f{i:05d}" for i in range(count)]
    for rel in rels:
        (root / rel).parent.mkdir(exist_ok=True)
        (root / rel).write_bytes(b"x")
    return rels


def test_many_files_are_removed_on_two_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filewriter, "REMOVE_SPLIT", 10)
    spawned: list[list[str]] = []
    real_popen = subprocess.Popen

    def spy(args: list[str], **kwargs: Any) -> object:
        spawned.append(args)
        return real_popen(args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", spy)
    rels = _files(tmp_path, 40)
    kept = tmp_path / "d0" / "not-listed"
    kept.write_bytes(b"made by a case")
    filewriter.remove_files(str(tmp_path), rels)
    assert len(spawned) == 1 and "--remove" in spawned[0]
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["d0/not-listed"]  # only the listed files, on both sides of the split


def test_few_files_are_removed_without_a_second_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("no second process for a few files")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    rels = _files(tmp_path, 30)
    filewriter.remove_files(str(tmp_path), rels)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_removing_never_follows_a_link_in_a_folder_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder swapped for a link (bundled code could do that) leads nowhere: the file
    behind the link survives, on either process."""
    monkeypatch.setattr(filewriter, "REMOVE_SPLIT", 2)
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("a", "b"):
        (outside / name).write_bytes(b"keep me")
    root = tmp_path / "root"
    root.mkdir()
    (root / "sub").symlink_to(outside)
    filewriter.remove_files(str(root), ["sub/a", "sub/b"])
    assert sorted(p.name for p in outside.iterdir()) == ["a", "b"]


def test_the_work_folder_of_a_large_bundle_is_removed_completely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filewriter, "REMOVE_SPLIT", 2)
    source = copy_source(tmp_path)
    built = build(source, tmp_path / "qs.bundle.tar.gz", 1700000000).path
    removed: list[int] = []
    real_remove = filewriter.remove_files

    def spy(root: str, rels: list[str]) -> None:
        removed.append(len(rels))
        real_remove(root, rels)

    monkeypatch.setattr(filewriter, "remove_files", spy)
    (tmp_path / "work").mkdir()
    result = verify(built, workdir=tmp_path / "work")
    assert result.status == "supported"
    assert removed == [len(result.extracted.manifest.files)]
    assert list((tmp_path / "work").iterdir()) == []  # given, so emptied but kept


def test_folders_keep_only_a_bounded_number_of_descriptors_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filewriter.Folders, "KEEP", 4)
    root_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    folders = filewriter.Folders(root_fd, create=True)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    most = 0
    try:
        for i in range(40):
            rel = f"a{i % 3}/b{i}/c"
            fd = filewriter.create("f", folders.get(rel))
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
    """Many machines let a process open only 1,024 files; a bundle may hold more folders."""
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

    done = subprocess.run(
        [sys.executable, "-m", "bundler", "verify", str(built), "-q"],
        capture_output=True,
        text=True,
        preexec_fn=few_files,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_stream_that_ends_exactly_at_the_end_of_a_slot(tmp_path: Path) -> None:
    header = filewriter.HEADER.size
    data = memoryview(os.urandom(filewriter.SLOT - 2 * header - 1))  # + header, name "a", end
    with _file_process(tmp_path) as process:
        digest = process.write("", "a", len(data), [data])
        process.finish()
    assert digest.value == hashlib.sha256(data).digest()


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 300),
            st.integers(-40, 40).map(lambda k: filewriter.SLOT + k),
            st.integers(0, 3 * filewriter.SLOT),
        ),
        max_size=12,
    )
)
def test_any_sequence_of_file_sizes_crosses_the_ring_intact(sizes: list[int]) -> None:
    """Headers, names and data ending anywhere near slot boundaries."""
    with tempfile.TemporaryDirectory() as folder:
        files = [os.urandom(size) for size in sizes]
        with _file_process(folder) as process:
            digests = [
                process.write("", f"f{i}", len(data), [memoryview(data)])
                for i, data in enumerate(files)
            ]
            process.finish()
        for i, (digest, data) in enumerate(zip(digests, files, strict=True)):
            assert digest.value == hashlib.sha256(data).digest()
            assert Path(folder, f"f{i}").read_bytes() == data


def test_without_memfd_the_ring_lives_in_an_unlinked_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)
    fd = filewriter._shared_file(filewriter.SLOT)
    try:
        assert os.fstat(fd).st_size == filewriter.SLOT
        assert os.fstat(fd).st_nlink == 0  # no name anywhere
    finally:
        os.close(fd)
    with _file_process(tmp_path) as process:
        digest = process.write("", "a.txt", 2, [memoryview(b"ok")])
        process.finish()
    assert digest.value == hashlib.sha256(b"ok").digest()
