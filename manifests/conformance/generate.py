"""Write the conformance vectors of ``reprobundle/1``: ``python manifests/conformance/generate.py``.

Each vector is one small bundle file made to keep or to break one named rule of
``manifests/FORMAT.md``, with the result every conforming verifier must give it (accept,
exit 0; or reject, exit 3, with the set of problem codes it must report) and the options
it is verified with (trusted keys, an identity pin, lowered limits). The expectations are
written here, from the spec, beside each vector: they are not taken from any verifier's
output, so the suite checks the Python verifier as much as the JavaScript one.

The bytes are made here, not by reprobundle: tar headers, gzip (the standard library,
level 6, time 0), zstd frames (hand-made raw blocks, or python-zstandard at level 3 for a
compressed one), signatures by two keys whose seeds are fixed. Running the script again
gives the same files; ``tests/format/test_conformance.py`` checks that it does.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import sys
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

HERE = Path(__file__).resolve().parent
FORMAT = "reprobundle-conformance/1"
TOP = "conf-1.0.0"
PAYLOAD_TYPE = "application/vnd.reprobundle.manifest+toml; format=reprobundle/1"
BLOCK = 512

# -- the files of the intact bundle ----------------------------------------------------------

A_JSON = b'{"rule": "kept", "value": 1}\n'
B_TXT = b"a line of evidence\n"
FILES = {"inputs/a.json": A_JSON, "inputs/b.txt": B_TXT}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def files_toml(files: dict[str, bytes], sizes: dict[str, str] | None = None) -> str:
    out = []
    for path, data in files.items():
        size = (sizes or {}).get(path, str(len(data)))
        out.append(f'[[files]]\npath = "{path}"\nsha256 = "{sha(data)}"\nsize = {size}\n')
    return "\n".join(out)


CASES = """[[cases]]
id = "c1"
checker = "json-equal@1"
expect = "pass"
[cases.inputs]
candidate = "inputs/a.json"
[cases.params]
"""

CLAIMS = """[[claims]]
id = "k1"
statement = "The stored output keeps the rule."
cases = ["c1"]
limits = ["a conformance vector: nothing is claimed"]
"""

CODE_ENTRY = """
[[code]]
name = "mine"
entry = "code/check.py:check"
[code.reasons]
"mine.bad" = "bad"
"""

FINDING = """
[[cases]]
id = "c2"
checker = "json-equal@1"
expect = "fail"
expect_reasons = ["content.differs"]
kind = "finding"
[cases.inputs]
candidate = "inputs/a.json"
[cases.params]
"""


def manifest(
    *,
    fmt: str = "reprobundle/1",
    name: str = "conf",
    version: str = "1.0.0",
    files: str | None = None,
    cases: str = CASES,
    claims: str = CLAIMS,
    epoch: str = "0",
    extra: str = "",
    environment_extra: str = "",
) -> bytes:
    """The manifest text, written by hand so that a vector can break it anywhere."""
    return f"""format = "{fmt}"
{extra}
[bundle]
name = "{name}"
version = "{version}"
title = "A conformance vector"
description = "One rule of manifests/FORMAT.md, kept or broken."

[scope]
cannot_support = ["anything: this bundle only exercises the format"]

[environment]
tool = "reprobundle conformance"
python = ""
implementation = ""
platform = ""
source_date_epoch = {epoch}
{environment_extra}
[environment.checkers]
"json-equal@1" = "built-in"

[environment.libraries]

