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

from bundler.atomic import write_atomic
from bundler.errors import Problem, UsageError
from bundler.signatures.signing import SignatureProblem, parse_signature
from bundler.signatures.trust import Policy, SignatureCheck, TrustedKey, unrevoked
from bundler.signatures.truststore import load_store
from bundler.store import index

TRUST_NAME = "trust.toml"
UNSIGNED = "unsigned"
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
    return Signed(describe(keys), tuple(keys))


def describe(keys: Iterable[tuple[str, str | None]]) -> str:
    """The signer text of a bundle signed by ``keys`` (key id, trusted name or None)."""
    ordered = sorted(keys, key=lambda k: (k[1] is None, k[1] or "", k[0]))
    trusted = [n for _, n in ordered if n is not None]
    foreign = [k for k, n in ordered if n is None]
    if trusted:
        text = f"signed by trusted key {', '.join(trusted)}"
        if foreign:
            text += f"; also by unknown key {', '.join(foreign)}"
        return text
    if foreign:
        return f"signed by unknown key {', '.join(foreign)}"
    return UNSIGNED


def trusted_ids(policy: Policy) -> list[str]:
    """The key ids a check trusted, for the audit record (short, sorted)."""
    return sorted(t.key.keyid[:16] for t in unrevoked(policy.trusted))


def selector(value: str) -> tuple[str, list[str]]:
    """SQL selecting the digests whose signer matches ``value``: the recorded text
    (``unsigned``), a trusted key's name, or a key id (or a prefix of 8+ hex digits)."""
    lowered = value.lower()
    prefix = bool(_KEYID_PREFIX.fullmatch(lowered)) and len(lowered) < 64
    return index.signer_selector(value, prefix)


# -- the archive's trust store --------------------------------------------------------------


def load(root: Path) -> tuple[TrustedKey, ...]:
    """The archive's trusted keys (none when it has no trust store)."""
    path = root / TRUST_NAME
    return load_store(path) if path.exists() else ()


def merged(archive_keys: Sequence[TrustedKey], given: Iterable[TrustedKey]) -> Policy:
    """The archive's keys and those given to one command. For a key in both, the
    archive's entry wins (its revocation and validity cannot be overridden per command).
    The keys name the signers; an unsigned bundle is still kept (and recorded unsigned)."""
    mine = {k.key.raw for k in archive_keys}
    keys = (*[k for k in given if k.key.raw not in mine], *archive_keys)
    return Policy(keys, allow_unsigned=True)


def state(keys: Iterable[TrustedKey]) -> list[dict[str, Any]]:
    """The trusted keys as the audit log records them: every permission, sorted by name."""
    return sorted(
        (
            {
                "name": k.name,
                "keyid": k.key.keyid,
                "public_key": f"ed25519:{k.key.b64}",
                "allow_code": k.allow_code,
                "revoked": k.revoked,
                "valid_from": k.valid_from.isoformat() if k.valid_from else None,
                "valid_until": k.valid_until.isoformat() if k.valid_until else None,
                # only when limited: the log of a key that may sign anything is as before
                **({"may_sign": sorted(k.may_sign)} if k.may_sign is not None else {}),
            }
            for k in keys
        ),
        key=lambda entry: str(entry["name"]),
    )


def from_state(entry: Mapping[str, Any]) -> TrustedKey:
    """A trusted key back from its logged state."""
    from datetime import datetime

    from bundler.signatures.signing import PublicKey

    def when(value: Any) -> datetime | None:
        return datetime.fromisoformat(value) if isinstance(value, str) else None

    return TrustedKey(
        name=str(entry["name"]),
        key=PublicKey.from_text(str(entry["public_key"])),
        valid_from=when(entry.get("valid_from")),
        valid_until=when(entry.get("valid_until")),
        revoked=bool(entry.get("revoked")),
        allow_code=bool(entry.get("allow_code")),
        may_sign=frozenset(entry["may_sign"]) if isinstance(entry.get("may_sign"), list) else None,
    )


def differences(
    found: Sequence[Mapping[str, Any]],
    logged: Sequence[Mapping[str, Any]] | None,
    logged_ids: Sequence[str],
    where: str,
) -> list[Problem]:
    """How the trust store ``found`` differs from what the log says (``logged``: the key
    states of the last trust event; None for an archive whose log lists key ids only)."""
    if logged is None:  # a log from before trust events: only the key ids can be checked
        ids = sorted(k["keyid"][:16] for k in found if not k["revoked"])
        if ids == sorted(logged_ids):
            return []
        return [
            Problem(
                where,
                "trust.unlogged",
                f"trusts keys {ids}, the log says {sorted(logged_ids)}",
            )
        ]
    problems = []
    mine = {k["keyid"]: dict(k) for k in found}
    theirs = {k["keyid"]: dict(k) for k in logged}
    for keyid in sorted(set(mine) | set(theirs)):
        a, b = mine.get(keyid), theirs.get(keyid)
        if b is None:
            assert a is not None
            problems.append(
                Problem(
                    f"{where}: key {a['name']!r}",
                    "trust.unlogged",
                    f"key {keyid[:16]} (allow_code = {str(a['allow_code']).lower()}) is trusted "
                    "but no trust event in the log added it",
                )
            )
        elif a is None:
            problems.append(
                Problem(
                    f"{where}: key {b['name']!r}",
                    "trust.missing",
                    f"the log says key {keyid[:16]} is trusted; the trust store lacks it",
                )
            )
        elif a != b:
            changed = ", ".join(
                f"{field} {a.get(field)!r} (the log says {b.get(field)!r})"
                for field in sorted(set(a) | set(b))
                if a.get(field) != b.get(field)
            )
            problems.append(
                Problem(f"{where}: key {b['name']!r}", "trust.altered", f"has {changed}")
            )
    return problems


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
        if key.may_sign is not None:
            entry["may_sign"] = sorted(key.may_sign)
        entries.append(entry)
    header = (
        "# The keys this archive trusts when it checks bundle signatures (archive add, verify).\n"
        "# Format: the trust store of 'reprobundle verify --trust-store' (README).\n"
    )
    if not entries:  # a trust store with no keys is an error; no keys is no file
        (root / TRUST_NAME).unlink(missing_ok=True)
        return
    write_atomic(root / TRUST_NAME, (header + tomli_w.dumps({"key": entries})).encode("utf-8"))
    load_store(root / TRUST_NAME)
