"""zstd and gzip bundles: both deterministic, both read strictly, told apart by magic."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import threading
from pathlib import Path

import pytest
import zstandard

from bundler.authoring.build import build
from bundler.container import compression
from bundler.container.compression import GZIP, ZSTD, StreamError, ZstdInflater, detect
from bundler.container.extract import Limits
from bundler.errors import BundleRejected
from bundler.format.hashing import CHUNK
from bundler.run.verify import VerifyOptions, verify
from tests.helpers import QUICKSTART, read_entries


@pytest.fixture(scope="module")
def zst_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zst") / "quickstart.bundle.tar.zst"
    return build(QUICKSTART, out, 1700000000).path


def rejected_code(bundle: Path, limits: Limits | None = None) -> str:
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, VerifyOptions(limits=limits))
    return caught.value.problems[0].code


def test_name_ending_in_zst_builds_zstd_and_it_verifies(zst_bundle: Path) -> None:
    assert detect(zst_bundle.read_bytes()[:4]) is ZSTD
    assert verify(zst_bundle).status == "supported"


def test_zstd_builds_are_byte_identical(zst_bundle: Path, tmp_path: Path) -> None:
    again = build(QUICKSTART, tmp_path / "again.bundle.tar.zst", 1700000000).path
    assert (
        hashlib.sha256(again.read_bytes()).digest()
        == hashlib.sha256(zst_bundle.read_bytes()).digest()
    )


def test_gzip_and_zstd_carry_the_same_manifest(zst_bundle: Path, quickstart_bundle: Path) -> None:
    assert detect(quickstart_bundle.read_bytes()[:4]) is GZIP
    assert verify(quickstart_bundle).extracted.identity == verify(zst_bundle).extracted.identity


def test_truncated_zstd_is_rejected(zst_bundle: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.bundle.tar.zst"
    for cut in (1, 10, 500):
        bad.write_bytes(zst_bundle.read_bytes()[:-cut])
        assert rejected_code(bad) == "archive.truncated"


def test_bytes_after_the_zstd_frame_are_rejected(zst_bundle: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.bundle.tar.zst"
    bad.write_bytes(zst_bundle.read_bytes() + zstandard.ZstdCompressor().compress(b"\0" * 1024))
    assert rejected_code(bad) == "archive.trailing_data"


def test_zstd_checksum_mismatch_is_rejected(zst_bundle: Path, tmp_path: Path) -> None:
    data = bytearray(zst_bundle.read_bytes())
    data[-1] ^= 0xFF
    bad = tmp_path / "bad.bundle.tar.zst"
    bad.write_bytes(bytes(data))
    assert rejected_code(bad) == "archive.corrupt"


def test_zstd_bomb_is_stopped_by_ratio(quickstart_bundle: Path, tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in read_entries(quickstart_bundle):
            info = tarfile.TarInfo(entry.name)
            info.size = len(entry.data)
            tar.addfile(info, io.BytesIO(entry.data))
        info = tarfile.TarInfo("quickstart-1.0.0/inputs/zeros")
        info.size = 64 << 20
        tar.addfile(info, io.BytesIO(bytes(info.size)))
    bomb = tmp_path / "bomb.bundle.tar.zst"
    bomb.write_bytes(zstandard.ZstdCompressor(level=19).compress(raw.getvalue()))
    assert bomb.stat().st_size < 64 << 10
    assert rejected_code(bomb, Limits(ratio=100, ratio_floor=1 << 20)) == "limit.ratio"


def test_zstd_inflater_hands_out_a_bounded_piece_per_step() -> None:
    """50 MiB of zeros compress to a few kilobytes; each step still hands out at most
    CHUNK bytes, never the whole bomb."""
    blob = zstandard.ZstdCompressor(level=19, write_checksum=True).compress(bytes(50 << 20))
    inflater = ZstdInflater(io.BytesIO(blob), 1 << 30)
    sizes = []
    while chunk := inflater.next():
        sizes.append(len(chunk))
    assert sum(sizes) == 50 << 20
    assert max(sizes) <= CHUNK
    assert len(sizes) >= (50 << 20) // CHUNK


def raw_frame(blocks: list[tuple[int, int, bytes]]) -> bytes:
    """A zstd frame by hand: no checksum, 1 KiB window, (last, kind, body) blocks."""
    parts = [b"\x28\xb5\x2f\xfd\x00\x00"]  # joined once: += on bytes is quadratic
    for last, kind, body in blocks:
        size = len(body) if kind != 1 else 5
        parts.append((last | kind << 1 | size << 3).to_bytes(3, "little") + body)
    return b"".join(parts)


def test_zstd_empty_blocks_do_not_end_the_stream_early() -> None:
    """A million empty blocks decode to nothing; the bytes of the last block still come."""
    frame = raw_frame([(0, 0, b"")] * 1_000_000 + [(1, 0, b"hello")])
    inflater = ZstdInflater(io.BytesIO(frame), 1 << 30)
    assert inflater.next() == b"hello"
    assert inflater.next() == b""


def test_zstd_rle_blocks_are_decoded_and_reserved_blocks_refused() -> None:
    inflater = ZstdInflater(io.BytesIO(raw_frame([(0, 1, b"a"), (1, 0, b"!")])), 1 << 30)
    assert inflater.next() == b"aaaaa!"
    with pytest.raises(StreamError, match="corrupt"):
        ZstdInflater(io.BytesIO(raw_frame([(1, 3, b"x")])), 1 << 30).next()


def test_zstd_frame_with_a_dictionary_is_refused() -> None:
    blob = bytearray(zstandard.ZstdCompressor().compress(b"data"))
    blob[4] |= 0x01  # dictionary id flag
    with pytest.raises(StreamError, match="dictionary"):
        ZstdInflater(io.BytesIO(bytes(blob) + b"\0"), 1 << 30).next()


def test_cli_compression_option_overrides_the_default_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from bundler.cli import main

    monkeypatch.chdir(tmp_path)  # the default output goes to the current folder
    result = CliRunner().invoke(main, ["build", str(QUICKSTART), "--compression", "gzip", "-q"])
    assert result.exit_code == 0, result.output
    written = Path(result.stdout.strip())
    assert written == tmp_path / "quickstart-1.0.0.bundle.tar.gz"
    assert detect(written.read_bytes()[:4]) is GZIP


def test_report_command_reads_a_zstd_bundle_as_a_bundle(zst_bundle: Path) -> None:
    from click.testing import CliRunner

    from bundler.cli import main

    result = CliRunner().invoke(main, ["report", str(zst_bundle)])
    assert result.exit_code == 0, result.output
    assert "every claim supported" in result.stdout


def test_zstd_bytes_do_not_depend_on_the_number_of_workers() -> None:
    """The pinned mode is multi-threaded: one worker or four write the same bytes, so a
    rebuild on a machine with more cores stays byte-identical."""
    import random

    rng = random.Random(7)
    data = rng.randbytes(6 << 20) + b"repetitive text " * 400_000  # several zstd jobs
    outputs = set()
    for workers in (compression.ZSTD_THREADS, 2, 4):
        compressor = zstandard.ZstdCompressor(
            level=compression.ZSTD_LEVEL, threads=workers, write_checksum=True
        )
        out = io.BytesIO()
        with compressor.stream_writer(out, closefd=False) as writer:
            for i in range(0, len(data), 1 << 20):
                writer.write(data[i : i + (1 << 20)])
        outputs.add(out.getvalue())
    assert len(outputs) == 1


def test_zstd_frame_asking_for_a_window_above_the_cap_is_refused() -> None:
    params = zstandard.ZstdCompressionParameters(window_log=25, write_checksum=1)
    blob = zstandard.ZstdCompressor(compression_params=params).compress(bytes(1 << 20) * 40)
    inflater = ZstdInflater(io.BytesIO(blob), 1 << 30)
    with pytest.raises(StreamError) as caught:
        while inflater.next():
            pass
    assert caught.value.code == "archive.corrupt"


def test_zstd_frame_compressed_with_an_unnamed_dictionary_is_corrupt() -> None:
    samples = [bytes([i]) * 20 + b"the words every sample shares " * 5 for i in range(200)]
    dictionary = zstandard.train_dictionary(4096, samples)
    blob = zstandard.ZstdCompressor(
        dict_data=dictionary, write_dict_id=False, write_checksum=True
    ).compress(b"the words every sample shares " * 30)
    with pytest.raises(StreamError) as caught:
        inflater = ZstdInflater(io.BytesIO(blob), 1 << 30)
        while inflater.next():
            pass
    assert caught.value.code == "archive.corrupt"


def test_a_skippable_frame_after_the_bundle_is_trailing_data(
    zst_bundle: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.bundle.tar.zst"
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"hide"
    bad.write_bytes(zst_bundle.read_bytes() + skippable)
    assert rejected_code(bad) == "archive.trailing_data"


def test_a_zstd_stream_cut_inside_its_checksum_is_truncated(
    zst_bundle: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.bundle.tar.zst"
    bad.write_bytes(zst_bundle.read_bytes()[:-2])  # the last 4 bytes are the checksum
    assert rejected_code(bad) == "archive.truncated"


class _Pieces(compression.Inflater):
    """An inflater that hands out ``pieces`` (then, if given, raises ``error``), counting
    each piece's length as compressed bytes; ``made`` counts the pieces made."""

    def __init__(self, pieces: list[bytes], error: Exception | None = None) -> None:
        super().__init__(io.BytesIO(), 1 << 40)
        self._pieces = pieces
        self._error = error
        self.made = 0

    def next(self) -> bytes:
        if self.made == len(self._pieces):
            if self._error is not None:
                raise self._error
            return b""
        piece = self._pieces[self.made]
        self.made += 1
        self.compressed += len(piece)
        return piece


