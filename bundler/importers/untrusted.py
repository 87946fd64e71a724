"""A log read at import as verify reads an input: the same caps, before any parser runs.

An importer reads a file someone else wrote. Before a parser sees it, ``read_log_file``
applies the caps a built-in case's input has at verify (``ImportLimits.load``, by
default ``bundler.run.inputs.LOAD_LIMITS``: bytes, JSON values, depth): a ``.eval``
(zip) has every member checked against its local header, overlapping members refused (a
name listed twice only where Inspect writes it twice, a re-run sample, then read as
Inspect reads it: the last entry), and each decompressed only up to its declared size
within the byte cap; each JSON document (or member) is counted before it is parsed, and
text that cannot be written as UTF-8 (a lone surrogate escape) is refused. ``bounded``
and ``Checks`` run the parse and the checkers under a case's time and memory limits
(``ImportLimits.budget``, through ``bundler.run.limits.within``), so no log takes more
at import than at verify. Every limit comes in as one ``ImportLimits`` value, whose
defaults are verify's.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import struct
import time
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bundler.container.readrules import Limits
from bundler.errors import SourceError, UsageError
from bundler.run.inputs import LOAD_LIMITS, LoadLimits
from bundler.run.limits import CaseBudget, LimitReached, limited, within
from bundler.run.runner import run_checker
from checkers import strictjson
from checkers.api import Checker, Verdict

T = TypeVar("T")


@dataclass(frozen=True)
class ImportLimits:
    """What an import holds an untrusted log to, as verify holds a bundle: ``load``, the
    caps on one input (bytes, JSON values, depth); ``archive``, what verify reads from one
    archive (its members); ``budget``, the time and memory of one case and of a whole
    verification. The defaults are verify's; a test passes smaller ones."""

    load: LoadLimits = LOAD_LIMITS
    archive: Limits = field(default_factory=Limits)
    budget: CaseBudget = field(default_factory=CaseBudget)


AT_VERIFY = ImportLimits()  # an import's limits unless told otherwise: verify's

