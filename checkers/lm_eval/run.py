"""An lm-evaluation-harness run as its files hold it, and lm-eval's rules re-applied.

``results_<time>.json`` states, per task, each headline figure as ``"METRIC,FILTER"`` (and
its standard error as ``"METRIC_stderr,FILTER"``), the sample counts (``n-samples``:
``original`` documents, ``effective`` evaluated), the task configs (``metric_list`` with
each metric's aggregation), the run's ``config`` (``limit``, ``bootstrap_iters``, seeds)
and ``task_hashes``. With ``--log_samples``, ``samples_<task>_<time>.jsonl`` holds one
record per document and filter: ``doc_id``, ``doc``, ``target`` (as text), ``arguments``
(``{"gen_args_I": {"arg_J": ...}}``), ``filter``, the hashes, and one value per metric.

The rules, as lm-eval 0.4.13 applies them (``evaluator.py``, ``evaluator_utils.py``,
``api/metrics.py``, ``loggers/evaluation_tracker.py``, ``utils.hash_string``):

- a figure whose aggregation is ``mean`` is ``sum(values) / len(values)`` over the records
  of its filter that carry the metric; its stderr is the sample standard deviation over
  the square root of the count (``mean_stderr``), ``"N/A"`` for one value or
  ``bootstrap_iters`` 0; every other aggregation's stderr is a bootstrap (random draws);
- ``doc_hash`` = SHA-256 of ``json.dumps(doc, indent=2, ensure_ascii=False)``,
  ``prompt_hash`` = SHA-256 of the first argument of the first request, ``target_hash`` =
  SHA-256 of the target's text, each of UTF-8;
- ``task_hashes[task]`` = SHA-256 of the concatenated ``doc_hash + prompt_hash +
  target_hash`` of the task's records, in the file's order;
- ``--limit L`` evaluates the first ``ceil(original * L)`` documents when ``L < 1``, else
  the first ``int(L)``; ``effective`` is the largest number of values any metric got.

Records and figures are read strictly: a count must be an integer (``true`` is not one),
a value a finite number (not a boolean); anything else is ``CheckerInputError``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, NamedTuple, TypeGuard

from ..api import CheckerInputError
from ..arithmetic import left_sum

# lm-eval's registered metrics whose default aggregation is ``mean`` (acc_all is not: its
# values are not numbers and its stderr is its own)
MEAN_BY_DEFAULT = frozenset(
    {"acc", "acc_norm", "acc_mutual_info", "acc_bytes", "exact_match", "likelihood"}
)
HASHES = ("doc_hash", "prompt_hash", "target_hash")


def _invalid(message: str) -> CheckerInputError:
    return CheckerInputError("input.invalid", message)


def is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def table(value: Any) -> Mapping[str, Any]:
    """``value`` if it is an object, else an empty one (for fields read only if present)."""
    return value if isinstance(value, dict) else {}


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _invalid(f"{what} is not an object")
    return value


# -- the results file -------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One task's part of a results file."""

    name: str
    figures: Mapping[str, Any]  # "METRIC,FILTER" -> value, as stated
    original: int
    effective: int
    config: Mapping[str, Any]
    limit: float | int | None
    bootstrap_iters: Any

    def figure(self, metric: str, filter_name: str) -> Any:
        return self.figures.get(f"{metric},{filter_name}")

    def stderr(self, metric: str, filter_name: str) -> Any:
        return self.figures.get(f"{metric}_stderr,{filter_name}")

    def aggregation(self, metric: str) -> str | None:
        """The metric's aggregation as the config names it (None: not a name lm-eval
        registers, e.g. a function of the task's own)."""
        entries = self.config.get("metric_list")
        if isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, dict) and entry.get("metric") == metric:
                    found = entry.get("aggregation")
                    if found is None:
                        break
                    return found if isinstance(found, str) else None
        return "mean" if metric in MEAN_BY_DEFAULT else None


def group_names(results: Any) -> list[str]:
    """The groups of tasks the results file names (``group_subtasks``, ``groups``)."""
    document = _object(results, "the results file")
    named = [*table(document.get("group_subtasks")), *table(document.get("groups"))]
    return list(dict.fromkeys(named))


def task_names(results: Any) -> list[str]:
    """The tasks (not groups) whose figures the results file states."""
    figures = _object(_object(results, "the results file").get("results"), "'results'")
    groups = set(group_names(results))
    return [name for name in figures if name not in groups]


