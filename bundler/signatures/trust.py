"""Which keys the reviewer trusts, and what the signatures of one bundle amount to.

Trust lives on the reviewer's machine only: keys given with ``verify --trust KEYFILE`` or
listed in a trust store file. A key that arrives inside a bundle (or a detached signature)
is used to tell a broken signature from a foreign one, never to trust anything.

The decision (``check_signatures``) is pure: manifest bytes, signature bytes, the trusted
keys and the time in; a ``SignatureCheck`` or ``BundleRejected`` out. It runs before any
payload file is written.

A trust store is a TOML file::

    [[key]]
    name = "alice"                       # who this key is, as reports should print it
    public_key = "ed25519:BASE64"        # or a PEM block
    valid_from = 2026-01-01T00:00:00Z    # optional
    valid_until = 2027-01-01T00:00:00Z   # optional
    revoked = false                      # optional; a revoked key's signature rejects
    allow_code = false                   # optional; may this key's bundles run their code
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import tomli

from bundler.errors import BundleRejected, Problem, UsageError, did_you_mean

if TYPE_CHECKING:
    from bundler.signatures.signing import PublicKey, Signature

SignatureState = Literal["trusted", "unknown-key", "unsigned"]
_STORE_KEYS = {"name", "public_key", "valid_from", "valid_until", "revoked", "allow_code"}
MAX_KEY_FILE = 64 << 10


@dataclass(frozen=True)
class TrustedKey:
    """A public key the reviewer trusts, with its name, validity and permissions."""

    name: str
    key: PublicKey
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    revoked: bool = False
    allow_code: bool = False
    source: str = ""

    def window_problem(self, now: dt.datetime) -> str | None:
        if self.valid_from and now < self.valid_from:
            return f"key {self.name!r} is valid only from {self.valid_from.isoformat()}"
        if self.valid_until and now > self.valid_until:
            return f"key {self.name!r} was valid until {self.valid_until.isoformat()}"
        return None


@dataclass(frozen=True)
class Policy:
    """What the reviewer asked for. It fails closed as ``verify`` does: naming trusted
    keys rejects a bundle none of them signed, unless ``allow_unsigned``."""

    trusted: tuple[TrustedKey, ...] = ()
    require_signature: bool = False
    # the identity pin (``--expect-manifest-sha256``): 64 hex digits, ``sha256:`` allowed;
    # kept lower-case without the prefix. A malformed pin is a UsageError here.
    expect_manifest_sha256: str | None = None
    detached: Mapping[str, bytes] = field(default_factory=dict)  # name -> signature bytes
    # True: keys given only name the signers (the archive, --allow-unsigned)
    allow_unsigned: bool = False

    def __post_init__(self) -> None:
        if self.expect_manifest_sha256 is not None:
            object.__setattr__(
                self, "expect_manifest_sha256", identity_pin(self.expect_manifest_sha256)
            )
        if self.require_signature and not self.trusted:
            raise UsageError("--require-signature needs --trust KEYFILE or --trust-store FILE")
        if self.require_signature and self.allow_unsigned:
            raise UsageError("--require-signature and --allow-unsigned contradict each other")

    @property
    def requires_signature(self) -> bool:
        return self.require_signature or (bool(self.trusted) and not self.allow_unsigned)


def identity_pin(text: str) -> str:
    """A bundle identity as a reviewer may write it (``HEX`` or ``sha256:HEX``), checked
    and normalised to lower-case hex: the one place an identity pin is read."""
    if not isinstance(text, str) or not re.fullmatch(r"(sha256:)?[0-9a-fA-F]{64}", text):
        raise UsageError("--expect-manifest-sha256 takes 64 hex digits (sha256:HEX also works)")
    return text.removeprefix("sha256:").lower()


class SignatureCheck(NamedTuple):
    """What the signatures of one bundle amount to (bad signatures never get this far)."""

    state: SignatureState
    signers: tuple[str, ...] = ()  # names of trusted keys that signed
    unknown_keyids: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    allow_code: bool = False  # a trusted signer may run bundled code
    pinned: bool = False  # the identity matched --expect-manifest-sha256

    def describe(self) -> str:
        pin = "; identity pinned by --expect-manifest-sha256" if self.pinned else ""
        if self.state == "trusted":
            return f"signed by a trusted key ({', '.join(self.signers)}){pin}"
        if self.state == "unknown-key":
            ids = ", ".join(k[:16] for k in self.unknown_keyids)
            return f"signed by a key you do not trust (key id {ids}){pin}"
        return f"unsigned{pin}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "signers": list(self.signers),
            "unknown_keyids": list(self.unknown_keyids),
            "notes": list(self.notes),
            "allow_code": self.allow_code,
            "pinned": self.pinned,
            "summary": self.describe(),
        }


def _reject(headline: str, where: str, code: str, message: str) -> BundleRejected:
    return BundleRejected(headline, [Problem(where, code, message)])


def _verified(found: Mapping[str, bytes], manifest_bytes: bytes) -> list[tuple[str, Signature]]:
    """Every signature parsed and checked over the manifest bytes, or ``BundleRejected``.
    Only called when there is a signature: ``cryptography`` takes 15 ms to import, which
    an unsigned bundle need not pay."""
    from bundler.signatures.signing import PAYLOAD_TYPE, SignatureProblem, parse_signature

    parsed: list[tuple[str, Signature]] = []
    problems: list[Problem] = []
    for where, data in sorted(found.items()):
        try:
            parsed.append((where, parse_signature(data)))
        except SignatureProblem as exc:
            problems.append(exc.problem(where))
    if problems:
        raise BundleRejected("a signature is malformed", problems)

    seen: dict[bytes, str] = {}
    for where, sig in parsed:
        if sig.public_key.raw in seen:
            problems.append(
                Problem(
                    where,
                    "signature.duplicate",
                    f"a second signature by key {sig.keyid[:16]} "
                    f"(first in {seen[sig.public_key.raw]})",
                )
            )
        seen[sig.public_key.raw] = where
        if sig.payload_type != PAYLOAD_TYPE:
            problems.append(
                Problem(
                    where,
                    "signature.payload_type",
                    f"payload type is {sig.payload_type!r}: "
                    "it does not sign a reprobundle manifest",
                )
            )
        elif not sig.verifies(manifest_bytes):
            problems.append(
                Problem(
                    where,
                    "signature.bad",
                    f"the signature by key {sig.keyid[:16]} does not match the manifest bytes",
                )
            )
    if problems:
        raise BundleRejected(_bad_headline(problems), problems)
    return parsed


DETACHED = " (detached)"  # how a detached signature's name ends in ``Policy.detached``
DETACHED_SUFFIX = ".sig.json"  # `sign --detached` writes BUNDLE.sig.json beside BUNDLE


def _bad_headline(problems: list[Problem]) -> str:
    """What signatures that do not match mean: one inside the bundle, that the bundle was
    altered; a detached one alone (a file beside it), most likely that it signs another
    bundle, as a signature cannot say which manifest it was made for."""
    if all(p.where.endswith(DETACHED) for p in problems if p.code == "signature.bad"):
        return (
            "a detached signature does not match this bundle: it was made for another "
            "bundle's manifest (or this bundle was changed after it was signed)"
        )
    return "a signature does not verify: the bundle was altered"


class SignatureJudge:
    """The reader's signature step, written once: called with the exact manifest bytes, the
    bundle's identity and its signatures, it judges them against ``policy`` (a bad one
    rejects there, before any payload byte) and keeps what they amount to."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or Policy()
        self._checks: list[SignatureCheck] = []

    def __call__(self, manifest_bytes: bytes, identity: str, found: Mapping[str, bytes]) -> None:
        self._checks.append(check_signatures(manifest_bytes, identity, found, self.policy))

    @property
    def check(self) -> SignatureCheck:
        """The judgement, once the reader has called this (it does before any payload)."""
        return self._checks[0]


