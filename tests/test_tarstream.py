"""The tar headers we write are what tar readers expect; the reader takes them back."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from bundler.errors import SourceError
from bundler.pack import Member, write_tar
from bundler.tarstream import MAX_USTAR_SIZE, TarError, TarReader, end_of_archive, file_header

NAMES = [
    "top/a.txt",
    "top/" + "d" * 120 + "/long.bin",  # longer than ustar's 100 bytes: pax path
    "top/dé/ünïcode.json",  # not ASCII: pax path
    "top/" + "x" * 96,  # exactly 100 bytes
]


def archive(members: list[tuple[str, bytes]], mtime: int = 1700000000) -> bytes:
    out = b""
    for name, data in members:
        out += file_header(name, len(data), mtime) + data + bytes(-len(data) % 512)
    return out + end_of_archive(len(out))


@pytest.mark.parametrize("name", NAMES)
def test_tarfile_reads_our_headers(name: str) -> None:
    data = archive([(name, b"hello")])
    assert len(data) % 10240 == 0
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        (member,) = tar.getmembers()
        assert (member.name, member.size, member.mtime, member.mode) == (
            name,
            5,
            1700000000,
            0o644,
        )
        assert (member.uid, member.gid, member.uname, member.gname) == (0, 0, "", "")
        assert member.isreg()
        assert tar.extractfile(member).read() == b"hello"  # type: ignore[union-attr]


def test_our_reader_takes_back_what_we_write() -> None:
    members = [(name, name.encode() * 3) for name in NAMES]
    data = archive(members)
    pieces = [data[i : i + 777] for i in range(0, len(data), 777)]  # awkward piece sizes
    reader = TarReader(lambda: pieces.pop(0) if pieces else b"")
    seen = []
    while (header := reader.next()) is not None:
        seen.append((header.name, b"".join(bytes(p) for p in reader.data())))
    assert seen == members


def test_a_size_beyond_ustar_goes_into_a_pax_record() -> None:
    header = file_header("top/huge", MAX_USTAR_SIZE + 1, 0)
    assert len(header) == 3 * 512
    assert b" size=%d\n" % (MAX_USTAR_SIZE + 1) in header
    reader = TarReader(iter([header]).__next__)
    assert reader.next().size == MAX_USTAR_SIZE + 1  # type: ignore[union-attr]


def test_a_header_with_a_bad_checksum_is_not_tar() -> None:
    data = bytearray(archive([("top/a", b"x")]))
    data[0] ^= 1
    reader = TarReader(iter([bytes(data), b""]).__next__)
    with pytest.raises(TarError) as caught:
        reader.next()
    assert caught.value.code == "archive.not_tar"


def test_a_file_that_changes_size_while_packing_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "grows.txt"
    source.write_text("now longer than declared")
    with pytest.raises(SourceError, match="changed size"):
        write_tar(io.BytesIO(), [Member("top/grows.txt", source=source, size=3)], 0)


def test_large_files_are_hashed_on_the_second_thread_to_the_same_digest(tmp_path: Path) -> None:
    import hashlib
    import random

    from bundler.extract import _Hasher, _Writer

    data = random.Random(3).randbytes(3 * _Hasher.THRESHOLD + 123)
    pieces = [memoryview(data)[i : i + 100_000] for i in range(0, len(data), 100_000)]
    writer = _Writer(tmp_path)
    try:
        big = writer.write("big.bin", len(data), iter(pieces))
        small = writer.write("small.bin", 5, iter([memoryview(b"hello")]))
        writer.finish()
    finally:
        writer.close()
    assert big.hexdigest() == hashlib.sha256(data).hexdigest()
    assert small.hexdigest() == hashlib.sha256(b"hello").hexdigest()
    assert (tmp_path / "big.bin").read_bytes() == data
