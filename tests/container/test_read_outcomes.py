"""The strict reader's answer to hundreds of hostile archives, pinned: what it accepts and
every problem (where, code, message, in order) of what it rejects stay exactly what the
reader gave before its member loop was made faster (issue 33).

The archives are a golden bundle changed by a seeded generator: members renamed, doubled,
dropped, reordered, resized or retyped, folders, links, signatures in and out of place,
pax records and GNU long names, bytes flipped in headers and padding, data after the end.
``tests/data/container/read-outcomes.json`` holds the answers of the reader at commit
38d6fa1 (the code before the change): ``python -m tests.container.test_read_outcomes``
writes it again with whatever code is on the path."""

from __future__ import annotations

import io
import json
import random
import sys
import tarfile
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from bundler.container.extract import extract
from bundler.errors import BundleRejected
from tests.helpers import REPO, Entry, compress, read_entries

BASE = REPO / "manifests" / "golden" / "0.2.0.dev2" / "quickstart-signed.bundle.tar.zst"
OUTCOMES = REPO / "tests" / "data" / "container" / "read-outcomes.json"
CASES = 400
FORMATS = (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT)


def _renamed(name: str, rng: random.Random) -> str:
    top, _, rel = name.partition("/")
    return rng.choice(
        [
            name.upper(),
            f"{top}/{rel.upper()}",
            f"./{name}",
            f"{name}/",
            f"{top}/../{rel}",
            f"{top}//{rel}",
            f"{top}/{unicodedata.normalize('NFD', 'é')}{rel}",
            f"other-1.0.0/{rel}",
            f"{top}/{'d' * 120}/{rel}",
            f"{top}/{rel}.extra",
            f"{top}/CON/{rel}",
            f"{top}/{rel}\u202e",
            f"{top}/inputs",
            f"{top}/README.md/{rel}",
            f"{top}/signatures/{rel.rpartition('/')[2]}",
            rel,
        ]
    )


def _mutated_entries(entries: list[Entry], rng: random.Random) -> list[Entry]:
    entries = list(entries)
    top = entries[0].name.partition("/")[0]
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(entries))
        kind = rng.randrange(11)
        entry = entries[i]
        if kind == 0:
            entries[i] = Entry(_renamed(entry.name, rng), entry.data, entry.type)
        elif kind == 1:
            entries.insert(rng.randrange(len(entries) + 1), entry)
        elif kind == 2 and len(entries) > 1:
            del entries[i]
        elif kind == 3:
            j = rng.randrange(len(entries))
            entries[i], entries[j] = entries[j], entries[i]
        elif kind == 4:
            entries[i] = Entry(entry.name, entry.data + b"x", entry.type)
        elif kind == 5:
            entries[i] = Entry(entry.name, entry.data, entry.type, size=max(0, len(entry.data) - 3))
        elif kind == 6:
            folder = rng.choice(["inputs", "inputs/", "other", "INPUTS", "README.md"])
            entries.insert(rng.randrange(1, len(entries) + 1), Entry(f"{top}/{folder}", b"", b"5"))
        elif kind == 7:
            link = Entry(f"{top}/link{i}", b"", rng.choice([b"1", b"2", b"3", b"6", b"7"]), "x")
            entries.insert(rng.randrange(1, len(entries) + 1), link)
        elif kind == 8:
            name = rng.choice(["a.json", "b.txt", "c/d.json"])
            where = rng.randrange(1, len(entries) + 1)
            entries.insert(where, Entry(f"{top}/signatures/{name}", b"{}"))
        elif kind == 9:
            entries[i] = Entry(entry.name, entry.data, rng.choice([b"0", b"\0", b"7"]))
        else:
            entries.insert(rng.randrange(len(entries) + 1), Entry(f"{top}/extra{i}.txt", b"hi"))
    return entries


def _tar(entries: list[Entry], rng: random.Random) -> bytes:
    fmt = rng.choice(FORMATS)
    headers = [
        rng.choice([{"comment": "x"}, {"mtime": "1.5"}, {"size": "12"}, {"path": "q/r"}])
        if rng.random() < 0.05
        else {}
        for _ in entries
    ]
    try:
        return _written(entries, fmt, headers)
    except (ValueError, UnicodeEncodeError):  # a name ustar cannot hold
        return _written(entries, tarfile.PAX_FORMAT, headers)


