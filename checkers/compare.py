"""Full-content comparison of structured documents (seed 000, "content").

Shared by the families that compare documents: structured-equal, config change and
trajectory models.

"The API accepted the change" says nothing about the rest of the config: the check
that catches a silently deleted rule compares the *whole* candidate with an
independently prepared expected candidate. Formatting and mapping key order carry no
meaning and are ignored; list order can carry meaning (rule precedence) and is kept.
"""

from __future__ import annotations

import json
from typing import Any

from .api import Reason
from .plain import brief

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
    from .diffing import DeepDiff  # imported here: only a difference needs it

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
                msg = f"{path}: present in actual ({brief(level.t2)}) but not expected"
                details = {"path": path, "actual": level.t2}
            elif code == "content.removed":
                msg = f"{path}: expected ({brief(level.t1)}) but missing from actual"
                details = {"path": path, "expected": level.t1}
            elif code == "content.type_changed":
                msg = (
                    f"{path}: expected {type(level.t1).__name__} {brief(level.t1)}, "
                    f"observed {type(level.t2).__name__} {brief(level.t2)}"
                )
                details = {"path": path, "expected": level.t1, "actual": level.t2}
            else:
                msg = f"{path}: expected {brief(level.t1)}, observed {brief(level.t2)}"
                details = {"path": path, "expected": level.t1, "actual": level.t2}
            reasons.append((path, code, Reason(code, msg, details)))
    reasons.sort(key=lambda item: (item[0], item[1]))
    return [reason for _, _, reason in reasons]
