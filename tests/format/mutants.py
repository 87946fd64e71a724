"""Differential fuzzing of the two verifiers of ``reprobundle/1``: bundles mutated at the
byte level and at the structure level, each judged by the Python verifier and by the
JavaScript one (``manifests/js/verify.mjs``), their integrity outcomes compared.

Deterministic: mutant ``i`` of seed ``s`` is made by ``random.Random(f"{s}:{i}")`` from
the same bases, whatever else runs. Nothing depends on time.

The bases: the conformance bundle (plain, signed by alice, redacted with a withheld record,
redacted and signed), and the tar streams of golden bundles. Each mutant applies one to
three mutations (tar bytes; tar structure: pax records, long names, duplicate members,
links, device files, sizes, checksums, magic, padding, trailing data; the manifest's TOML;
a signature file; the withheld record; the reviewer's options), then a container (gzip
with or without FEXTRA/FNAME/FCOMMENT/FHCRC, several members; zstd compressed or made of
raw and RLE blocks, with or without checksum and content size, several frames, skippable
frames, a dictionary id) and maybe a mutation of the compressed bytes.

By hand, many thousands (the test suite keeps a few hundred)::

    python -m tests.format.mutants --seed 1 --count 5000

prints each disagreement and a count per kind of mutation.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import random
import shutil
import subprocess
import tempfile
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler.container.readrules import Limits
from bundler.errors import BundleRejected
from bundler.run.verify import check_integrity
from bundler.signatures.trust import SignatureJudge
from bundler.signatures.truststore import load_policy
from manifests.conformance import generate as g
from tests.helpers import REPO

SUITE = REPO / "manifests" / "conformance"
JS = REPO / "manifests" / "js"
GOLDEN = sorted((REPO / "manifests" / "golden").glob("*/*.bundle.tar.zst"))
BLOCK = 512

# Codes of the compressed stream: where a mutant damaged the stream itself, the two
# verifiers may name the stream's problem or the tar's (FORMAT.md, "Reading a bundle").
STREAM_CODES = frozenset({"archive.corrupt", "archive.truncated", "archive.trailing_data"})


@dataclass
class Mutant:
    name: str
    data: bytes
    kinds: list[str]
    options: dict[str, Any] = field(default_factory=dict)
    detached: list[bytes] = field(default_factory=list)
    stream_damaged: bool = False  # the compressed bytes were changed after compressing


@dataclass
class Base:
    label: str
    members: list[bytes]  # each: header block(s) and padded data
    manifest: bytes
    signed: bool = False
    withheld: bytes | None = None


# -- tar pieces ------------------------------------------------------------------------------


def split(raw: bytes) -> list[bytes]:
    """The members of a well-formed tar stream, each its header and padded data (a pax or
    long-name header is a member of its own here)."""
    out, pos = [], 0
    while pos + BLOCK <= len(raw):
        block = raw[pos : pos + BLOCK]
        if block == bytes(BLOCK):
            break
        size = int(block[124:136].split(b"\0")[0].strip() or b"0", 8)
        if block[156:157] in (b"1", b"2", b"3", b"4", b"5", b"6"):
            size = 0
        length = BLOCK + size + -size % BLOCK
        out.append(raw[pos : pos + length])
        pos += length
    return out


def with_checksum(block: bytearray | bytes, signed: bool = False) -> bytes:
    block = bytearray(block[:BLOCK])
    block[148:156] = b" " * 8
    total = sum(b - 256 if signed and b > 127 else b for b in block)
    block[148:156] = b"%06o\0 " % (total & 0o777777)
    return bytes(block)


def set_field(m: bytes, start: int, width: int, value: bytes) -> bytes:
    block = bytearray(m[:BLOCK])
    block[start : start + width] = value[:width].ljust(width, b"\0")
    return with_checksum(block) + m[BLOCK:]


def name_of(m: bytes) -> bytes:
    return m[:100].split(b"\0")[0]


def data_of(m: bytes) -> bytes:
    """The data of a member (a member whose size field a mutation broke: all after the
    header)."""
    try:
        size = int(m[124:136].split(b"\0")[0].strip() or b"0", 8)
    except ValueError:
        size = len(m) - BLOCK
    return m[BLOCK : BLOCK + size]


def finish(members: list[bytes], rng: random.Random) -> bytes:
    body = b"".join(members)
    return body + g.end(len(body))


# -- the bases -------------------------------------------------------------------------------

WITHHELD_PATH = "inputs/a.json"


def withheld_record(entries: list[dict[str, Any]] | None = None) -> bytes:
    if entries is None:
        entries = [
            {
                "path": WITHHELD_PATH,
                "reason": "customer data",
                "sha256": g.sha(g.A_JSON),
                "size": len(g.A_JSON),
            }
        ]
    files = ",\n".join("  " + json.dumps(e, sort_keys=True) for e in entries)
    return f'{{"format": "reprobundle-withheld/1", "files": [\n{files}\n]}}\n'.encode()


def bases() -> list[Base]:
    alice = g.signature(g.ALICE)
    out = [
        Base("plain", g.bundle_members(), g.MANIFEST),
        Base("signed", g.bundle_members(signatures=[alice]), g.MANIFEST, signed=True),
    ]
    for signed in (False, True):
        members = g.bundle_members(signatures=[alice] if signed else [])
        at = 2 if signed else 1
        record = withheld_record()
        members.insert(at, g.member(f"{g.TOP}/withheld.json", record))
        members = [m for m in members if name_of(m) != f"{g.TOP}/{WITHHELD_PATH}".encode()]
        label = "redacted-signed" if signed else "redacted"
        out.append(Base(label, members, g.MANIFEST, signed=signed, withheld=record))
    import zstandard

    for path in GOLDEN[:: max(1, len(GOLDEN) // 4)]:
        raw = zstandard.ZstdDecompressor().decompress(path.read_bytes(), max_output_size=1 << 26)
        members = split(raw)
        manifest = data_of(members[0])
        signed = any(b"/signatures/" in name_of(m) for m in members)
        out.append(Base(f"golden:{path.parent.name}/{path.name}", members, manifest, signed))
    return out


# -- mutations of the tar stream -------------------------------------------------------------

NAME_CHANGES: list[Callable[[str], str]] = [
    str.upper,
    lambda n: "/" + n,
    lambda n: n.replace("/", "/../", 1),
    lambda n: n.replace("/", "/./", 1),
    lambda n: n.replace("/", "//", 1),
    lambda n: n.replace("/", "\\"),
    lambda n: n + "/",
    lambda n: n + " ",
    lambda n: n + ".",
    lambda n: n.replace("a", "\u00e1"),
    lambda n: n.replace("a", "a\u0301"),  # NFD of the line above
    lambda n: n.replace("inputs", "INPUTS"),
    lambda n: n.replace("inputs/", "inputs/con.") if "inputs/" in n else n,
    lambda n: n.replace("b.txt", "b:txt"),
    lambda n: n.replace("i", "\u0130"),  # dotted capital I folds to i + combining dot
    lambda n: n.replace(".", "\u202e."),
    lambda n: n.replace("s", "\u017f"),  # long s folds to s
    lambda n: n.replace("conf-1.0.0", "conf-1.0.1"),
    lambda n: n.split("/", 1)[-1],
    lambda n: "C:" + n,
    lambda n: n + "\x7f",
    lambda n: n.replace("/", "/" + "d" * 120 + "/", 1),
    lambda n: n.replace("/", "/" + "e" * 260 + "/", 1),
]

PAX_RECORDS = [
    g.pax_record("path", "PATH"),
    g.pax_record("path", b"PATH\0tail"),
    g.pax_record("path", b"PATH\xff"),
    g.pax_record("path", "PATHNFD"),
    g.pax_record("path", ""),
    g.pax_record("size", "SIZE"),
    g.pax_record("size", "1e2"),
    g.pax_record("size", "-1"),
    g.pax_record("size", " 12"),
    g.pax_record("size", ""),
    g.pax_record("size", "99999999999999999999999"),
    g.pax_record("size", "\u0661\u0662"),  # Arabic-Indic digits
    g.pax_record("linkpath", "/etc/passwd"),
    g.pax_record("GNU.sparse.map", "0,10"),
    g.pax_record("hdrcharset", "BINARY"),
    g.pax_record("mtime", "1.5"),
    g.pax_record("uname", "root"),
    g.pax_record("comment", "hello"),
    b"5 a=\n",
    b"30 path=x\n",
    b"7 path\n",
    b"x path=y\n",
    b"9 path=y",
    b"\xff\xfe 7 a=b\n",
    b"11 \xff\xfe=abc\n",
    b"06 a=b\n",
    b"\xd9\xa1\xd9\xa1 a=bcd\n",
    b"",
]

TYPES = [b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"S", b"g", b"x", b"L", b"K", b"V", b"A", b"\0"]


def tar_bytes(raw: bytearray, rng: random.Random) -> str:
    kind = rng.choice(("flip", "cut", "insert", "zero", "copy"))
    if kind == "flip":
        for _ in range(rng.randint(1, 3)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
    elif kind == "cut":
        at = rng.randrange(len(raw))
        del raw[at : at + rng.choice((1, 511, 512, 1024, len(raw)))]
    elif kind == "insert":
        at = rng.randrange(len(raw))
        raw[at:at] = bytes(rng.randrange(256) for _ in range(rng.choice((1, 3, 511, 512))))
    elif kind == "zero":
        at = rng.randrange(0, len(raw), BLOCK)
        raw[at : at + BLOCK] = bytes(BLOCK)
    else:
        at, to = rng.randrange(len(raw)), rng.randrange(len(raw))
        raw[to:to] = raw[at : at + rng.randint(1, 1024)]
    return f"bytes.{kind}"


def tar_structure(members: list[bytes], rng: random.Random) -> str:
    """Change one member (or the list), keeping the checksums right unless the change is
    of the checksum."""
    i = rng.randrange(len(members))
    m = members[i]
    op = rng.choice(
        (
            "dup",
            "drop",
            "swap",
            "type",
            "name",
            "pax",
            "pax-garbage",
            "longname",
            "longlink",
            "size",
            "checksum",
            "magic",
            "prefix",
            "padding",
            "folder",
            "fields",
            "extra-member",
        )
    )
    if op == "dup":
        members.insert(rng.randrange(len(members) + 1), m)
    elif op == "drop" and len(members) > 1:
        del members[i]
    elif op == "swap":
        j = rng.randrange(len(members))
        members[i], members[j] = members[j], members[i]
    elif op == "type":
        kind = rng.choice(TYPES)
        m = set_field(m, 156, 1, kind)
        if rng.random() < 0.5:
            m = set_field(m, 157, 100, rng.choice((b"../../etc/passwd", name_of(m), b"/tmp/x")))
        if rng.random() < 0.5:
            m = set_field(m, 329, 16, b"0000001\x000000002\x00")  # device numbers
        members[i] = m
    elif op == "name":
        name = name_of(m).decode("utf-8", "surrogateescape")
        new = rng.choice(NAME_CHANGES)(name).encode("utf-8", "surrogateescape")
        if len(new) > 100:
            members[i : i + 1] = [g.pax(g.pax_record("path", new)), set_field(m, 0, 100, new)]
        else:
            members[i] = set_field(m, 0, 100, new)
        if rng.random() < 0.3:
            members[i:i] = [g.member(new, b"", b"5")]
    elif op in ("pax", "pax-garbage"):
        name = name_of(m).decode("utf-8", "surrogateescape")
        records = b""
        for _ in range(rng.randint(1, 3)):
            record = rng.choice(PAX_RECORDS)
            nfd = unicodedata.normalize("NFD", name.replace("a", "\u00e1"))
            for key, value in ((b"PATHNFD", nfd), (b"PATH", rng.choice(NAME_CHANGES)(name))):
                record = fix_pax(record, key, value.encode("utf-8", "surrogateescape"))
            record = fix_pax(
                record, b"SIZE", str(len(data_of(m)) + rng.choice((0, 0, 1, -1))).encode()
            )
            records += record
        kind = rng.choice((b"x", b"x", b"x", b"g"))
        members.insert(i, g.member("././@PaxHeader", records, kind))
    elif op == "longname":
        name = name_of(m).decode("utf-8", "surrogateescape")
        long = rng.choice(NAME_CHANGES)(name).encode("utf-8", "surrogateescape")
        long = rng.choice((long, long + b"\0", long + b"\0junk", b"x" * 2000))
        members.insert(i, g.member("././@LongLink", long, b"L"))
    elif op == "longlink":
        members.insert(i, g.member("././@LongLink", b"/etc/passwd\0", b"K"))
    elif op == "size":
        size = len(data_of(m))
        field_value = rng.choice(
            (
                b"%011o\0" % (size + 1),
                b"%011o\0" % max(size - 1, 0),
                b"%011o " % size,
                b" %010o\0" % size,
                b"\x80" + size.to_bytes(11, "big"),
                b"\xff" + bytes(11),
                b"%011d\0" % (size + 8),
                b"9" * 11 + b"\0",
                b"\0" * 12,
                b"77777777777\0",
                b"\x80" + (1 << 70).to_bytes(11, "big"),
            )
        )
        members[i] = set_field(m, 124, 12, field_value)
    elif op == "checksum":
        block = bytearray(m[:BLOCK])
        choice = rng.random()
        if choice < 0.4:  # a byte above 127, checksum as signed chars
            block[265] = 0xE9
            members[i] = with_checksum(block, signed=True) + m[BLOCK:]
        elif choice < 0.7:
            block[148:156] = rng.choice((b"0000000\0", b"       \0", b"%07o" % 1, b"xyz\0\0\0\0\0"))
            members[i] = bytes(block) + m[BLOCK:]
        else:
            good = with_checksum(block)
            value = int(good[148:154], 8) + rng.choice((1, -1, 256))
            members[i] = good[:148] + b"%06o\0 " % value + good[156:] + m[BLOCK:]
    elif op == "magic":
        magic = rng.choice(
            (b"ustar  \x00", b"ustar\x0001", b"USTAR\x0000", b"\0" * 8, b"ustar\x00  ")
        )
        members[i] = set_field(m, 257, 8, magic)
    elif op == "prefix":
        name = name_of(m)
        if b"/" in name:
            head, _, tail = name.rpartition(b"/")
            m = set_field(set_field(m, 0, 100, tail), 345, 155, head)
            if rng.random() < 0.3:
                m = set_field(m, 257, 8, b"ustar  \x00")
            members[i] = m
    elif op == "padding":
        size = len(data_of(m))
        if (BLOCK + size) % BLOCK and len(m) > BLOCK + size:
            raw = bytearray(m)
            raw[BLOCK + size + rng.randrange(len(m) - BLOCK - size)] = rng.randrange(1, 256)
            members[i] = bytes(raw)
    elif op == "folder":
        name = name_of(m).decode("utf-8", "surrogateescape")
        folder = name.rpartition("/")[0] or name
        folder = rng.choice((folder, folder + "/", name, folder + "/other", folder.upper()))
        data = rng.choice((b"", b"", b"hidden data"))
        entry = g.header(folder.encode("utf-8", "surrogateescape"), len(data), b"5") + g.pad(data)
        members.insert(rng.randrange(1, len(members) + 1), entry)
    elif op == "fields":
        start, width = rng.choice(
            ((100, 8), (108, 8), (116, 8), (136, 12), (265, 32), (297, 32), (500, 12))
        )
        members[i] = set_field(m, start, width, bytes(rng.randrange(256) for _ in range(width)))
    elif op == "extra-member":
        name = rng.choice(
            (
                f"{g.TOP}/inputs/c.txt",
                f"{g.TOP}/signatures/x.json",
                f"{g.TOP}/signatures/x.txt",
                f"{g.TOP}/signatures/sub/x.json",
                f"{g.TOP}/withheld.json",
                f"{g.TOP}/manifest.toml",
                "other/x.txt",
                f"{g.TOP}/INPUTS/a.json",
                f"{g.TOP}/inputs/a.json/x",
                f"{g.TOP}/inputs/A.JSON",
            )
        )
        data = rng.choice((b"", b"{}", g.A_JSON, withheld_record()))
        members.insert(rng.randrange(len(members) + 1), g.member(name, data))
    return f"tar.{op}"


def fix_pax(record: bytes, key: bytes, value: bytes) -> bytes:
    """A pax record with ``key`` in its value replaced, its length made right again."""
    if key not in record or b" " not in record or not record.endswith(b"\n"):
        return record
    body = record.split(b" ", 1)[1].replace(key, value)
    return g.pax_record(
        body.split(b"=", 1)[0].decode("utf-8", "replace"), body.split(b"=", 1)[1][:-1]
    )


def tar_tail(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    body_end = len(raw.rstrip(b"\0"))
    body_end += -body_end % BLOCK
    op = rng.choice(("none", "one-zero-block", "garbage", "extra-zeros", "no-end", "ragged"))
    if op == "one-zero-block":
        return raw[:body_end] + bytes(BLOCK), "tail.one-zero-block"
    if op == "garbage":
        return raw + rng.choice((b"\x01", b"PK\x03\x04", bytes(100) + b"x")), "tail.garbage"
    if op == "extra-zeros":
        return raw + bytes(rng.choice((1, 511, 512, 5000))), "tail.extra-zeros"
    if op == "no-end":
        return raw[:body_end], "tail.no-end"
    if op == "ragged":
        return raw[: body_end + BLOCK + rng.randrange(1, BLOCK)], "tail.ragged"
    return raw, "tail.none"


# -- mutations of the documents --------------------------------------------------------------

TOML_EDITS = [
    (b'title = "A conformance vector"', b'title = "A conformance vector"\ntitle = "again"'),
    (b"[bundle]", b"[bundle]\n[bundle]"),
    (b'name = "conf"', b'"name" = "conf"\nname = "conf"'),
    (b'name = "conf"', b"name = 'conf'"),
    (b'name = "conf"', b'name = """conf"""'),
    (b'name = "conf"', b'name = "co\\u006ef"'),
    (b'name = "conf"', b'name = "Conf"'),
    (b"source_date_epoch = 0", b"source_date_epoch = 0.0"),
    (b"source_date_epoch = 0", b"source_date_epoch = 8589934592"),
    (b"source_date_epoch = 0", b"source_date_epoch = 8589934591"),
    (b"source_date_epoch = 0", b"source_date_epoch = 99999999999999999999999"),
    (b"source_date_epoch = 0", b"source_date_epoch = -1"),
    (b"source_date_epoch = 0", b"source_date_epoch = 1e3"),
    (b"source_date_epoch = 0", b"source_date_epoch = nan"),
    (b"source_date_epoch = 0", b"source_date_epoch = -inf"),
    (b"source_date_epoch = 0", b"source_date_epoch = 0x10"),
    (b"source_date_epoch = 0", b"source_date_epoch = 1979-05-27"),
    (b"source_date_epoch = 0", b"source_date_epoch = true"),
    (b"source_date_epoch = 0", b"source_date_epoch = 1_0"),
    (b"source_date_epoch = 0", b"source_date_epoch = 9223372036854775808"),
    (b"source_date_epoch = 0", b"source_date_epoch = " + b"1" * 5000),
    (b"size = 29", b"size = -9223372036854775809"),
    (b"size = 29", b"size = 29.0"),
    (b"size = 29", b"size = 2.9e1"),
    (b"size = 29", b"size = +29"),
    (b"size = 29", b"size = 0x1d"),
    (b"size = 29", b"size = 0o35"),
    (b"size = 29", b"size = 29_"),
    (b"size = 29", b"size = 029"),
    (b"size = 29", b"size = 18446744073709551645"),
    (b"size = 29", b"size = -29"),
    (b"size = 29", b'size = "29"'),
    (b'"inputs/a.json"', b'"inputs/\\u0000a.json"'),
    (b'"inputs/a.json"', b'"/inputs/a.json"'),
    (b'"inputs/a.json"', b'"inputs/../a.json"'),
    (b'"inputs/a.json"', b'"inputs\\\\a.json"'),
    (b'"inputs/a.json"', b'"inputs/A.json"'),
    (b'"inputs/a.json"', b'"inputs/a\\u0301.json"'),
    (b'"inputs/a.json"', b'"inputs/\\u00e1.json"'),
    (b'"inputs/a.json"', b'"inputs/a.json "'),
    (b'"inputs/a.json"', b'"inputs/nul.json"'),
    (b'"inputs/a.json"', b'"inputs/a\\ud800.json"'),
    (b'"inputs/a.json"', b'"signatures/a.json"'),
    (b'"inputs/a.json"', b'"withheld.json"'),
    (b'"inputs/a.json"', b'"inputs/b.txt"'),
    (b'"inputs/b.txt"', b'"INPUTS/B.TXT"'),
    (b'"inputs/b.txt"', b'"inputs/a.json/b.txt"'),
    (b'"inputs/b.txt"', b'"inputs"'),
    (b"[[files]]", b"[[files]]\n[[files]]"),
    (b'expect = "pass"', b'expect = "fail"'),
    (b'expect = "pass"', b'expect = "pass"\nexpect_reasons = ["x"]'),
    (b'expect = "pass"', b'expect = "pass"\nkind = "control"'),
    (b'format = "reprobundle/1"', b'format = "reprobundle/1.2"'),
    (b'format = "reprobundle/1"', b'format = "reprobundle/1.9"\nfuture = 1'),
    (b'format = "reprobundle/1"', b'format = "reprobundle/2"'),
    (b'format = "reprobundle/1"', b'format = "reprobundle/01"'),
    (b'format = "reprobundle/1"', b'format = "reprobundle/1\\n"'),
    (b'format = "reprobundle/1"', b'format = "reprobundle/\xd9\xa1"'),
    (b'format = "reprobundle/1"', b'format = "reprobundle/1.99999999999999999999"'),
    (b'format = "reprobundle/1"', b"format = 1"),
    (b'version = "1.0.0"', b'version = "1.0.0+\\u00e9"'),
    (b'version = "1.0.0"', b'version = "01.0.0"'),
    (b'cases = ["c1"]', b'cases = ["c1", "c9"]'),
    (b'cases = ["c1"]', b'cases = ["c1", "c1"]'),
    (b'cases = ["c1"]', b"cases = []"),
    (b"\n", b"\r\n"),
    (b"\n", b"\r"),
    (
        b"[scope]",
        b"[scope]\nx = {a = {b = {c = " + b"[" * 33 + b"1" + b"]" * 33 + b"}}}",
    ),
    (b"[environment.libraries]", b"[environment.libraries]\nx = 1979-05-27T07:32:00Z"),
    (b"[environment.libraries]", b'[environment.libraries]\n"x" = "\xc3\xa9"'),
    (b"[environment.libraries]", b'[environment.libraries]\n"x" = "\xff"'),
    (b"format", b"\xef\xbb\xbfformat"),
    (b"[cases.params]\n", b"params = {a = 1,}\n"),
    (b"[cases.params]\n", b"params = {a = 1,\nb = 2}\n"),
    (b"[cases.params]\n", b"params = {a = [1,\n2]}\n"),
    (b"[cases.params]\n", b'params = {a = "x\\e"}\n'),
    (b"[cases.params]\n", b"params = {a = 1} # {,}\n"),
    (b'title = "A conformance vector"', b'title = "A conformance vector\\x41"'),
    (b'title = "A conformance vector"', b"title = '''A \\e conformance vector'''"),
    (b'title = "A conformance vector"', b'title = """A conformance vector\\\n  """'),
    (b"[environment.libraries]\n", b"[environment.libraries]\nwhen = 07:32\n"),
    (b"[environment.libraries]\n", b"[environment.libraries]\nwhen = 1979-05-27T07:32:00-07:00\n"),
    (b"[environment.libraries]\n", b"[environment.libraries]\nwhen = 1979-02-30\n"),
    (b"[environment.libraries]\n", b"[environment.libraries]\nwhen = 2000-02-29\n"),
    (b"[environment.libraries]\n", b'[environment.libraries]\n"12:30" = "12:30"\n'),
    (b"A conformance vector", b"A conformance vector \xe2\x80\xae"),
    (b"A conformance vector", "\u00c5".encode()),
    (b"A conformance vector", "A\u030a".encode()),
]


TOML_PIECES = (b'"', b"'", b"=", b"[", b"]", b"{", b"}", b",", b"\n", b" ", b"#", b".", b"0")
TOML_PIECES += (b"1.5", b"nan", b"inf", b"\\", b"\\u00e9", b"-", b"e5", b"\t", b'"""', b"\xff")


