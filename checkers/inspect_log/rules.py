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

from ..api import CheckerInputError
from .log import (
    InspectLog,
    Record,
    is_scalar,
    to_float,
    unscored,
)

METRICS = ("accuracy", "mean", "stderr", "std", "var")
_REDUCER = re.compile(r"^(mean|median|mode|max|pass_at_(\d+)|at_least_(\d+))$")
RESCORERS = ("match", "includes", "exact", "pattern")
_RESCORE_OPTIONS: Mapping[str, Mapping[str, tuple[type, ...]]] = {
    "match": {"location": (str,), "ignore_case": (bool,), "numeric": (bool,)},
    "includes": {"ignore_case": (bool,)},
    "exact": {},
    "pattern": {"pattern": (str,), "ignore_case": (bool,), "match_all": (bool,)},
}


def known_reducer(name: str | None) -> bool:
    return name is None or bool(_REDUCER.match(name))


def reduce(values: list[Any], reducer: str | None) -> Any:
    """One sample's epochs -> one value, as Inspect's reducer of that name does.
    NaN means unscored (no reducible value, or fewer epochs than pass@k needs)."""
    kept = [v for v in values if not unscored(v) and not unscored(to_float(v))]
    if not kept:
        return math.nan
    name = reducer or "mean"
    found = _REDUCER.match(name)
    if found is None:
        raise CheckerInputError("params.invalid", f"reducer {name!r} is not one this checker knows")
    floats = [to_float(v) for v in kept]
    if name == "mean":
        return statistics.mean(floats)
    if name == "median":
        return statistics.median(floats)
    if name == "mode":
        return Counter(kept).most_common(1)[0][0]
    if name == "max":
        return max(kept, key=to_float)
    if found.group(2):
        k = int(found.group(2))
        total, correct = len(floats), sum(1 for f in floats if f >= 1.0)
        if total < k:
            return math.nan
        if total - correct < k:
            return 1.0
        product = 1.0
        for n in range(total - correct + 1, total + 1):
            product *= 1.0 - k / n
        return 1.0 - product
    k = int(found.group(3))
    return 1 if sum(1 for f in floats if f >= 1.0) >= k else 0


def metric(values: list[float], name: str) -> float:
    """A metric over reduced values, as Inspect's default metric of that name computes it."""
    n = len(values)
    if name in ("accuracy", "mean"):
        return sum(values) / n if n else 0.0
    if n < 2:
        return 0.0
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
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
        if unscored(value) or unscored(to_float(value)):
            unscored_samples += 1
        else:
            reduced.append(to_float(value))
    return {
        "value": metric(reduced, name),
        "scored_samples": len(reduced),
        "unscored_samples": unscored_samples,
    }


def pooled(log: InspectLog, scorer: str) -> dict[str, Any]:
    """Every epoch on its own: the sum of values over the scored epochs, and over every
    epoch with errors counted as failures."""
    scored = [r.scores[scorer].value for r in log.records if scorer in r.scores]
    total = sum(to_float(v) for v in scored if is_scalar(v) and not unscored(v))
    return {
        "sum": total,
        "scored_epochs": len(scored),
        "epochs": len(log.records),
        "errored_epochs": len(log.errored),
    }


def header_figure(log: InspectLog, scorer: str, reducer: str | None, name: str) -> Any:
    """What the header says for that figure, or None if it does not state it."""
    for entry in log.result_scores():
        if entry.get("name") == scorer and entry.get("reducer") == reducer:
            metrics = entry.get("metrics") or {}
            found = metrics.get(name) if isinstance(metrics, dict) else None
            if isinstance(found, dict):
                return found.get("value")
    return None


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
    method: str, options: Mapping[str, Any], completion: str, targets: tuple[str, ...]
) -> str:
    """C or I: what Inspect's deterministic scorer gives for this completion and target."""
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
    found = re.search(str(options["pattern"]), completion, re.IGNORECASE if ignore_case else 0)
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
