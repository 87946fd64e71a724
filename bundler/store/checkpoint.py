"""Signed checkpoints of the audit log, and the archive's Ed25519 key.

A checkpoint says "this archive's log had SIZE records and its head hash was HEAD at
AT", signed by the archive key. Kept somewhere the archive's writers cannot reach
(another machine, a report's appendix, a ticket), it lets anyone show later that the
log was not truncated or rewritten since. The signature shows which archive issued
it; the protection comes from the head hash being kept elsewhere.

The signing here is Ed25519 from ``cryptography``, used directly through ``sign`` and
``verify_signature``, so the archive does not depend on how bundle signatures are made.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bundler.errors import Problem
from bundler.store.auditlog import canonical
from bundler.store.errors import ArchiveError, ArchiveTampered
from bundler.store.objects import Unreadable, read_regular
from checkers import strictjson

CHECKPOINT_FORMAT = "reprobundle-archive-checkpoint/1"
# Signed bytes start with this, so a checkpoint signature can never be replayed as
# a signature over anything else.
DOMAIN = b"reprobundle archive checkpoint v1\n"
# A checkpoint is a few hundred bytes, a PEM Ed25519 key about a hundred: larger files
# are not read.
MAX_FILE_BYTES = 64 * 1024


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def generate_key(private_path: Path) -> Ed25519PublicKey:
    """Create the archive key, readable by its owner only."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
        out.flush()
        os.fsync(out.fileno())
    public = key.public_key()
    private_path.with_suffix(".pub").write_bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return public


def load_private(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(read_regular(path, MAX_FILE_BYTES), password=None)
    except Unreadable as exc:
        if exc.missing:
            raise ArchiveError(
                f"the archive key {path} is missing; no checkpoint can be signed"
            ) from None
        raise ArchiveError(f"the archive key {exc.why}") from None
    except (ValueError, TypeError) as exc:
        raise ArchiveError(f"the archive key {path} cannot be read: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ArchiveError(f"the archive key {path} is not an Ed25519 key")
    return key


def load_public(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(read_regular(path, MAX_FILE_BYTES))
    except Unreadable as exc:
        if exc.missing:
            raise ArchiveError(f"the archive public key {path} is missing") from None
        # an older archive keeps keys/ private to its operator (0700)
        raise ArchiveError(
            f"cannot read the archive public key: {exc.why}; let auditors read it "
            f"(chmod 755 {path.parent}: the private key stays 0600)"
        ) from None
    except (ValueError, TypeError) as exc:
        raise ArchiveError(f"the public key {path} cannot be read: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ArchiveError(f"the public key {path} is not an Ed25519 key")
    return key


def sign(key: Ed25519PrivateKey, body: dict[str, Any]) -> bytes:
    return key.sign(DOMAIN + canonical(body))


def verify_signature(public: Ed25519PublicKey, body: dict[str, Any], signature: bytes) -> bool:
    try:
        public.verify(signature, DOMAIN + canonical(body))
    except InvalidSignature:
        return False
    return True


@dataclass(frozen=True)
class Checkpoint:
    archive: str
    size: int
    head: str
    at: str
    key: str  # key id: SHA-256 of the raw public key
    signature: bytes

    def body(self) -> dict[str, Any]:
        return {
            "format": CHECKPOINT_FORMAT,
            "archive": self.archive,
            "size": self.size,
            "head": self.head,
            "at": self.at,
            "key": self.key,
        }

    def to_json(self) -> str:
        document = {
            "checkpoint": self.body(),
            "signature": base64.b64encode(self.signature).decode("ascii"),
        }
        return json.dumps(document, indent=2, sort_keys=True, allow_nan=False) + "\n"


def issue(key: Ed25519PrivateKey, archive: str, size: int, head: str, at: str) -> Checkpoint:
    unsigned = Checkpoint(archive, size, head, at, key_id(key.public_key()), b"")
    return Checkpoint(archive, size, head, at, unsigned.key, sign(key, unsigned.body()))


def parse(text: bytes, where: str) -> Checkpoint:
    """Parse a checkpoint strictly (``strictjson``: bounded depth, no duplicate keys, no
    NaN). Raises ``ArchiveTampered`` naming what is wrong."""

    def bad(message: str) -> ArchiveTampered:
        return ArchiveTampered(
            f"{where} is not a valid checkpoint", [Problem(where, "checkpoint.format", message)]
        )

    try:
        document = strictjson.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(f"not JSON ({exc})") from None
    if not isinstance(document, dict) or set(document) != {"checkpoint", "signature"}:
        raise bad("expected an object with exactly 'checkpoint' and 'signature'")
    body, signature = document["checkpoint"], document["signature"]
    expected = {"format", "archive", "size", "head", "at", "key"}
    if not isinstance(body, dict) or set(body) != expected:
        raise bad(f"'checkpoint' must have exactly the keys {sorted(expected)}")
    if body["format"] != CHECKPOINT_FORMAT:
        raise bad(f"format is {body['format']!r}, expected {CHECKPOINT_FORMAT!r}")
    size = body["size"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise bad(f"size must be a non-negative integer, observed {size!r}")
    for field in ("archive", "head", "at", "key"):
        if not isinstance(body[field], str):
            raise bad(f"{field} must be a string")
    if not isinstance(signature, str):
        raise bad("signature must be base64 text")
    try:
        raw = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        raise bad("signature is not valid base64") from None
    return Checkpoint(body["archive"], size, body["head"], body["at"], body["key"], raw)


def check(
    checkpoint: Checkpoint, public: Ed25519PublicKey, archive: str, where: str
) -> list[Problem]:
    """Was ``checkpoint`` issued by this archive, under its key, unaltered?"""
    problems = []
    if checkpoint.archive != archive:
        problems.append(
            Problem(
                where,
                "checkpoint.archive",
                f"was issued by archive {checkpoint.archive}, this archive is {archive}",
            )
        )
    if checkpoint.key != key_id(public):
        problems.append(
            Problem(
                where,
                "checkpoint.key",
                f"names key {checkpoint.key}, the archive key is {key_id(public)} "
                "(the archive key was replaced, or the checkpoint is from elsewhere)",
            )
        )
    elif not verify_signature(public, checkpoint.body(), checkpoint.signature):
        problems.append(
            Problem(
                where,
                "checkpoint.signature",
                "the signature does not match the checkpoint (it was altered after signing)",
            )
        )
    return problems
