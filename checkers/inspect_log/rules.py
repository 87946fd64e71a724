"""Inspect AI's rules, re-implemented: reducers, metrics, sample counts and the deterministic
scorers (as of inspect-ai 0.3.285), applied to a log's own samples.

Errored samples are where figures mislead: Inspect drops an errored epoch from every
figure (and a sample with fewer than k scored epochs from pass@k), so the denominator
shrinks. ``figure`` recomputes a figure Inspect's way; ``pooled`` gives the rate with
errors counted, for comparison.
"""

from __future__ import annotations

import math
import re
import statistics
import string
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .. import linear
from ..api import CheckerInputError
from ..arithmetic import left_sum
from .log import (
    InspectLog,
    Record,
    is_scalar,
    to_float,
    unscored,
)

METRICS = ("accuracy", "mean", "stderr", "std", "var")
REDUCER = re.compile(r"^(mean|median|mode|max|pass_at_(\d+)|at_least_(\d+))$")
RESCORERS = ("match", "includes", "exact", "pattern")
_RESCORE_OPTIONS: Mapping[str, Mapping[str, tuple[type, ...]]] = {
    "match": {"location": (str,), "ignore_case": (bool,), "numeric": (bool,)},
    "includes": {"ignore_case": (bool,)},
    "exact": {},
    "pattern": {"pattern": (str,), "ignore_case": (bool,), "match_all": (bool,)},
}


def known_reducer(name: str | None) -> bool:
    return name is None or bool(REDUCER.match(name))


def reduce(values: list[Any], reducer: str | None) -> Any:
    """One sample's epochs -> one value, as Inspect's reducer of that name does.
    NaN means unscored (no reducible value, or fewer epochs than pass@k needs)."""
    kept, floats = [], []
    for v in values:
        if not unscored(v) and not unscored(f := to_float(v)):
            kept.append(v)
            floats.append(f)
    if not kept:
        return math.nan
    name = reducer or "mean"
    found = REDUCER.match(name)
    if found is None:
        raise CheckerInputError("params.invalid", f"reducer {name!r} is not one this checker knows")
    if name == "mean":
        return _mean(floats)
    if name == "median":
        return statistics.median(floats)
    if name == "mode":
        return Counter(kept).most_common(1)[0][0]
    if name == "max":
        return max(kept, key=to_float)
    if found.group(2):
        k = int(found.group(2))
        total, correct = len(floats), left_sum(1 for f in floats if f >= 1.0)
        if total < k:
            return math.nan
        if total - correct < k:
            return 1.0
        product = 1.0
        for n in range(total - correct + 1, total + 1):
            product *= 1.0 - k / n
        return 1.0 - product
    k = int(found.group(3))
    return 1 if left_sum(1 for f in floats if f >= 1.0) >= k else 0


def _mean(floats: list[float]) -> float:
    """``statistics.mean(floats)``, the same float, without its exact sum of fractions
    where plain arithmetic is exact too: one finite value, or fewer than 2**20 whole
    numbers each below 2**32 (every partial sum exact, then one correctly rounded
    division, as ``statistics`` rounds its exact quotient once)."""
    if (len(floats) == 1 and math.isfinite(floats[0])) or (
        len(floats) < 1 << 20 and all(f.is_integer() and abs(f) < 1 << 32 for f in floats)
    ):
        return left_sum(floats) / len(floats)  # sum starts at 0: -0.0 gives 0.0, as there
    return statistics.mean(floats)


def metric(values: list[float], name: str) -> float:
    """A metric over reduced values, as Inspect's default metric of that name computes it."""
    n = len(values)
    if name in ("accuracy", "mean"):
        return left_sum(values) / n if n else 0.0
    if n < 2:
        return 0.0
    mean = left_sum(values) / n
    variance = left_sum((v - mean) ** 2 for v in values) / (n - 1)
    if name == "var":
        return variance
    if name == "std":
        return math.sqrt(variance)
    return math.sqrt(variance) / math.sqrt(n)  # stderr


def by_sample(log: InspectLog) -> dict[str | int, list[Record]]:
    out: dict[str | int, list[Record]] = {}
    for record in log.records:
        out.setdefault(record.sample_id, []).append(record)
    return out


def figure(
    log: InspectLog, scorer: str, reducer: str | None, name: str, errors_fail: bool = False
) -> dict[str, Any]:
    """The figure recomputed from the records: value, samples scored and unscored.

    ``errors_fail``: an epoch with no score for ``scorer`` (an errored one) counts as a
    failure (0) instead of being dropped."""
    reduced: list[float] = []
    unscored_samples = 0
    for records in by_sample(log).values():
        values = []
        for r in records:
            score = r.scores.get(scorer)
            if score is not None:
                if not is_scalar(score.value):
                    raise CheckerInputError(
                        "input.invalid",
                        f"{r.where}: score {scorer!r} is a {type(score.value).__name__}; "
                        "this checker recomputes scalar scores only",
                    )
                values.append(score.value)
            elif errors_fail:
                values.append(0.0)
        if not values:
            continue  # no epoch of this sample was scored: Inspect leaves it out
        value = reduce(values, reducer)
        if unscored(value) or unscored(number := to_float(value)):
            unscored_samples += 1
        else:
            reduced.append(number)
    return {
        "value": metric(reduced, name),
        "scored_samples": len(reduced),
        "unscored_samples": unscored_samples,
    }


