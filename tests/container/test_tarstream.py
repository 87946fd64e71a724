"""The tar headers we write are what tar readers expect; the reader takes them back."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.container.pack import Member, write_tar
from bundler.container.tarstream import (
    MAX_USTAR_SIZE,
    TarError,
    TarReader,
    _pax_record,
    _ustar,
    end_of_archive,
    file_header,
)
from bundler.errors import SourceError
from bundler.format.hashing import CHUNK

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


@pytest.mark.parametrize("fill", [0x00, 0x41, 0x7F, 0x80, 0xFF])
def test_header_checksum_is_the_sum_of_every_byte_however_large(fill: int) -> None:
    """The checksum covers all 512 bytes (up to 255 each, also the signed sum old tars
    wrote): a right one is read whatever the bytes, one off by one is refused."""
    block = bytearray(archive([("top/a", b"x")])[:512])
    block[100:124] = bytes([fill]) * 24  # mode, uid, gid: unread, but summed
    block[265:500] = bytes([fill]) * 235  # user and group names, device fields, prefix
    block[263:265] = b"00"
    block[345] = 0  # no prefix, so the name stays top/a
    block[148:156] = b" " * 8
    for total in (sum(block), sum(b - 256 if b > 127 else b for b in block)):
        if total < 0:
            continue
        good = bytearray(block)
        good[148:156] = b"%06o\0 " % total
        tail = bytes(1) + bytes(511) + end_of_archive(1024)
        reader = TarReader(iter([bytes(good) + b"x" + tail[1:], b""]).__next__)
        assert reader.next().name == "top/a"  # type: ignore[union-attr]
        good[148:156] = b"%06o\0 " % (total + 1)
        reader = TarReader(iter([bytes(good), b""]).__next__)
        with pytest.raises(TarError):
            reader.next()


def test_a_file_that_changes_size_while_packing_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "grows.txt"
    source.write_text("now longer than declared")
    with pytest.raises(SourceError, match="changed size"):
        write_tar(io.BytesIO(), [Member("top/grows.txt", source=source, size=3)], 0)


@pytest.mark.parametrize(
    ("declared", "actual"),
    [
        (d, a)
        for d in (4, CHUNK, 2 * CHUNK + 6)
        for a in (0, 3, 5, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7)
        if a != d
    ],
)
def test_a_file_not_of_its_declared_size_is_refused_small_or_large(
    tmp_path: Path, declared: int, actual: int
) -> None:
    """Grown or shrunk since it was hashed, read whole or in pieces: refused."""
    source = tmp_path / "f.bin"
    source.write_bytes(b"x" * actual)
    member = Member("top/f.bin", source=source, size=declared)
    with pytest.raises(SourceError, match="changed size"):
        write_tar(io.BytesIO(), [member], 0)


@pytest.mark.parametrize("size", [0, 1, 4096, CHUNK - 1, CHUNK, CHUNK + 1])
def test_a_packed_file_holds_exactly_its_bytes(tmp_path: Path, size: int) -> None:
    source = tmp_path / "f.bin"
    data = bytes((i * 7) % 251 for i in range(size))
    source.write_bytes(data)
    out = io.BytesIO()
    write_tar(out, [Member("top/f.bin", source=source, size=size)], 0)
    with tarfile.open(fileobj=io.BytesIO(zstandard_decompress(out.getvalue()))) as tar:
        member = tar.extractfile("top/f.bin")
        assert member is not None and member.read() == data


def zstandard_decompress(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()


def with_checksum(block: bytearray) -> bytes:
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def read_all(data: bytes) -> TarError:
    """Read every member of ``data``; the error it ends with."""
    pieces = [data]
    reader = TarReader(lambda: pieces.pop() if pieces else b"")
    with pytest.raises(TarError) as caught:
        while reader.next() is not None:
            for _ in reader.data():
                pass
    return caught.value


def test_a_size_that_is_not_octal_is_corrupt() -> None:
    first = archive([("top/a", b"")])[:512]
    second = bytearray(file_header("top/b", 0, 0))
    second[124:136] = b"0000000009Z\0"
    error = read_all(first + with_checksum(second) + bytes(1024))
    assert error.code == "archive.corrupt" and "invalid size" in error.message


def test_a_negative_base256_size_is_corrupt() -> None:
    block = bytearray(file_header("top/a", 0, 0))
    block[124:136] = b"\xff" * 12
    error = read_all(with_checksum(block) + bytes(1024))
    assert error.code == "archive.corrupt" and "negative size" in error.message


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (b"x path=top/a\n", "no valid length"),
        (b"99 path=top/a\n", "malformed"),
        (b"10 size=x\n", "not a number"),
    ],
)
def test_malformed_pax_records_are_corrupt(records: bytes, message: str) -> None:
    pax = bytearray(file_header("top/" + "é", 1, 0)[:512])  # the pax header block
    pax[124:136] = b"%011o\0" % len(records)
    data = with_checksum(pax) + records + bytes(-len(records) % 512)
    data += file_header("top/a", 1, 0)[-512:] + b"x" + bytes(511) + bytes(1024)
    error = read_all(data)
    assert error.code == "archive.corrupt" and message in error.message


def test_a_stream_without_the_end_marker_is_truncated() -> None:
    data = archive([("top/a", b"hello")])
    error = read_all(data[:1024])  # header and data, no zero blocks
    assert error.code == "archive.truncated" and "end-of-archive marker" in error.message
    error = read_all(data[:600])  # inside the data
    assert error.code == "archive.truncated" and error.where == "top/a"


def test_a_source_file_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot read"):
        write_tar(io.BytesIO(), [Member("top/gone", source=tmp_path / "gone", size=3)], 0)


def header_as_before(name: str, size: int, mtime: int) -> bytes:
    """``file_header`` as it was, every block through ``_ustar``: the bytes to keep."""
    records = b""
    ascii_name = name.encode("ascii", "replace")
    if not name.isascii() or len(ascii_name) > 100:
        records += _pax_record("path", name)
    if size > MAX_USTAR_SIZE:
        records += _pax_record("size", str(size))
    head = _ustar(ascii_name[:100], b"0", size if size <= MAX_USTAR_SIZE else 0, mtime, 0o644)
    if not records:
        return head
    pax = _ustar(b"././@PaxHeader", b"x", len(records), 0, 0)
    return pax + records + bytes(-len(records) % 512) + head


@settings(max_examples=500, deadline=None)
@given(
    name=st.text(st.characters(max_codepoint=0x7F), max_size=110)
    | st.text(max_size=110)
    | st.sampled_from(NAMES),
    size=st.integers(0, 2 * MAX_USTAR_SIZE) | st.sampled_from([0, 1, 511, 512, MAX_USTAR_SIZE]),
    mtime=st.integers(0, 8**11 - 1),
)
def test_file_header_writes_the_bytes_it_always_wrote(name: str, size: int, mtime: int) -> None:
    assert file_header(name, size, mtime) == header_as_before(name, size, mtime)
