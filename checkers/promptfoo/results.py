"""A promptfoo results file (``promptfoo eval -o results.json``, ``version`` 3), read strictly.

The file holds, per test row, the stored output (``response.output``), whether it passed
(``success``), why not (``failureReason``: 1 an assertion failed, 2 an error such as a
provider failure) and each assertion's result (``gradingResult.componentResults``), and
the run's totals (``results.stats``). Version 1 of the checkers reads it with
``read_rows``, version 2 strictly with ``read_results``; the assertions are re-run by
``assertions.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import strictjson
from ..api import CheckerInputError
from ..arithmetic import left_sum

KNOWN_VERSIONS = (3,)
ERROR = 2  # promptfoo's ResultFailureReason.ERROR


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


def read_rows(data: bytes) -> tuple[Mapping[str, Any], list[Row]]:
    """The ``results`` object and its rows. Raises ``CheckerInputError`` naming the problem."""
    return _rows_of(_document(data))


def _document(data: bytes) -> dict[str, Any]:
    """The parsed file, with a version-3 ``results`` object holding a list of rows."""
    try:  # as every version reads it: NaN, infinities and any depth Python reads accepted
        document = strictjson.loads(data, None, constants=True, huge_numbers=True)
    except strictjson.DuplicateKey as exc:
        raise CheckerInputError(
            "input.invalid", f"key {exc.key!r} appears twice in one object"
        ) from None
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
    if not isinstance(results.get("results"), list):
        raise CheckerInputError("input.invalid", "results.results must be a list of rows")
    return document  # type: ignore[no-any-return]


def _rows_of(document: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[Row]]:
    results = document["results"]
    raw = results["results"]
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
    errors = left_sum(1 for r in rows if r.errored)
    successes = left_sum(1 for r in rows if r.success)
    return {
        "tests": len(rows),
        "successes": successes,
        "failures": len(rows) - successes - errors,
        "errors": errors,
    }


COUNTS = ("tests", "successes", "failures", "errors")


def kind_of(component: Mapping[str, Any]) -> str:
    assertion = component.get("assertion")
    return str(assertion.get("type", "?")) if isinstance(assertion, dict) else "?"


# -- version 2: the file read strictly, every count an integer -------------------------------


@dataclass(frozen=True)
class RowV2:
    index: int
    output: Any
    success: bool
    errored: bool
    prompt: int | None  # promptIdx
    tokens: Mapping[str, int] | None  # prompt / completion tokens; None: no tokenUsage
    components: tuple[Mapping[str, Any], ...]

    @property
    def label(self) -> str:
        return f"results[{self.index}]"


@dataclass(frozen=True)
class ResultsV2:
    version: int
    rows: tuple[RowV2, ...]
    stats: Mapping[str, int]  # successes, failures, errors; prompt_tokens, completion_tokens
    prompt_metrics: tuple[Mapping[str, int], ...]  # per prompt: testPassCount, ...
    promptfoo_version: str | None


STAT_COUNTS = ("successes", "failures", "errors")
TOKEN_FIGURES = {"prompt": "prompt_tokens", "completion": "completion_tokens"}
PROMPT_COUNTS = {
    "testPassCount": "successes",
    "testFailCount": "failures",
    "testErrorCount": "errors",
    "assertPassCount": "assert_passes",
    "assertFailCount": "assert_failures",
}
_FAILURE_REASONS = (0, 1, ERROR)


def count_problem(value: Any) -> str | None:
    """Why ``value`` is not a count (an integer >= 0; a boolean is not one), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be an integer count, observed {value!r}"
    if value < 0:
        return f"must be 0 or more, observed {value}"
    return None


def _count(value: Any, where: str) -> int:
    problem = count_problem(value)
    if problem:
        raise CheckerInputError("input.invalid", f"{where} {problem}")
    return int(value)


def _object(value: Any, where: str, default: Any = None) -> Any:
    if value is None and default is not None:
        return default
    if not isinstance(value, dict):
        raise CheckerInputError("input.invalid", f"{where} must be an object")
    return value


def _tokens(usage: Any, where: str) -> dict[str, int]:
    usage = _object(usage, where, {})
    return {
        name: _count(usage[key], f"{where}.{key}")
        for key, name in TOKEN_FIGURES.items()
        if usage.get(key) is not None
    }


def _row_v2(i: int, row: Any) -> RowV2:
    where = f"results[{i}]"
    if not isinstance(row, dict) or not isinstance(row.get("success"), bool):
        raise CheckerInputError("input.invalid", f"{where} needs a true/false 'success'")
    reason = row.get("failureReason")
    if reason is not None and (isinstance(reason, bool) or reason not in _FAILURE_REASONS):
        raise CheckerInputError(
            "input.invalid", f"{where}.failureReason must be 0, 1 or 2, observed {reason!r}"
        )
    if row["success"] and reason not in (None, 0):
        raise CheckerInputError(
            "input.invalid", f"{where} is a success with failureReason {reason}: contradictory"
        )
    response = _object(row.get("response"), f"{where}.response", {})
    grading = _object(row.get("gradingResult"), f"{where}.gradingResult", {})
    components = grading.get("componentResults") or []
    if not isinstance(components, list) or not all(isinstance(c, dict) for c in components):
        raise CheckerInputError("input.invalid", f"{where}.gradingResult.componentResults")
    prompt = row.get("promptIdx")
    return RowV2(
        i,
        response.get("output"),
        row["success"],
        reason == ERROR,
        None if prompt is None else _count(prompt, f"{where}.promptIdx"),
        None
        if row.get("tokenUsage") is None
        else _tokens(row["tokenUsage"], f"{where}.tokenUsage"),
        tuple(components),
    )