def pooled(log: InspectLog, scorer: str) -> dict[str, Any]:
    """Every epoch on its own: the sum of values over the scored epochs, and over every
    epoch with errors counted as failures."""
    scored = [r.scores[scorer].value for r in log.records if scorer in r.scores]
    total = left_sum(to_float(v) for v in scored if is_scalar(v) and not unscored(v))
    return {
        "sum": total,
        "scored_epochs": len(scored),
        "epochs": len(log.records),
        "errored_epochs": len(log.errored),
    }


def header_entry(log: InspectLog, scorer: str, reducer: str | None) -> Mapping[str, Any] | None:
    """The header's result entry for ``scorer`` x ``reducer`` (None if it states none).
    An entry stated twice is refused: which of the two a reader shows is not defined."""
    found = [
        e
        for e in log.result_scores()
        if e.get("name") == scorer and (e.get("reducer") or None) == reducer
    ]
    if len(found) > 1:
        raise CheckerInputError(
            "input.invalid",
            f"the header states {len(found)} results for {scorer!r} with reducer "
            f"{reducer or 'none'}: which one it claims is not defined",
        )
    return found[0] if found else None


def header_metric(entry: Mapping[str, Any], name: str) -> float | None:
    """The value an entry states for metric ``name``: a finite number, or None if the
    entry does not state it. Anything else is refused by name."""
    metrics = entry.get("metrics") or {}
    stated = metrics.get(name)
    if stated is None:
        return None
    value = stated.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CheckerInputError(
            "input.invalid",
            f"the header's {entry.get('name')} {name} is {value!r}, not a finite number: "
            "it cannot be compared",
        )
    return float(value)


def header_count(source: Mapping[str, Any], key: str, where: str) -> int | None:
    """A whole count the header states at ``where``, or None if it states none."""
    value = source.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CheckerInputError(
            "input.invalid", f"the header's {where}.{key} is {value!r}, not a count"
        )
    return value


def header_counts(log: InspectLog) -> dict[str, int]:
    """The sample counts the header states: ``results.total_samples`` and
    ``completed_samples`` (and errored, their difference); a log with no results states
    only its plan's total, ``eval.dataset.samples`` x ``eval.config.epochs``."""
    results = log.results
    if results is not None:
        total = header_count(results, "total_samples", "results")
        completed = header_count(results, "completed_samples", "results")
        stated = {"total_samples": total, "completed_samples": completed}
        if total is not None and completed is not None:
            stated["errored_samples"] = total - completed
        return {k: v for k, v in stated.items() if v is not None}
    samples = header_count(log.spec.get("dataset") or {}, "samples", "eval.dataset")
    epochs = header_count(log.spec.get("config") or {}, "epochs", "eval.config")
    return {} if samples is None else {"total_samples": samples * (epochs or 1)}


def close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance + 1e-9 * max(abs(a), abs(b))


COUNTS = ("total_samples", "completed_samples", "errored_samples", "samples", "epochs")


def counts(log: InspectLog) -> dict[str, int]:
    """Counts over the records: total (sample x epoch), completed, errored, samples, epochs."""
    errored = len(log.errored)
    return {
        "total_samples": len(log.records),
        "completed_samples": len(log.records) - errored,
        "errored_samples": errored,
        "samples": len({r.sample_id for r in log.records}),
        "epochs": max((r.epoch for r in log.records), default=0),
    }


def _strip_punctuation(text: str) -> str:
    return text.strip(string.whitespace + string.punctuation)


def _finite_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _match(value: str, target: str, location: str, ignore_case: bool) -> bool:
    v, t = value.strip(), target.strip()
    if ignore_case:
        v, t = v.casefold(), t.casefold()
    v, t = _strip_punctuation(v), _strip_punctuation(t)
    if location == "begin":
        return v.startswith(t)
    if location == "end":
        return v.endswith(t)
    if location == "exact":
        return v == t
    return t in v


_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def _normalize_token(token: str) -> str:
    token = token.casefold()
    if not _finite_number(token):
        stripped = _strip_punctuation(token)
        if _finite_number(stripped):
            token = stripped
        else:
            token = "".join(ch for ch in token if ch not in string.punctuation)
    if _finite_number(token):
        token = str(float(token))
    token = _ARTICLES.sub(" ", token)
    return " ".join(token.split())