def drained(reader: compression.ReadAhead) -> list[tuple[bytes, int]]:
    out = []
    while chunk := reader.next():
        out.append((chunk, reader.compressed))
    return out


def test_read_ahead_hands_out_every_piece_with_its_compressed_count_in_order() -> None:
    pieces = [bytes([i]) * (i + 1) for i in range(50)]
    reader = compression.ReadAhead(_Pieces(pieces))
    try:
        got = drained(reader)
    finally:
        reader.close()
    assert [chunk for chunk, _ in got] == pieces
    assert [count for _, count in got] == [sum(range(1, i + 2)) for i in range(50)]
    assert reader.next() == b""


def test_read_ahead_raises_the_inflaters_error_in_the_reader_after_its_pieces() -> None:
    error = StreamError("archive.corrupt", "the zstd stream is corrupt")
    reader = compression.ReadAhead(_Pieces([b"a", b"b"], error))
    try:
        assert reader.next() == b"a"
        assert reader.next() == b"b"
        with pytest.raises(StreamError) as caught:
            reader.next()
        assert caught.value is error
        assert reader.next() == b""  # nothing after the error
    finally:
        reader.close()


def test_read_ahead_runs_at_most_a_few_pieces_ahead_and_stops_on_close() -> None:
    """A reader that stops early (a rejected bundle) leaves no thread decompressing on:
    bounded memory and time whatever the stream."""
    source = _Pieces([b"x" * 1024] * 10_000)
    reader = compression.ReadAhead(source, depth=2)
    assert reader.next() == b"x" * 1024
    for _ in range(100):  # give the thread time to fill its queue
        if source.made >= 4:
            break
        threading.Event().wait(0.01)
    reader.close()
    assert not reader._thread.is_alive()
    assert source.made <= 1 + 2 + 1  # the one read, the queue, the one waiting to be put


def test_only_a_regular_file_is_read_ahead(tmp_path: Path) -> None:
    """A pipe is read only as far as the reader needs: a rejected bundle must not wait
    for a producer that has not written its next bytes."""
    from bundler.container.extract import _regular_file
    from bundler.format.hashing import HashingReader

    path = tmp_path / "b.bundle.tar.zst"
    path.write_bytes(b"x")
    read, write = os.pipe()
    with open(path, "rb") as file, open(read, "rb") as pipe:
        assert _regular_file(file)
        assert _regular_file(HashingReader(file))  # what verify reads a named file through
        assert not _regular_file(pipe)
        assert not _regular_file(io.BytesIO(b"x"))
    os.close(write)
