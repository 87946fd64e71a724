"""contamination@1 and @2: no transcript line matches a contamination marker (seed 004).

A run said to be bare that prints the skill's output format was not bare; a run whose
tool was reported unavailable did not run in the configuration it claims. Every line of
every transcript is searched for every marker (a regex). @2 runs the markers on RE2 only:
a marker outside the subset a linear engine reads as Python's ``re`` does is not re-run.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .. import linear
from ..api import CheckerInputError, InputKind, Param, Reason, Role, Verdict, checker
from ..arithmetic import left_sum
from ..witness import example
from .cases import (
    input_invalid,
)

# an unescaped ``\n`` in a regex (``\\n`` is a literal backslash and an n: fine in JSONL)
_NEWLINE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\n")


def _compile_markers(markers: Any, ignore_case: bool) -> list[tuple[str, re.Pattern[str]]]:
    if not isinstance(markers, list | tuple) or not markers:
        raise CheckerInputError(
            "params.invalid",
            "markers is empty: a contamination check with nothing to look for can never fail",
        )
    compiled: list[tuple[str, re.Pattern[str]]] = []
    for marker in markers:
        if not isinstance(marker, str):
            raise CheckerInputError("params.invalid", f"markers: {marker!r} is not a string")
        if marker in (m for m, _ in compiled):
            raise CheckerInputError(
                "params.invalid", f"markers: {marker!r} is listed twice (hits would count twice)"
            )
        if "\n" in marker or _NEWLINE_ESCAPE.search(marker):
            raise CheckerInputError(
                "params.invalid",
                f"markers: {marker!r} spans a line break, but transcripts are searched line "
                "by line: it could never hit",
            )
        try:
            rx = re.compile(marker, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise CheckerInputError(
                "params.invalid", f"markers: {marker!r} is not a regex: {exc}"
            ) from None
        if rx.search(""):
            raise CheckerInputError(
                "params.invalid", f"markers: {marker!r} matches the empty string (every line)"
            )
        compiled.append((marker, rx))
    return compiled


def _contamination_counterexample(
    params: Mapping[str, Any], linear_only: bool = False
) -> Mapping[str, Any] | None:
    """One transcript line per marker, each a line the marker matches; None when some
    marker matches no line we can find (``(?!)``, ``a^b``): that marker can never hit,
    so a pass would claim a search that was never possible."""
    flags = re.IGNORECASE if params["ignore_case"] is True else 0
    markers = params["markers"]
    if not isinstance(markers, list | tuple):
        return None
    lines = [example(m, flags, linear_only) if isinstance(m, str) else None for m in markers]
    if not lines or any(line is None for line in lines):
        return None
    text = "\n".join(["counterexample transcript", *map(str, lines)])  # never blank
    return {"transcripts": {"counterexample.log": text.encode()}}


@checker(
    "contamination",
    1,
    roles=[
        Role(
            "transcripts",
            InputKind.TREE,
            "the raw transcripts of the runs that must be clean (any UTF-8 text: JSONL, logs)",
        )
    ],
    params=[
        Param(
            "markers",
            "regexes whose presence in a transcript line shows contamination (e.g. the "
            "skill's output format in a run that must be bare, \"unavailable tool 'bash'\")",
            (list,),
        ),
        Param("ignore_case", "match markers case-insensitively", (bool,), False),
        Param(
            "max_locations",
            "how many file:line locations to list per marker",
            (int,),
            20,
            at_least=0,
        ),
    ],
    reasons={
        "contamination.detected": "a contamination marker occurs in a transcript "
        "(count and file:line given)",
    },
    counterexample=_contamination_counterexample,
    example_params=[{"markers": ["unavailable tool"]}],
)
def contamination(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """No transcript line matches any contamination marker.

    A run said to be bare that prints the skill's output format was not bare; a run
    whose tool was reported unavailable did not run in the configuration it claims.
    Every line of every transcript is searched for every marker (a regex); ``fail``
    with one ``contamination.detected`` reason per marker that hit, giving the number
    of hits, the number per file and the first ``file:line`` locations. An empty
    marker list, a marker listed twice or spanning a line break, an empty transcript
    folder or an empty transcript is an error, never a clean pass: a contamination
    check that cannot fail is decoration. A pass means none of the
    listed markers occurs, not that the run was clean in every other way.
    """
    return _contamination(inputs, params, linear_only=False)


def _contamination(
    inputs: Mapping[str, Any], params: Mapping[str, Any], linear_only: bool
) -> Verdict:
    """@1's check; ``linear_only`` (@2): each marker on RE2 only, a marker or a line
    outside the subset not re-run (``pattern.not_rerun``)."""
    markers = _compile_markers(params["markers"], params["ignore_case"])
    ignore_case = bool(params["ignore_case"])
    if linear_only:
        strict = {m: linear.require(m, ignore_case) for m, _ in markers}
    # each line counted by RE2 where it means what Python's re means (linear time)
    routed = {} if linear_only else {m: linear.Routed(m, ignore_case) for m, _ in markers}
    limit = params["max_locations"]
    if isinstance(limit, bool) or limit < 0:
        raise CheckerInputError("params.invalid", f"max_locations must be >= 0, observed {limit}")
    tree = inputs["transcripts"]
    if not isinstance(tree, Mapping) or not tree:
        raise input_invalid("transcripts: no transcript to check is not a clean pass")
    hits: dict[str, Counter[str]] = {marker: Counter() for marker, _ in markers}
    where: dict[str, list[str]] = {marker: [] for marker, _ in markers}
    first: dict[str, str] = {}
    lines_scanned = 0
    for name in sorted(tree):
        data = tree[name]
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else None
        except UnicodeDecodeError as exc:
            raise input_invalid(f"transcripts: {name} is not UTF-8 text ({exc})") from None
        if text is None:
            raise input_invalid(f"transcripts: {name} is not bytes")
        if not text.strip():
            raise input_invalid(
                f"transcripts: {name} is empty: an empty transcript cannot show a clean run"
            )
        # split on "\n" only, so file:line matches what an editor shows
        for number, line in enumerate(text.removesuffix("\n").split("\n"), start=1):
            lines_scanned += 1
            for marker, _compiled in markers:  # (Python's, kept for the params checks)
                if linear_only:
                    try:
                        found = strict[marker].count(line)
                    except linear.NotInSubset as exc:
                        raise linear.not_rerun(marker, exc, f"{name}:{number}") from None
                else:
                    found = routed[marker].count(line)
                if found:
                    hits[marker][name] += found
                    first.setdefault(marker, f"{name}:{number}")
                    if len(where[marker]) < limit:
                        where[marker].append(f"{name}:{number}")
    total = left_sum(left_sum(c.values()) for c in hits.values())
    details = {
        "files_scanned": len(tree),
        "lines_scanned": lines_scanned,
        "hits": total,
        "by_marker": {m: left_sum(c.values()) for m, c in hits.items()},
        "by_file": dict(sorted(left_sum(hits.values(), Counter()).items())),
    }
    reasons = [
        Reason(
            "contamination.detected",
            f"marker /{marker}/: {left_sum(c.values())} hit(s) in {len(c)} transcript(s), "
            f"first at {first[marker]}",
            {
                "marker": marker,
                "hits": left_sum(c.values()),
                "by_file": dict(sorted(c.items())),
                "locations": where[marker],
            },
        )
        for marker, c in hits.items()
        if c
    ]
    if reasons:
        return Verdict.failed(
            f"contamination: {total} hit(s) of {len(reasons)} marker(s)", reasons, **details
        )
    return Verdict.passed(
        f"no marker of {len(markers)} in {lines_scanned} line(s) of {len(tree)} transcript(s)",
        **details,
    )


def _contamination_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """@1's, its lines found by RE2 (a marker outside the subset: ``pattern.not_rerun``)."""
    return _contamination_counterexample(params, linear_only=True)


@checker(
    "contamination",
    2,
    roles=list(contamination.roles),
    params=list(contamination.params),
    reasons=contamination.reasons,
    counterexample=_contamination_counterexample_v2,
    example_params=[{"markers": ["unavailable tool", "(a+)+$"]}],
)
def contamination_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """No transcript line matches any contamination marker, each marker run in time linear
    in the line.

    As `contamination@1`, except that every marker runs on RE2 only: a marker outside the
    subset RE2 reads as Python's `re` does (a lookaround, a back-reference, a quantified
    group that can match nothing, one that can match the empty text; `checkers/linear.py`),
    or a line on which the two could differ (not ASCII for a marker with `\\w` or ignoring
    case), is not re-run: `pattern.not_rerun`, the case inconclusive, naming the marker
    (and the `file:line`) and why. Inside the subset the verdicts are @1's.
    """
    return _contamination(inputs, params, linear_only=True)