{files if files is not None else files_toml(FILES)}
{cases}
{claims}""".encode()


MANIFEST = manifest()

# -- keys and signatures -------------------------------------------------------------------


def key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(
        hashlib.sha256(f"conformance {name}".encode()).digest()
    )


def raw_public(private: Ed25519PrivateKey) -> bytes:
    return private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


ALICE, BOB = key("alice"), key("bob")


def pae(payload_type: str, payload: bytes) -> bytes:
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def signature_doc(
    private: Ed25519PrivateKey, manifest_bytes: bytes, payload_type: str = PAYLOAD_TYPE
) -> dict[str, str]:
    public = raw_public(private)
    return {
        "format": "reprobundle-signature/1",
        "payload_type": payload_type,
        "keyid": sha(public),
        "public_key": base64.b64encode(public).decode(),
        "sig": base64.b64encode(private.sign(pae(payload_type, manifest_bytes))).decode(),
    }


def signature_json(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2) + "\n").encode()


def signature(private: Ed25519PrivateKey, manifest_bytes: bytes = MANIFEST) -> tuple[str, bytes]:
    doc = signature_doc(private, manifest_bytes)
    return f"signatures/{doc['keyid']}.json", signature_json(doc)


# -- tar -----------------------------------------------------------------------------------


def octal(value: int, width: int) -> bytes:
    return b"%0*o\0" % (width - 1, value)


def header(
    name: str | bytes,
    size: int,
    kind: bytes = b"0",
    *,
    linkname: bytes = b"",
    magic: bytes = b"ustar\x0000",
    prefix: bytes = b"",
    bad_checksum: bool = False,
) -> bytes:
    raw = name.encode() if isinstance(name, str) else name
    block = b"".join(
        (
            raw.ljust(100, b"\0"),
            octal(0o644, 8),
            octal(0, 8),
            octal(0, 8),
            octal(size, 12),
            octal(0, 12),
            b" " * 8,
            kind,
            linkname.ljust(100, b"\0"),
            magic,
            bytes(32 + 32 + 8 + 8),
            prefix.ljust(155, b"\0"),
            bytes(12),
        )
    )
    total = sum(block) + (1 if bad_checksum else 0)
    return block[:148] + b"%06o\0 " % total + block[156:]


def pad(data: bytes) -> bytes:
    return data + bytes(-len(data) % BLOCK)


def member(name: str | bytes, data: bytes = b"", kind: bytes = b"0", **kw: Any) -> bytes:
    size = kw.pop("size", len(data))
    return header(name, size, kind, **kw) + pad(data)


def pax_record(key: str, value: str | bytes) -> bytes:
    body = (
        b" " + key.encode() + b"=" + (value.encode() if isinstance(value, str) else value) + b"\n"
    )
    length = len(body) + len(str(len(body)))
    if len(str(length)) != len(str(len(body))):
        length += 1
    return str(length).encode() + body


def pax(records: bytes, kind: bytes = b"x") -> bytes:
    return member("././@PaxHeader", records, kind)


def end(written: int = 0) -> bytes:
    return bytes(2 * BLOCK + -(written + 2 * BLOCK) % (20 * BLOCK))


def tar(*members: bytes, tail: bytes | None = None) -> bytes:
    body = b"".join(members)
    return body + (end(len(body)) if tail is None else tail)


def bundle_members(
    manifest_bytes: bytes = MANIFEST,
    files: dict[str, bytes] | None = None,
    signatures: list[tuple[str, bytes]] = (),  # type: ignore[assignment]
    top: str = TOP,
) -> list[bytes]:
    out = [member(f"{top}/manifest.toml", manifest_bytes)]
    out += [member(f"{top}/{n}", d) for n, d in sorted(signatures)]
    out += [member(f"{top}/{p}", d) for p, d in sorted((files or FILES).items())]
    return out


def plain_bundle(**kw: Any) -> bytes:
    return tar(*bundle_members(**kw))


# -- compression ---------------------------------------------------------------------------


def gz(raw: bytes) -> bytes:
    return gzip.compress(raw, compresslevel=6, mtime=0)


_M64 = (1 << 64) - 1
_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64, for the content checksum of hand-made zstd frames."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64]
        while i + 32 <= n:
            for j in range(4):
                v[j] = _round(v[j], int.from_bytes(data[i + 8 * j : i + 8 * j + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for lane in v:
            h = (((h ^ _round(0, lane)) * _P1) + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h ^= _round(0, int.from_bytes(data[i : i + 8], "little"))
        h = (_rotl(h, 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h ^= (int.from_bytes(data[i : i + 4], "little") * _P1) & _M64
        h = (_rotl(h, 23) * _P2 + _P3) & _M64
        i += 4
    while i < n:
        h ^= (data[i] * _P5) & _M64
        h = (_rotl(h, 11) * _P1) & _M64
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    return h ^ (h >> 32)


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zst_frame(
    raw: bytes,
    *,
    descriptor: int = 0x04,  # content checksum, no dictionary, a window descriptor follows
    window: int = 0x50,  # 2**20 bytes
    checksum: bool = True,
    bad_checksum: bool = False,
) -> bytes:
    """One zstd frame of raw blocks (stored, not compressed): every byte chosen here."""
    out = ZSTD_MAGIC + bytes([descriptor, window])
    step = 1 << 17
    pieces = [raw[i : i + step] for i in range(0, len(raw), step)] or [b""]
    for i, piece in enumerate(pieces):
        last = 1 if i == len(pieces) - 1 else 0
        out += ((len(piece) << 3) | last).to_bytes(3, "little") + piece
    if checksum:
        value = xxh64(raw) & 0xFFFFFFFF
        out += ((value ^ 1) if bad_checksum else value).to_bytes(4, "little")
    return out


def zst_compressed(raw: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(level=3, threads=1, write_checksum=True).compress(raw)


# -- the vectors ---------------------------------------------------------------------------


@dataclass
class Vector:
    name: str
    rule: str  # the rule of FORMAT.md it keeps or breaks
    description: str
    data: bytes
    codes: list[str]  # empty: accept
    suffix: str = ".bundle.tar.gz"
    trust: list[str] = field(default_factory=list)
    identity: str | None = None
    limits: dict[str, int] = field(default_factory=dict)
    detached: bytes | None = None  # a detached signature file given with the bundle

    def entry(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.detached is not None:
            options["signatures"] = [f"vectors/{self.name}.detached.json"]
        if self.trust:
            options["trust"] = [f"keys/{k}.pub" for k in self.trust]
        if self.identity:
            options["identity"] = self.identity
        if self.limits:
            options["limits"] = self.limits
        return {
            "name": self.name,
            "file": f"vectors/{self.name}{self.suffix}",
            "sha256": sha(self.data),
            "rule": self.rule,
            "description": self.description,
            "options": options,
            "expected": {
                "result": "reject" if self.codes else "accept",
                "exit": 3 if self.codes else 0,
                "codes": sorted(set(self.codes)),
            },
        }


VECTORS: list[Vector] = []


def simple(
    name: str, rule: str, description: str, data: bytes, codes: list[str] | None = None, **kw: Any
) -> None:
    VECTORS.append(Vector(name, rule, description, data, codes or [], **kw))


def with_manifest(text: bytes, files: dict[str, bytes] | None = None) -> bytes:
    return gz(plain_bundle(manifest_bytes=text, files=files))


def _all() -> None:
    # ---- intact bundles: every verifier accepts them ----
    simple("accept-intact-gzip", "archive.compression", "an intact gzip bundle", gz(plain_bundle()))
    simple(
        "accept-intact-zstd",
        "archive.compression",
        "an intact zstd bundle (compressed blocks, content checksum)",
        zst_compressed(plain_bundle()),
        suffix=".bundle.tar.zst",
    )
    simple(
        "accept-zstd-raw-blocks",
        "archive.compression",
        "an intact zstd frame of stored blocks, window 1 MiB",
        zst_frame(plain_bundle()),
        suffix=".bundle.tar.zst",
    )
    simple(
        "accept-zstd-no-checksum",
        "archive.compression",
        "a zstd frame without a content checksum (allowed; bundles are written with one)",
        zst_frame(plain_bundle(), descriptor=0x00, checksum=False),
        suffix=".bundle.tar.zst",
    )
    members = bundle_members()
    simple(
        "accept-folder-entries",
        "member.folders",
        "folder entries for the folders that hold listed files",
        gz(tar(members[0], member(f"{TOP}/inputs/", kind=b"5"), *members[1:])),
    )
    long_path = "inputs/" + "d" * 60 + "/" + "e" * 60 + ".txt"
    files = {long_path: B_TXT}
    text = manifest(files=files_toml(files), cases=CASES.replace("inputs/a.json", long_path))
    simple(
        "accept-pax-path",
        "tar.pax",
        "a name longer than 100 bytes carried by a pax path record",
        gz(
            tar(
                member(f"{TOP}/manifest.toml", text),
                pax(pax_record("path", f"{TOP}/{long_path}")),
                member(f"{TOP}/{long_path}"[:100], B_TXT),
            )
        ),
    )
    simple(
        "accept-ustar-prefix",
        "tar.ustar",
        "a name split between the ustar prefix and name fields",
        gz(
            tar(
                member(f"{TOP}/manifest.toml", text),
                member(
                    long_path.rpartition("/")[2],
                    B_TXT,
                    prefix=f"{TOP}/{long_path.rpartition('/')[0]}".encode(),
                ),
            )
        ),
    )
    simple(
        "accept-gnu-magic",
        "tar.ustar",
        "headers with GNU's 'ustar  ' magic",
        gz(tar(*_gnu(bundle_members()))),
    )
    empty_files = {**FILES, "inputs/empty.txt": b""}
    simple(
        "accept-empty-file",
        "manifest.files",
        "a listed file of 0 bytes",
        with_manifest(manifest(files=files_toml(empty_files)), empty_files),
    )
    simple(
        "accept-newer-minor",
        "manifest.format",
        "a newer minor version with a field this verifier does not know (a warning only)",
        with_manifest(manifest(fmt="reprobundle/1.9", extra='future_field = "ignored"\n')),
    )
    code_files = {**FILES, "code/check.py": b"def check(inputs, params):\n    return {}\n"}
    simple(
        "accept-bundled-code-declared",
        "manifest.code",
        "format 1.1 with a code entry (not run: integrity only)",
        with_manifest(
            manifest(
                fmt="reprobundle/1.1",
                files=files_toml(code_files),
                extra="",
                claims=CLAIMS + CODE_ENTRY,
            ),
            code_files,
        ),
    )
    finding = CASES + FINDING
    simple(
        "accept-finding-1-2",
        "manifest.kind",
        "format 1.2 with a case of kind finding",
        with_manifest(manifest(fmt="reprobundle/1.2", cases=finding)),
    )
    signed = [signature(ALICE)]
    simple(
        "accept-signed-trusted",
        "signature.trusted",
        "signed by alice, alice trusted",
        gz(plain_bundle(signatures=signed)),
        trust=["alice"],
    )
    simple(
        "accept-signed-zstd-trusted-pem",
        "signature.trusted",
        "signed by bob (zstd), bob's key given as PEM",
        zst_compressed(plain_bundle(signatures=[signature(BOB)])),
        suffix=".bundle.tar.zst",
        trust=["bob"],
    )
    simple(
        "accept-signed-unknown-key",
        "signature.unknown_key",
        "signed by bob, no key trusted: a sound signature by a key nobody named",
        gz(plain_bundle(signatures=[signature(BOB)])),
    )
    simple(
        "accept-signed-two-keys",
        "signature.trusted",
        "signed by alice and bob, alice trusted",
        gz(plain_bundle(signatures=[signature(ALICE), signature(BOB)])),
        trust=["alice"],
    )
    simple(
        "accept-identity-pinned",
        "identity.pin",
        "the identity pin names this manifest",
        gz(plain_bundle()),
        identity="sha256:" + sha(MANIFEST),
    )
    simple(
        "accept-limits-exactly-met",
        "limits",
        "every limit met exactly, none passed",
        gz(plain_bundle()),
        limits={
            "members": 3,
            "file_bytes": len(A_JSON),
            "total_bytes": len(A_JSON) + len(B_TXT),
            "manifest_bytes": len(MANIFEST),
        },
    )

    # ---- the compressed stream ----
    raw = plain_bundle()
    simple(
        "reject-not-compressed",
        "archive.compression",
        "a plain tar, not compressed",
        raw,
        ["archive.not_compressed_tar"],
    )
    simple(
        "reject-zip",
        "archive.compression",
        "a zip file",
        b"PK\x03\x04" + bytes(40),
        ["archive.not_compressed_tar"],
    )
    simple(
        "reject-empty-file",
        "archive.compression",
        "an empty file",
        b"",
        ["archive.not_compressed_tar"],
    )
    simple(
        "reject-skippable-frame-first",
        "archive.compression",
        "a zstd skippable frame before the bundle's frame",
        b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + bytes(4) + zst_frame(raw),
        ["archive.not_compressed_tar"],
        suffix=".bundle.tar.zst",
    )
    whole = gz(raw)
    simple(
        "reject-gzip-truncated",
        "archive.one_stream",
        "the gzip stream cut short",
        whole[: len(whole) // 2],
        ["archive.truncated"],
    )
    corrupt = bytearray(whole)
    corrupt[-8] ^= 0xFF  # the CRC-32 of the data
    simple(
        "reject-gzip-bad-crc",
        "archive.one_stream",
        "a gzip member whose CRC-32 is wrong",
        bytes(corrupt),
        ["archive.corrupt"],
    )
    simple(
        "reject-gzip-two-members",
        "archive.one_stream",
        "a second gzip member after the first",
        whole + gz(b"more"),
        ["archive.trailing_data"],
    )
    simple(
        "reject-gzip-trailing-bytes",
        "archive.one_stream",
        "bytes after the gzip stream",
        whole + b"tail",
        ["archive.trailing_data"],
    )
    frame = zst_frame(raw)
    zst = {"suffix": ".bundle.tar.zst"}
    simple(
        "reject-zstd-truncated",
        "archive.one_stream",
        "the zstd frame cut short",
        frame[: len(frame) - 100],
        ["archive.truncated"],
        **zst,
    )
    simple(
        "reject-zstd-bad-checksum",
        "archive.one_stream",
        "a zstd frame whose content checksum is wrong",
        zst_frame(raw, bad_checksum=True),
        ["archive.corrupt"],
        **zst,
    )
    simple(
        "reject-zstd-two-frames",
        "archive.one_stream",
        "a second zstd frame after the first",
        frame + zst_frame(b"more"),
        ["archive.trailing_data"],
        **zst,
    )
    simple(
        "reject-zstd-skippable-after",
        "archive.one_stream",
        "a skippable frame after the bundle's frame",
        frame + b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + bytes(4),
        ["archive.trailing_data"],
        **zst,
    )
    simple(
        "reject-zstd-dictionary",
        "archive.one_stream",
        "a zstd frame that needs a dictionary",
        zst_frame(raw, descriptor=0x05)[:6] + b"\x07\x00" + zst_frame(raw)[6:],
        ["archive.corrupt"],
        **zst,
    )
    simple(
        "reject-zstd-reserved-bit",
        "archive.one_stream",
        "a zstd frame header with its reserved bit set",
        zst_frame(raw, descriptor=0x0C),
        ["archive.corrupt"],
        **zst,
    )
    simple(
        "reject-zstd-window-too-large",
        "archive.one_stream",
        "a zstd frame asking for a 16 MiB window",
        zst_frame(raw, window=0x70),
        ["archive.corrupt"],
        **zst,
    )
    simple(
        "reject-not-tar",
        "tar.ustar",
        "a compressed stream that is not a tar archive",
        gz(b"not a tar archive" * 100),
        ["archive.not_tar"],
    )

    # ---- the tar stream ----
    m = bundle_members()
    simple(
        "reject-tar-bad-checksum",
        "tar.ustar",
        "a member header whose checksum is wrong",
        gz(tar(m[0], member(f"{TOP}/inputs/a.json", A_JSON, bad_checksum=True), m[2])),
        ["archive.corrupt"],
    )
    simple(
        "reject-tar-not-ustar",
        "tar.ustar",
        "a member header without the ustar magic (old v7 tar)",
        gz(tar(m[0], member(f"{TOP}/inputs/a.json", A_JSON, magic=bytes(8)), m[2])),
        ["archive.corrupt"],
    )
    simple(
        "reject-tar-truncated-member",
        "tar.ustar",
        "the archive ends inside a member's data",
        gz(b"".join(m)[:-BLOCK]),
        ["archive.truncated"],
    )
    simple(
        "reject-tar-no-end-marker",
        "tar.ustar",
        "the archive ends without its end-of-archive marker",
        gz(b"".join(m)),
        ["archive.truncated"],
    )
    lying = header(f"{TOP}/inputs/a.json", 10) + pad(A_JSON)
    simple(
        "reject-hidden-in-padding",
        "tar.zero_padding",
        "non-zero bytes in a member's padding (a member larger than its declared size)",
        gz(tar(m[0], lying, m[2])),
        ["archive.hidden_data"],
    )
    simple(
        "reject-data-after-end",
        "tar.zero_padding",
        "bytes after the end-of-archive marker",
        gz(tar(*m, tail=bytes(2 * BLOCK) + b"hidden" + bytes(BLOCK))),
        ["archive.trailing_data"],
    )
    simple(
        "reject-pax-global",
        "tar.pax",
        "a pax global header",
        gz(tar(m[0], pax(pax_record("comment", "x"), b"g"), *m[1:])),
        ["archive.global_header"],
    )
    simple(
        "reject-pax-unknown-key",
        "tar.pax",
        "a pax record this format does not allow (linkpath)",
        gz(tar(m[0], pax(pax_record("linkpath", "x")), *m[1:])),
        ["member.type"],
    )
    simple(
        "reject-pax-bad-size",
        "tar.pax",
        "a pax size that is not a number",
        gz(tar(m[0], pax(pax_record("size", "12x")), *m[1:])),
        ["archive.corrupt"],
    )
    simple(
        "reject-pax-bad-record",
        "tar.pax",
        "a pax record without a valid length",
        gz(tar(m[0], pax(b"x path=a\n"), *m[1:])),
        ["archive.corrupt"],
    )
    simple(
        "reject-pax-header-too-large",
        "tar.pax",
        "a pax header over 1 MiB",
        gz(tar(m[0], header("././@PaxHeader", (1 << 20) + 1, b"x"))),
        ["limit.header_size"],
    )
    simple(
        "reject-gnu-long-name-too-large",
        "tar.pax",
        "a GNU long name over 1 MiB",
        gz(tar(m[0], header("././@LongLink", (1 << 20) + 1, b"L"))),
        ["limit.header_size"],
    )
    simple(
        "reject-sparse",
        "member.type",
        "a GNU sparse member",
        gz(tar(m[0], member(f"{TOP}/inputs/a.json", A_JSON, b"S"), m[2])),
        ["member.type"],
    )

    # ---- layout and members ----
    simple(
        "reject-empty-archive",
        "layout.manifest_first",
        "a tar archive with no member",
        gz(tar()),
        ["archive.empty"],
    )
    simple(
        "reject-manifest-not-first",
        "layout.manifest_first",
        "a payload file before the manifest",
        gz(tar(m[1], m[0], m[2])),
        ["archive.layout"],
    )
    simple(
        "reject-manifest-too-deep",
        "layout.manifest_first",
        "the manifest one folder too deep",
        gz(tar(member(f"{TOP}/x/manifest.toml", MANIFEST), *m[1:])),
        ["archive.layout"],
    )
    simple(
        "reject-top-folder-other",
        "layout.top_folder",
        "a top folder that is not NAME-VERSION",
        gz(plain_bundle(top="other-1.0.0")),
        ["archive.layout"],
    )
    sig_name, sig_data = signature(ALICE)
    simple(
        "reject-signature-after-payload",
        "layout.signatures_first",
        "a signature after the first payload file",
        gz(tar(m[0], m[1], member(f"{TOP}/{sig_name}", sig_data), m[2])),
        ["archive.layout"],
    )
    for kind, label in ((b"2", "symlink"), (b"1", "hardlink"), (b"3", "device"), (b"6", "fifo")):
        simple(
            f"reject-member-{label}",
            "member.type",
            f"a {label} member",
            gz(tar(*m, member(f"{TOP}/inputs/x", kind=kind, linkname=b"/etc/passwd"))),
            ["member.type"],
        )
    for label, name in (
        ("absolute", "/etc/conf"),
        ("dotdot", f"{TOP}/../escape.txt"),
        ("backslash", f"{TOP}/inputs\\x.txt"),
        ("reserved", f"{TOP}/inputs/aux.txt"),
        ("not-nfc", f"{TOP}/inputs/" + unicodedata.normalize("NFD", "é") + ".txt"),
        ("control", f"{TOP}/inputs/a\x01.txt"),
        ("bidi", f"{TOP}/inputs/a\u202e.txt"),
        ("trailing-dot", f"{TOP}/inputs/a."),
        ("empty-component", f"{TOP}/inputs//a.txt"),
    ):
        simple(
            f"reject-name-{label}",
            "member.name",
            f"a member name that is not portable ({label})",
            gz(tar(*m, member(name, b"x"))),
            ["member.name"],
        )
    simple(
        "reject-outside-top",
        "member.outside_top",
        "a member outside the top folder",
        gz(tar(*m, member("elsewhere/x.txt", b"x"))),
        ["member.outside_top"],
    )
    simple(
        "reject-duplicate-member",
        "member.unique",
        "one listed file twice",
        gz(tar(*m, member(f"{TOP}/inputs/a.json", A_JSON))),
        ["member.duplicate"],
    )
    simple(
        "reject-duplicate-folded",
        "member.unique",
        "a name equal to a listed one after case folding",
        gz(tar(*m, member(f"{TOP}/inputs/A.json", A_JSON))),
        ["member.duplicate"],
    )
    simple(
        "reject-file-and-folder",
        "member.file_and_folder",
        "a listed file that another member needs as a folder",
        gz(tar(*m, member(f"{TOP}/inputs/a.json/x", b"x"))),
        ["member.file_and_folder"],
    )
    simple(
        "reject-unlisted-file",
        "integrity.nothing_unlisted",
        "a payload file the manifest does not list",
        gz(tar(*m, member(f"{TOP}/inputs/extra.txt", b"x"))),
        ["member.unlisted"],
    )
    simple(
        "reject-unlisted-folder",
        "integrity.nothing_unlisted",
        "a folder entry for a folder no listed file is in",
        gz(tar(*m, member(f"{TOP}/other", kind=b"5"))),
        ["member.unlisted"],
    )
    simple(
        "reject-signature-not-json",
        "layout.signatures_first",
        "a file in signatures/ not named *.json",
        gz(tar(m[0], member(f"{TOP}/signatures/x.txt", b"x"), *m[1:])),
        ["member.unlisted"],
    )
    simple(
        "reject-size-differs",
        "integrity.sizes",
        "a member whose size differs from the manifest's",
        gz(tar(m[0], member(f"{TOP}/inputs/a.json", A_JSON + b" "), m[2])),
        ["member.size"],
    )
    simple(
        "reject-file-missing",
        "integrity.nothing_missing",
        "a listed file not in the archive",
        gz(tar(m[0], m[1])),
        ["file.missing"],
    )
    changed = A_JSON.replace(b"1", b"2")
    simple(
        "reject-file-hash",
        "integrity.hashes",
        "a file whose bytes differ from the manifest's SHA-256",
        gz(tar(m[0], member(f"{TOP}/inputs/a.json", changed), m[2])),
        ["file.hash"],
    )
    simple(
        "reject-several-problems",
        "integrity.every_problem",
        "an unlisted file, a changed file and a missing file: all reported",
        gz(
            tar(
                m[0],
                member(f"{TOP}/inputs/a.json", changed),
                member(f"{TOP}/inputs/extra.txt", b"x"),
            )
        ),
        ["file.hash", "member.unlisted", "file.missing"],
    )

    # ---- limits (lowered by the vector's options) ----
    simple(
        "reject-limit-members",
        "limits",
        "more members than --max-members",
        gz(plain_bundle()),
        ["limit.members"],
        limits={"members": 2},
    )
    simple(
        "reject-limit-file-size",
        "limits",
        "a file larger than --max-file-bytes",
        gz(plain_bundle()),
        ["limit.file_size"],
        limits={"file_bytes": len(A_JSON) - 1},
    )
    simple(
        "reject-limit-total-size",
        "limits",
        "files adding up to more than --max-total-bytes",
        gz(plain_bundle()),
        ["limit.total_size"],
        limits={"total_bytes": len(A_JSON) + len(B_TXT) - 1},
    )
    simple(
        "reject-limit-manifest-size",
        "limits",
        "a manifest larger than --max-manifest-bytes",
        gz(plain_bundle()),
        ["limit.manifest_size"],
        limits={"manifest_bytes": len(MANIFEST) - 1},
    )
    padded = signed[0][1] + b" " * (len(MANIFEST) + 1 - len(signed[0][1]))
    simple(
        "reject-limit-signature-size",
        "limits",
        "a signature file larger than --max-manifest-bytes",
        gz(plain_bundle(signatures=[(signed[0][0], padded)])),
        ["limit.signature_size"],
        limits={"manifest_bytes": len(MANIFEST)},
        trust=["alice"],
    )

    # ---- the manifest ----
    def bad_manifest(
        name: str,
        rule: str,
        description: str,
        text: bytes,
        codes: list[str],
        files: dict[str, bytes] | None = None,
    ) -> None:
        simple(name, rule, description, with_manifest(text, files), codes)

    bad_manifest(
        "reject-manifest-bom",
        "manifest.encoding",
        "a manifest that starts with a byte-order mark",
        b"\xef\xbb\xbf" + MANIFEST,
        ["manifest.bom"],
    )
    bad_manifest(
        "reject-manifest-not-utf8",
        "manifest.encoding",
        "a manifest that is not UTF-8",
        MANIFEST.replace(b"A conformance", b"A conformanc\xe9"),
        ["manifest.encoding"],
    )
    bad_manifest(
        "reject-manifest-not-toml",
        "manifest.toml",
        "a manifest that is not TOML",
        MANIFEST + b"\nthis is = = not toml\n",
        ["manifest.toml"],
    )
    bad_manifest(
        "reject-manifest-duplicate-key",
        "manifest.toml",
        "a key given twice",
        manifest(extra='format = "reprobundle/1"\n'),
        ["manifest.toml"],
    )
    bad_manifest(
        "reject-format-missing",
        "manifest.format",
        "no format line",
        MANIFEST.replace(b'format = "reprobundle/1"', b""),
        ["manifest.format"],
    )
    bad_manifest(
        "reject-format-garbled",
        "manifest.format",
        "a format line that is not reprobundle/MAJOR[.MINOR]",
        manifest(fmt="reprobundle/one"),
        ["manifest.format"],
    )
    bad_manifest(
        "reject-format-newline",
        "manifest.format",
        "a format value with a newline after it",
        MANIFEST.replace(b'"reprobundle/1"', b'"reprobundle/1\\n"'),
        ["manifest.format"],
    )
    bad_manifest(
        "reject-unsupported-major",
        "manifest.format",
        "format major version 2",
        manifest(fmt="reprobundle/2"),
        ["manifest.unsupported_major"],
    )
    bad_manifest(
        "reject-unknown-field",
        "manifest.schema",
        "an unknown top-level field in format 1",
        manifest(extra='future_field = "x"\n'),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-missing-title",
        "manifest.schema",
        "bundle.title missing",
        MANIFEST.replace(b'title = "A conformance vector"\n', b""),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-bad-sha256",
        "manifest.schema",
        "a sha256 in upper case",
        MANIFEST.replace(sha(A_JSON).encode(), sha(A_JSON).upper().encode()),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-bad-name",
        "manifest.schema",
        "a bundle name with an upper-case letter",
        manifest(name="Conf"),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-bad-version",
        "manifest.schema",
        "a version that is not semantic",
        manifest(version="1.0"),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-negative-size",
        "manifest.schema",
        "a negative size",
        manifest(files=files_toml(FILES, {"inputs/a.json": "-1"})),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-size-float",
        "manifest.size",
        "a size written as a float (29.0)",
        manifest(files=files_toml(FILES, {"inputs/a.json": f"{len(A_JSON)}.0"})),
        ["manifest.size"],
    )
    bad_manifest(
        "reject-epoch-float",
        "manifest.epoch",
        "source_date_epoch written as a float",
        manifest(epoch="0.0"),
        ["manifest.epoch"],
    )
    bad_manifest(
        "reject-epoch-too-large",
        "manifest.epoch",
        "source_date_epoch past what a ustar header holds",
        manifest(epoch=str(8**11)),
        ["manifest.epoch"],
    )
    bad_manifest(
        "reject-bool-size",
        "manifest.schema",
        "a size that is a boolean",
        manifest(files=files_toml(FILES, {"inputs/a.json": "true"})),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-title-too-long",
        "manifest.schema",
        "a title over 300 characters (counted in code points)",
        MANIFEST.replace(b'"A conformance vector"', ('"' + "é" * 301 + '"').encode()),
        ["manifest.schema"],
    )
    bad_manifest(
        "reject-datetime-value",
        "manifest.type",
        "a TOML date-time among the params",
        MANIFEST.replace(b"[cases.params]\n", b"[cases.params]\nwhen = 2026-01-01T00:00:00Z\n"),
        ["manifest.type"],
    )
    bad_manifest(
        "reject-nan",
        "manifest.not_finite",
        "NaN among the params",
        MANIFEST.replace(b"[cases.params]\n", b"[cases.params]\nratio = nan\n"),
        ["manifest.not_finite"],
    )
    bad_manifest(
        "reject-infinity",
        "manifest.not_finite",
        "infinity among the params",
        MANIFEST.replace(b"[cases.params]\n", b"[cases.params]\nratio = -inf\n"),
        ["manifest.not_finite"],
    )
    deep = "[" * 40 + "]" * 40
    bad_manifest(
        "reject-too-deep",
        "manifest.depth",
        "params nested 40 deep",
        MANIFEST.replace(b"[cases.params]\n", f"[cases.params]\nnest = {deep}\n".encode()),
        ["manifest.too_deep"],
    )

    def with_paths(files: dict[str, bytes], **kw: Any) -> bytes:
        return manifest(files=files_toml(files), **kw)

    for label, path, code in (
        ("dotdot", "inputs/../x.txt", "path.invalid"),
        ("absolute", "/x.txt", "path.invalid"),
        ("reserved-windows", "inputs/con.txt", "path.invalid"),
        ("reserved-signatures", "signatures/x.json", "path.reserved"),
        ("reserved-manifest", "manifest.toml/x", "path.reserved"),
    ):
        bad_manifest(
            f"reject-path-{label}",
            "manifest.paths",
            f"a listed path that breaks the path rules ({label})",
            with_paths({**FILES, path: b"x"}),
            [f"manifest.{code}"],
        )
    bad_manifest(
        "reject-path-duplicate-folded",
        "manifest.paths",
        "two listed paths equal after case folding",
        with_paths({**FILES, "inputs/A.json": A_JSON}),
        ["manifest.path.duplicate"],
    )
    bad_manifest(
        "reject-path-sharp-s",
        "manifest.paths",
        "two listed paths equal after full case folding (ß, ss)",
        with_paths({**FILES, "inputs/straße.txt": b"x", "inputs/strasse.txt": b"y"}),
        ["manifest.path.duplicate"],
    )
    bad_manifest(
        "reject-path-file-and-folder",
        "manifest.paths",
        "a listed path that is also a folder of another",
        with_paths({**FILES, "inputs/a.json/x": b"x"}),
        ["manifest.path.file_and_folder"],
    )
    bad_manifest(
        "reject-case-id-duplicate",
        "manifest.references",
        "two cases with one id",
        manifest(cases=CASES + "\n" + CASES),
        ["manifest.id.duplicate"],
    )
    bad_manifest(
        "reject-claim-unknown-case",
        "manifest.references",
        "a claim naming a case that does not exist",
        manifest(claims=CLAIMS.replace('["c1"]', '["c1", "c9"]')),
        ["manifest.claim.unknown_case"],
    )
    bad_manifest(
        "reject-unlisted-input",
        "manifest.references",
        "a case input that is not a listed file or folder",
        manifest(cases=CASES.replace("inputs/a.json", "inputs/nope.json")),
        ["manifest.case.unlisted_input"],
    )
    bad_manifest(
        "reject-expect-reasons-on-pass",
        "manifest.references",
        "expect_reasons on a case that expects pass",
        manifest(cases=CASES.replace('expect = "pass"', 'expect = "pass"\nexpect_reasons = ["x"]')),
        ["manifest.case.expect_reasons"],
    )
    bad_manifest(
        "reject-kind-on-pass",
        "manifest.kind",
        "kind on a case that expects pass",
        manifest(cases=CASES.replace('expect = "pass"', 'expect = "pass"\nkind = "control"')),
        ["manifest.case.kind"],
    )
    bad_manifest(
        "reject-finding-in-1-0",
        "manifest.kind",
        "a finding in a format 1 bundle",
        manifest(cases=finding),
        ["manifest.case.format"],
    )
    bad_manifest(
        "reject-code-in-1-0",
        "manifest.code",
        "a code entry in a format 1 bundle",
        manifest(
            files=files_toml(code_files),
            claims=CLAIMS
            + '\n[[code]]\nname = "mine"\nentry = "code/check.py:check"\n[code.reasons]\n',
        ),
        ["manifest.code.format"],
        code_files,
    )
    bad_manifest(
        "reject-code-unknown",
        "manifest.code",
        "a case naming a bundled checker no code entry defines",
        manifest(fmt="reprobundle/1.1", cases=CASES.replace("json-equal@1", "bundle:mine")),
        ["manifest.code.unknown"],
    )
    bad_manifest(
        "reject-code-unlisted",
        "manifest.code",
        "a code entry whose file is not listed",
        manifest(
            fmt="reprobundle/1.1",
            claims=CLAIMS
            + '\n[[code]]\nname = "mine"\nentry = "code/gone.py:check"\n[code.reasons]\n',
        ),
        ["manifest.code.unlisted"],
    )

    # ---- signatures ----
    def signed_with(*sigs: tuple[str, bytes], trust: list[str] | None = None) -> dict[str, Any]:
        return {"data": gz(plain_bundle(signatures=list(sigs))), "trust": trust or []}

    def bad_signature(
        name: str,
        rule: str,
        description: str,
        doc: dict[str, Any] | bytes,
        codes: list[str],
        trust: list[str] | None = None,
    ) -> None:
        data = doc if isinstance(doc, bytes) else signature_json(doc)
        made = signed_with((sig_name, data), trust=trust)
        simple(name, rule, description, made["data"], codes, trust=made["trust"])

    good = signature_doc(ALICE, MANIFEST)
    bad_signature(
        "reject-sig-not-json",
        "signature.file",
        "a signature file that is not JSON",
        b"not json",
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-extra-key",
        "signature.file",
        "a signature object with an extra key",
        {**good, "note": "x"},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-missing-key",
        "signature.file",
        "a signature object without keyid",
        {k: v for k, v in good.items() if k != "keyid"},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-not-string",
        "signature.file",
        "a field that is not a string",
        {**good, "keyid": 1},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-duplicate-json-key",
        "signature.file",
        "a JSON key given twice",
        signature_json(good).replace(b'"format"', b'"format": "x",\n  "format"', 1),
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-format",
        "signature.file",
        "another signature format",
        {**good, "format": "reprobundle-signature/2"},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-base64-noncanonical",
        "signature.file",
        "sig in base64 without its padding",
        {**good, "sig": good["sig"].rstrip("=")},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-base64-invalid",
        "signature.file",
        "sig with a character outside base64",
        {**good, "sig": "*" + good["sig"][1:]},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-short",
        "signature.file",
        "a 63-byte signature",
        {**good, "sig": base64.b64encode(base64.b64decode(good["sig"])[:63]).decode()},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-keyid-mismatch",
        "signature.file",
        "a keyid that does not name the public key",
        {**good, "keyid": sha(b"other")},
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-bom",
        "signature.file",
        "a signature file starting with a byte-order mark",
        b"\xef\xbb\xbf" + signature_json(good),
        ["signature.format"],
    )
    bad_signature(
        "reject-sig-too-large",
        "signature.file",
        "a signature file over 16 KiB",
        signature_json(good) + b" " * (16 << 10),
        ["signature.format"],
    )
    small = bytes([1]) + bytes(31)  # the neutral point: small order
    bad_signature(
        "reject-key-small-order",
        "signature.key",
        "a public key of small order (the neutral point)",
        {**good, "public_key": base64.b64encode(small).decode(), "keyid": sha(small)},
        ["key.weak"],
    )
    noncanon = (2**255 - 19 + 1).to_bytes(32, "little")  # y = p + 1, an encoding of y = 1
    bad_signature(
        "reject-key-noncanonical",
        "signature.key",
        "a public key whose y is not reduced",
        {**good, "public_key": base64.b64encode(noncanon).decode(), "keyid": sha(noncanon)},
        ["key.weak"],
    )
    off = (2).to_bytes(32, "little")  # y = 2 is not on the curve
    bad_signature(
        "reject-key-not-on-curve",
        "signature.key",
        "a public key that is not a curve point",
        {**good, "public_key": base64.b64encode(off).decode(), "keyid": sha(off)},
        ["key.weak"],
    )
    bad_signature(
        "reject-sig-payload-type",
        "signature.payload_type",
        "a signature over another payload type",
        signature_doc(ALICE, MANIFEST, "application/vnd.in-toto+json"),
        ["signature.payload_type"],
    )
    bad_signature(
        "reject-sig-other-manifest",
        "signature.bad",
        "a signature made for another manifest",
        signature_doc(ALICE, manifest(version="1.0.1")),
        ["signature.bad"],
    )
    raw_sig = base64.b64decode(good["sig"])
    s_plus_l = (
        int.from_bytes(raw_sig[32:], "little") + 2**252 + 27742317777372353535851937790883648493
    ).to_bytes(32, "little")
    bad_signature(
        "reject-sig-s-not-reduced",
        "signature.bad",
        "a signature whose S is not reduced (S + L)",
        {**good, "sig": base64.b64encode(raw_sig[:32] + s_plus_l).decode()},
        ["signature.bad"],
    )
    no_pae = base64.b64encode(ALICE.sign(MANIFEST)).decode()
    bad_signature(
        "reject-sig-without-pae",
        "signature.bad",
        "a signature over the bare manifest, not its DSSE PAE",
        {**good, "sig": no_pae},
        ["signature.bad"],
        trust=["alice"],
    )
    twice = signed_with(
        (sig_name, signature_json(good)), ("signatures/again.json", signature_json(good))
    )
    simple(
        "reject-sig-duplicate-key",
        "signature.duplicate",
        "two signature files by one key",
        twice["data"],
        ["signature.duplicate"],
    )
    simple(
        "reject-unsigned-trust-given",
        "signature.required",
        "an unsigned bundle while a key is trusted",
        gz(plain_bundle()),
        ["signature.required"],
        trust=["alice"],
    )
    simple(
        "reject-signed-by-other-key",
        "signature.required",
        "signed by bob while only alice is trusted",
        gz(plain_bundle(signatures=[signature(BOB)])),
        ["signature.required"],
        trust=["alice"],
    )
    simple(
        "reject-identity-mismatch",
        "identity.pin",
        "an identity pin naming another manifest",
        gz(plain_bundle()),
        ["identity.mismatch"],
        identity="sha256:" + sha(b"another manifest"),
    )
    tampered = MANIFEST.replace(b"keeps the rule", b"keeps the rules")
    simple(
        "reject-manifest-altered-after-signing",
        "signature.bad",
        "a manifest changed after alice signed it",
        gz(plain_bundle(manifest_bytes=tampered, signatures=[(sig_name, signature_json(good))])),
        ["signature.bad"],
        trust=["alice"],
    )
    _folding_and_edges(good)
    _redacted(good)
    _found_by_differential_fuzzing()


def _folding_and_edges(good: dict[str, str]) -> None:
    """Rules where two implementations most easily part: folding, odd encodings, edges."""
    m = bundle_members()
    ligature = {**FILES, "inputs/\ufb01le.txt": b"x", "inputs/file.txt": b"y"}
    simple(
        "reject-path-ligature-folded",
        "manifest.paths",
        "two listed paths equal after NFKD and case folding (the fi ligature, fi)",
        with_manifest(manifest(files=files_toml(ligature)), ligature),
        ["manifest.path.duplicate"],
    )
    sigma = {**FILES, "inputs/\u03bf\u03c2.txt": b"x", "inputs/\u039f\u03a3.txt": b"y"}
    simple(
        "reject-path-final-sigma-folded",
        "manifest.paths",
        "two listed paths equal after case folding (final sigma, capital sigma)",
        with_manifest(manifest(files=files_toml(sigma)), sigma),
        ["manifest.path.duplicate"],
    )
    simple(
        "reject-member-ligature-folded",
        "member.unique",
        "a member equal to a listed name after folding (the fi ligature)",
        gz(
            tar(
                *m,
                member(f"{TOP}/inputs/\ufb01le.txt", b"x"),
                member(f"{TOP}/inputs/b.\ufb01le", b"y"),
                member(f"{TOP}/inputs/B.FILE", b"z"),
            )
        ),
        ["member.duplicate", "member.unlisted"],
    )
    simple(
        "reject-name-not-utf8",
        "member.name",
        "a member name whose bytes are not UTF-8",
        gz(tar(*m, member(f"{TOP}/inputs/".encode() + b"\xff.txt", b"x"))),
        ["member.name"],
    )
    raw = plain_bundle()
    named = bytearray(gz(raw))
    named[3] |= 0x08  # FNAME: a file name follows the header
    simple(
        "accept-gzip-with-name",
        "archive.compression",
        "a gzip header that carries a file name (read; bundles are written without one)",
        bytes(named[:10]) + b"conf.tar\x00" + bytes(named[10:]),
    )
    simple(
        "accept-extra-zero-blocks",
        "tar.zero_padding",
        "more zero blocks after the end-of-archive marker than a record needs",
        gz(raw + bytes(40 * BLOCK)),
    )
    simple(
        "reject-unlisted-and-size",
        "integrity.every_problem",
        "an unlisted file and a file of the wrong size: both reported",
        gz(
            tar(
                m[0],
                member(f"{TOP}/inputs/a.json", A_JSON + b"  "),
                m[2],
                member(f"{TOP}/z.txt", b"z"),
            )
        ),
        ["member.size", "member.unlisted"],
    )
    simple(
        "reject-newer-minor-still-checks-types",
        "manifest.schema",
        "a newer minor version ignores unknown keys, not a known key of the wrong type",
        with_manifest(
            manifest(fmt="reprobundle/1.9", name="conf", extra="future = 1\n").replace(
                b'title = "A conformance vector"', b"title = 7"
            )
        ),
        ["manifest.schema"],
    )
    tree = CASES.replace('candidate = "inputs/a.json"', 'candidate = "inputs"')
    simple(
        "accept-input-folder",
        "manifest.references",
        "a case input that names a folder of listed files",
        with_manifest(manifest(cases=tree)),
    )
    sign_bit = bytes([1]) + bytes(30) + bytes([0x80])  # y = 1, x = 0 with the sign bit set
    data = signature_json(
        {**good, "public_key": base64.b64encode(sign_bit).decode(), "keyid": sha(sign_bit)}
    )
    simple(
        "reject-key-negative-zero",
        "signature.key",
        "a public key encoding x = 0 with the sign bit set",
        gz(plain_bundle(signatures=[(signature(ALICE)[0], data)])),
        ["key.weak"],
    )
    bomb = {**FILES, "inputs/zeros.bin": bytes(100 << 20)}
    simple(
        "reject-compression-bomb",
        "limits",
        "100 MiB of zeros in a few KiB: past the 200:1 ratio once past 64 MiB",
        zst_compressed(plain_bundle(manifest_bytes=manifest(files=files_toml(bomb)), files=bomb)),
        ["limit.ratio"],
        suffix=".bundle.tar.zst",
    )
    simple(
        "reject-bad-name-before-manifest",
        "member.name",
        "a member with an absolute name before the manifest: skipped and reported, the "
        "manifest is then the first member",
        gz(tar(member("/etc/x", b"x"), *m)),
        ["member.name"],
    )
    unsigned = gz(plain_bundle())
    for name, description, data, codes, trust in (
        (
            "accept-detached-trusted",
            "a detached signature by alice, alice trusted",
            signature_json(good),
            [],
            ["alice"],
        ),
        (
            "reject-detached-other-bundle",
            "a detached signature made for another bundle's manifest",
            signature_json(signature_doc(ALICE, manifest(version="2.0.0"))),
            ["signature.bad"],
            [],
        ),
        (
            "reject-detached-malformed",
            "a detached signature file that is not a signature object",
            b'{"sig": "x"}',
            ["signature.format"],
            [],
        ),
        (
            "reject-detached-required",
            "a detached signature by bob while alice is trusted",
            signature_json(signature_doc(BOB, MANIFEST)),
            ["signature.required"],
            ["alice"],
        ),
    ):
        VECTORS.append(
            Vector(
                name, "signature.detached", description, unsigned, codes, trust=trust, detached=data
            )
        )
    VECTORS.append(
        Vector(
            "reject-detached-and-embedded-by-one-key",
            "signature.duplicate",
            "alice's signature embedded and again detached",
            gz(plain_bundle(signatures=[(signature(ALICE)[0], signature_json(good))])),
            ["signature.duplicate"],
            detached=signature_json(good),
        )
    )
    simple(
        "reject-sig-unicode-escape-key",
        "signature.file",
        "a key spelt with a JSON escape, given twice (format and \\u0066ormat)",
        gz(
            plain_bundle(
                signatures=[
                    (
                        signature(ALICE)[0],
                        signature_json(good).replace(
                            b'"format"', b'"\\u0066ormat": "x",\n  "format"', 1
                        ),
                    )
                ]
            )
        ),
        ["signature.format"],
    )


# -- redacted bundles (FORMAT.md, "Redacted bundles") ---------------------------------------

WITHHELD_ENTRY = {"path": "inputs/a.json", "reason": "customer data", "sha256": sha(A_JSON)}


def withheld_json(entries: list[dict[str, Any]] | None = None, fmt: str = "") -> bytes:
    if entries is None:
        entries = [{**WITHHELD_ENTRY, "size": len(A_JSON)}]
    doc = {"format": fmt or "reprobundle-withheld/1", "files": entries}
    return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode()


def redacted(
    record: bytes | None = None,
    *,
    signatures: list[tuple[str, bytes]] = (),  # type: ignore[assignment]
    keep: tuple[str, ...] = (),
    record_last: bool = False,
) -> bytes:
    """The tar of the conformance bundle with inputs/a.json withheld: the manifest, the
    signatures, the record, then the payload left (``keep``: withheld files left in)."""
    members = bundle_members(signatures=signatures)
    head, payload = members[: 1 + len(signatures)], members[1 + len(signatures) :]
    payload = [
        m
        for m, path in zip(payload, sorted(FILES), strict=True)
        if path != "inputs/a.json" or path in keep
    ]
    record_member = member(f"{TOP}/withheld.json", withheld_json() if record is None else record)
    if record_last:
        return tar(*head, *payload, record_member)
    return tar(*head, record_member, *payload)


def _redacted(good: dict[str, str]) -> None:
    """The withheld record: read strictly, bound by the manifest; the first problem's code."""
    sig = (signature(ALICE)[0], signature_json(good))
    simple(
        "accept-redacted",
        "withheld.record",
        "inputs/a.json withheld, named with the manifest's digest and size and a reason",
        gz(redacted()),
    )
    simple(
        "accept-redacted-signed-trusted",
        "withheld.record",
        "a redacted bundle keeps its signature (the manifest is unchanged), alice trusted",
        zst_compressed(redacted(signatures=[sig])),
        trust=["alice"],
        suffix=".bundle.tar.zst",
    )
    entry = {**WITHHELD_ENTRY, "size": len(A_JSON)}
    for name, description, record, codes in (
        (
            "reject-withheld-bom",
            "a record that starts with a UTF-8 byte-order mark",
            b"\xef\xbb\xbf" + withheld_json(),
            ["withheld.format"],
        ),
        (
            "reject-withheld-utf16",
            "a record in UTF-16 (JSON readers that guess encodings read it)",
            withheld_json().decode().encode("utf-16"),
            ["withheld.format"],
        ),
        (
            "reject-withheld-duplicate-key",
            "a record that gives a key twice",
            withheld_json().replace(b'"format"', b'"format": "x", "format"', 1),
            ["withheld.format"],
        ),
        (
            "reject-withheld-extra-key",
            "an entry with a key the format does not have",
            withheld_json([{**entry, "note": "x"}]),
            ["withheld.format"],
        ),
        (
            "reject-withheld-other-major",
            "a record of format reprobundle-withheld/2",
            withheld_json(fmt="reprobundle-withheld/2"),
            ["withheld.format"],
        ),
        (
            "reject-withheld-size-float",
            "a size written as a float (29.0)",
            withheld_json().replace(b'"size": 29', b'"size": 29.0'),
            ["withheld.format"],
        ),
        (
            "reject-withheld-reason-blank",
            "a reason of white space only (U+0085 and U+001C are white space)",
            withheld_json([{**entry, "reason": " \u0085\u001c\t"}]),
            ["withheld.format"],
        ),
        (
            "reject-withheld-size-beyond-64-bits",
            "a size of 2**63: not a size",
            withheld_json([{**entry, "size": 1 << 63}]),
            ["withheld.format"],
        ),
        (
            "reject-withheld-size-of-5000-digits",
            "a size of 5000 digits: not a size",
            withheld_json().replace(b'"size": 29', b'"size": ' + b"9" * 5000),
            ["withheld.format"],
        ),
        (
            "reject-withheld-digest",
            "an entry whose digest is not the manifest's",
            withheld_json([{**entry, "sha256": sha(b"other")}]),
            ["withheld.digest"],
        ),
        (
            "reject-withheld-unlisted",
            "an entry naming a path the manifest does not list",
            withheld_json([{**entry, "path": "inputs/A.json"}]),
            ["withheld.unlisted"],
        ),
        (
            "reject-withheld-unread",
            "withholding a file no case reads",
            withheld_json([{**entry, "path": "inputs/b.txt", "sha256": sha(B_TXT), "size": 19}]),
            ["withheld.unread"],
        ),
        (
            "reject-withheld-reserved",
            "withholding the manifest",
            withheld_json([{**entry, "path": "manifest.toml"}]),
            ["withheld.reserved"],
        ),
        (
            "reject-withheld-twice",
            "one file withheld twice",
            withheld_json([entry, entry]),
            ["withheld.duplicate"],
        ),
        (
            "reject-withheld-first-problem-code",
            "two problems: the code of the first (a digest, then an unread file)",
            withheld_json(
                [
                    {**entry, "size": 30},
                    {**entry, "path": "inputs/b.txt", "sha256": sha(B_TXT), "size": 19},
                ]
            ),
            ["withheld.digest"],
        ),
    ):
        simple(name, "withheld.record", description, gz(redacted(record)), codes)
    simple(
        "reject-withheld-present",
        "withheld.record",
        "a file the record withholds is in the archive too",
        gz(redacted(keep=("inputs/a.json",))),
        ["withheld.present"],
    )
    simple(
        "reject-withheld-after-payload",
        "withheld.record",
        "the record after the first payload member",
        gz(redacted(record_last=True)),
        ["archive.layout"],
    )
    simple(
        "reject-withheld-missing-without-record",
        "withheld.record",
        "a listed file absent with no record naming it: tampering, as before",
        gz(tar(*[m for m in bundle_members() if b"inputs/a.json" not in m[:100]])),
        ["file.missing"],
    )
    bad = (sig[0], signature_json({**good, "sig": signature_doc(BOB, MANIFEST)["sig"]}))
    simple(
        "reject-withheld-before-signatures",
        "withheld.record",
        "a bad record and a bad signature: the record is read before the signatures are "
        "judged, so only its problem is reported",
        gz(redacted(withheld_json([{**entry, "size": 1}]), signatures=[bad])),
        ["withheld.digest"],
    )