def check_signatures(
    manifest_bytes: bytes,
    identity: str,
    signatures: Mapping[str, bytes],
    policy: Policy,
    now: dt.datetime | None = None,
) -> SignatureCheck:
    """Judge every signature over the exact manifest bytes. Raises ``BundleRejected``."""
    pinned = _check_pin(identity, policy)
    found = {**signatures, **policy.detached}
    parsed = _verified(found, manifest_bytes) if found else []
    signers, unknown, notes = _sort_signers(parsed, policy, now or dt.datetime.now(dt.UTC))
    if signers:
        result = SignatureCheck(
            "trusted",
            tuple(s.name for s in signers),
            tuple(unknown),
            tuple(notes),
            allow_code=any(s.allow_code for s in signers),
            pinned=pinned,
        )
    elif parsed:
        result = SignatureCheck("unknown-key", (), tuple(unknown), tuple(notes), pinned=pinned)
    else:
        result = SignatureCheck("unsigned", pinned=pinned)
    if policy.requires_signature and result.state != "trusted":
        given = len(policy.trusted)
        why = (
            ""
            if policy.require_signature
            else "; trusted keys were named, so a bundle they did not sign is rejected "
            "(give --allow-unsigned to verify it anyway)"
        )
        raise _reject(
            "a signature by a trusted key is required",
            "signatures/",
            "signature.required",
            f"the bundle is {result.describe()}; {given} trusted key(s) given"
            + (f" ({'; '.join(notes)})" if notes else "")
            + why,
        )
    return result