def _written(entries: list[Entry], fmt: int, headers: list[dict[str, str]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for entry, pax in zip(entries, headers, strict=True):
            info = tarfile.TarInfo(entry.name)
            info.type = entry.type
            info.linkname = entry.linkname
            info.mode = 0o644
            info.pax_headers = pax
            if entry.type in (b"0", b"\0", b"7"):
                info.size = len(entry.data) if entry.size is None else entry.size
                tar.addfile(info, io.BytesIO(entry.data))
            else:
                tar.addfile(info)
    return raw.getvalue()


def _spoiled(raw: bytes, rng: random.Random) -> bytes:
    """Bytes flipped in a header or padding, data after the end, or a cut stream."""
    data = bytearray(raw)
    kind = rng.randrange(6)
    if kind == 0:  # a byte of some header block
        block = rng.randrange(len(data) // 512) * 512
        data[block + rng.randrange(512)] ^= 1 << rng.randrange(8)
    elif kind == 1:  # a non-zero byte in padding or after the end-of-archive marker
        zeros = [i for i in range(0, len(data), 97) if data[i] == 0]
        data[rng.choice(zeros)] = 1
    elif kind == 2:
        data += b"\0" * 512 + b"junk"
    elif kind == 3:
        del data[rng.randrange(len(data)) :]
    elif kind == 4:  # a size field rewritten (the checksum no longer holds, or still does)
        block = rng.randrange(len(data) // 512) * 512
        data[block + 124 : block + 136] = b"%011o\0" % rng.randrange(5000)
    return bytes(data)


def generated_archives() -> list[bytes]:
    rng = random.Random(33)
    base = read_entries(BASE)
    out = []
    for i in range(CASES):
        raw = _tar(_mutated_entries(base, rng) if i else base, rng)
        if i % 3 == 2:
            raw = _spoiled(raw, rng)
        out.append(compress(raw, zstd=i % 2 == 0))
    return out


def outcome(bundle: bytes) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "b.bundle.tar.zst"
        path.write_bytes(bundle)
        work = Path(tmp) / "work"
        work.mkdir()
        try:
            got = extract(path, work)
        except BundleRejected as exc:
            problems = [[p.where, p.code, p.message] for p in exc.problems]
            return {"rejected": exc.headline, "problems": problems}
        written = sorted(str(p.relative_to(work)) for p in work.rglob("*"))
        return {
            "identity": got.identity,
            "total": got.total_bytes,
            "signatures": sorted(got.signatures),
            "written": written,
        }


def outcomes() -> list[dict[str, Any]]:
    return [outcome(bundle) for bundle in generated_archives()]


@pytest.fixture(scope="module")
def pinned() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(OUTCOMES.read_text())
    return found


def test_the_pinned_archives_reach_every_kind_of_answer(pinned: list[dict[str, Any]]) -> None:
    codes = {p[1] for o in pinned for p in o.get("problems", [])}
    assert sum("identity" in o for o in pinned) >= 10  # some are accepted as they are
    assert {
        "member.name",
        "member.type",
        "member.duplicate",
        "member.unlisted",
        "member.size",
        "member.file_and_folder",
        "member.outside_top",
        "file.missing",
        "file.hash",
        "archive.corrupt",
        "archive.layout",
        "archive.hidden_data",
        "archive.trailing_data",
        "archive.truncated",
    } <= codes, sorted(codes)


# the archives are written by this Python's tarfile: another minor version may write some
# header differently, and then the answers were pinned for other bytes
WRITTEN_WITH = (3, 11)


@pytest.mark.skipif(
    sys.version_info[:2] != WRITTEN_WITH,
    reason="the pinned answers are for archives written by Python 3.11's tarfile",
)
def test_every_hostile_archive_gets_the_answer_it_always_got(
    pinned: list[dict[str, Any]],
) -> None:
    found = outcomes()
    assert len(found) == len(pinned) == CASES
    for i, (got, want) in enumerate(zip(found, pinned, strict=True)):
        assert got == want, f"archive {i}"


if __name__ == "__main__":
    OUTCOMES.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(o, ensure_ascii=False) for o in outcomes()]  # one archive a line
    OUTCOMES.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    sys.stdout.write(f"wrote {OUTCOMES}\n")
