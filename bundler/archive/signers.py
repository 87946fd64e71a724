"""Who signed a stored bundle, as the archive records it, and which keys the archive trusts.

The archive judges signatures with the same rules as ``verify`` (``trust.check_signatures``):
a bad signature refuses the bundle; otherwise the bundle is recorded as ``unsigned``,
``signed by unknown key <keyid>`` or ``signed by trusted key <name>``. Which keys are
trusted is the archive's own trust store (``trust.toml`` in the archive folder, written by
``archive init --trust/--trust-store`` and editable like any trust store) plus any keys
given to one command. Whether a key is trusted can change (a key is added, revoked or
expires), so the recorded signer is the judgement of the latest check (add or verify), and
every such check logs the key ids it trusted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from ..atomic import write_atomic
from ..errors import UsageError
from ..signing import SignatureProblem, parse_signature
from ..trust import Policy, SignatureCheck, TrustedKey, load_store

TRUST_NAME = "trust.toml"
UNSIGNED = "unsigned"
# Rows added before the archive checked signatures; `archive verify` replaces it.
NOT_CHECKED = "unknown"
_KEYID_PREFIX = re.compile(r"[0-9a-f]{8,64}")


@dataclass(frozen=True)
class Signed:
    """The signer of one bundle as recorded: the text, and each signing key with the
    name of the trusted key it is (None for a key the archive does not trust)."""

    text: str
    keys: tuple[tuple[str, str | None], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "keys": [{"keyid": k, "trusted": n} for k, n in self.keys]}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Signed:
        keys = tuple((str(k["keyid"]), k.get("trusted")) for k in doc.get("keys", []))
        return cls(str(doc["text"]), keys)


def judge(check: SignatureCheck, signatures: Mapping[str, bytes], policy: Policy) -> Signed:
    """The recorded signer of a bundle whose signatures ``check`` accepted."""
    names = {t.key.keyid: t.name for t in policy.trusted}
    unknown = set(check.unknown_keyids)
    keys: list[tuple[str, str | None]] = []
    for data in signatures.values():
        try:
            keyid = parse_signature(data).keyid
        except SignatureProblem:  # check_signatures refused these already
            continue
        keys.append((keyid, None if keyid in unknown else names.get(keyid)))
    keys.sort(key=lambda k: (k[1] is None, k[1] or "", k[0]))
    trusted = [n for _, n in keys if n is not None]
    foreign = [k for k, n in keys if n is None]
    if trusted:
        text = f"signed by trusted key {', '.join(trusted)}"
        if foreign:
            text += f"; also by unknown key {', '.join(foreign)}"
    elif foreign:
        text = f"signed by unknown key {', '.join(foreign)}"
    else:
        text = UNSIGNED
    return Signed(text, tuple(keys))


def trusted_ids(policy: Policy) -> list[str]:
    """The key ids a check trusted, for the audit record (short, sorted)."""
    return sorted(t.key.keyid[:16] for t in policy.trusted if not t.revoked)


def selector(value: str) -> tuple[str, list[str]]:
    """SQL selecting the digests whose signer matches ``value``: the recorded text
    (``unsigned``), a trusted key's name, or a key id (or a prefix of 8+ hex digits)."""
    lowered = value.lower()
    sql = (
        "SELECT digest FROM bundles WHERE signer = ? "
        "UNION SELECT digest FROM bundle_signers WHERE trusted_name = ? OR keyid = ?"
    )
    args = [value, value, lowered]
    if _KEYID_PREFIX.fullmatch(lowered) and len(lowered) < 64:
        sql += " UNION SELECT digest FROM bundle_signers WHERE keyid >= ? AND keyid < ?"
        args += [lowered, lowered + "g"]
    return sql, args


# -- the archive's trust store --------------------------------------------------------------


def load(root: Path) -> tuple[TrustedKey, ...]:
    """The archive's trusted keys (none when it has no trust store)."""
    path = root / TRUST_NAME
    return load_store(path) if path.exists() else ()


def merged(archive_keys: Sequence[TrustedKey], given: Iterable[TrustedKey]) -> Policy:
    """The archive's keys and those given to one command. For a key in both, the
    archive's entry wins (its revocation and validity cannot be overridden per command)."""
    mine = {k.key.raw for k in archive_keys}
    return Policy((*[k for k in given if k.key.raw not in mine], *archive_keys))


def write(root: Path, keys: Sequence[TrustedKey]) -> None:
    """Write ``keys`` as the archive's trust store, and read it back strictly."""
    names = [k.name for k in keys]
    raws = [k.key.raw for k in keys]
    if len(set(names)) != len(names) or len(set(raws)) != len(raws):
        raise UsageError(
            "the trusted keys given name a key twice (two key files with the same file name, "
            "or the same key twice); give each key once"
        )
    entries: list[dict[str, Any]] = []
    for key in keys:
        entry: dict[str, Any] = {"name": key.name, "public_key": f"ed25519:{key.key.b64}"}
        if key.valid_from:
            entry["valid_from"] = key.valid_from
        if key.valid_until:
            entry["valid_until"] = key.valid_until
        entry["revoked"] = key.revoked
        entry["allow_code"] = key.allow_code
        entries.append(entry)
    header = (
        "# The keys this archive trusts when it checks bundle signatures (archive add, verify).\n"
        "# Format: the trust store of 'reprobundle verify --trust-store' (README).\n"
    )
    write_atomic(root / TRUST_NAME, (header + tomli_w.dumps({"key": entries})).encode("utf-8"))
    load_store(root / TRUST_NAME)
