"""Adding bundles: stage each file, check it as ``verify`` reads it (without running
cases), then store it with its index rows and audit record in one transaction.

An object is made visible (renamed into the store) before the row naming it commits,
so a crash can leave an unreferenced object behind, never a row without its object.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bundler.container.extract import Extracted, Limits, extract
from bundler.errors import BundleRejected, Problem, UsageError
from bundler.signatures.trust import Policy, SignatureJudge, TrustedKey
from bundler.store import index, query, signers, trust, versions
from bundler.store.context import TOOL, Context, actor, now
from bundler.store.errors import ArchiveError, ArchiveRefused, os_failure
from bundler.store.index import BundleRow
from bundler.store.objects import Staged


@dataclass
class AddReport:
    """What one add did with each file, and the batch's overall result."""

    added: list[BundleRow] = field(default_factory=list)
    already: list[BundleRow] = field(default_factory=list)
    repaired: list[BundleRow] = field(default_factory=list)  # a rotted object put back
    warnings: list[Problem] = field(default_factory=list)
    refused: list[Problem] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return ArchiveRefused.exit_code if self.refused else 0

    def failure(self) -> ArchiveRefused | None:
        """The refusals as the error to report (None when every file was stored)."""
        if not self.refused:
            return None
        return ArchiveRefused(
            f"{len(self.refused)} problem(s): refused bundles were not stored "
            "(the refusals are in the audit log)",
            self.refused,
        )


@dataclass(frozen=True)
class _Checked:
    """A staged file that passed the strict read, with who signed it."""

    file: Path  # as the user gave it
    staged: Staged
    extracted: Extracted
    signed: signers.Signed
    trusted_ids: list[str]


def add(
    context: Context,
    files: Iterable[Path],
    limits: Limits | None = None,
    trusted: Sequence[TrustedKey] = (),
) -> AddReport:
    """Check each file (strict read, signatures, every hash) and store it. Collects
    every refusal. Signatures are judged as ``verify`` judges them, against the
    archive's trusted keys and ``trusted``: a bad signature refuses the bundle."""
    limits = limits or Limits()
    policy = trust.policy(context, trusted)
    paths = [Path(file).absolute() for file in files]
    missing = [Problem(str(p), "add.not_a_file", "is not a file") for p in paths if not p.is_file()]
    if missing:
        raise UsageError("nothing was added: some of the files given are not files", missing)
    context.store.sweep()
    report = AddReport()
    for path in paths:
        try:
            _add_one(context, path, limits, policy, report)
        except ArchiveRefused as exc:
            report.refused.extend(exc.problems)
        except ArchiveError as exc:
            done = [f"{b.name}@{b.version}" for b in report.added]
            if done:
                exc.problems.append(
                    Problem("", "add.partial", f"stored before this: {', '.join(done)}")
                )
            raise
    return report


def _add_one(
    context: Context, file: Path, limits: Limits, policy: Policy, report: AddReport
) -> None:
    staged = context.store.stage(file, limits.archive_bytes)
    try:
        _store(context, _check(context, file, staged, limits, policy), report)
    finally:
        context.store.discard(staged)


def _check(
    context: Context, file: Path, staged: Staged, limits: Limits, policy: Policy
) -> _Checked:
    """Read the staged copy strictly; a rejected bundle is logged and refused."""
    judge_signatures = SignatureJudge(policy)
    try:
        with tempfile.TemporaryDirectory(prefix="reprobundle-archive-") as work:
            extracted = extract(
                staged.path, Path(work), limits, judge_signatures, wanted=lambda _: ()
            )
    except OSError as exc:
        raise os_failure(exc, "unpack the bundle to check it", tempfile.gettempdir()) from None
    except BundleRejected as exc:
        context.log_refusal(
            {
                "action": "add",
                "file": str(file),
                "digest": staged.digest,
                "reason": exc.headline,
                "codes": sorted({p.code for p in exc.problems}),
            }
        )
        raise _refusal(exc, file, staged) from None
    signed = signers.judge(judge_signatures.check, extracted.signatures, policy)
    return _Checked(file, staged, extracted, signed, signers.trusted_ids(policy))


def _refusal(exc: BundleRejected, file: Path, staged: Staged) -> ArchiveRefused:
    """The rejection, naming the file the user gave rather than our staged copy."""

    def named(text: str) -> str:
        return text.replace(str(staged.path), str(file)).replace(staged.path.name, file.name)

    return ArchiveRefused(
        exc.headline,
        [
            Problem(str(file), p.code, named(f"{p.where}: {p.message}" if p.where else p.message))
            for p in exc.problems
        ],
    )


