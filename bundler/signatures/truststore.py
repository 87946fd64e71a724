"""The reviewer's trust, read from their files: public key files (``verify --trust``), a
trust store (``--trust-store``), detached signatures, into the values ``signatures.trust``
judges with. The rule of which keys count is there, not here: this module only reads.

A trust store is a TOML file::

    [[key]]
    name = "alice"                       # who this key is, as reports should print it
    public_key = "ed25519:BASE64"        # or a PEM block
    valid_from = 2026-01-01T00:00:00Z    # optional
    valid_until = 2027-01-01T00:00:00Z   # optional
    revoked = false                      # optional; a revoked key's signature rejects
    allow_code = false                   # optional; may this key's bundles run their code
    may_sign = ["bundle", "attestation", "preregistration"]  # optional; default: all
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import tomli

from bundler.errors import Problem, UsageError, did_you_mean
from bundler.files import read_bounded
from bundler.signatures.trust import (
    DETACHED,
    DETACHED_SUFFIX,
    SIGNED_KINDS,
    Policy,
    TrustedKey,
    identity_pin,
)

_STORE_KEYS = {
    "name",
    "public_key",
    "valid_from",
    "valid_until",
    "revoked",
    "allow_code",
    "may_sign",
}
MAX_KEY_FILE = 64 << 10


def _read_small(path: Path, what: str) -> str:
    data = read_bounded(path, MAX_KEY_FILE, what)
    if len(data) > MAX_KEY_FILE:
        raise UsageError(f"{what} {path} is larger than {MAX_KEY_FILE} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what} {path} is not UTF-8 text") from None


def load_key_file(path: Path) -> TrustedKey:
    """A public key file given with ``--trust``: trusted by name of the file."""
    from bundler.signatures.signing import PublicKey, SignatureProblem

    text = _read_small(path, "key file")
    try:
        key = PublicKey.from_text(text)
    except SignatureProblem as exc:
        raise UsageError(f"refusing to trust {path}", [exc.problem(str(path))]) from None
    return TrustedKey(name=path.name, key=key, source=str(path))


def _when(value: Any, where: str) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value
    raise UsageError(
        f"{where} must be a TOML date-time with a time zone (2026-01-01T00:00:00Z), "
        f"observed {value!r}"
    )


def may_sign(value: Any, where: str) -> frozenset[str] | None:
    """A trust store entry's ``may_sign``: a list of ``SIGNED_KINDS`` (absent: every kind)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(v in SIGNED_KINDS for v in value):
        raise UsageError(
            f"{where} must be a list of {', '.join(SIGNED_KINDS)}, observed {str(value)[:80]}"
        )
    return frozenset(value)


