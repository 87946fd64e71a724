"""Full-content comparison of structured documents (seed 000, "content").

"The API accepted the change" says nothing about the rest of the config: the check
that catches a silently deleted rule compares the *whole* candidate with an
independently prepared expected candidate. Formatting and mapping key order carry no
meaning and are ignored; list order can carry meaning (rule precedence) and is kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .api import InputKind, Reason, Role, Verdict, checker

# deepdiff report kinds -> our stable codes
_KINDS = {
    "dictionary_item_added": "content.added",
    "iterable_item_added": "content.added",
    "attribute_added": "content.added",
    "dictionary_item_removed": "content.removed",
    "iterable_item_removed": "content.removed",
    "attribute_removed": "content.removed",
    "values_changed": "content.changed",
    "type_changes": "content.type_changed",
}


def format_path(parts: list[Any]) -> str:
    """``['decisions', 1, 'name']`` -> ``decisions[1].name``; the root is ``$``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out or "$"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def compare_documents(actual: Any, expected: Any, *, deepest: bool = False) -> list[Reason]:
    """Every difference between two loaded documents, as reasons in path order.

    ``expected`` is the reference: "added" means present in ``actual`` only.
    By default (structured-equal@1) a mapping that shares few keys with its
    counterpart is reported as one changed value; ``deepest=True`` names every
    differing path instead (the same documents are equal either way).
    """
    # 0.33 is deepdiff 8's default, written out so structured-equal@1's reason paths do
    # not move with a deepdiff release; 0 always diffs deeper.
    threshold = 0.0 if deepest else 0.33
    from deepdiff import DeepDiff  # imported here: it is slow to import (numpy, pydantic)

    diff = DeepDiff(
        expected, actual, view="tree", verbose_level=2, threshold_to_diff_deeper=threshold
    )
    reasons: list[tuple[str, str, Reason]] = []
    for kind, levels in diff.items():
        code = _KINDS.get(kind)
        for level in levels:
            parts = level.path(output_format="list")
            path = format_path(parts)
            if code is None:  # a kind we do not map: still a difference, never ignored
                code = "content.changed"
            if code == "content.added":
                msg = f"{path}: present in actual ({_show(level.t2)}) but not expected"
                details = {"path": path, "actual": level.t2}
            elif code == "content.removed":
                msg = f"{path}: expected ({_show(level.t1)}) but missing from actual"
                details = {"path": path, "expected": level.t1}
            elif code == "content.type_changed":
                msg = (
                    f"{path}: expected {type(level.t1).__name__} {_show(level.t1)}, "
                    f"observed {type(level.t2).__name__} {_show(level.t2)}"
                )
                details = {"path": path, "expected": level.t1, "actual": level.t2}
            else:
                msg = f"{path}: expected {_show(level.t1)}, observed {_show(level.t2)}"
                details = {"path": path, "expected": level.t1, "actual": level.t2}
            reasons.append((path, code, Reason(code, msg, details)))
    reasons.sort(key=lambda item: (item[0], item[1]))
    return [reason for _, _, reason in reasons]


def _two_documents(_params: Mapping[str, Any]) -> Mapping[str, Any]:
    """Any two different documents fail: structured-equal@1 has no params to make it vacuous."""
    return {"actual": {"counterexample": 1}, "expected": {"counterexample": 2}}


@checker(
    "structured-equal",
    1,
    roles=[
        Role("actual", InputKind.DATA, "the document produced (YAML or JSON)", compared=True),
        Role(
            "expected",
            InputKind.DATA,
            "the independently prepared expected document",
            compared=True,
        ),
    ],
    reasons={
        "content.added": "a path present in actual but not in expected",
        "content.removed": "a path present in expected but missing from actual",
        "content.changed": "a value differs at a path present in both",
        "content.type_changed": "the value at a path has another type (e.g. 1 vs '1')",
    },
    libraries=("deepdiff", "pyyaml"),
    counterexample=_two_documents,
)
def structured_equal(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Two documents have the same full content.

    Compares the parsed documents: formatting, comments and the order of mapping keys
    are ignored; list order is kept (reordering a list is a change). Types are strict:
    the integer 1 and the string "1" differ. One reason per difference, naming the
    path (``decisions[1]``) and both values.
    """
    reasons = compare_documents(inputs["actual"], inputs["expected"])
    if reasons:
        return Verdict.failed(f"{len(reasons)} difference(s) from the expected content", reasons)
    return Verdict.passed("actual and expected have the same content")