def toml_text(manifest: bytes, rng: random.Random) -> tuple[bytes, str]:
    if rng.random() < 0.75:
        edits = [e for e in TOML_EDITS if e[0] in manifest]
        if edits:
            old, new = rng.choice(edits)
            index = TOML_EDITS.index((old, new))
            return manifest.replace(old, new, 1 if old != b"\n" else -1), f"toml.edit{index}"
    raw = bytearray(manifest)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(raw))
        piece = rng.choice(TOML_PIECES)
        raw[at:at] = piece
    return bytes(raw), "toml.random"


SIG_EDITS: list[Callable[[dict[str, Any]], Any]] = [
    lambda d: {**d, "extra": "x"},
    lambda d: {k: v for k, v in d.items() if k != "keyid"},
    lambda d: {**d, "keyid": d["keyid"].upper()},
    lambda d: {**d, "keyid": 7},
    lambda d: {**d, "sig": None},
    lambda d: {**d, "sig": [d["sig"]]},
    lambda d: {**d, "sig": d["sig"].rstrip("=")},
    lambda d: {**d, "sig": d["sig"].replace("+", "-").replace("/", "_")},
    lambda d: {**d, "sig": d["sig"][:40] + "\n" + d["sig"][40:]},
    lambda d: {**d, "sig": d["sig"] + " "},
    lambda d: {**d, "sig": d["sig"][:-3] + chr(ord(d["sig"][-3]) ^ 1) + "=="},
    lambda d: {**d, "sig": base64.b64encode(base64.b64decode(d["sig"])[:63]).decode()},
    lambda d: {**d, "public_key": d["public_key"].rstrip("=")},
    lambda d: {**d, "public_key": base64.b64encode(bytes(32)).decode()},
    lambda d: {**d, "public_key": base64.b64encode(bytes([1]) + bytes(31)).decode()},
    lambda d: {**d, "public_key": base64.b64encode(bytes([0xFF] * 32)).decode()},
    lambda d: {**d, "format": "reprobundle-signature/2"},
    lambda d: {**d, "format": "reprobundle-signature/1 "},
    lambda d: {**d, "payload_type": "application/json"},
    lambda d: {**d, "payload_type": d["payload_type"].upper()},
    lambda d: {**d, "sig": d["sig"].replace("A", "B", 1)},
    lambda d: [d],
    lambda d: "text",
]

