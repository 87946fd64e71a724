"""Finding stored bundles: what a selector names (a digest, an identity, a prefix of
either, NAME@VERSION, NAME), the filters of ``archive list``, and one bundle's history."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bundler.store import index, signers, versions
from bundler.store.copies import describe, preferred
from bundler.store.errors import ArchiveError
from bundler.store.index import BundleRow, VerificationRow

MIN_PREFIX = 8  # hex digits of a digest or identity prefix


@dataclass(frozen=True)
class Shown:
    bundle: BundleRow
    claims: list[dict[str, str]]  # id, statement
    history: list[VerificationRow]  # oldest first
    # the advisories on the checker versions its passing cases use (today's list)
    advisories: list[dict[str, Any]] = field(default_factory=list)
    copies: list[BundleRow] = field(default_factory=list)  # of its identity, full first

    @property
    def copies_text(self) -> str:
        """Which copies of its identity are held: full, redacted, or both."""
        return describe(self.copies or [self.bundle])

    def to_dict(self) -> dict[str, object]:
        return {
            "bundle": self.bundle.to_dict(),
            "copies": [
                {"digest": c.digest, "copy": c.copy, "withheld": c.withheld, "size": c.size}
                for c in self.copies
            ],
            "copies_held": self.copies_text,
            "claims": self.claims,
            "history": [v.to_dict() for v in self.history],
            "advisories": self.advisories,
        }


def bundle(conn: sqlite3.Connection, digest: str) -> BundleRow:
    row = index.bundle(conn, digest)
    if row is None:
        raise ArchiveError(f"no bundle with digest {digest} in the archive")
    return row


def list_bundles(
    conn: sqlite3.Connection,
    name: str | None = None,
    version: str | None = None,
    signer: str | None = None,
    status: str | None = None,
    claim_status: str | None = None,
) -> list[BundleRow]:
    """Bundles matching every filter given, by name then version (semver order).
    ``signer`` matches the recorded signer text (``unsigned``), a trusted key's name,
    or the id of a key that signed (or a prefix of 8+ hex digits)."""
    rows = index.find_bundles(
        conn,
        [("name", name), ("version", version), ("last_result", status)],
        None if signer is None else signers.selector(signer),
        claim_status,
    )
    return sorted(rows, key=lambda b: (b.name, versions.sort_key(b.version), b.digest))


def resolve(conn: sqlite3.Connection, selector: str) -> list[str]:
    """Digests a selector names: a file digest or an identity (the SHA-256 of the
    manifest, which a report's appendix prints), whole or a unique prefix of at least
    ``MIN_PREFIX`` hex digits, with or without ``sha256:``; ``NAME@VERSION``; or
    ``NAME`` (every version)."""
    text = selector.removeprefix("sha256:").lower()
    hexadecimal = bool(text) and all(c in "0123456789abcdef" for c in text)
    if hexadecimal and len(text) >= MIN_PREFIX:
        found = _by_prefix(conn, selector, text)
        if found:
            return found
    name, _, version = selector.partition("@")
    digests = _entries(list_bundles(conn, name=name, version=version or None))
    if not digests:
        short = (
            f"; a digest or identity prefix needs at least {MIN_PREFIX} hex digits"
            if hexadecimal and len(text) < MIN_PREFIX
            else ""
        )
        raise ArchiveError(
            f"no bundle {selector} in the archive (give a file digest or identity, or a "
            f"unique prefix of {MIN_PREFIX}+ hex digits, NAME@VERSION or NAME; see "
            f"'reprobundle archive list'){short}"
        )
    return digests


def _entries(rows: list[BundleRow]) -> list[str]:
    """One digest per identity among ``rows``, in their order: the copy that stands for it
    (``copies.preferred``: the full one when held)."""
    by_identity: dict[str, list[BundleRow]] = {}
    for row in rows:
        by_identity.setdefault(row.identity, []).append(row)
    return [preferred(held).digest for held in by_identity.values()]


def _by_prefix(conn: sqlite3.Connection, selector: str, text: str) -> list[str]:
    """The one bundle a hex prefix names, or none (then it may still be a name); refuses
    an ambiguous prefix, and a whole digest or a ``sha256:`` one that names nothing. A
    prefix of a file digest names that copy; of an identity, the copy that stands for it."""
    found = sorted(index.digests_with_prefix(conn, text))
    rows = [r for r in (index.bundle(conn, d) for d in found) if r is not None]
    identities = {r.identity for r in rows}
    if len(found) > 1 and len(identities) == 1 and not any(r.digest.startswith(text) for r in rows):
        held = index.copies_of(conn, rows[0].name, rows[0].version)
        found = _entries([r for r in held if r.identity in identities])
    if len(found) > 1:
        raise ArchiveError(
            f"{text} is the beginning of the digest or identity of more than one bundle "
            f"({', '.join(d[:16] for d in found)}…); give more hex digits"
        )
    if not found and (len(text) == 64 or selector.startswith("sha256:")):
        raise ArchiveError(f"no bundle in the archive has the file digest or identity {text}")
    return found


def resolve_one(conn: sqlite3.Connection, selector: str) -> str:
    digests = resolve(conn, selector)
    if len(digests) > 1:
        choices = ", ".join(f"{b.name}@{b.version}" for b in (bundle(conn, d) for d in digests))
        raise ArchiveError(f"{selector} names {len(digests)} bundles ({choices}); give one")
    return digests[0]


def select(conn: sqlite3.Connection, selectors: Sequence[str], all_bundles: bool) -> list[str]:
    """The digests that selectors (or ``all_bundles``) name, each once."""
    if all_bundles == bool(selectors):
        raise ArchiveError("give bundles to verify (digest, NAME@VERSION, NAME) or --all")
    if all_bundles:
        return index.entry_digests(conn)  # the copy that stands for each identity
    return list(dict.fromkeys(d for s in selectors for d in resolve(conn, s)))


def show(conn: sqlite3.Connection, selector: str) -> Shown:
    """One bundle, its claims and history; its row checked against the log first."""
    from bundler.store.reconcile import logged_bundle

    digest = resolve_one(conn, selector)
    history = index.history(conn, digest)
    row = logged_bundle(conn, digest)
    claims = [{"id": i, "statement": s} for i, s in index.claims_of(conn, row.digest)]
    held = index.copies_of(conn, row.name, row.version)
    return Shown(
        row,
        claims,
        history,
        advisories_of_manifest(index.manifest_of(conn, digest)),
        [r for r in held if r.identity == row.identity],
    )


def advisories_of_manifest(data: bytes | None) -> list[dict[str, Any]]:
    """The advisories a stored manifest's passing cases rest on (none if it is unreadable:
    ``add`` read it strictly, and ``log verify`` finds a changed index)."""
    from bundler.errors import BundlerError
    from bundler.format.claims import advisories_of, advisory_dicts
    from bundler.format.manifest import parse

    if data is None:
        return []
    try:
        manifest = parse(data)
    except BundlerError:
        return []
    return advisory_dicts(advisories_of(manifest.cases))
