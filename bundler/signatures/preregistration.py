"""Pre-registrations sealed and opened: a DSSE envelope holding the canonical bytes of a
pre-registration (``format.preregistration``), signed like a bundle (Ed25519) or not.

Opening checks the envelope, then the pre-registration's own rules, and says which of
the reviewer's trusted keys signed it; whether an untrusted or unsigned one is shown, and
how, is the report's business: it is never shown as trusted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bundler.format import preregistration as model
from bundler.format.manifest import Manifest
from bundler.signatures.envelope import EnvelopeProblem, open_envelope, seal
from bundler.signatures.signing import PublicKey


def seal_preregistration(doc: Mapping[str, Any], keys: Sequence[Ed25519PrivateKey]) -> bytes:
    return seal(model.canonical(doc), model.PAYLOAD_TYPE, keys)


@dataclass(frozen=True)
class Preregistration:
    """A pre-registration read strictly: its document, its cases and claims as a
    ``Manifest`` (no files), its identity, and who of the trusted keys signed it."""

    doc: dict[str, Any]
    view: Manifest
    identity: str
    signers: tuple[str, ...]
    signatures: int


def open_preregistration(data: bytes, trusted: Sequence[PublicKey]) -> Preregistration:
    """Raises ``EnvelopeProblem`` (``preregistration.*`` codes) naming what is wrong."""
    opened = open_envelope(data, model.PAYLOAD_TYPE, trusted, "preregistration")
    try:
        doc, view = model.parse(opened.payload)
    except ValueError as exc:
        raise EnvelopeProblem("preregistration.format", str(exc)) from None
    return Preregistration(doc, view, model.identity(doc), opened.signers, opened.signatures)
