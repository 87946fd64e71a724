"""The audit log's records by what they are about: the records of an event, of a bundle
digest or of a bundle name, found by an index lookup, so that ``add`` and ``show`` read the
few records they check instead of scanning the whole log (issue 47).

The lookup table (``log_keys``: key, seq) is kept beside the log in the index: written with
each record (``index.insert_records``, which ``append`` and ``rebuild`` use), and by
migration 4 from every record already there. It is derived from the records' bytes and
nothing else, so ``log verify`` checks it against the log it walks (``differences``).
Whoever can write the archive could delete a row to hide a record from a lookup; they could
as well append a forged record with a valid link, which only a checkpoint kept elsewhere
shows (the log is tamper-evident, not tamper-proof): the table opens no new way in, and
every record a lookup returns is still decoded and checked by its caller.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from bundler.errors import Problem
from bundler.store.auditlog import Row

_SUBJECTS = ("digest", "name")  # the fields of a record's data it is found by


def keys(value: Mapping[str, Any]) -> list[str]:
    """A decoded record's keys: ``event:EVENT``; ``digest:D`` / ``name:N`` for the digest
    and name its data holds (text only); and each of those with the event
    (``EVENT/digest:D``), so that the records of one kind about one subject (the
    pre-registrations of a name) are one lookup, however many records the name has."""
    found = set()
    event = value.get("event")
    if isinstance(event, str):
        found.add(f"event:{event}")
    data = value.get("data")
    if isinstance(data, dict):
        for field in _SUBJECTS:
            if isinstance(data.get(field), str):
                found.add(f"{field}:{data[field]}")
                if isinstance(event, str):
                    found.add(f"{event}/{field}:{data[field]}")
    return sorted(found)


def keys_of(record: bytes) -> list[str]:
    """``keys`` of a record's bytes ([] for bytes that are not a JSON object)."""
    try:
        value = json.loads(record)
    except (ValueError, RecursionError):
        return []
    return keys(value) if isinstance(value, dict) else []


def keys_as_json(record: bytes) -> str:
    """``keys_of`` as a JSON list: what migration 4 reads with ``json_each``."""
    return json.dumps(keys_of(bytes(record)))


def insert(conn: sqlite3.Connection, rows: Iterable[Row]) -> None:
    conn.executemany(
        "INSERT OR IGNORE INTO log_keys (key, seq) VALUES (?, ?)",
        [(key, row.seq) for row in rows for key in keys_of(row.record)],
    )


def _rows(cursor: Iterable[Sequence[Any]]) -> Iterator[Row]:
    for seq, record, stored in cursor:
        yield Row(int(seq), bytes(record), str(stored))


def records_with(conn: sqlite3.Connection, key: str) -> list[Row]:
    """The records that have ``key``, oldest first: one lookup, as many rows as they are."""
    return list(
        _rows(
            conn.execute(
                "SELECT seq, record, hash FROM audit_log WHERE seq IN "
                "(SELECT seq FROM log_keys WHERE key = ?) ORDER BY seq",
                (key,),
            )
        )
    )


def records_with_any(conn: sqlite3.Connection, wanted: Sequence[str]) -> Iterator[Row]:
    """The records that have one of the keys ``wanted``, newest first (read as iterated)."""
    marks = ", ".join("?" * len(wanted))
    yield from _rows(
        conn.execute(
            "SELECT seq, record, hash FROM audit_log WHERE seq IN "
            f"(SELECT seq FROM log_keys WHERE key IN ({marks})) ORDER BY seq DESC",
            tuple(wanted),
        )
    )


def differences(conn: sqlite3.Connection, rows: Iterable[Row]) -> Iterator[Problem]:
    """Where the lookup table differs from the keys of the records ``rows`` (the whole log,
    in ``seq`` order): one merge of the two in ``seq`` order, in bounded memory."""
    table = itertools.groupby(
        conn.execute("SELECT seq, key FROM log_keys ORDER BY seq, key"), key=lambda r: int(r[0])
    )
    listed = next(table, None)
    for row in rows:
        while listed is not None and listed[0] < row.seq:
            yield _problem(listed[0], [k for _, k in listed[1]], [])
            listed = next(table, None)
        held: list[str] = []
        if listed is not None and listed[0] == row.seq:
            held = [k for _, k in listed[1]]
            listed = next(table, None)
        expected = keys_of(row.record)
        if held != expected:
            yield _problem(row.seq, held, expected)
    while listed is not None:
        yield _problem(listed[0], [k for _, k in listed[1]], [])
        listed = next(table, None)


def _problem(seq: int, held: list[str], expected: list[str]) -> Problem:
    return Problem(
        f"index log_keys of record {seq}",
        "index.altered",
        f"the lookup lists {held}, the log's record gives {expected} (the table was edited; "
        "'reprobundle archive rebuild' writes it again from the log)",
    )