ZSTD = 93  # the compression method Inspect writes
_LOCAL = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_DESCRIPTOR = 0x08  # flag bit 3: sizes and CRC follow the data, the local header has zeros
_UTF8_NAME = 0x800
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def read_log_file(log_file: Path, dest: Path, limits: ImportLimits = AT_VERIFY) -> bytes:
    """The log's bytes, once ``dest`` is known to be new or empty (never overwritten) and
    the log within ``limits`` (``screen``). Raises UsageError or SourceError."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not an empty folder; import never overwrites")
    from bundler.files import read_bounded

    cap = limits.load.bytes
    try:
        size = log_file.stat().st_size  # a larger file is refused unread
    except OSError as exc:
        raise UsageError(f"cannot read {log_file}: {exc.strerror}") from None
    # a regular file only (a FIFO with no writer would wait for ever), read to the cap
    data = read_bounded(log_file, cap, "log") if size <= cap else b""
    if size > cap or len(data) > cap:
        raise SourceError(
            f"{log_file} is more than {cap} bytes, the most verify reads from one input "
            "file: refused before reading further"
        )
    bounded(lambda: screen(data, limits), f"reading {log_file}", limits.budget)
    return data


def screen(data: bytes, limits: ImportLimits = AT_VERIFY) -> None:
    """Refuse ``data`` (a zip of JSON members, or one JSON document) past verify's caps or
    with a zip layout that Python's and Inspect's readers would not agree on. Each JSON
    document (each member of a zip) is held to the caps of one JSON input; the members
    together to the bytes of one input. Raises SourceError naming the member and the
    problem."""
    if data[:4] != b"PK\x03\x04":
        _json(data, "the log", limits.load)
        return
    for info, start in zip_layout(data, limits):  # each checked, one decompressed at a time
        member = _inflate(data, info, start)
        if info.filename.endswith(".json"):
            _json(member, info.filename, limits.load)


def _json(data: bytes, where: str, load: LoadLimits) -> None:
    """Parse one JSON document as verify parses a JSON input (its values counted first,
    then strictly, within its depth) and refuse text that cannot be written as UTF-8."""
    try:
        document = strictjson.loads(data, load.depth, load.values, constants=True)
    except ValueError as exc:
        raise SourceError(f"{where}: {exc} (verify's caps on one JSON input)") from None
    if _SURROGATE.search(data):
        try:
            json.dumps(document, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise SourceError(
                f"{where}: holds text that is not valid Unicode ({exc.object[exc.start]!a}, "
                "a lone surrogate escape): it cannot be written as UTF-8 into a bundle"
            ) from None


def zip_layout(data: bytes, limits: ImportLimits = AT_VERIFY) -> list[tuple[zipfile.ZipInfo, int]]:
    """Every member of the zip ``data`` and where its compressed bytes start, once the
    layout is known sound: each directory entry agrees with its member's local header
    (name, method, and sizes and CRC unless a data descriptor carries them), no two
    entries share a name or overlap, and the declared sizes together stay within
    verify's byte cap, all before anything decompresses."""
    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError) as exc:
        raise SourceError(f"the log is not a readable zip ({exc})") from None
    if len(infos) > limits.archive.members:
        raise SourceError(
            f"the zip lists {len(infos)} members, more than the {limits.archive.members} "
            "verify reads from one archive"
        )
    declared = sum(i.file_size for i in infos)
    if declared > limits.load.bytes:
        raise SourceError(
            f"the zip's members declare {declared} bytes in all, more than "
            f"{limits.load.bytes} (the most verify reads from one input)"
        )
    seen: set[str] = set()
    spans: list[tuple[int, int, str]] = []
    layout = []
    for info in infos:
        if info.filename in seen and not rewritable(info.filename):
            raise SourceError(
                f"{info.filename}: listed twice in the zip's directory (Inspect writes a "
                "name twice only for a sample re-run, samples/ID_epoch_N.json)"
            )
        seen.add(info.filename)
        end = _data_end(data, info)
        spans.append((info.header_offset, end, info.filename))
        layout.append((info, end - info.compress_size))
    spans.sort()
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            twice = " listed twice in the zip's directory, and" if first == second else ""
            raise SourceError(f"{second}:{twice} its bytes overlap those of {first} in the zip")
    return layout


def rewritable(name: str) -> bool:
    """A member Inspect writes again when it re-runs a sample: ``eval_retry`` (and a
    requeued sample) seeds the new log with the prior log's members and appends the
    re-run's record under the same name (inspect-ai 0.3.285,
    ``inspect_ai/log/_recorders/eval.py``; the superseded bytes stay until a compaction
    that runs only when they exceed a tenth of the file)."""
    return name.startswith("samples/") and name.endswith(".json")


def superseded(data: bytes, limits: ImportLimits = AT_VERIFY) -> list[tuple[str, bytes]]:
    """The members of the zip ``data`` that a later directory entry of the same name
    replaces, in directory order, each decompressed (``data`` already ``screen``ed).

    Which entry wins, as Inspect reads it: Inspect's readers take the last. Its
    ``_read_log`` builds ``{entry.filename: entry for entry in entries}`` over the
    central directory, and ``_read_log_from_bytes`` reads ``zip.open(name)`` for each
    name of ``dict.fromkeys(zip.namelist())``; ``zipfile`` resolves a name through
    ``NameToInfo``, which reading the central directory fills in order, each entry
    replacing an earlier one of its name. So the last entry in the directory is the
    sample (the re-run), and the earlier ones are the attempts it superseded; the
    checkers' reader (``checkers.inspect_log.log``) reads the same way."""
    layout = zip_layout(data, limits)
    last = {info.filename: i for i, (info, _) in enumerate(layout)}
    return [
        (info.filename, _inflate(data, info, start))
        for i, (info, start) in enumerate(layout)
        if last[info.filename] != i
    ]