def load_store(path: Path) -> tuple[TrustedKey, ...]:
    """Read a trust store strictly; a store with no keys is an error (fail closed)."""
    from bundler.signatures.signing import PublicKey, SignatureProblem

    text = _read_small(path, "trust store")
    try:
        doc = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        raise UsageError(f"trust store {path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise UsageError(f"trust store {path} is nested too deeply to read") from None
    entries = doc.get("key")
    if set(doc) - {"key"} or not isinstance(entries, list) or not entries:
        raise UsageError(
            f"trust store {path} must hold one or more [[key]] tables and nothing else"
        )
    keys: list[TrustedKey] = []
    problems: list[Problem] = []
    names: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"{path}: key[{i}]"
        if not isinstance(entry, dict):
            problems.append(Problem(where, "trust.format", "must be a table"))
            continue
        wrong = [
            Problem(
                f"{where}.{key}",
                "trust.format",
                f"unknown key {key!r}{did_you_mean(key, _STORE_KEYS)} "
                f"(known: {', '.join(sorted(_STORE_KEYS))})",
            )
            for key in sorted(set(entry) - _STORE_KEYS, key=str)
        ]
        if not isinstance(entry.get("name"), str) or not entry.get("name"):
            wrong.append(Problem(where, "trust.format", "needs a non-empty name"))
        if "public_key" not in entry:
            wrong.append(Problem(where, "trust.format", "needs a public_key"))
        if wrong:
            problems += wrong
            continue
        if entry["name"] in names:
            problems.append(Problem(where, "trust.duplicate", f"name {entry['name']!r} twice"))
        names.add(entry["name"])
        flags = {k: entry.get(k, False) for k in ("revoked", "allow_code")}
        if not all(isinstance(v, bool) for v in flags.values()):
            problems.append(Problem(where, "trust.format", "revoked and allow_code are booleans"))
            continue
        public = entry.get("public_key")
        try:
            if not isinstance(public, str):
                raise SignatureProblem("key.format", "public_key must be a string")
            key = PublicKey.from_text(public)
            keys.append(
                TrustedKey(
                    name=entry["name"],
                    key=key,
                    valid_from=_when(entry.get("valid_from"), f"{where}.valid_from"),
                    valid_until=_when(entry.get("valid_until"), f"{where}.valid_until"),
                    revoked=flags["revoked"],
                    allow_code=flags["allow_code"],
                    may_sign=may_sign(entry.get("may_sign"), f"{where}.may_sign"),
                    source=str(path),
                )
            )
        except SignatureProblem as exc:
            problems.append(exc.problem(where))
    raw = [k.key.raw for k in keys]
    if len(set(raw)) != len(raw):
        problems.append(
            Problem(str(path), "trust.duplicate", "the same public key is listed twice")
        )
    if problems:
        raise UsageError(f"refusing to load trust store {path}", problems)
    return tuple(keys)


def load_trusted_keys(
    key_files: Iterable[Path] = (), store: Path | None = None
) -> tuple[TrustedKey, ...]:
    """The keys of public key files (``--trust``) and of a trust store (``--trust-store``)."""
    keys = [load_key_file(Path(p)) for p in key_files]
    if store is not None:
        keys += load_store(Path(store))
    return tuple(keys)


MAX_DETACHED = 1 << 20  # more than any signature file may hold: the reader refuses it


def load_policy(
    key_files: Iterable[Path] = (),
    store: Path | None = None,
    *,
    require_signature: bool = False,
    allow_unsigned: bool = False,
    expect_manifest_sha256: str | None = None,
    detached: Iterable[Path] = (),
) -> Policy:
    """The reviewer's policy from their files, as ``verify`` reads its options: trusted
    keys from ``key_files`` and ``store``, the identity pin, and detached signature files
    (read here, judged with the bundle's own). Raises ``UsageError``."""
    pin = identity_pin(expect_manifest_sha256) if expect_manifest_sha256 is not None else None
    keys = load_trusted_keys(key_files, store)
    policy = Policy(keys, require_signature, pin, allow_unsigned=allow_unsigned)
    return replace(policy, detached=read_detached(detached))


def read_detached(paths: Iterable[Path]) -> dict[str, bytes]:
    """Detached signature files, read (bounded) to be judged with a bundle's own, keyed as
    ``Policy.detached`` keys them. Raises ``UsageError``."""
    return {f"{p}{DETACHED}": read_bounded(Path(p), MAX_DETACHED, "signature") for p in paths}


def beside(bundle: Path) -> tuple[Path, ...]:
    """The detached signature ``sign --detached`` writes beside BUNDLE (BUNDLE.sig.json),
    when it is there: every command that reads a bundle's signatures (``verify``,
    ``report``, ``inspect``, ``diff``) judges it like one given, so that all say the same."""
    bundle = Path(bundle)
    if str(bundle) == "-" or not bundle.name:
        return ()
    found = bundle.with_name(bundle.name + DETACHED_SUFFIX)
    return (found,) if found.is_file() else ()


def stale_detached(bundle: Path, manifest_bytes: bytes) -> str | None:
    """Why the detached signature beside ``bundle`` (if any) does not sign
    ``manifest_bytes`` (None when there is none, or it does): what ``build`` says when it
    writes a bundle over one whose detached signature is left beside it."""
    from bundler.signatures.signing import SignatureProblem, parse_signature

    found = beside(bundle)
    if not found:
        return None
    try:
        data = read_bounded(found[0], MAX_DETACHED, "signature")
        if parse_signature(data).verifies(manifest_bytes):
            return None
        why = "it signs another manifest (the bundle it was made for was replaced)"
    except (UsageError, SignatureProblem) as exc:
        why = f"it cannot be read as a signature ({exc})"
    return (
        f"{found[0]} beside the new bundle is a stale detached signature: {why}; verify "
        "judges it with the bundle and will reject it while it is there. Remove it, or sign "
        f"again: reprobundle sign {bundle} --key KEY --detached"
    )
