"""Pre-registrations sealed and opened: a DSSE envelope holding the canonical bytes of a
pre-registration (``format.preregistration``), signed like a bundle (Ed25519) or not.

Opening checks the envelope, then the pre-registration's own rules, the bundle it names,
and says which of the reviewer's trusted keys signed it and count (the trust rule,
``trust.standing``: a revoked, expired or not yet valid key does not); a signature by a
trusted key that does not verify is refused as a bad signature. Whether an untrusted or
unsigned one is shown, and how, is the report's business: it is never shown as trusted.
``open_preregistration`` is the one opener: ``verify``, ``build`` and the archive use it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bundler.format import preregistration as model
from bundler.format.manifest import Manifest
from bundler.signatures.envelope import EnvelopeProblem, open_envelope, seal
from bundler.signatures.trust import TrustedKey, now


def seal_preregistration(doc: Mapping[str, Any], keys: Sequence[Ed25519PrivateKey]) -> bytes:
    return seal(model.canonical(doc), model.PAYLOAD_TYPE, keys)


@dataclass(frozen=True)
class Preregistration:
    """A pre-registration read strictly: its document, its cases and claims as a
    ``Manifest`` (no files), its identity, and who of the trusted keys signed it."""

    doc: dict[str, Any]
    view: Manifest
    identity: str
    signers: tuple[str, ...]  # key ids of the trusted keys that signed and count
    signatures: int
    names: tuple[str, ...] = ()  # those keys' names
    notes: tuple[str, ...] = ()  # why each other trusted key that signed does not count


def open_preregistration(
    data: bytes,
    trusted: Sequence[TrustedKey] = (),
    at: dt.datetime | None = None,
    name: str | None = None,
) -> Preregistration:
    """Raises ``EnvelopeProblem`` (``preregistration.*`` codes) naming what is wrong; with
    ``name``, a pre-registration of another bundle name is refused
    (``preregistration.other_bundle``). ``at``: when its signatures are judged (now)."""
    opened = open_envelope(data, model.PAYLOAD_TYPE, trusted, "preregistration", at or now())
    try:
        doc, view = model.parse(opened.payload)
    except ValueError as exc:
        raise EnvelopeProblem("preregistration.format", str(exc)) from None
    if name is not None and view.name != name:
        raise EnvelopeProblem(
            "preregistration.other_bundle",
            f"it pre-registers bundle {view.name!r}, not {name!r}",
        )
    judged = opened.judged
    return Preregistration(
        doc,
        view,
        model.identity(doc),
        opened.signers,
        opened.signatures,
        judged.names,
        judged.notes,
    )
