"""Which keys the reviewer trusts, which of them count at a given time, and what the
signatures of one bundle amount to.

Trust lives on the reviewer's machine only: keys given with ``verify --trust KEYFILE`` or
listed in a trust store file (read by ``signatures.truststore``). A key that arrives inside
a bundle (or a detached signature) is used to tell a broken signature from a foreign one,
never to trust anything.

**The trust rule** is written once, here (``standing``): a trusted key counts at a time
unless it is revoked, or the time is before its ``valid_from`` or after its
``valid_until``, and only for the kinds of statement its ``may_sign`` names (a bundle, an
attestation, a pre-registration; all when it names none); what a counting key may do
beyond vouching for what it signed is its permission ``allow_code`` (its bundles may run
their code). Every signature goes through
it: a bundle's own and a detached one (``check_signatures``), an attestation's and a
pre-registration's (``signatures.envelope``), the statements and bundles an archive keeps.

Pure: keys, bytes and the time in; values or ``BundleRejected`` out. No file is read here.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from bundler.errors import BundleRejected, Problem, UsageError

if TYPE_CHECKING:
    from bundler.signatures.signing import PublicKey, Signature

SignatureState = Literal["trusted", "unknown-key", "unsigned"]
# what a signature signs: a bundle's manifest (inside it or detached), an attestation of a
# verification, a pre-registration. A trust store entry may limit a key to some (may_sign).
SIGNED_KINDS = ("bundle", "attestation", "preregistration")
_KIND_WORDS = {
    "bundle": "a bundle",
    "attestation": "an attestation",
    "preregistration": "a pre-registration",
}


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
    may_sign: frozenset[str] | None = None  # the SIGNED_KINDS it may sign (None: every one)


@dataclass(frozen=True)
class Standing:
    """Whether one trusted key counts at a time, and if not, why in words (with the date
    or the file that revokes it)."""

    key: TrustedKey
    counts: bool
    why: str = ""  # empty when it counts
    revoked: bool = False


def standing(key: TrustedKey, at: dt.datetime, kind: str | None = None) -> Standing:
    """The trust rule: does ``key`` count for a signature over a ``kind`` of statement
    (``SIGNED_KINDS``; None: whatever it signs) judged at ``at``?"""
    if key.revoked:
        where = f" in {key.source}" if key.source else ""
        return Standing(key, False, f"key {key.name!r} is revoked{where}", revoked=True)
    if key.valid_from is not None and at < key.valid_from:
        return Standing(
            key,
            False,
            f"key {key.name!r} is not yet valid: valid only from {key.valid_from.isoformat()}",
        )
    if key.valid_until is not None and at > key.valid_until:
        until = key.valid_until.isoformat()
        return Standing(key, False, f"key {key.name!r} expired: it was valid until {until}")
    if kind is not None and key.may_sign is not None and kind not in key.may_sign:
        allowed = ", ".join(sorted(key.may_sign)) or "nothing"
        what = _KIND_WORDS.get(kind, kind)
        return Standing(key, False, f"key {key.name!r} may not sign {what} (may_sign: {allowed})")
    return Standing(key, True)


def counting(
    keys: Iterable[TrustedKey], at: dt.datetime, kind: str | None = None
) -> tuple[TrustedKey, ...]:
    """The keys of ``keys`` that count at ``at`` for a ``kind`` of statement (``standing``)."""
    return tuple(k for k in keys if standing(k, at, kind).counts)


def unrevoked(keys: Iterable[TrustedKey]) -> tuple[TrustedKey, ...]:
    """The keys a trust store lists as trusted whatever the time (not revoked): what an
    archive's log records of its store, as against what counts at one moment."""
    return tuple(k for k in keys if not k.revoked)


class Signers(NamedTuple):
    """What the signatures of a statement amount to under the trust rule: the trusted keys
    that signed and count, and why each other trusted key that signed does not."""

    counted: tuple[TrustedKey, ...] = ()
    refused: tuple[Standing, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.counted)

    @property
    def keyids(self) -> tuple[str, ...]:
        return tuple(k.key.keyid for k in self.counted)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(s.why for s in self.refused)


def signed_by(keys: Iterable[TrustedKey], at: dt.datetime, kind: str | None = None) -> Signers:
    """The trusted ``keys`` whose signature over a ``kind`` of statement verified, sorted
    by the trust rule at ``at``."""
    counted: list[TrustedKey] = []
    refused: list[Standing] = []
    for key in keys:
        found = standing(key, at, kind)
        if found.counts:
            counted.append(key)
        else:
            refused.append(found)
    return Signers(tuple(counted), tuple(refused))


def now() -> dt.datetime:  # (the shell's clock, read by callers; the rule takes a time)
    """The time a signature is judged at, when the caller gives none: this moment, UTC."""
    return dt.datetime.now(dt.UTC)


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
            if self.notes:  # a trusted key that does not count now: say why, with the date
                why = "; ".join(self.notes)
                return f"signed by a trusted key that does not count now ({why}; key id {ids}){pin}"
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
    at: dt.datetime | None = None,
) -> SignatureCheck:
    """Judge every signature over the exact manifest bytes. Raises ``BundleRejected``."""
    pinned = _check_pin(identity, policy)
    found = {**signatures, **policy.detached}
    parsed = _verified(found, manifest_bytes) if found else []
    signers, unknown, notes = _sort_signers(parsed, policy, at or now())
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
            f"the bundle is {result.describe()}; {given} trusted key(s) given" + why,
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
        found = standing(trusted, now, "bundle")
        if found.revoked:
            raise _reject(
                "the bundle is signed by a revoked key",
                where,
                "signature.revoked",
                f"key {trusted.name!r} ({sig.keyid[:16]}) is revoked in {trusted.source}",
            )
        if not found.counts:
            notes.append(found.why)
            unknown.append(sig.keyid)
            continue
        signers.append(trusted)
    return signers, unknown, notes
