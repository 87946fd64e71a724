"""Signatures over the exact manifest bytes: Ed25519 keys, DSSE encoding, signature files.

What is signed is DSSE's pre-authentication encoding (PAE) of the **exact** bytes of
``manifest.toml`` under an application-specific payload type, so a signature can never be
replayed as a signature over anything else, and a verifier never re-serialises the
manifest. The manifest lists every file with its SHA-256, so it covers the whole bundle.

A signature file (``signatures/<keyid>.json`` inside the bundle, or a detached
``BUNDLE.sig.json``) carries the signer's public key so that a verifier can tell a broken
signature from one by a key it does not know; that key is **never** trusted for being
there (trust lives on the reviewer's machine, see ``trust``). The key id is a hint only.

This module is pure: bytes in, values or ``BundleRejected`` out; key files are read and
written by the callers.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bundler.errors import Problem
from checkers import strictjson

PAYLOAD_TYPE = "application/vnd.reprobundle.manifest+toml; format=reprobundle/1"
SIGNATURE_FORMAT = "reprobundle-signature/1"
SIGNATURE_KEYS = ("format", "payload_type", "keyid", "public_key", "sig")
MAX_SIGNATURE_FILE = 16 << 10

# Ed25519 (RFC 8032): field prime, curve constant, group order.
_P = 2**255 - 19
_D = (-121665 * pow(121666, _P - 2, _P)) % _P
_L = 2**252 + 27742317777372353535851937790883648493
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


class SignatureProblem(Exception):
    """One thing wrong with a key or signature, as a stable code and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def problem(self, where: str) -> Problem:
        return Problem(where, self.code, self.message)


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def key_id(raw_public: bytes) -> str:
    """A short name for a public key: the SHA-256 of its 32 raw bytes (a hint, not trust)."""
    return hashlib.sha256(raw_public).hexdigest()


def weak_key_reason(raw: bytes) -> str | None:
    """Why 32 bytes are not a safe Ed25519 public key, or None.

    Refuses non-canonical encodings, bytes that are not a curve point, and points of small
    order (the all-zero key among them), for which forged signatures verify.
    """
    if len(raw) != 32:
        return f"an Ed25519 public key is 32 bytes, observed {len(raw)}"
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    sign = raw[31] >> 7
    if y >= _P:
        return "the key is not canonically encoded"
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x2 = u * pow(v, _P - 2, _P) % _P
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P:
        return "the key is not a point on the Ed25519 curve"
    if x == 0 and sign:
        return "the key is not canonically encoded"
    if x & 1 != sign:
        x = _P - x
    px, py = x, y
    for _ in range(3):  # multiply by the cofactor 8
        t = _D * px * px * py * py % _P
        px, py = (
            (2 * px * py) * pow(1 + t, _P - 2, _P) % _P,
            (py * py + px * px) * pow(1 - t, _P - 2, _P) % _P,
        )
    if px == 0 and py == 1:
        return "the key is a point of small order: any signature could be forged for it"
    return None


@dataclass(frozen=True)
class PublicKey:
    """A checked Ed25519 public key."""

    raw: bytes

    @property
    def keyid(self) -> str:
        return key_id(self.raw)

    @property
    def b64(self) -> str:
        return base64.b64encode(self.raw).decode("ascii")

    @classmethod
    def from_raw(cls, raw: bytes) -> PublicKey:
        why = weak_key_reason(raw)
        if why:
            raise SignatureProblem("key.weak", why)
        return cls(raw)

    @classmethod
    def from_text(cls, text: str) -> PublicKey:
        """A PEM ``PUBLIC KEY`` block, or ``ed25519:BASE64`` of the 32 raw bytes."""
        text = text.strip()
        if text.startswith("ed25519:"):
            return cls.from_raw(strict_b64(text[len("ed25519:") :], "the public key"))
        if not text.startswith("-----BEGIN PUBLIC KEY-----"):
            raise SignatureProblem(
                "key.format", "expected a PEM PUBLIC KEY block or 'ed25519:BASE64'"
            )
        try:
            loaded = serialization.load_pem_public_key(text.encode("ascii"))
        except (ValueError, UnsupportedAlgorithm, UnicodeEncodeError) as exc:
            raise SignatureProblem("key.format", f"not a readable public key: {exc}") from None
        if not isinstance(loaded, Ed25519PublicKey):
            raise SignatureProblem(
                "key.algorithm", f"only Ed25519 keys are accepted, observed {type(loaded).__name__}"
            )
        return cls.from_raw(
            loaded.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )

    def pem(self) -> str:
        key = Ed25519PublicKey.from_public_bytes(self.raw)
        return key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def verifies(self, message: bytes, sig: bytes) -> bool:
        if len(sig) != 64 or int.from_bytes(sig[32:], "little") >= _L:
            return False  # S must be reduced: no malleated twin of a valid signature
        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(sig, message)
        except InvalidSignature:
            return False
        return True