SIG_BYTES: list[Callable[[bytes], bytes]] = [
    lambda b: b"\xef\xbb\xbf" + b,
    lambda b: b.decode().encode("utf-16"),
    lambda b: b.decode().encode("utf-16-le"),
    lambda b: b.replace(b'"format"', b'"format": "x", "format"', 1),
    lambda b: b.replace(b'"format"', b'"\\u0066ormat"', 1),
    lambda b: b.replace(b'"format"', b'"f\\u006frmat": 1, "format"', 1),
    lambda b: b + b"x",
    lambda b: b + b"\n\n \t",
    lambda b: b" " + b,
    lambda b: b.replace(b"}", b', "n": 1e400}'),
    lambda b: b.replace(b"}", b', "n": NaN}'),
    lambda b: b.replace(b"}", b', "n": "\\ud800"}'),
    lambda b: b.replace(b"}", b', "n": "\xff"}'),
    lambda b: b.replace(b"}", b', "n": ' + b"[" * 200 + b"]" * 200 + b"}"),
    lambda b: b + b" " * 17000,
    lambda b: b.replace(b": ", b":\x0c "),
    lambda b: b.replace(b'"sig": "', b'"sig": "\\u0041', 1),
    lambda b: b.replace(b'"sig": "', b'"sig": "\\/', 1),
    lambda b: b[:-5],
    lambda b: b"",
]