def read_task(results: Any, task: str) -> Task:
    """``task``'s figures, counts and config; ``CheckerInputError`` naming what is wrong."""
    document = _object(results, "the results file")
    figures = _object(document.get("results"), "'results'")
    if task not in figures:
        raise _invalid(f"the results state no task {task!r}")
    counts = _object(document.get("n-samples"), "'n-samples'")
    count = _object(counts.get(task), f"n-samples[{task!r}]")
    original, effective = count.get("original"), count.get("effective")
    if not is_count(original) or not is_count(effective) or min(original, effective) < 0:
        raise _invalid(
            f"n-samples[{task!r}] original {original!r} and effective {effective!r} must be "
            "whole numbers of at least 0 (a boolean is not a count)"
        )
    config = table(table(document.get("configs")).get(task))
    run = table(document.get("config"))
    limit = run.get("limit")
    if limit is not None and (not is_number(limit) or limit <= 0):
        raise _invalid(f"config.limit {limit!r} is not a positive number")
    return Task(
        task,
        _object(figures[task], f"results[{task!r}]"),
        original,
        effective,
        config,
        limit,
        run.get("bootstrap_iters"),
    )


def limited(original: int, limit: float | int | None) -> int:
    """How many documents lm-eval evaluates of ``original`` under ``--limit``."""
    if limit is None:
        return original
    size = math.ceil(original * limit) if limit < 1.0 else int(limit)
    return min(original, size)


def stated_task_hash(results: Any, task: str) -> Any:
    return table(_object(results, "the results file").get("task_hashes")).get(task)


# -- the samples file -------------------------------------------------------------------


class Record(NamedTuple):
    """One record of a samples file (a tuple: made in a few hundred nanoseconds)."""

    line: int
    doc_id: Any
    filter: str
    raw: Mapping[str, Any]

    @property
    def label(self) -> str:
        return f"line {self.line} (doc_id {self.doc_id!r}, filter {self.filter!r})"


def read_records(samples: Any) -> list[Record]:
    """The records of a samples file (a list of ``(line, value)`` pairs, as loaded)."""
    return list(each_record(samples))


def each_record(samples: Any) -> Iterator[Record]:
    """``read_records``, a record at a time: a check that reads each record once keeps
    none (so builds no garbage collections over the loaded file)."""
    if not isinstance(samples, list):
        raise _invalid("the samples file is not JSON Lines")
    for line, value in samples:
        if not isinstance(value, dict):
            raise _invalid(f"line {line} is not an object")
        doc_id, filter_name = value.get("doc_id"), value.get("filter")
        if not is_count(doc_id) or not isinstance(filter_name, str):
            raise _invalid(
                f"line {line}: doc_id {doc_id!r} must be a whole number and filter "
                f"{filter_name!r} a text"
            )
        yield Record(line, doc_id, filter_name, value)


class Tally(NamedTuple):
    """A filter's records as lm-eval averages one metric over them."""

    values: list[float]  # the values it averages, in file order
    omitted: list[int]  # lines of records the task's rule leaves out (``metrics`` omits it)
    missing: list[Record]  # records without a value lm-eval would have stored


def tally(records: Iterable[Record], metric: str, filter_name: str) -> Tally:
    """The records of ``filter_name`` sorted by lm-eval's rule for ``metric``: a record
    holding the value is averaged (a value that is not a finite number is
    ``input.invalid``); one without it is left out where its ``metrics`` list (the keys
    the task's ``process_results`` gave) omits the metric, and is missing otherwise (its
    list names the metric, or it has none)."""
    found: list[float] = []
    omitted: list[int] = []
    missing: list[Record] = []
    for record in records:
        if record.filter != filter_name:
            continue
        if metric in record.raw:
            value = record.raw[metric]
            if not is_number(value):
                raise _invalid(
                    f"{record.label}: {metric} {value!r} is not a finite number (a boolean is "
                    "not one); the figure is not re-derived"
                )
            found.append(value)
            continue
        named = record.raw.get("metrics")
        listed = isinstance(named, list) and all(isinstance(n, str) for n in named)
        if listed and metric not in (named or ()):
            omitted.append(record.line)
            continue
        missing.append(record)
    return Tally(found, omitted, missing)


def mean(items: list[float]) -> float:
    """lm-eval's ``mean``: the sum in order over the count."""
    return left_sum(items) / len(items)


