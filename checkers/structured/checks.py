"""structured-equal@1: two documents have the same full content."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import InputKind, Role, Verdict, checker
from ..compare import compare_documents


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
