"""Strict JSON reading: a duplicate key or NaN/Infinity is an error, never a silent choice.

``json.loads`` keeps the last of two equal keys and accepts NaN; evidence, signatures and
reports must be read exactly as written, so both raise ``ValueError`` here. A checker
version may opt in to reading NaN/Infinity (``constants=True``: real runners write them in
fields such as durations); it must then refuse them wherever its verdict reads a number.
"""

from __future__ import annotations

import json
from typing import Any


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def loads(text: str | bytes, *, constants: bool = False) -> Any:
    """Parse one JSON document strictly. Raises ValueError (or RecursionError)."""
    if constants:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def loads_lines(text: str, *, constants: bool = False) -> list[tuple[int, Any]]:
    """JSON Lines: ``(line number, value)`` for each non-blank line. A bad line raises
    ValueError whose message starts with ``LINE:``."""
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append((number, loads(line, constants=constants)))
            except ValueError as exc:
                raise ValueError(f"{number}: not a JSON value: {exc}") from None
    return records