def _data_end(data: bytes, info: zipfile.ZipInfo) -> int:
    """Where the member's compressed bytes end, once its local header is found to agree
    with the directory entry ``info``."""
    name, at = info.filename, info.header_offset
    head = data[at : at + _LOCAL.size]
    if len(head) < _LOCAL.size:
        raise SourceError(f"{name}: its local header is past the end of the zip")
    signature, _, flags, method, _, _, crc, packed, size, name_len, extra_len = _LOCAL.unpack(head)
    raw_name = data[at + _LOCAL.size : at + _LOCAL.size + name_len]
    local_name = raw_name.decode("utf-8" if flags & _UTF8_NAME else "cp437", "replace")
    problem = None
    if signature != _LOCAL_SIGNATURE:
        problem = f"no local header at offset {at}"
    elif local_name != info.orig_filename:
        problem = f"the local header names it {local_name!r}"
    elif method != info.compress_type:
        problem = f"the local header says method {method}, the directory {info.compress_type}"
    elif (
        not flags & _DESCRIPTOR
        and 0xFFFFFFFF not in (packed, size)
        and ((crc, packed, size) != (info.CRC, info.compress_size, info.file_size))
    ):
        problem = "its local header's CRC or sizes differ from the directory's"
    if problem:
        raise SourceError(f"{name}: the zip's directory and the member disagree: {problem}")
    end: int = at + _LOCAL.size + name_len + extra_len + info.compress_size
    if end > len(data):
        raise SourceError(f"{name}: its compressed bytes run past the end of the zip")
    return end


def _inflate(data: bytes, info: zipfile.ZipInfo, start: int) -> bytes:
    """The member (its compressed bytes at ``start``) decompressed, never past its
    declared size (plus one byte, to tell)."""
    raw = data[start : start + info.compress_size]
    limit = info.file_size + 1
    try:
        if info.compress_type == zipfile.ZIP_STORED:
            out = raw[:limit]
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            out = zlib.decompressobj(-15).decompress(raw, limit)
        elif info.compress_type == ZSTD:
            import zstandard

            reader = zstandard.ZstdDecompressor().stream_reader(
                io.BytesIO(raw), read_across_frames=True
            )
            out = reader.read(limit)
        else:
            raise SourceError(f"{info.filename}: compression method {info.compress_type}")
    except SourceError:
        raise
    except Exception as exc:  # zlib.error, zstandard.ZstdError
        raise SourceError(f"{info.filename}: does not decompress ({exc})") from None
    if len(out) != info.file_size:
        more = "more" if len(out) > info.file_size else "fewer"
        raise SourceError(
            f"{info.filename}: decompresses to {more} bytes than the {info.file_size} the "
            "zip's directory declares (refused at that size)"
        )
    if zlib.crc32(out) != info.CRC:
        raise SourceError(f"{info.filename}: its CRC-32 differs from the zip directory's")
    return out


def bounded(call: Callable[[], T], what: str, budget: CaseBudget = AT_VERIFY.budget) -> T:
    """``call()`` under one case's time and memory limits (``budget``, by default
    verify's); past one, SourceError."""
    try:
        return within(call, budget.seconds, budget.memory)
    except LimitReached as exc:
        raise SourceError(f"{what}: {exc}, past the limit of one case at verify") from None


class Checks:
    """Checkers run at import as at verify: each under a case's time and memory limits,
    all of them within a whole verification's time (``budget``, by default verify's;
    ``seconds`` in place of its time limit)."""

    def __init__(self, seconds: float | None = None, budget: CaseBudget = AT_VERIFY.budget) -> None:
        self.budget = budget
        self.seconds = budget.time_limit if seconds is None else seconds
        unlimited = seconds is None and budget.time_limit <= 0  # 0: no limit, as at verify
        self.deadline = float("inf") if unlimited else time.monotonic() + self.seconds

    def run(self, found: Checker, inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise SourceError(
                f"the import ran its checkers for more than {self.seconds:g} s, the time "
                "verify allows a whole bundle: refused"
            )
        return limited(
            lambda: run_checker(found, inputs, params),
            found.key,
            min(self.budget.seconds, left),
            self.budget.memory,
        )