def signature_file(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    if rng.random() < 0.5:
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        fields = ("sig", "public_key", "keyid", "format", "payload_type")
        if isinstance(doc, dict) and all(isinstance(doc.get(k), str) for k in fields):
            i = rng.randrange(len(SIG_EDITS))
            try:
                edited = SIG_EDITS[i](doc)
            except ValueError:  # (a sig an earlier mutation left not base64)
                return data, "sig.none"
            return (json.dumps(edited, indent=2) + "\n").encode(), f"sig.edit{i}"
    i = rng.randrange(len(SIG_BYTES))
    try:
        return SIG_BYTES[i](data), f"sig.bytes{i}"
    except UnicodeDecodeError:
        return data, "sig.none"


WITHHELD_EDITS: list[Callable[[dict[str, Any]], Any]] = [
    lambda r: {**r, "extra": 1},
    lambda r: {**r, "format": "reprobundle-withheld/2"},
    lambda r: {**r, "format": "reprobundle-withheld/1.1"},
    lambda r: {**r, "format": "reprobundle-withheld/01"},
    lambda r: {**r, "format": 1},
    lambda r: {k: v for k, v in r.items() if k != "format"},
    lambda r: {**r, "files": []},
    lambda r: {**r, "files": {}},
    lambda r: {**r, "files": r["files"] * 2},
    lambda r: {**r, "files": [{**r["files"][0], "size": 29.0}]},
    lambda r: {**r, "files": [{**r["files"][0], "size": True}]},
    lambda r: {**r, "files": [{**r["files"][0], "size": -1}]},
    lambda r: {**r, "files": [{**r["files"][0], "size": 30}]},
    lambda r: {**r, "files": [{**r["files"][0], "size": 10**30}]},
    lambda r: {**r, "files": [{**r["files"][0], "sha256": r["files"][0]["sha256"].upper()}]},
    lambda r: {**r, "files": [{**r["files"][0], "sha256": "0" * 64}]},
    lambda r: {**r, "files": [{**r["files"][0], "reason": ""}]},
    lambda r: {**r, "files": [{**r["files"][0], "reason": " "}]},
    lambda r: {**r, "files": [{**r["files"][0], "reason": "x" * 2001}]},
    lambda r: {**r, "files": [{**r["files"][0], "reason": "\U0001f600" * 2000}]},
    lambda r: {**r, "files": [{**r["files"][0], "reason": 5}]},
    lambda r: {**r, "files": [{**r["files"][0], "path": "manifest.toml"}]},
    lambda r: {**r, "files": [{**r["files"][0], "path": "withheld.json"}]},
    lambda r: {**r, "files": [{**r["files"][0], "path": "signatures/x.json"}]},
    lambda r: {**r, "files": [{**r["files"][0], "path": "inputs/A.json"}]},
    lambda r: {**r, "files": [{**r["files"][0], "path": "inputs"}]},
    lambda r: {**r, "files": [{**r["files"][0], "path": 3}]},
    lambda r: {
        **r,
        "files": [
            {"path": "inputs/b.txt", "reason": "r", "sha256": g.sha(g.B_TXT), "size": len(g.B_TXT)}
        ],
    },
    lambda r: {**r, "files": [{**r["files"][0], "extra": 1}]},
    lambda r: {**r, "files": [{k: v for k, v in r["files"][0].items() if k != "reason"}]},
    lambda r: {**r, "files": ["inputs/a.json"]},
    lambda r: [r],
]
WITHHELD_BYTES: list[Callable[[bytes], bytes]] = [
    lambda b: b"\xef\xbb\xbf" + b,
    lambda b: b.replace(b'"format"', b'"format": "x", "format"', 1),
    lambda b: b + b"x",
    lambda b: b.replace(b"]}", b'], "files": []}'),
    lambda b: b.decode().encode("utf-16"),
    lambda b: b.replace(b"customer data", b"\\ud800"),
    lambda b: b.replace(b"customer data", b"\xff"),
    lambda b: b.replace(b'"size": 29', b'"size": 29e0'),
    lambda b: b.replace(b'"size": 29', b'"size": 2.9e1'),
    lambda b: b.replace(b'"size": 29', b'"size": 029'),
    lambda b: b.replace(b'"size": 29', b'"size": -0'),
    lambda b: b.replace(b'"size": 29', b'"size": 29.5'),
    lambda b: b.replace(b'"size": 29', b'"size": NaN'),
    lambda b: b.replace(b'"size": 29', b'"size": [[[[[29]]]]]'),
    lambda b: b.replace(b'"size": 29', b'"size": ' + b"9" * 5000),
    lambda b: b.replace(b'"size": 29', b'"size": 9223372036854775808'),
    lambda b: b[:-3],
]


def withheld_file(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    try:
        doc = json.loads(data)
        edit = rng.random() < 0.6 and isinstance(doc, dict) and doc.get("files")
        edit = edit and isinstance(doc["files"], list) and isinstance(doc["files"][0], dict)
    except (ValueError, UnicodeDecodeError):
        edit = False
    if edit:
        i = rng.randrange(len(WITHHELD_EDITS))
        return json.dumps(WITHHELD_EDITS[i](doc)).encode(), f"withheld.edit{i}"
    i = rng.randrange(len(WITHHELD_BYTES))
    try:
        return WITHHELD_BYTES[i](data), f"withheld.bytes{i}"
    except UnicodeDecodeError:
        return data, "withheld.none"


# -- containers ------------------------------------------------------------------------------


def gzip_container(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    op = rng.choice(("plain", "plain", "fields", "fhcrc", "bad-fhcrc", "members", "level"))
    if op == "plain":
        return g.gz(raw), "gzip.plain"
    if op == "level":
        return gzip.compress(raw, compresslevel=rng.choice((0, 1, 9)), mtime=12345), "gzip.level"
    if op == "members":
        at = rng.randrange(len(raw) + 1)
        return g.gz(raw[:at]) + g.gz(raw[at:]), "gzip.members"
    body = g.gz(raw)[10:]
    flags, extra = 0, b""
    if op == "fields" or rng.random() < 0.5:
        if rng.random() < 0.6:
            sub = b"AB" + (4).to_bytes(2, "little") + b"data"
            flags |= 4
            extra += len(sub).to_bytes(2, "little") + sub
        if rng.random() < 0.6:
            flags |= 8
            extra += rng.choice((b"conf.tar", b"../../x", "caf\u00e9".encode("latin-1"))) + b"\0"
        if rng.random() < 0.6:
            flags |= 16
            extra += b"a comment\0"
        if rng.random() < 0.2:
            flags |= 1  # FTEXT
    head = bytes([0x1F, 0x8B, 8, flags | (2 if op != "fields" else 0), 0, 0, 0, 0, 0, 3]) + extra
    if op == "fields":
        head = bytes([0x1F, 0x8B, 8, flags, 0, 0, 0, 0, 0, 3]) + extra
        return head + body, "gzip.fields"
    crc = zlib.crc32(head) & 0xFFFF
    if op == "bad-fhcrc":
        crc ^= 0x0101
    return head + crc.to_bytes(2, "little") + body, f"gzip.{op}"


def zstd_container(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    import zstandard

    op = rng.choice(
        ("level", "no-checksum", "no-size", "raw", "rle", "frames", "skippable", "dict-id", "size")
    )
    if op == "size":  # the frame content size off by a little (single segment: the window too)
        checksum = rng.random() < 0.5
        data = bytearray(zstandard.ZstdCompressor(level=3, write_checksum=checksum).compress(raw))
        width = {0: 1 if data[4] & 0x20 else 0, 1: 2, 2: 4, 3: 8}[data[4] >> 6]
        at = 5 if data[4] & 0x20 else 6
        if width:
            value = int.from_bytes(data[at : at + width], "little") + rng.choice((-512, -1, 1, 512))
            data[at : at + width] = max(value, 0).to_bytes(8, "little")[:width]
        return bytes(data), "zstd.size"
    if op == "level":
        return g.zst_compressed(raw), "zstd.level"
    if op == "no-checksum":
        return zstandard.ZstdCompressor(level=3, write_checksum=False).compress(
            raw
        ), "zstd.no-checksum"
    if op == "no-size":
        c = zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=False)
        return c.compress(raw), "zstd.no-size"
    if op == "raw":
        window = rng.choice((0x50, 0x50, 0x00, 0x68, 0x70, 0x88))
        return g.zst_frame(raw, window=window), f"zstd.raw-window{window:#x}"
    if op == "rle":
        # a frame of one RLE block of zeros in front of raw blocks: the tar then starts
        # with zeros (an empty archive), unless there are none
        n = rng.choice((0, 512, 1024))
        frame = g.ZSTD_MAGIC + bytes([0x04, 0x50])
        if n:
            frame += ((n << 3) | (1 << 1)).to_bytes(3, "little") + b"\0"
        step = 1 << 17
        pieces = [raw[i : i + step] for i in range(0, len(raw), step)] or [b""]
        for k, piece in enumerate(pieces):
            frame += ((len(piece) << 3) | (k == len(pieces) - 1)).to_bytes(3, "little") + piece
        frame += (g.xxh64(bytes(n) + raw) & 0xFFFFFFFF).to_bytes(4, "little")
        return frame, f"zstd.rle{n}"
    if op == "frames":
        at = rng.randrange(len(raw) + 1)
        return g.zst_compressed(raw[:at]) + g.zst_compressed(raw[at:]), "zstd.frames"
    if op == "skippable":
        skip = (
            (0x184D2A50 + rng.randrange(16)).to_bytes(4, "little")
            + (4).to_bytes(4, "little")
            + b"skip"
        )
        before = rng.random() < 0.5
        data = g.zst_compressed(raw)
        return (
            skip + data if before else data + skip
        ), f"zstd.skippable-{'before' if before else 'after'}"
    # a dictionary id in the frame header (descriptor bits 0-1), with or without a dictionary
    data = bytearray(g.zst_compressed(raw))
    flag = rng.choice((1, 2, 3))
    width = {1: 1, 2: 2, 3: 4}[flag]
    data[4] |= flag
    at = 5 + (0 if data[4] & 0x20 else 1)
    data[at:at] = rng.randrange(1 << (8 * width)).to_bytes(width, "little")
    return bytes(data), "zstd.dict-id"


def stream_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    raw = bytearray(data)
    op = rng.choice(("flip", "truncate", "append", "head", "tail-flip"))
    if op == "flip":
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    elif op == "truncate":
        del raw[rng.randrange(len(raw)) :]
    elif op == "append":
        raw += rng.choice((b"\0", b"x", bytes(8), data[:10]))
    elif op == "head":
        raw[rng.randrange(min(len(raw), 14))] ^= 1 << rng.randrange(8)
    else:
        raw[-rng.randrange(1, min(len(raw), 9) + 1)] ^= 1 << rng.randrange(8)
    return bytes(raw), f"stream.{op}"


# -- one mutant ------------------------------------------------------------------------------


def mutant(seed: int | str, i: int, bases_: list[Base]) -> Mutant:
    rng = random.Random(f"{seed}:{i}")
    base = rng.choice(bases_)
    members = list(base.members)
    kinds: list[str] = [base.label.split(":")[0]]
    options: dict[str, Any] = {}
    detached: list[bytes] = []
    manifest = base.manifest
    for _ in range(rng.randint(1, 3)):
        what = rng.random()
        if what < 0.35:
            kinds.append(tar_structure(members, rng))
        elif what < 0.55:
            manifest, kind = toml_text(manifest, rng)
            kinds.append(kind)
            members[0] = g.member(name_of(members[0]), manifest)
            if base.signed and rng.random() < 0.7:  # signed again, so that later rules are reached
                members = [
                    g.member(name_of(m), g.signature(g.ALICE, manifest)[1])
                    if b"/signatures/" in name_of(m)
                    else m
                    for m in members
                ]
        elif what < 0.67 and base.signed:
            at = [k for k, m in enumerate(members) if b"/signatures/" in name_of(m)]
            if at:
                k = rng.choice(at)
                data, kind = signature_file(data_of(members[k]), rng)
                members[k] = g.member(name_of(members[k]), data)
                kinds.append(kind)
        elif what < 0.8 and base.withheld is not None:
            at = [k for k, m in enumerate(members) if name_of(m).endswith(b"/withheld.json")]
            if at:
                data, kind = withheld_file(data_of(members[at[0]]), rng)
                members[at[0]] = g.member(name_of(members[at[0]]), data)
                kinds.append(kind)
        else:
            kinds.append(reviewer_options(base, manifest, members, options, detached, rng))
    raw = finish(members, rng)
    if rng.random() < 0.2:
        raw, kind = tar_tail(raw, rng)
        kinds.append(kind)
    if rng.random() < 0.15:
        raw = bytearray(raw)
        kinds.append(tar_bytes(raw, rng))
        raw = bytes(raw)
    if rng.random() < 0.6:  # most mutants in a plain container, so that the tar is read
        gzipped = rng.random() < 0.5
        data, kind = (g.gz(raw), "gzip") if gzipped else (g.zst_compressed(raw), "zstd")
    elif rng.random() < 0.5:
        data, kind = gzip_container(raw, rng)
    else:
        data, kind = zstd_container(raw, rng)
    kinds.append(kind)
    damaged = False
    if rng.random() < 0.1:
        data, kind = stream_bytes(data, rng)
        kinds.append(kind)
        damaged = True
    return Mutant(f"m{seed}-{i}", data, kinds, options, detached, damaged)


def reviewer_options(
    base: Base,
    manifest: bytes,
    members: list[bytes],
    options: dict[str, Any],
    detached: list[bytes],
    rng: random.Random,
) -> str:
    op = rng.choice(("trust", "detached", "identity", "limits"))
    if op == "trust":
        options["trust"] = rng.choice((["alice"], ["bob"], ["alice", "bob"]))
    elif op == "detached":
        key = rng.choice((g.ALICE, g.BOB))
        data = g.signature(key, manifest if rng.random() < 0.8 else g.MANIFEST + b"#")[1]
        if rng.random() < 0.3:
            data, _ = signature_file(data, rng)
        detached.append(data)
    elif op == "identity":
        options["identity"] = "sha256:" + (g.sha(manifest) if rng.random() < 0.6 else g.sha(b"x"))
    else:
        name = rng.choice(("members", "file_bytes", "total_bytes", "manifest_bytes"))
        sizes = [len(data_of(m)) for m in members]
        value = {
            "members": len(members) - rng.choice((0, 1, 2)),
            "file_bytes": max(sizes[1:] or [0]) - rng.choice((0, 1)),
            "total_bytes": sum(sizes[1:]) - rng.choice((0, 1, 40)),
            "manifest_bytes": len(manifest) - rng.choice((0, 1)),
        }[name]
        options.setdefault("limits", {})[name] = max(value, 1)
    return f"options.{op}"


# -- judging ---------------------------------------------------------------------------------


def python_verdict(bundle: Path, options: dict[str, Any], folder: Path) -> tuple[str, list[str]]:
    policy = load_policy(
        [SUITE / "keys" / f"{t}.pub" for t in options.get("trust", [])],
        expect_manifest_sha256=options.get("identity"),
        detached=[folder / s for s in options.get("signatures", [])],
    )
    try:
        check_integrity(bundle, Limits(**options.get("limits", {})), SignatureJudge(policy))
    except BundleRejected as exc:
        return "reject", sorted({p.code for p in exc.problems})
    return "accept", []


def javascript_verdicts(index: Path, node: str) -> dict[str, tuple[str, list[str]]]:
    result = subprocess.run(
        [node, str(JS / "verify.mjs"), "--conformance", str(index)],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if result.returncode not in (0, 1):
        raise RuntimeError(f"the JavaScript verifier failed: {result.stderr[-2000:]}")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {d["name"]: (d["result"], d["codes"]) for d in lines}


@dataclass
class Disagreement:
    mutant: Mutant
    python: tuple[str, list[str]]
    javascript: tuple[str, list[str]]

    def __str__(self) -> str:
        return (
            f"{self.mutant.name} [{' '.join(self.mutant.kinds)}] "
            f"options={self.mutant.options} detached={len(self.mutant.detached)}: "
            f"python {self.python} javascript {self.javascript}"
        )


def allowed(m: Mutant, python: tuple[str, list[str]], js: tuple[str, list[str]]) -> bool:
    """The one difference FORMAT.md allows: a damaged stream, both rejecting, one naming
    the stream's problem where the other names the tar's."""
    if python == js:
        return True
    return (
        m.stream_damaged
        and python[0] == js[0] == "reject"
        and bool(set(python[1] + js[1]) & STREAM_CODES)
    )


def compare(
    mutants: list[Mutant], folder: Path, node: str
) -> tuple[list[Disagreement], dict[str, tuple[str, list[str]]]]:
    """Every mutant through both verifiers: the disagreements, and the JavaScript verdicts."""
    vectors = []
    for m in mutants:
        file = f"{m.name}.bundle"
        (folder / file).write_bytes(m.data)
        options = {
            "trust": [f"keys/{k}.pub" for k in m.options.get("trust", [])],
            **{k: v for k, v in m.options.items() if k != "trust"},
        }
        if m.detached:
            options["signatures"] = []
            for k, data in enumerate(m.detached):
                name = f"{m.name}.{k}.sig.json"
                (folder / name).write_bytes(data)
                options["signatures"].append(name)
            m.options["signatures"] = options["signatures"]
        expected = {"result": "accept", "exit": 0, "codes": []}
        vectors.append({"name": m.name, "file": file, "options": options, "expected": expected})
    keys = folder / "keys"
    if not keys.exists():
        shutil.copytree(SUITE / "keys", keys)
    index = folder / "vectors.json"
    index.write_text(json.dumps({"vectors": vectors}), "utf-8")
    js = javascript_verdicts(index, node)
    differ = []
    for m in mutants:
        python = python_verdict(folder / f"{m.name}.bundle", m.options, folder)
        if not allowed(m, python, js[m.name]):
            differ.append(Disagreement(m, python, js[m.name]))
    return differ, js


def make(seed: int | str, count: int, start: int = 0) -> list[Mutant]:
    found = bases()
    return [mutant(seed, i, found) for i in range(start, start + count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", default="1")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--node", default=shutil.which("node") or "node")
    parser.add_argument("--keep", type=Path, help="write the mutants here and keep them")
    args = parser.parse_args()
    made = make(args.seed, args.count, args.start)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="mutants-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        differ, js = compare(made, folder, args.node)
    finally:
        if args.keep is None:
            shutil.rmtree(folder)
    for d in differ:
        print(d)
    outcomes: dict[str, int] = {}
    for result, codes in js.values():
        key = result if not codes else ",".join(codes)
        outcomes[key] = outcomes.get(key, 0) + 1
    print(f"{len(made)} mutants, {len(differ)} disagreements, {len(outcomes)} distinct outcomes")
    for key, n in sorted(outcomes.items(), key=lambda kv: -kv[1])[:40]:
        print(f"  {n:6}  {key}")


if __name__ == "__main__":
    main()
