"""The deterministic assertions of a promptfoo results file re-run: version 1 as promptfoo
0.121 decides them, version 2 under the rules of promptfoo 0.123.1 (regular expressions
as JavaScript reads them, text compared in UTF-16 units, a banded levenshtein), and for
each assertion not re-run, why.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .results import Row, RowV2, kind_of

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


def skip_reason(
    row: Row | RowV2,
    component: Mapping[str, Any],
    problem: Callable[[Mapping[str, Any]], str | None] | None = None,
) -> str | None:
    """Why this stored assertion result is not re-run (None if it is); ``problem`` is the
    version's rule for the assertion itself (default: version 1's ``rerun_problem``)."""
    assertion = component.get("assertion")
    if not isinstance(assertion, dict):
        return "no assertion"
    if not isinstance(component.get("pass"), bool):
        return "no stored true/false result"
    if not isinstance(row.output, str):
        return "non-text output"
    return (problem or rerun_problem)(assertion)


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


# -- version 2: the rules of promptfoo 0.123.1 -------------------------------------------------

RULES_VERSION = "0.123.1"  # the promptfoo whose source the version-2 rules follow
# promptfoo 0.123.1's own MODEL_GRADED_ASSERTION_TYPES, and the other types that call a
# model or a service (embeddings, classifiers, moderation, Pi, the select-best judge)
MODEL_GRADED = frozenset(
    {
        "agent-rubric",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "factuality",
        "llm-rubric",
        "model-graded-closedqa",
        "model-graded-factuality",
        "search-rubric",
        "trajectory:goal-success",
        "g-eval",
        "conversation-relevance",
        "similar",
        "similar:cosine",
        "similar:dot",
        "similar:euclidean",
        "classifier",
        "moderation",
        "pi",
        "select-best",
    }
)
CODE = frozenset({"javascript", "python", "ruby", "webhook"})
# every other type promptfoo 0.123.1 documents (BaseAssertionTypesSchema and the special
# ones): deterministic on what the run recorded, but not re-implemented here
DETERMINISTIC_NOT_RERUN = frozenset(
    {
        "bleu",
        "contains-html",
        "contains-json",
        "contains-sql",
        "contains-xml",
        "cost",
        "finish-reason",
        "gleu",
        "guardrails",
        "is-html",
        "is-refusal",
        "is-sql",
        "is-valid-function-call",
        "is-valid-openai-function-call",
        "is-valid-openai-tools-call",
        "is-xml",
        "latency",
        "meteor",
        "perplexity",
        "perplexity-score",
        "rouge-n",
        "tool-call-f1",
        "skill-used",
        "trajectory:tool-args-match",
        "trajectory:step-count",
        "trajectory:tool-sequence",
        "trajectory:tool-used",
        "trace-error-spans",
        "trace-span-count",
        "trace-span-duration",
        "word-count",
        "max-score",
        "human",
        "assert-set",
    }
)
RERUN_V2 = (*ASSERTION_TYPES, "levenshtein")
_KEYS_V2 = frozenset({"type", "value", "weight", "metric"})
_TEMPLATE = ("{{", "{%", "{#")  # nunjucks renders a string value that holds one of these
MAX_LEVENSHTEIN_CELLS = 2_000_000  # banded table cells a levenshtein re-run may fill


def category(kind: str) -> str:
    """Why a type is not re-run, in words (for a re-runnable type: its value or options)."""
    base = kind.removeprefix("not-")
    if base in MODEL_GRADED:
        return "model-graded"
    if base in CODE:
        return "code"
    if base in DETERMINISTIC_NOT_RERUN:
        return "deterministic, not re-implemented"
    if base in RERUN_V2:
        return "outside the re-run rules"
    return f"not a type promptfoo {RULES_VERSION} documents"


def _texts_v2(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]


def rerun_problem_v2(assertion: Mapping[str, Any]) -> str | None:
    """Why an assertion is not re-run under promptfoo 0.123.1's rules (None if it is)."""
    kind = assertion.get("type")
    if not isinstance(kind, str):
        return "no assertion type"
    base = kind.removeprefix("not-")
    if base not in RERUN_V2:
        return category(kind)
    keys = _KEYS_V2 | ({"threshold"} if base == "levenshtein" else set())
    extra = sorted(set(assertion) - keys)
    if extra:
        return f"{kind} with {extra}"
    weight = assertion.get("weight")
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float))):
        return f"{kind} with a weight that is not a number"
    value = assertion.get("value")
    texts = _texts_v2(value) if isinstance(value, (str, list)) else []
    if any(t.startswith(("file://", "package:")) for t in texts):
        return f"{kind} whose value is loaded from a file or a package"
    if any(marker in t for t in texts for marker in _TEMPLATE):
        return f"{kind} with a templated value"
    if base == "is-json":
        return None if value in (None, "") else "is-json with a schema"
    if base.endswith(("-any", "-all")):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else f"{kind} whose value is not a list of text"
    if base in ("equals", "levenshtein") and not isinstance(value, str):
        return f"{kind} with a value that is not text"
    if base == "equals":
        return None
    if not (isinstance(value, str) and (value or base == "levenshtein")):
        return f"{kind} whose value is not text"
    if base.startswith("i") and any(not v.isascii() for v in _texts_v2(value)):
        return f"{kind} on non-ASCII text (case folding differs between JavaScript and Python)"
    if base == "regex":
        from .jsregex import NotInSubset, translate

        try:
            translate(value)
        except NotInSubset as exc:
            return f"regex outside the subset JavaScript and Python read alike: {exc}"
    if base == "levenshtein":
        return _threshold_problem(assertion.get("threshold"))
    return None


