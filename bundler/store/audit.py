"""The audit log as the archive keeps it: reading it, checkpoints, and the checks of the
index and the trust store against the log. (``auditlog`` holds the pure rules of the
record chain; ``reconcile`` what the log says the index holds; ``context`` appends.)
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bundler.atomic import write_atomic
from bundler.errors import Problem
from bundler.store import auditlog, checkpoint, index, logkeys, reconcile, trust
from bundler.store.context import Context, now
from bundler.store.errors import ArchiveError, ArchiveTampered
from bundler.store.objects import DIGEST_RE, Unreadable, read_regular


@dataclass(frozen=True)
class LogReport:
    """What ``log verify`` found: the log's size and head, how many checkpoints it was
    checked against, and every problem (none: consistent)."""

    size: int
    head: str
    checkpoints: int
    problems: list[Problem]

    @property
    def exit_code(self) -> int:
        return ArchiveTampered.exit_code if self.problems else 0

    @property
    def summary(self) -> str:
        if self.problems:
            return (
                f"the audit log is NOT consistent: {len(self.problems)} problem(s) "
                f"({self.size} records read)"
            )
        return (
            f"audit log consistent: {self.size} records, head {self.head}, "
            f"checked against {self.checkpoints} checkpoint(s)"
        )

    def failure(self) -> ArchiveTampered | None:
        """The problems as the error to report (None when the log is consistent)."""
        return ArchiveTampered(self.summary, self.problems) if self.problems else None


# -- reading ---------------------------------------------------------------------------------


def records(conn: sqlite3.Connection, tail: int | None = None) -> list[bytes]:
    """The exact record bytes, oldest first (the last ``tail`` only, when given)."""
    if tail is None:
        return [r.record for r in index.records(conn)]
    return index.last_records(conn, tail)


# -- checkpoints -----------------------------------------------------------------------------


def last_checkpoint(conn: sqlite3.Connection) -> tuple[int, str] | None:
    """The size and head of the last checkpoint this archive issued, if any."""
    text = index.meta(conn, "last_checkpoint")
    if not text:
        return None
    try:
        last = json.loads(text)
        return int(last["size"]), str(last["head"])
    except (ValueError, TypeError, KeyError):
        raise ArchiveTampered(
            "the record of the last checkpoint this archive issued is damaged",
            [Problem("index meta", "log.checkpoint_record", f"observed {text[:200]!r}")],
        ) from None


def check_last_checkpoint(conn: sqlite3.Connection) -> None:
    """The quick check every command makes when it opens the archive, in two lookups however
    long the log (issue 47: no open reads the whole log): the log still holds the record the
    last issued checkpoint pinned, with the same hash, and the record after it (the record of
    issuing that checkpoint) still links to it, so the log was neither rewritten up to the
    checkpoint nor cut back to it. A record removed or edited before the checkpoint, the
    pinned one untouched, leaves a gap or a broken link that only a walk of the chain finds:
    ``archive log verify``."""
    last = last_checkpoint(conn)
    if last is None:
        return
    size, pinned = last
    record = index.record_at(conn, size)
    observed = auditlog.record_hash(record) if record is not None else None
    if record is None or observed != pinned:
        why = f"record {size} should hash to {pinned}, observed {observed or 'no such record'}"
    else:
        following = index.record_at(conn, size + 1)
        value = (
            None if following is None else auditlog.decode(auditlog.Row(size + 1, following, ""))[0]
        )
        if following is None:
            why = (
                f"record {size + 1}, the record of issuing the checkpoint, is missing "
                "(records were removed from the end)"
            )
        elif value is None or value["prev"] != pinned:
            why = (
                f"record {size + 1}, the record of issuing the checkpoint, does not link to "
                f"record {size} (hash {pinned})"
            )
        else:
            return
    raise ArchiveTampered(
        "the audit log no longer matches the last checkpoint this archive issued; "
        "run 'reprobundle archive log verify' with a checkpoint kept elsewhere",
        [Problem("last checkpoint", "log.checkpoint_mismatch", why)],
    )


def issue(context: Context) -> checkpoint.Checkpoint:
    """Sign the log's current size and head hash; remember it, keep a copy in
    ``checkpoints/``, and log that it was issued."""
    key = checkpoint.load_private(context.key_path)
    with context.transaction("issue a checkpoint"):
        size, last = context.head()
        issued = checkpoint.issue(key, context.archive_id, size, last, now())
        index.set_meta(context.conn, "last_checkpoint", json.dumps({"size": size, "head": last}))
        context.append("checkpoint", {"size": size, "head": last})
        context.checkpoints.mkdir(exist_ok=True)
        write_atomic(
            context.checkpoints / f"{size:010d}-{last[:16]}.json", issued.to_json().encode()
        )
    return issued


def _pinned(
    context: Context, extra: Sequence[Path], problems: list[Problem]
) -> list[tuple[str, checkpoint.Checkpoint]]:
    """The checkpoints the archive kept and those given, each checked against the
    archive's key (the ones that cannot be read are problems, not checkpoints); one given
    that the archive also kept (a copy of the same bytes) is one checkpoint, not two."""
    public = checkpoint.load_public(context.key_path.with_suffix(".pub"))
    pinned = []
    seen: set[bytes] = set()
    kept = sorted(context.checkpoints.glob("*.json")) if context.checkpoints.is_dir() else []
    for path in [*kept, *extra]:
        where = f"checkpoint {path}"
        try:  # a regular file, bounded, parsed strictly: the archive folder is untrusted
            text = read_regular(Path(path), checkpoint.MAX_FILE_BYTES)
        except Unreadable as exc:
            if path not in kept:
                raise ArchiveError(f"cannot read the checkpoint: {exc.why}") from None
            problems.append(Problem(where, "checkpoint.format", exc.why))
            continue
        try:
            if text in seen:
                continue
            seen.add(text)
            issued = checkpoint.parse(text, where)
        except ArchiveTampered as exc:
            problems.extend(exc.problems)
            continue
        problems.extend(checkpoint.check(issued, public, context.archive_id, where))
        pinned.append((where, issued))
    return pinned


# -- the checks ------------------------------------------------------------------------------


def verify_log(context: Context, extra: Sequence[Path] = ()) -> LogReport:
    """Walk the whole chain, check it against every checkpoint (the ones this archive
    kept and any given), and cross-check the index against the log. Collects every
    problem; never raises for what it finds. Streams the log: memory grows with the
    bundles, not with the records."""
    problems: list[Problem] = []
    pinned = _pinned(context, extra, problems)
    with index.snapshot(context.conn):  # the log and the rows as of one moment
        try:
            remembered = last_checkpoint(context.conn)
        except ArchiveTampered as exc:
            problems.extend(exc.problems)
            remembered = None
        sizes = [c.size for _, c in pinned] + ([remembered[0]] if remembered else [])
        state, against = _walk_against_index(context, sizes)
        problems.extend(state.problems)
        for where, issued in pinned:
            problems.extend(auditlog.against_checkpoint(state, issued.size, issued.head, where))
        if remembered:
            problems.extend(
                auditlog.against_checkpoint(state, *remembered, "the last checkpoint issued")
            )
        problems.extend(against)
    return LogReport(state.size, state.head, len(pinned), problems)


def _walk_against_index(
    context: Context, sizes: Sequence[int] = ()
) -> tuple[auditlog.ChainState, list[Problem]]:
    """The chain walked (``sizes``: the hashes wanted), and every index row, the log's
    lookup table and the trust store checked against what the log says: one pass over the
    records, each verification checked as it comes (``reconcile.Verifications``)."""
    checking = reconcile.Verifications(context.conn)
    replaying = reconcile.Replay(verified=checking)
    state = auditlog.walk(index.records(context.conn), sizes, each=replaying.feed)
    derived = replaying.state
    problems = reconcile.compare(context.conn, derived, checking)
    problems.extend(logkeys.differences(context.conn, index.records(context.conn)))
    problems.extend(trust.differences(context, derived.trust, derived.trust_ids))
    return state, problems


def refuse_unless_consistent(context: Context) -> None:
    """Refuse (``ArchiveTampered``) when the log's chain is broken or the index or the
    trust store is not what the log says: run before trusting either."""
    with index.snapshot(context.conn):
        state, against = _walk_against_index(context)
        problems = state.problems + against
    if problems:
        raise ArchiveTampered(
            "the archive's index or trust store does not match its audit log; nothing "
            "was run ('reprobundle archive log verify' lists every difference; "
            "'reprobundle archive rebuild' rebuilds the index from the log and the store)",
            problems,
        )


def refuse_unless_logged(context: Context, digests: Sequence[str]) -> None:
    """Refuse (``ArchiveTampered``) when the index rows of the bundles ``digests`` (each
    bundle's row, claims, signing keys and manifest, its verifications and their claim
    results) are not what their own records in the log say, or one of those records was
    edited or no longer links into the chain: what ``archive verify`` checks before it runs
    (issue 47), at the cost of those bundles' records, never the whole log. A record of
    another bundle edited, or one removed before the last checkpoint, is found by ``archive
    log verify``, which walks the whole chain (the open-time check finds a log rewritten up
    to the checkpoint or cut back to it)."""
    problems: list[Problem] = []
    with index.snapshot(context.conn):  # the rows and the records as of one moment
        for digest in digests:
            problems.extend(reconcile.bundle_differences(context.conn, digest)[1])
    if problems:
        raise ArchiveTampered(
            "the archive's index does not match its audit log for the bundles to verify; "
            "nothing was run ('reprobundle archive log verify' lists every difference; "
            "'reprobundle archive rebuild' rebuilds the index from the log and the store)",
            problems,
        )


def consistency(context: Context) -> list[Problem]:
    """Store against index: every row's object is present and intact, and no
    half-written object is visible. (Objects no row names are leftovers of an
    interrupted add: harmless, not problems.)"""
    problems = []
    for digest in index.digests(context.conn):
        why = context.store.check(digest)
        if why:
            problems.append(Problem(f"bundle {digest}", "store.object", why))
    for name in context.store.digests():
        if not DIGEST_RE.match(name):
            problems.append(Problem(name, "store.partial", "a non-object file in the store"))
    return problems