def _check_pin(identity: str, policy: Policy) -> bool:
    """Whether the policy pins the identity (raises if the bundle is another one)."""
    if policy.expect_manifest_sha256 is None:
        return False
    if identity != policy.expect_manifest_sha256:
        raise _reject(
            "the bundle is not the one expected",
            "manifest.toml",
            "identity.mismatch",
            f"its identity is sha256:{identity}, expected sha256:{policy.expect_manifest_sha256} "
            "(the identity is the SHA-256 of manifest.toml, as `build`, `verify` and reports "
            "print it; not the SHA-256 of the bundle file, which `sha256sum` and the "
            "archive's file digest give)",
        )
    return True


def _sort_signers(
    parsed: list[tuple[str, Signature]], policy: Policy, now: dt.datetime
) -> tuple[list[TrustedKey], list[str], list[str]]:
    """The trusted keys that signed, the key ids of the other signatures, and notes on
    trusted keys used outside their validity. A revoked key's signature rejects."""
    by_raw = {t.key.raw: t for t in policy.trusted}
    signers: list[TrustedKey] = []
    unknown: list[str] = []
    notes: list[str] = []
    for where, sig in parsed:
        trusted = by_raw.get(sig.public_key.raw)
        if trusted is None:
            unknown.append(sig.keyid)
            continue
        if trusted.revoked:
            raise _reject(
                "the bundle is signed by a revoked key",
                where,
                "signature.revoked",
                f"key {trusted.name!r} ({sig.keyid[:16]}) is revoked in {trusted.source}",
            )
        window = trusted.window_problem(now)
        if window:
            notes.append(window)
            unknown.append(sig.keyid)
            continue
        signers.append(trusted)
    return signers, unknown, notes


# -- loading trust from the reviewer's files --------------------------------------------


def read_bounded(path: Path, max_bytes: int, what: str) -> bytes:
    """At most ``max_bytes + 1`` bytes of the regular file ``path`` (a key, signature,
    pre-registration or attestation the user names): a FIFO, device or folder is refused
    (it could hang or never end), and a huge file is never read whole. Raises
    ``UsageError`` naming the path."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"cannot read {what} {path}: not a regular file")
        os.set_blocking(fd, True)
        chunks, left = [], max_bytes + 1
        while left and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


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
    signatures: dict[str, bytes] = {}
    for path in detached:
        signatures[f"{path}{DETACHED}"] = read_bounded(Path(path), MAX_DETACHED, "signature")
    return replace(policy, detached=signatures)