_PARSED: dict[bytes, ResultsV2] = {}


def read_results(data: bytes) -> ResultsV2:
    """The file read strictly for the version-2 checkers: every count an integer >= 0 (a
    boolean is not one), rows whose success and failureReason agree. Raises
    ``CheckerInputError`` naming the problem. The last two files read are kept."""
    import hashlib

    key = hashlib.sha256(data).digest()
    if key in _PARSED:
        return _PARSED[key]
    results = _document(data)
    results_object = results["results"]
    rows = tuple(_row_v2(i, row) for i, row in enumerate(results_object["results"]))
    stats_object = _object(results_object.get("stats"), "results.stats", {})
    stats = {k: _count(stats_object[k], f"stats.{k}") for k in STAT_COUNTS if k in stats_object}
    stats.update(_tokens(stats_object.get("tokenUsage"), "stats.tokenUsage"))
    prompts = results_object.get("prompts") or []
    if not isinstance(prompts, list):
        raise CheckerInputError("input.invalid", "results.prompts must be a list")
    metrics = []
    for j, prompt in enumerate(prompts):
        figures = _object(
            _object(prompt, f"prompts[{j}]").get("metrics"), f"prompts[{j}].metrics", {}
        )
        metrics.append(
            {
                k: _count(figures[k], f"prompts[{j}].metrics.{k}")
                for k in PROMPT_COUNTS
                if k in figures
            }
        )
    meta = results.get("metadata")
    version = meta.get("promptfooVersion") if isinstance(meta, dict) else None
    parsed = ResultsV2(
        3, rows, stats, tuple(metrics), version if isinstance(version, str) else None
    )
    if len(_PARSED) >= 2:
        _PARSED.clear()
    _PARSED[key] = parsed
    return parsed


def prompt_counts(rows: list[RowV2]) -> dict[str, int | None]:
    """One prompt's figures from its rows, as ``updatePromptMetricsForRow`` adds them: the
    test counts, and the stored assertion results that passed and failed (None when a
    comparison assertion, whose counts promptfoo adds apart, or a non-boolean ``pass``
    makes them uncertain)."""
    figures: dict[str, int | None] = dict(counts_v2(rows))
    components = [c for r in rows for c in r.components]
    certain = all(
        isinstance(c.get("pass"), bool)
        and not kind_of(c).startswith("select-")
        and kind_of(c) != "max-score"
        for c in components
    )
    figures["assert_passes"] = left_sum(c["pass"] for c in components) if certain else None
    figures["assert_failures"] = left_sum(not c["pass"] for c in components) if certain else None
    return figures


def counts_v2(rows: tuple[RowV2, ...] | list[RowV2]) -> dict[str, int]:
    """successes, failures, errors and tests as promptfoo 0.123.1 counts them
    (``Evaluator.trackRowStats``): a success, else an error (failureReason 2), else a
    failure."""
    successes = left_sum(1 for r in rows if r.success)
    errors = left_sum(1 for r in rows if not r.success and r.errored)
    return {
        "tests": len(rows),
        "successes": successes,
        "failures": len(rows) - successes - errors,
        "errors": errors,
    }


def tokens_v2(rows: tuple[RowV2, ...]) -> dict[str, int]:
    """prompt and completion tokens summed over the rows' ``tokenUsage`` (a missing figure
    adds 0, as promptfoo's ``addNumbers``); empty when a row has no ``tokenUsage`` (promptfoo
    0.121 and 0.123 write one on every row; a file without them was summed by other rules)."""
    if any(r.tokens is None for r in rows):
        return {}
    return {
        name: left_sum(r.tokens.get(name, 0) for r in rows if r.tokens is not None)
        for name in TOKEN_FIGURES.values()
    }


# -- version 4: each result once -------------------------------------------------------------

SHOWN_REPEATS = 5  # (testIdx, promptIdx) pairs named in a message


def repeated_results(data: bytes) -> tuple[int, list[str]]:
    """How many rows repeat a result, and the first pairs that do (``testIdx 4, promptIdx
    0 at results[4], results[5], ...``). promptfoo's evaluator gives every test case, var
    combination and repeat its own ``testIdx`` and every prompt its ``promptIdx``, and
    writes one result per pair (its ``--resume`` finds completed work by that pair): a row
    written twice is not a second test. A row without integer ``testIdx`` and
    ``promptIdx`` is ``input.invalid`` (the rows cannot be told apart)."""
    rows = _document(data)["results"]["results"]
    where: dict[tuple[int, int], list[int]] = {}
    for i, row in enumerate(rows):
        pair = []
        for key in ("testIdx", "promptIdx"):
            value = row.get(key) if isinstance(row, dict) else None
            problem = count_problem(value)
            if problem or not isinstance(value, int):
                raise CheckerInputError(
                    "input.invalid",
                    f"results[{i}].{key} {problem}: promptfoo writes it on every result, and "
                    "without it a result written twice cannot be told from two tests",
                )
            pair.append(value)
        where.setdefault((pair[0], pair[1]), []).append(i)
    twice = [(pair, rows_at) for pair, rows_at in where.items() if len(rows_at) > 1]
    extra = left_sum(len(rows_at) - 1 for _, rows_at in twice)
    named = [
        f"testIdx {t}, promptIdx {p} at "
        + ", ".join(f"results[{i}]" for i in rows_at[:SHOWN_REPEATS])
        + (f" and {len(rows_at) - SHOWN_REPEATS} more" if len(rows_at) > SHOWN_REPEATS else "")
        for (t, p), rows_at in twice[:SHOWN_REPEATS]
    ]
    return extra, named
