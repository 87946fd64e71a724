"""The audit log: every event as an exact byte record, chained by SHA-256.

Record ``n`` holds the hash of record ``n-1`` (``prev``), so editing, removing or
reordering any record breaks the chain from there on, and a checkpoint (a size and
the head hash at that size, signed elsewhere) pins the whole prefix: a shorter log,
or one rewritten from scratch with fresh hashes, no longer reaches the checkpoint's
head. This module holds the pure rules (bytes in, problems out); storing the rows
is the index's job.

Tamper-evident, not tamper-proof: whoever can write the archive can rewrite its log,
and only a checkpoint kept elsewhere shows it. Times come from the local clock.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bundler.errors import Problem
from checkers import strictjson

# 2: index facts (times, actor, tool) are the record's own, verify records hold the whole
# outcome, add records the title, claims and signing keys (manifests/ARCHIVE.md)
RECORD_FORMAT = 2
GENESIS = "0" * 64


def canonical(value: Mapping[str, Any]) -> bytes:
    """The one byte form of a JSON object: sorted keys, no spaces, UTF-8."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def record_hash(record: bytes) -> str:
    return hashlib.sha256(record).hexdigest()


def make_record(
    seq: int, prev: str, at: str, event: str, actor: str, tool: str, data: Mapping[str, Any]
) -> bytes:
    return canonical(
        {
            "v": RECORD_FORMAT,
            "seq": seq,
            "prev": prev,
            "at": at,
            "event": event,
            "actor": actor,
            "tool": tool,
            "data": dict(data),
        }
    )


@dataclass(frozen=True)
class Row:
    """One stored row: its position, the exact record bytes, and the hash stored beside them."""

    seq: int
    record: bytes
    hash: str


@dataclass(frozen=True)
class ChainState:
    """What a walk over the log found: its length, the head hash, the hash at each checkpoint
    size asked for, the decoded records, and every problem."""

    size: int
    head: str
    hashes_at: dict[int, str]
    records: list[dict[str, Any]]
    problems: list[Problem]


def decode(row: Row) -> tuple[dict[str, Any] | None, str | None]:
    """A record's fields, or why it cannot be read as one."""
    try:
        value = strictjson.loads(row.record.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"is not a JSON record ({exc})"
    if not isinstance(value, dict):
        return None, "is not a JSON object"
    if canonical(value) != row.record:
        return None, "is not in canonical form (its bytes were rewritten)"
    for key, kind in (("seq", int), ("prev", str), ("at", str), ("event", str), ("data", dict)):
        if not isinstance(value.get(key), kind):
            return None, f"has no valid {key!r}"
    return value, None


def walk(
    rows: Iterable[Row],
    want: Iterable[int] = (),
    each: Callable[[dict[str, Any]], object] | None = None,
) -> ChainState:
    """Check every link of the chain, in ``seq`` order, collecting every problem. Each
    decoded record is kept in the state, or, with ``each``, handed to it and not kept
    (the whole log is then walked in bounded memory)."""
    wanted = set(want)
    problems: list[Problem] = []
    records: list[dict[str, Any]] = []
    hashes_at: dict[int, str] = {}
    expected_seq = 1
    prev = GENESIS
    size = 0
    for row in rows:
        where = f"audit log record {row.seq}"
        actual = record_hash(row.record)
        if row.seq != expected_seq:
            problems.append(
                Problem(
                    where,
                    "log.gap",
                    f"comes after record {expected_seq - 1}; expected record {expected_seq} "
                    "(records were removed or inserted)",
                )
            )
        if actual != row.hash:
            problems.append(
                Problem(
                    where,
                    "log.edited",
                    f"its bytes hash to {actual}, the stored hash is {row.hash} "
                    "(the record was edited in place)",
                )
            )
        value, why = decode(row)
        if value is None:
            problems.append(Problem(where, "log.record", f"{why}"))
        else:
            if value["seq"] != row.seq:
                problems.append(
                    Problem(
                        where,
                        "log.reordered",
                        f"says it is record {value['seq']}, stored as record {row.seq}",
                    )
                )
            if value["prev"] != prev:
                problems.append(
                    Problem(
                        where,
                        "log.chain",
                        f"links to previous hash {value['prev']}, but the previous record "
                        f"hashes to {prev} (a record before it was edited, removed or moved)",
                    )
                )
            if each is None:
                records.append(value)
            else:
                each(value)
        prev = actual
        size = row.seq
        expected_seq = row.seq + 1
        if row.seq in wanted:
            hashes_at[row.seq] = actual
    return ChainState(size, prev, hashes_at, records, problems)


def against_checkpoint(state: ChainState, size: int, head: str, label: str) -> list[Problem]:
    """Does the log still contain, unchanged, the prefix a checkpoint pinned?"""
    if size == 0:
        return []
    if state.size < size:
        return [
            Problem(
                label,
                "log.truncated",
                f"the checkpoint covers {size} records, the log now has {state.size} "
                "(records were removed from the end)",
            )
        ]
    observed = state.hashes_at.get(size)
    if observed != head:
        return [
            Problem(
                label,
                "log.rewritten",
                f"record {size} hashes to {observed}, the checkpoint says {head} "
                "(the log up to the checkpoint was rewritten)",
            )
        ]
    return []