def _threshold_problem(threshold: Any) -> str | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        return "levenshtein with a threshold that is not a number"
    if threshold == 0:
        # promptfoo 0.123.1 reads `threshold ?? 5`; earlier versions read `threshold || 5`
        return "levenshtein with threshold 0 (read as 5 by earlier promptfoo versions)"
    return None


class NotDecided(Exception):
    """The re-run cannot decide this output exactly (too deep, too large): not re-run."""


def rerun_v2(assertion: Mapping[str, Any], output: str, linear_only: bool = False) -> bool:
    """The stored ``pass`` promptfoo 0.123.1 writes for the assertion on ``output``
    (``rerun_problem_v2`` is None). Raises ``NotDecided`` where this output cannot be
    decided exactly; ``linear_only``: also where a regex would run on Python's engine."""
    if assertion.get("weight") == 0:
        return True  # runAssertion: a weight of 0 always passes
    kind = str(assertion["type"])
    base = kind.removeprefix("not-")
    inverse = kind != base
    if base == "regex" and linear_only:
        from .jsregex import NotInSubset, test_linear

        pattern = str(assertion["value"])
        try:
            return test_linear(pattern, output) != inverse
        except NotInSubset as exc:
            raise NotDecided(
                f"regex {pattern[:200]!r} not re-run on a linear engine: {exc}"
            ) from None
    if base == "regex":
        from .jsregex import test

        return test(str(assertion["value"]), output) != inverse
    if base == "levenshtein":
        threshold = assertion.get("threshold")
        within = _levenshtein_within(
            output, str(assertion["value"]), 5 if threshold is None else threshold
        )
        return within != inverse
    if base == "is-json":
        try:
            json.loads(output, parse_constant=_refuse, parse_int=str)  # no digit limit
            passed = True
        except RecursionError:
            raise NotDecided("is-json on JSON nested deeper than Python reads") from None
        except ValueError:
            passed = False
        return passed != inverse
    return _text_rule(base, assertion.get("value"), output) != inverse


def _text_rule(base: str, value: Any, output: str) -> bool:
    """The text types on UTF-16 units, as JavaScript's ``includes``, ``startsWith`` and
    ``===`` compare (a lone surrogate in a value matches half of a character); the ``i``
    types lower-case by code point first, as ``toLowerCase`` does."""
    from .jsregex import units

    if base.startswith("i"):
        text = units(output.lower())
        wanted = [units(v.lower()) for v in _texts_v2(value)]
        base = base[1:]
    else:
        text = units(output)
        wanted = [units(v) for v in _texts_v2(value)]
    if base == "equals":
        return text == wanted[0]
    if base == "starts-with":
        return text.startswith(wanted[0])
    if base == "contains":
        return wanted[0] in text
    if base == "contains-any":
        return any(v in text for v in wanted)
    return all(v in text for v in wanted)  # contains-all


def _levenshtein_within(a: str, b: str, threshold: float) -> bool:
    """Whether the edit distance between ``a`` and ``b``, counted in UTF-16 code units as
    ``fastest-levenshtein`` counts it, is at most ``threshold``: only the diagonal band of
    width ``2k + 1`` of the table is filled (a cell outside it is more than ``k``)."""
    from .jsregex import units

    if threshold < 0:
        return False
    x, y = units(a), units(b)
    if len(x) < len(y):
        x, y = y, x
    n, m = len(x), len(y)
    k = min(int(threshold), n)
    if n - m > k:
        return False
    width = 2 * k + 1
    if n * width > MAX_LEVENSHTEIN_CELLS:
        raise NotDecided(f"levenshtein on texts too long to re-run here ({n} units)")
    big = k + 1
    # band[d] is the cell (i, j = i - k + d) of row i
    previous = [d - k if 0 <= d - k <= m else big for d in range(width)]
    for i in range(1, n + 1):
        current = [big] * width
        unit = x[i - 1]
        for d in range(max(0, k - i), min(width, m - i + k + 1)):
            j = i - k + d
            if j == 0:
                current[d] = min(i, big)
                continue
            best = previous[d] + (unit != y[j - 1])
            if d + 1 < width and previous[d + 1] + 1 < best:
                best = previous[d + 1] + 1
            if d > 0 and current[d - 1] + 1 < best:
                best = current[d - 1] + 1
            current[d] = min(best, big)
        previous = current
    return previous[m - n + k] <= k


@dataclass
class Rerun:
    """Every stored assertion result of a file, re-run or listed as not re-run."""

    checked: list[tuple[RowV2, int, bool]]  # (row, assertion index, the re-run's result)
    skipped: Counter[str]  # type -> results not re-run
    why: dict[str, list[str]]  # type -> the first few reasons it was not re-run

    @property
    def mismatches(self) -> list[tuple[RowV2, int, bool]]:
        return [(r, j, again) for r, j, again in self.checked if again != r.components[j]["pass"]]


def rerun_all(rows: tuple[RowV2, ...], linear_only: bool = False) -> Rerun:
    """Re-run every re-runnable stored result under promptfoo 0.123.1's rules
    (``linear_only``: a regex on RE2 only, else not re-run)."""
    done = Rerun([], Counter(), {})
    for row in rows:
        for j, component in enumerate(row.components):
            problem = skip_reason(row, component, rerun_problem_v2)
            if problem is None:
                try:
                    again = rerun_v2(component["assertion"], row.output, linear_only)
                    done.checked.append((row, j, again))
                    continue
                except NotDecided as exc:
                    problem = str(exc)
            kind = kind_of(component)
            done.skipped[kind] += 1
            reasons = done.why.setdefault(kind, [])
            if problem not in reasons and len(reasons) < 3:
                reasons.append(problem)
    return done