def mean_stderr(items: list[float]) -> float:
    """lm-eval's ``mean_stderr``: sample standard deviation / sqrt(count); two or more."""
    mu = mean(items)
    return math.sqrt(left_sum((x - mu) ** 2 for x in items) / (len(items) - 1)) / math.sqrt(
        len(items)
    )


# -- hashes -----------------------------------------------------------------------------


def sha256_text(text: str) -> str:
    """lm-eval's ``hash_string``; text that is not valid Unicode (a lone surrogate) is
    ``CheckerInputError``: lm-eval cannot have hashed it."""
    try:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        raise _invalid("a hashed text holds a lone surrogate: not text lm-eval wrote") from None


def recomputed_hashes(record: Record) -> dict[str, str]:
    """``doc_hash``, ``prompt_hash`` and ``target_hash`` recomputed from the record."""
    raw = record.raw
    if "doc" not in raw or not isinstance(raw.get("target"), str):
        raise _invalid(f"{record.label}: needs a 'doc' and a text 'target'")
    arguments = raw.get("arguments")
    first = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    prompt = first.get("arg_0") if isinstance(first, dict) else None
    if not isinstance(prompt, str):
        raise _invalid(f"{record.label}: arguments.gen_args_0.arg_0 (the prompt) is not text")
    doc = doc_text(raw["doc"])
    if doc is None:
        try:
            doc = json.dumps(raw["doc"], indent=2, ensure_ascii=False)
        except ValueError as exc:  # a value that contains itself cannot come from JSON
            raise _invalid(f"{record.label}: doc: {exc}") from None
    return {
        "doc_hash": sha256_text(doc),
        "prompt_hash": sha256_text(prompt),
        "target_hash": sha256_text(raw["target"]),
    }


# ``json.dumps(value, indent=2, ensure_ascii=False)`` is written by Python's own encoder, a
# generator a value (the C encoder takes no indent). The same text is put together from the
# C encoder's: a container of scalars is one call with its level's separators, and only
# containers holding containers are walked. For values of JSON's exact types the two
# encoders write each scalar alike (``float.__repr__``, ``int.__repr__``, ``NaN``, the same
# string escapes); any other value, or one nested deeper than ``_DEEPEST``, gets None.
_SCALARS = frozenset({str, int, float, bool, type(None)})
_TEXT = frozenset({str})
_DEEPEST = 100
_ENCODERS: dict[int, json.JSONEncoder] = {}


def _encoder(level: int) -> json.JSONEncoder:
    """The C encoder writing items at ``level`` (each on a line indented by it)."""
    found = _ENCODERS.get(level)
    if found is None:
        item = ",\n" + "  " * level
        found = _ENCODERS[level] = json.JSONEncoder(ensure_ascii=False, separators=(item, ": "))
    return found


def doc_text(value: Any, level: int = 0) -> str | None:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, or None (see above)."""
    kind = type(value)
    if kind in _SCALARS:
        return _encoder(0).encode(value)
    if kind is dict:
        if not _TEXT.issuperset(map(type, value)):
            return None
        children: Iterable[Any] = value.values()
    elif kind is list:
        children = value
    else:
        return None
    if not value:
        return "{}" if kind is dict else "[]"
    if level >= _DEEPEST:
        return None
    inner = "\n" + "  " * (level + 1)
    if _SCALARS.issuperset(map(type, children)):
        body = _encoder(level + 1).encode(value)[1:-1]
    else:
        parts = [doc_text(child, level + 1) for child in children]
        if None in parts:
            return None
        if kind is dict:
            parts = [
                f"{encode_basestring(key)}: {text}" for key, text in zip(value, parts, strict=True)
            ]
        body = ("," + inner).join(parts)  # type: ignore[arg-type]
    opening, closing = ("{", "}") if kind is dict else ("[", "]")
    return opening + inner + body + "\n" + "  " * level + closing


def task_hash(records: Iterable[Record]) -> str:
    """lm-eval's task hash of the records as stored (their own hash fields, in order)."""
    parts = []
    for record in records:
        stored = [record.raw.get(name) for name in HASHES]
        texts = [h for h in stored if isinstance(h, str)]
        if len(texts) != len(HASHES):
            raise _invalid(f"{record.label}: doc_hash, prompt_hash and target_hash must be text")
        parts.append("".join(texts))
    return sha256_text("".join(parts))
