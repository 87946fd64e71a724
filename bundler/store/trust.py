"""The keys the archive trusts: its trust store (``trust.toml``), checked against the audit
log before each use and changed only together with the log record that says so.
(``signers`` holds the trust store's file format and who signed a bundle.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from bundler.errors import Problem, UsageError
from bundler.signatures.trust import Policy, TrustedKey
from bundler.store import auditlog, logkeys, reconcile, signers
from bundler.store.context import Context
from bundler.store.errors import ArchiveError, ArchiveTampered


def policy(context: Context, given: Sequence[TrustedKey] = ()) -> Policy:
    """The keys trusted for one command: the archive's trust store and ``given``.
    Refuses a trust store that differs from what the log says it is."""
    archive_keys = signers.load(context.root)  # a damaged store is a usage error (exit 2)
    problems = differences(context, *logged(context))
    if problems:
        raise ArchiveTampered(
            f"the archive's trust store ({context.root / signers.TRUST_NAME}) is not what its "
            "audit log says; nothing was run (undo the edit, or change trust with "
            "'reprobundle archive trust', which logs it)",
            problems,
        )
    return signers.merged(archive_keys, given)


def keys(context: Context) -> tuple[TrustedKey, ...]:
    """The archive's trusted keys, after checking them against the log."""
    policy(context)
    return signers.load(context.root)


def differences(
    context: Context, logged: list[dict[str, Any]] | None, ids: list[str]
) -> list[Problem]:
    """How the trust store on disk differs from ``logged`` (see ``signers.differences``)."""
    where = str(context.root / signers.TRUST_NAME)
    try:
        found = signers.state(signers.load(context.root))
    except UsageError as exc:
        return [Problem(where, "trust.format", exc.headline)]
    return signers.differences(found, logged, ids, where)


def logged(context: Context) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """The trusted keys as the last init or trust record says (None: ids only)."""
    for row in logkeys.records_with_any(context.conn, ["event:init", "event:trust"]):
        value, _ = auditlog.decode(row)
        if value is not None and value["event"] in ("init", "trust"):
            derived = reconcile.replay([value])
            return derived.trust, derived.trust_ids
    return [], []


def change(context: Context, how: str, key: TrustedKey | None = None, name: str = "") -> None:
    """Add a key (``how`` = ``add``), or revoke or remove the key named ``name``, in the
    trust store, logging the change with every key's permissions after it."""
    current = list(keys(context))
    if how == "add":
        assert key is not None
        after, name = _added(current, key), key.name
    elif name not in [k.name for k in current]:
        raise UsageError(
            f"the archive trusts no key named {name!r} "
            f"(trusted: {', '.join(k.name for k in current) or 'none'})"
        )
    elif how == "revoke":
        after = [dataclasses.replace(k, revoked=True) if k.name == name else k for k in current]
    else:
        after = [k for k in current if k.name != name]
    _write(context, {"change": how, "name": name}, after, "change the archive's trust store")


def _added(current: list[TrustedKey], key: TrustedKey) -> list[TrustedKey]:
    if any(k.name == key.name or k.key.raw == key.key.raw for k in current):
        raise UsageError(
            f"the archive already trusts a key named {key.name!r} or this same key; "
            "give another --name, or remove the old key first"
        )
    return [*current, key]


def restore(context: Context) -> tuple[TrustedKey, ...]:
    """Write the trust store back as the log says it is (after an edit behind the
    log's back, or a crash between writing it and logging the change)."""
    entries, _ = logged(context)
    if entries is None:
        raise ArchiveError(
            "this archive's log names its trusted keys by id only (it predates trust "
            "events), so the trust store cannot be restored from it; restore trust.toml "
            "from a backup"
        )
    restored = tuple(signers.from_state(entry) for entry in entries)
    _write(
        context, {"change": "restore", "name": ""}, restored, "restore the archive's trust store"
    )
    return restored


def _write(
    context: Context, change: dict[str, str], after: Sequence[TrustedKey], what: str
) -> None:
    """Log a trust event and write the trust store it describes, in one transaction."""
    with context.transaction(what):
        context.append("trust", {**change, "keys": signers.state(after)})
        signers.write(context.root, after)
