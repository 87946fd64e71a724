"""DSSE envelopes: a payload of a stated type, signed with Ed25519 over DSSE's
pre-authentication encoding, as JSON (``payloadType``, base64 ``payload``, ``signatures``).

Attestations of a verification and pre-registrations travel in them: one reader and one
writer for both, so that the strict rules (size, depth, duplicate keys, canonical base64,
the payload type) are written once. Which signatures count is the caller's decision: the
reader sorts the trusted keys whose signature verifies by the trust rule
(``trust.signed_by``), and a signature that names a trusted key but does not verify is a bad
signature (the envelope was altered), never "signed by a key you do not trust". Pure: bytes,
keys and the time in; values or ``EnvelopeProblem`` out.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bundler.signatures.signing import SignatureProblem, pae, public_of, strict_b64
from bundler.signatures.trust import Signers, TrustedKey, signed_by
from checkers import strictjson

MAX_ENVELOPE = 8 << 20
# each kind of envelope's codes, by what they name: bad JSON or shape, too large, the
# wrong payload type
_CODES = {
    "attestation": {
        "attestation.format": "bad",
        "attestation.too_large": "large",
        "attestation.payload_type": "type",
        "attestation.bad_signature": "altered",
    },
    "preregistration": {
        "preregistration.format": "bad",
        "preregistration.too_large": "large",
        "preregistration.payload_type": "type",
        "preregistration.bad_signature": "altered",
    },
}


def _codes(kind: str) -> tuple[str, str, str]:
    """(bad, too large, wrong payload type) for ``kind``."""
    by_role = {role: code for code, role in _CODES[kind].items()}
    return by_role["bad"], by_role["large"], by_role["type"]


def _altered(kind: str) -> str:
    return next(code for code, role in _CODES[kind].items() if role == "altered")


MAX_VALUES = 1_000_000
MAX_DEPTH = 32


class EnvelopeProblem(Exception):
    """One thing wrong with an envelope or its payload: a stable code and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def require(condition: bool, code: str, message: str) -> None:
    if not condition:
        raise EnvelopeProblem(code, message)


def load_json(data: bytes, what: str, kind: str, max_bytes: int = MAX_ENVELOPE) -> Any:
    """Strict JSON (no duplicate keys, NaN, deep nesting or huge documents), refused as
    ``{kind}.too_large`` or ``{kind}.format``."""
    bad, large, _ = _codes(kind)
    require(len(data) <= max_bytes, large, f"{what} is larger than {max_bytes} bytes")
    try:
        return strictjson.loads(data.decode("utf-8"), max_depth=MAX_DEPTH, max_values=MAX_VALUES)
    except (UnicodeDecodeError, ValueError) as exc:
        raise EnvelopeProblem(bad, f"{what} is not strict JSON: {exc}") from None


def seal(payload: bytes, payload_type: str, keys: Sequence[Ed25519PrivateKey]) -> bytes:
    """``payload`` in a DSSE envelope signed by each of ``keys`` (none: unsigned)."""
    signatures = []
    for key in keys:
        sig = key.sign(pae(payload_type, payload))
        signatures.append(
            {"keyid": public_of(key).keyid, "sig": base64.b64encode(sig).decode("ascii")}
        )
    doc = {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": signatures,
    }
    return (json.dumps(doc, indent=2) + "\n").encode("utf-8")


@dataclass(frozen=True)
class Opened:
    """An envelope's payload, and what its signatures amount to under the trust rule."""

    payload: bytes
    judged: Signers  # the trusted keys whose signature verifies: counted or refused (why)
    signatures: int  # how many signatures the envelope holds

    @property
    def signers(self) -> tuple[str, ...]:
        """Key ids of the trusted keys that signed and count."""
        return self.judged.keyids


def open_envelope(
    data: bytes,
    payload_type: str,
    trusted: Sequence[TrustedKey],
    kind: str,
    at: dt.datetime,
) -> Opened:
    """Read a DSSE envelope strictly and judge its signatures against ``trusted`` at
    ``at``. ``kind`` (attestation, preregistration) names the codes: ``_CODES``. A
    signature whose key id names a trusted key (counting or not) and that verifies under
    none is refused as ``{kind}.bad_signature``."""
    bad, _, wrong_type = _codes(kind)
    doc = load_json(data, "the envelope", kind)
    require(isinstance(doc, dict), bad, "the envelope is not a JSON object")
    expected = {"payload", "payloadType", "signatures"}
    require(
        set(doc) == expected,
        bad,
        f"the envelope has keys {sorted(doc)}, expected {sorted(expected)}",
    )
    require(
        doc["payloadType"] == payload_type,
        wrong_type,
        f"payloadType is {str(doc['payloadType'])[:80]!r}, expected {payload_type!r}",
    )
    require(
        isinstance(doc["payload"], str) and isinstance(doc["signatures"], list),
        bad,
        "payload must be a string and signatures a list",
    )
    payload = _b64(doc["payload"], "payload", kind)
    message = pae(payload_type, payload)
    by_id = {k.key.keyid: k for k in trusted}
    found: dict[str, TrustedKey] = {}
    for item in doc["signatures"]:
        require(
            isinstance(item, dict)
            and isinstance(item.get("sig"), str)
            and isinstance(item.get("keyid", ""), str)
            and set(item) <= {"sig", "keyid"},
            bad,
            "each signature is an object with a string sig (and keyid)",
        )
        sig = _b64(item["sig"], "sig", kind)
        named = by_id.get(item.get("keyid", ""))
        if named is not None:  # checked with the key it names, which must verify it
            if not named.key.verifies(message, sig):
                raise EnvelopeProblem(
                    _altered(kind),
                    f"the signature by trusted key {named.name!r} ({named.key.keyid[:16]}) "
                    f"does not verify: the {kind} or its signature was altered after it was "
                    "signed",
                )
            verified = [named]
        else:  # no key id, or one no trusted key has: any trusted key that verifies it
            verified = [k for k in trusted if k.key.verifies(message, sig)]
        for key in verified:
            found.setdefault(key.key.keyid, key)
    return Opened(payload, signed_by(found.values(), at, kind), len(doc["signatures"]))


def _b64(text: str, what: str, kind: str) -> bytes:
    try:
        return strict_b64(text, what)
    except SignatureProblem as exc:
        raise EnvelopeProblem(_codes(kind)[0], exc.message) from None
