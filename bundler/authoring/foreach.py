"""Case templates in ``bundle.yaml``: one case written once for many inputs.

A case with ``each`` (a list of mappings of placeholder -> value) stands for one case per
entry, with ``{placeholder}`` replaced in its ``id`` and in its input paths::

    - id: run-{n}
      checker: structured-equal@1
      inputs: {actual: "inputs/run-{n}.yaml", expected: inputs/expected.yaml}
      expect: pass
      each: [{n: 1}, {n: 2}, {n: 3}]

The build expands it into ordinary cases, so the manifest (and every verifier, old or
new) sees only ordinary cases. A claim may name them with a ``*`` pattern (``run-*``).
Pure functions over the loaded YAML: problems come back with their locators in the
source, never raised.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any

Locator = tuple[str | int, ...]
Problem = tuple[Locator, str, str]

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
EACH = "each"
MAX_CASES = 100_000


def _placeholders(case: Mapping[str, Any]) -> set[str]:
    found = set(PLACEHOLDER.findall(str(case.get("id", ""))))
    inputs = case.get("inputs")
    if isinstance(inputs, Mapping):
        for ref in inputs.values():
            for path in ref if isinstance(ref, list) else [ref]:
                found |= set(PLACEHOLDER.findall(str(path)))
    return found


def _fill(text: Any, row: Mapping[str, Any]) -> Any:
    if not isinstance(text, str):
        return text
    return PLACEHOLDER.sub(lambda m: str(row.get(m.group(1), m.group(0))), text)


def _row_problems(rows: Any, names: set[str], at: Locator) -> list[Problem]:
    if not isinstance(rows, list) or not rows:
        return [
            (at, "case.each", "each must be a non-empty list of mappings, e.g. [{n: 1}, {n: 2}]")
        ]
    problems: list[Problem] = []
    for j, row in enumerate(rows):
        where = (*at, j)
        if not isinstance(row, dict) or not row:
            problems.append((where, "case.each", "each entry must be a mapping such as {n: 1}"))
            continue
        for key, value in row.items():
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                problems.append(
                    (
                        where,
                        "case.each",
                        f"{key!r} must be text or a whole number, observed {type(value).__name__}",
                    )
                )
        missing = sorted(names - set(row))
        unused = sorted(set(row) - names)
        if missing:
            problems.append(
                (where, "case.each", f"no value for {', '.join('{' + m + '}' for m in missing)}")
            )
        if unused:
            problems.append(
                (
                    where,
                    "case.each",
                    f"{', '.join(map(repr, unused))} is not used: write "
                    f"{', '.join('{' + u + '}' for u in unused)} in the id or an input path",
                )
            )
    return problems


def expand_cases(cases: Any) -> tuple[Any, list[int], list[Problem]]:
    """The cases with every template expanded; for each resulting case, the index of the
    source case it came from (for line numbers); and the problems of the templates."""
    if not isinstance(cases, list):
        return cases, [], []
    out: list[Any] = []
    origin: list[int] = []
    problems: list[Problem] = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or EACH not in case:
            out.append(case)
            origin.append(i)
            continue
        template = {k: v for k, v in case.items() if k != EACH}
        names = _placeholders(template)
        found = _row_problems(case[EACH], names, ("cases", i, EACH))
        if not PLACEHOLDER.search(str(template.get("id", ""))):
            found.append(
                (
                    ("cases", i, "id"),
                    "case.each",
                    "a case with each needs a placeholder in its id, e.g. id: run-{n}",
                )
            )
        if not found and len(out) + len(case[EACH]) > MAX_CASES:
            found.append((("cases", i, EACH), "case.each", f"more than {MAX_CASES} cases in all"))
        if found:
            problems += found
            continue
        for row in case[EACH]:
            expanded = dict(template)
            expanded["id"] = _fill(template.get("id"), row)
            inputs = template.get("inputs")
            if isinstance(inputs, Mapping):
                expanded["inputs"] = {
                    role: [_fill(p, row) for p in ref] if isinstance(ref, list) else _fill(ref, row)
                    for role, ref in inputs.items()
                }
            out.append(expanded)
            origin.append(i)
    return out, origin, problems


def expand_claim_cases(claims: Any, case_ids: list[str]) -> tuple[Any, list[Problem]]:
    """Claims whose ``cases`` entries holding ``*`` are replaced by the ids they match,
    in the order of the cases."""
    if not isinstance(claims, list):
        return claims, []
    problems: list[Problem] = []
    out: list[Any] = []
    for i, claim in enumerate(claims):
        names = claim.get("cases") if isinstance(claim, dict) else None
        if not isinstance(names, list) or not any(isinstance(n, str) and "*" in n for n in names):
            out.append(claim)
            continue
        chosen: list[str] = []
        for j, name in enumerate(names):
            if not (isinstance(name, str) and "*" in name):
                chosen.append(name)
                continue
            matched = [c for c in case_ids if fnmatch.fnmatchcase(c, name)]
            if not matched:
                problems.append(
                    (
                        ("claims", i, "cases", j),
                        "claim.unknown_case",
                        f"no case id matches {name!r}",
                    )
                )
            chosen += [c for c in matched if c not in chosen]
        out.append({**claim, "cases": chosen})
    return out, problems
