"""What the inspect_log checkers share: the log role, the log read from it, and the header
of the synthetic logs their counterexamples are made of."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import CheckerInputError, InputKind, Role
from .log import InspectLog, LogError, read_log

LOG_ROLE = Role(
    "log",
    InputKind.BYTES,
    "an Inspect AI log as Inspect wrote it: a .eval file (zip of zstd JSON) or a .json log",
)


def load(inputs: Mapping[str, Any]) -> InspectLog:
    """The log of the ``log`` input; one that does not read is ``input.invalid``."""
    try:
        return read_log(inputs["log"])
    except LogError as exc:
        raise CheckerInputError("input.invalid", str(exc)) from None


def synthetic_header(status: str = "success") -> dict[str, Any]:
    """The header of a log made for a counterexample (no results stated)."""
    return {"version": 2, "status": status, "eval": {"task": "counterexample"}, "results": None}