def strict_b64(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SignatureProblem("signature.format", f"{what} is not valid base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise SignatureProblem("signature.format", f"{what} is not canonical base64")
    return raw


# -- private keys -------------------------------------------------------------------------


def new_private_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_key_pem(key: Ed25519PrivateKey, passphrase: bytes | None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def private_key_is_encrypted(data: bytes) -> bool:
    return b"ENCRYPTED PRIVATE KEY" in data


def load_private_key(data: bytes, passphrase: bytes | None) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(data, password=passphrase or None)
    except TypeError:
        raise SignatureProblem(
            "key.passphrase", "the key is protected by a passphrase; give it"
        ) from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise SignatureProblem(
            "key.format", f"not a readable private key (or a wrong passphrase): {exc}"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureProblem(
            "key.algorithm", f"only Ed25519 keys are accepted, observed {type(key).__name__}"
        )
    return key


def public_of(key: Ed25519PrivateKey) -> PublicKey:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PublicKey.from_raw(raw)


# -- signature objects --------------------------------------------------------------------


@dataclass(frozen=True)
class Signature:
    """One parsed signature object (nothing about it is trusted yet)."""

    payload_type: str
    keyid: str
    public_key: PublicKey
    sig: bytes

    def to_bytes(self) -> bytes:
        doc = {
            "format": SIGNATURE_FORMAT,
            "payload_type": self.payload_type,
            "keyid": self.keyid,
            "public_key": self.public_key.b64,
            "sig": base64.b64encode(self.sig).decode("ascii"),
        }
        return (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode("utf-8")

    def verifies(self, manifest_bytes: bytes) -> bool:
        return self.payload_type == PAYLOAD_TYPE and self.public_key.verifies(
            pae(self.payload_type, manifest_bytes), self.sig
        )


def sign(manifest_bytes: bytes, key: Ed25519PrivateKey) -> Signature:
    """Sign the exact manifest bytes."""
    public = public_of(key)
    sig = key.sign(pae(PAYLOAD_TYPE, manifest_bytes))
    return Signature(PAYLOAD_TYPE, public.keyid, public, sig)


def parse_signature(data: bytes) -> Signature:
    """Read a signature file strictly. Raises ``SignatureProblem``."""
    if len(data) > MAX_SIGNATURE_FILE:
        raise SignatureProblem("signature.format", f"larger than {MAX_SIGNATURE_FILE} bytes")

    try:
        doc = strictjson.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SignatureProblem("signature.format", f"not a JSON signature object: {exc}") from None
    if not isinstance(doc, dict) or sorted(doc) != sorted(SIGNATURE_KEYS):
        keys = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise SignatureProblem(
            "signature.format", f"observed keys {keys}, expected {sorted(SIGNATURE_KEYS)}"
        )
    if not all(isinstance(doc[k], str) for k in SIGNATURE_KEYS):
        raise SignatureProblem("signature.format", "every field must be a string")
    if doc["format"] != SIGNATURE_FORMAT:
        raise SignatureProblem(
            "signature.format", f"format is {doc['format']!r}, expected {SIGNATURE_FORMAT!r}"
        )
    public = PublicKey.from_raw(strict_b64(doc["public_key"], "public_key"))
    sig = strict_b64(doc["sig"], "sig")
    if len(sig) != 64:
        raise SignatureProblem("signature.format", f"sig is {len(sig)} bytes, expected 64")
    if doc["keyid"] != public.keyid:
        raise SignatureProblem(
            "signature.format", "keyid does not name the public key the signature carries"
        )
    return Signature(doc["payload_type"], doc["keyid"], public, sig)