def _normalize(text: str) -> str:
    tokens = [_normalize_token(t) for t in re.split(" |-", text)]
    return " ".join(t for t in tokens if t.strip()).strip()


def rescore(
    method: str,
    options: Mapping[str, Any],
    completion: str,
    targets: tuple[str, ...],
    linear_only: bool = False,
    where: str = "",
) -> str:
    """C or I: what Inspect's deterministic scorer gives for this completion and target.
    ``linear_only``: a pattern runs on RE2 only, and one outside the subset (for this
    completion, ``where``) raises ``linear.not_rerun`` instead of running on Python's re."""
    ignore_case = bool(options.get("ignore_case", True))
    if method == "match":
        location = str(options.get("location", "end"))
        return "C" if any(_match(completion, t, location, ignore_case) for t in targets) else "I"
    if method == "includes":
        text = completion.casefold() if ignore_case else completion
        return "C" if any((t.casefold() if ignore_case else t) in text for t in targets) else "I"
    if method == "exact":
        answer = _normalize(completion)
        return "C" if any(_normalize(t) and _normalize(t) == answer for t in targets) else "I"
    # (a+)+$ is a linear scan: RE2 wherever it means what Python's re means
    pattern = str(options["pattern"])
    if linear_only:
        found = linear.search_linear(pattern, completion, ignore_case, where)
    else:
        found = linear.search(pattern, completion, ignore_case)
    if not found:
        return "I"
    groups = [g for g in (found.groups() or (found.group(0),))]
    wanted = [t.lower() for t in targets] if ignore_case else list(targets)

    def hit(g: str) -> bool:
        return (g.lower() if ignore_case else g) in wanted

    strings = [g for g in groups if isinstance(g, str)]
    if options.get("match_all", False):
        return "C" if strings and all(hit(g) for g in strings) else "I"
    return "C" if any(hit(g) for g in strings) else "I"


_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "match": {"location": "end", "ignore_case": True, "numeric": False},
    "includes": {"ignore_case": True},
    "exact": {},
    "pattern": {"ignore_case": True, "match_all": False},
}


def effective_options(method: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options with Inspect's defaults filled in (a log records only those given)."""
    return {**_DEFAULTS.get(method, {}), **options}


def recorded_scorer(log: InspectLog, score: str) -> tuple[str, Mapping[str, Any]]:
    """The scorer that made the samples' ``score`` and the options the log records for it:
    the scorer a result entry of that name names (the score's own name otherwise), found
    in ``eval.scorers``. Refused when the log does not record it or records it twice
    with different options."""
    makers = {
        str(e["scorer"])
        for e in log.result_scores()
        if e.get("name") == score and e.get("scorer") is not None
    }
    if len(makers) > 1:
        raise CheckerInputError(
            "input.invalid", f"the header names {len(makers)} scorers for the score {score!r}"
        )
    method = (makers.pop() if makers else score).removeprefix("inspect_ai/")
    options = [
        s.get("options") or {}
        for s in log.spec.get("scorers") or []
        if str(s.get("name", "")).removeprefix("inspect_ai/") == method
    ]
    if not options:
        raise CheckerInputError(
            "input.invalid",
            f"the log records no scorer {method!r} (eval.scorers) for the score {score!r}: "
            "how its scores were made is not stated, so they are not re-scored",
        )
    if any(o != options[0] for o in options):
        raise CheckerInputError(
            "input.invalid",
            f"the log records the scorer {method!r} {len(options)} times with different "
            "options: which made the score is not stated",
        )
    return method, options[0]


def rescore_problem(method: str, options: Mapping[str, Any]) -> str | None:
    """Why this scorer configuration is not re-scored here (None if it is)."""
    if method not in _RESCORE_OPTIONS:
        return f"scorer {method!r} is not one this checker re-scores ({', '.join(RESCORERS)})"
    allowed = _RESCORE_OPTIONS[method]
    for key, value in options.items():
        if key not in allowed:
            known = ", ".join(allowed) or "none"
            return f"{method} option {key!r} is not one this checker knows ({known})"
        if isinstance(value, bool) != (bool in allowed[key]) or not isinstance(value, allowed[key]):
            return f"{method} option {key!r} has the wrong type ({type(value).__name__})"
    if method == "match":
        if options.get("numeric", False):
            return "match with numeric=True (number parsing) is not re-implemented here"
        if options.get("location", "end") not in ("begin", "end", "any", "exact"):
            return f"match location {options['location']!r} is unknown"
    if method == "pattern":
        if "pattern" not in options:
            return "pattern needs its 'pattern' option"
        try:
            re.compile(str(options["pattern"]))
        except re.error as exc:
            return f"pattern {options['pattern']!r} is not a regular expression ({exc})"
    return None
