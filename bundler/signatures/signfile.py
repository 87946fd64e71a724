"""Sign a bundle file: embed a signature after the manifest, or write it beside the file.

The manifest bytes are never touched, so the bundle's identity stays the same; the
embedded form rewrites the archive with one more member (``signatures/<keyid>.json``,
right after the manifest and any earlier signatures), deterministically, and atomically.
The bundle is read strictly first: a bundle that does not verify is not signed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bundler.container.extract import Extracted, Limits, extract
from bundler.container.pack import bundle_members, write_tar
from bundler.errors import UsageError
from bundler.format.manifest import SIGNATURES_DIR
from bundler.output import staged, write_bytes
from bundler.signatures.signing import Signature, sign
from bundler.signatures.trust import DETACHED_SUFFIX, Policy, check_signatures


def _read(bundle: Path, work: Path, limits: Limits | None) -> Extracted:
    def existing(manifest_bytes: bytes, identity: str, found: dict[str, bytes]) -> None:
        check_signatures(manifest_bytes, identity, found, Policy())  # a bad one rejects

    return extract(bundle, work, limits, existing)


def sign_bundle(
    bundle: Path,
    key: Ed25519PrivateKey,
    out: Path | None = None,
    detached: bool = False,
    limits: Limits | None = None,
) -> tuple[Path, Signature]:
    """Sign ``bundle``; returns the file written and the signature."""
    bundle = Path(bundle).absolute()
    out = Path(out) if out is not None else None
    with tempfile.TemporaryDirectory(prefix="reprobundle-sign-") as work:
        extracted = _read(bundle, Path(work), limits)
        signature = sign(extracted.manifest_bytes, key)
        if detached:
            target = (out or bundle.with_name(bundle.name + DETACHED_SUFFIX)).absolute()
            write_bytes(target, signature.to_bytes(), "the signature")
            return target, signature
        name = f"{SIGNATURES_DIR}/{signature.keyid}.json"
        if name in extracted.signatures:
            raise UsageError(f"{bundle} is already signed by key {signature.keyid[:16]}")
        signatures = {**extracted.signatures, name: signature.to_bytes()}
        members = bundle_members(extracted, signatures, extracted.withheld)
        target = (out or bundle).absolute()
        mtime = int(extracted.manifest.environment.get("source_date_epoch", 0))
        with staged(target, "the signed bundle") as tmp:
            with tmp.open("wb") as stream:
                write_tar(stream, members, mtime, extracted.codec)
            with tempfile.TemporaryDirectory(prefix="reprobundle-sign-check-") as check:
                again = _read(tmp, Path(check), limits)
            if again.manifest_bytes != extracted.manifest_bytes:  # pragma: no cover
                raise UsageError("internal: the manifest changed while signing")
    return target, signature
