"""A promptfoo results file (``promptfoo eval -o results.json``, ``version`` 3), read strictly,
and the deterministic assertions re-run as promptfoo 0.121 decides them.

The file holds, per test row, the stored output (``response.output``), whether it passed
(``success``), why not (``failureReason``: 1 an assertion failed, 2 an error such as a
provider failure) and each assertion's result (``gradingResult.componentResults``), and
the run's totals (``results.stats``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api import CheckerInputError

KNOWN_VERSIONS = (3,)
ERROR = 2  # promptfoo's ResultFailureReason.ERROR
ASSERTION_TYPES = (
    "equals",
    "contains",
    "icontains",
    "contains-any",
    "icontains-any",
    "contains-all",
    "icontains-all",
    "starts-with",
    "regex",
    "is-json",
)
# regex syntax whose meaning differs between JavaScript and Python (or that Python lacks)
_JS_ONLY = re.compile(r"\$|\(\?<|\(\?P|\\[uUpPkxcZAz0-9]")


@dataclass(frozen=True)
class Row:
    index: int
    output: Any
    success: bool
    errored: bool
    components: tuple[Mapping[str, Any], ...]

    @property
    def label(self) -> str:
        return f"results[{self.index}]"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise CheckerInputError("input.invalid", f"key {key!r} appears twice in one object")
        out[key] = value
    return out


def read_rows(data: bytes) -> tuple[Mapping[str, Any], list[Row]]:
    """The ``results`` object and its rows. Raises ``CheckerInputError`` naming the problem."""
    try:
        document = json.loads(data, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:
        raise CheckerInputError("input.invalid", f"not a JSON document ({exc})") from None
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, dict):
        raise CheckerInputError("input.invalid", "no 'results' object: not promptfoo's output")
    version = results.get("version")
    if version not in KNOWN_VERSIONS or isinstance(version, bool):
        raise CheckerInputError(
            "input.invalid",
            f"promptfoo results version {version!r} is not one this checker reads (it reads "
            f"version {', '.join(map(str, KNOWN_VERSIONS))}); nothing was checked",
        )
    raw = results.get("results")
    if not isinstance(raw, list):
        raise CheckerInputError("input.invalid", "results.results must be a list of rows")
    rows = []
    for i, row in enumerate(raw):
        if not isinstance(row, dict) or not isinstance(row.get("success"), bool):
            raise CheckerInputError("input.invalid", f"results[{i}] needs a true/false 'success'")
        response = row.get("response") or {}
        grading = row.get("gradingResult") or {}
        if not isinstance(response, dict) or not isinstance(grading, dict):
            raise CheckerInputError("input.invalid", f"results[{i}]: response/gradingResult")
        components = grading.get("componentResults") or []
        if not isinstance(components, list) or not all(isinstance(c, dict) for c in components):
            raise CheckerInputError("input.invalid", f"results[{i}]: componentResults")
        errored = row.get("failureReason") == ERROR
        rows.append(Row(i, response.get("output"), row["success"], errored, tuple(components)))
    return results, rows


def counts(rows: list[Row]) -> dict[str, int]:
    errors = sum(1 for r in rows if r.errored)
    successes = sum(1 for r in rows if r.success)
    return {
        "tests": len(rows),
        "successes": successes,
        "failures": len(rows) - successes - errors,
        "errors": errors,
    }


COUNTS = ("tests", "successes", "failures", "errors")


def rerun_problem(assertion: Mapping[str, Any]) -> str | None:
    """Why an assertion is not re-run here (None if it is)."""
    kind = str(assertion.get("type", ""))
    base = kind.removeprefix("not-")
    value = assertion.get("value")
    if base not in ASSERTION_TYPES:
        return f"type {kind!r} is not re-run"
    if set(assertion) - {"type", "value", "weight", "metric"}:
        return f"{kind} with {sorted(set(assertion) - {'type', 'value', 'weight', 'metric'})}"
    if isinstance(value, str) and "{{" in value:
        return f"{kind} with a templated value"
    if base == "is-json":
        return None if value is None else "is-json with a schema"
    if base.endswith(("-any", "-all")):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else f"{kind} whose value is not a list of text"
    if base == "equals" and not isinstance(value, str):
        return "equals with a non-text value"
    if base != "equals" and not (isinstance(value, str) and value):
        return f"{kind} whose value is not text"
    if base.startswith("i") and any(not v.isascii() for v in _texts(value)):
        return f"{kind} on non-ASCII text (case folding differs between JavaScript and Python)"
    if base == "regex" and _JS_ONLY.search(str(value)):
        return "regex using syntax that JavaScript and Python read differently"
    return None


def skip_reason(row: Row, component: Mapping[str, Any]) -> str | None:
    """Why this stored assertion result is not re-run (None if it is)."""
    assertion = component.get("assertion")
    if not isinstance(assertion, dict):
        return "no assertion"
    if not isinstance(component.get("pass"), bool):
        return "no stored true/false result"
    if not isinstance(row.output, str):
        return "non-text output"
    return rerun_problem(assertion)


def kind_of(component: Mapping[str, Any]) -> str:
    assertion = component.get("assertion")
    return str(assertion.get("type", "?")) if isinstance(assertion, dict) else "?"


def _texts(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]


def rerun(assertion: Mapping[str, Any], output: str) -> bool:
    """The assertion on ``output``, as promptfoo decides it (``rerun_problem`` is None)."""
    kind = str(assertion["type"])
    inverse = kind.startswith("not-")
    base = kind.removeprefix("not-")
    value = assertion.get("value")
    lowered = output.lower()
    if base == "equals":
        passed = output == value
    elif base == "contains":
        passed = str(value) in output
    elif base == "icontains":
        passed = str(value).lower() in lowered
    elif base == "contains-any":
        passed = any(v in output for v in value)  # type: ignore[union-attr]
    elif base == "icontains-any":
        passed = any(v.lower() in lowered for v in value)  # type: ignore[union-attr]
    elif base == "contains-all":
        passed = all(v in output for v in value)  # type: ignore[union-attr]
    elif base == "icontains-all":
        passed = all(v.lower() in lowered for v in value)  # type: ignore[union-attr]
    elif base == "starts-with":
        passed = output.startswith(str(value))
    elif base == "regex":
        try:
            passed = re.search(str(value), output, re.ASCII) is not None
        except re.error:
            passed = False  # promptfoo: an invalid pattern fails
    else:  # is-json
        try:
            json.loads(output, parse_constant=_refuse)
            passed = True
        except ValueError:
            passed = False
    return passed != inverse


def _refuse(name: str) -> Any:
    raise ValueError(name)