def _found_by_differential_fuzzing() -> None:
    """Classes of bundles on which the two verifiers once disagreed (tests/format/mutants.py):
    each rule, kept or broken."""
    raw = plain_bundle()
    body = gz(raw)[10:]
    head = bytes([0x1F, 0x8B, 8, 0x02, 0, 0, 0, 0, 0, 3])
    crc = zlib.crc32(head) & 0xFFFF
    simple(
        "accept-gzip-header-crc",
        "archive.compression",
        "a gzip header with FHCRC and its right CRC-16",
        head + crc.to_bytes(2, "little") + body,
    )
    simple(
        "reject-gzip-header-crc-wrong",
        "archive.compression",
        "a gzip header with FHCRC and a wrong CRC-16",
        head + (crc ^ 0x0101).to_bytes(2, "little") + body,
        ["archive.corrupt"],
    )
    import zstandard

    frame = bytearray(zstandard.ZstdCompressor(level=3, write_checksum=False).compress(raw))
    assert frame[4] == 0x60  # a single segment, a 2-byte content size (less 256), no checksum
    frame[5:7] = (len(raw) - 256 - BLOCK).to_bytes(2, "little")
    simple(
        "reject-zstd-content-size-smaller",
        "archive.compression",
        "a zstd frame (no checksum) whose content size says 512 bytes fewer than it holds: "
        "a decoder that sizes its output by it must not drop the rest",
        bytes(frame),
        ["archive.corrupt"],
        suffix=".bundle.tar.zst",
    )
    simple(
        "reject-limit-before-signatures",
        "limits",
        "the first payload member passes a limit while a trusted key signed nothing: the "
        "limit is judged on its header before the signatures",
        gz(plain_bundle()),
        ["limit.file_size"],
        trust=["alice"],
        limits={"file_bytes": 28},
    )
    m = bundle_members()
    simple(
        "reject-pax-path-with-nul",
        "tar.pax",
        "a pax path record whose value holds a NUL after a listed name: read whole, the "
        "name breaks the path rules",
        gz(tar(m[0], m[1], pax(pax_record("path", f"{TOP}/inputs/b.txt".encode() + b"\0x")), m[2])),
        ["file.missing", "member.name"],
    )
    simple(
        "reject-pax-size-with-nul",
        "tar.pax",
        "a pax size record whose value holds a NUL after its digits",
        gz(tar(m[0], m[1], pax(pax_record("size", b"19\0")), m[2])),
        ["archive.corrupt"],
    )
    simple(
        "reject-format-not-a-string",
        "manifest.format",
        "format = 1 (an integer)",
        with_manifest(MANIFEST.replace(b'format = "reprobundle/1"', b"format = 1")),
        ["manifest.format"],
    )
    dotless = {**FILES, "inputs/\u0131.txt": b"x", "inputs/i.txt": b"y"}
    simple(
        "accept-path-dotless-i-not-folded",
        "manifest.paths",
        "inputs/\u0131.txt and inputs/i.txt: the dotless i has no case folding (its upper "
        "case is I, but folding is not upper then lower case)",
        with_manifest(manifest(files=files_toml(dotless)), dotless),
    )
    for name, description, old, new in (
        (
            "reject-toml-inline-table-trailing-comma",
            "an inline table with a trailing comma (TOML 1.1, not 1.0)",
            b"[cases.params]\n",
            b"params = {a = 1,}\n",
        ),
        (
            "reject-toml-inline-table-newline",
            "an inline table over two lines (TOML 1.1, not 1.0)",
            b"[cases.params]\n",
            b"params = {a = 1,\nb = 2}\n",
        ),
        (
            "reject-toml-escape-e",
            "the escape \\e in a string (TOML 1.1, not 1.0)",
            b'title = "A conformance vector"',
            b'title = "A conformance vector\\e"',
        ),
        (
            "reject-toml-time-without-seconds",
            "a time without seconds (TOML 1.1, not 1.0)",
            b"[environment.libraries]\n",
            b"[environment.libraries]\nwhen = 07:32\n",
        ),
        (
            "reject-toml-integer-beyond-64-bits",
            "2**63 as source_date_epoch: TOML 1.0's integers are 64-bit",
            b"source_date_epoch = 0",
            b"source_date_epoch = 9223372036854775808",
        ),
        (
            "reject-toml-integer-of-5000-digits",
            "an integer of 5000 digits (past Python's 4300-digit conversion limit too)",
            b"source_date_epoch = 0",
            b"source_date_epoch = " + b"1" * 5000,
        ),
        (
            "reject-toml-date-that-does-not-exist",
            "February 30th: not a date, so not TOML (a real date would be manifest.type)",
            b"[environment.libraries]\n",
            b"[environment.libraries]\nwhen = 1979-02-30\n",
        ),
    ):
        simple(
            name,
            "manifest.toml",
            description,
            with_manifest(MANIFEST.replace(old, new, 1)),
            ["manifest.toml"],
        )
    sharp = {**FILES, "inputs/\u1e9e.txt": b"x", "inputs/ss.txt": b"y"}
    simple(
        "reject-path-capital-sharp-s-folded",
        "manifest.paths",
        "inputs/\u1e9e.txt and inputs/ss.txt: capital sharp s folds to ss",
        with_manifest(manifest(files=files_toml(sharp)), sharp),
        ["manifest.path.duplicate"],
    )