def _store(context: Context, checked: _Checked, report: AddReport) -> None:
    """Store a checked bundle: new (or another copy of a stored identity: its full bundle
    or a redacted copy), already there (or rotted there: repaired), or refused because
    its NAME@VERSION is stored with other bytes (``_conflict``)."""
    manifest = checked.extracted.manifest
    digest = checked.staged.digest
    refusal: Problem | None = None
    with context.transaction("add the bundle to the archive"):
        held = index.copies_of(context.conn, manifest.name, manifest.version)
        same = [r for r in held if r.digest == digest]
        other = _conflict(held, checked)
        if not same and other is not None:
            refusal = _refuse_reused(context, checked, other)
        elif not same:
            _insert(context, checked, report)  # new, or another copy of a held identity
        elif context.store.check(digest) is not None:
            context.store.commit(checked.staged)  # the stored copy rotted: put back good bytes
            context.append("repair", {"digest": digest, "file": str(checked.file)})
            report.repaired.append(query.bundle(context.conn, digest))
        else:
            context.append(
                "add.duplicate",
                {
                    "digest": digest,
                    "file": str(checked.file),
                    "name": manifest.name,
                    "version": manifest.version,
                },
            )
            report.already.append(query.bundle(context.conn, digest))
    if refusal is not None:
        raise ArchiveRefused("a bundle was refused", [refusal])


def _conflict(held: list[BundleRow], checked: _Checked) -> BundleRow | None:
    """The stored copy of NAME@VERSION that forbids storing ``checked`` beside it (None:
    none does). A redacted copy and its full bundle share the identity and are stored
    side by side, and so are several redactions; a copy with another identity, or a second
    full copy in other bytes (signed apart, compressed another way), is refused."""
    digest, identity = checked.staged.digest, checked.extracted.identity
    full = checked.extracted.withheld is None
    for row in held:
        if row.digest == digest:
            return None
        if row.identity != identity or (full and row.withheld is None):
            return row
    return None


def _refuse_reused(context: Context, checked: _Checked, stored_row: BundleRow) -> Problem:
    """Log the refusal of a NAME@VERSION already stored with other bytes."""
    name, version = checked.extracted.manifest.name, checked.extracted.manifest.version
    digest, stored = checked.staged.digest, stored_row.digest
    context.append(
        "refuse",
        {
            "action": "add",
            "file": str(checked.file),
            "digest": digest,
            "name": name,
            "version": version,
            "stored": stored,
            "codes": ["add.version_reused"],
        },
    )
    if stored_row.identity != checked.extracted.identity:
        why = (
            f"another manifest (identity {stored_row.identity}, this file's "
            f"{checked.extracted.identity}): it is not a copy of the stored bundle"
        )
    else:
        why = "the same identity, in full: signed or compressed another way"
    why = (
        f"{name}@{version} is already stored with other bytes (digest {stored}, this file "
        f"{digest}; {why})"
    )
    return Problem(
        str(checked.file),
        "add.version_reused",
        f"{why}; a published version never changes: give the new bundle a new version",
    )


def _insert(context: Context, checked: _Checked, report: AddReport) -> None:
    """A new bundle: its object, its rows and its ``add`` record."""
    manifest, staged, signed = checked.extracted.manifest, checked.staged, checked.signed
    warnings = _rollback_warning(context, checked.file, manifest.name, manifest.version)
    row = BundleRow(
        staged.digest,
        checked.extracted.identity,
        manifest.name,
        manifest.version,
        manifest.title,
        signed.text,
        staged.size,
        now(),
        actor(),
        TOOL,
        "unverified",
        None,
        None if checked.extracted.withheld is None else len(checked.extracted.withheld.files),
    )
    context.store.commit(staged)
    index.insert_bundle(context.conn, row, checked.extracted.manifest_bytes)
    index.insert_claims(context.conn, row.digest, [(c.id, c.statement) for c in manifest.claims])
    index.set_signer(context.conn, row.digest, signed.text, signed.keys)
    context.append(
        "add",
        {
            "digest": row.digest,
            "identity": row.identity,
            "name": row.name,
            "version": row.version,
            "size": row.size,
            "file": str(checked.file),
            "signer": signed.text,
            "keys": [{"keyid": k, "trusted": n} for k, n in signed.keys],
            "trust": checked.trusted_ids,
            "warnings": [w.code for w in warnings],
            "title": row.title,
            "claims": [{"id": c.id, "statement": c.statement} for c in manifest.claims],
            "withheld": row.withheld or 0,  # the files a redacted copy withholds; 0: full
        },
        row.added_at,
    )
    report.warnings.extend(warnings)
    report.added.append(query.bundle(context.conn, row.digest))


def _rollback_warning(context: Context, file: Path, name: str, version: str) -> list[Problem]:
    """A warning when ``version`` is lower than the highest stored version of ``name``
    (found by one index lookup: an add costs the same whatever the versions stored)."""
    highest = index.highest_version(context.conn, name)
    if highest is None:
        return []
    if versions.key(version) < versions.key(highest):
        return [
            Problem(
                str(file),
                "add.rollback",
                f"{name}@{version} is lower than {name}@{highest}, the highest version "
                "already stored (added anyway; check this is not a rollback)",
            )
        ]
    return []