def _gnu(members: list[bytes]) -> list[bytes]:
    """Members with GNU's magic and version (``ustar  \\0``), checksums made again."""
    out = []
    for m in members:
        block = bytearray(m[:BLOCK])
        block[257:265] = b"ustar  \x00"
        block[148:156] = b" " * 8
        block[148:156] = b"%06o\0 " % sum(block)
        out.append(bytes(block) + m[BLOCK:])
    return out


def write(folder: Path) -> list[dict[str, Any]]:
    """Write every vector, the keys and ``vectors.json`` into ``folder``."""
    VECTORS.clear()
    _all()
    names = [v.name for v in VECTORS]
    assert len(names) == len(set(names)), "two vectors with one name"
    vectors = folder / "vectors"
    shutil.rmtree(vectors, ignore_errors=True)
    vectors.mkdir(parents=True)
    keys = folder / "keys"
    keys.mkdir(exist_ok=True)
    (keys / "alice.pub").write_text(
        "ed25519:" + base64.b64encode(raw_public(ALICE)).decode() + "\n"
    )
    (keys / "bob.pub").write_bytes(
        BOB.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    entries = []
    for v in VECTORS:
        (folder / v.entry()["file"]).write_bytes(v.data)
        if v.detached is not None:
            (folder / v.entry()["options"]["signatures"][0]).write_bytes(v.detached)
        entries.append(v.entry())
    index = {"format": FORMAT, "spec": "manifests/FORMAT.md", "vectors": entries}
    (folder / "vectors.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")
    return entries


if __name__ == "__main__":
    written = write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
    print(f"{len(written)} vectors written")
