"""structured-equal@1 and @2: two documents have the same full content."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import InputKind, Reading, Role, Verdict, checker
from ..compare import compare_documents

_REASONS = {
    "content.added": "a path present in actual but not in expected",
    "content.removed": "a path present in expected but missing from actual",
    "content.changed": "a value differs at a path present in both",
    "content.type_changed": "the value at a path has another type (e.g. 1 vs '1')",
}


def _two_documents(_params: Mapping[str, Any]) -> Mapping[str, Any]:
    """Any two different documents fail: structured-equal has no params to make it vacuous."""
    return {"actual": {"counterexample": 1}, "expected": {"counterexample": 2}}


def _roles(reading: Reading) -> list[Role]:
    return [
        Role(
            "actual",
            InputKind.DATA,
            "the document produced (YAML or JSON)",
            compared=True,
            reading=reading,
        ),
        Role(
            "expected",
            InputKind.DATA,
            "the independently prepared expected document",
            compared=True,
            reading=reading,
        ),
    ]


def _compare(inputs: Mapping[str, Any]) -> Verdict:
    reasons = compare_documents(inputs["actual"], inputs["expected"])
    if reasons:
        return Verdict.failed(f"{len(reasons)} difference(s) from the expected content", reasons)
    return Verdict.passed("actual and expected have the same content")


@checker(
    "structured-equal",
    1,
    roles=_roles(Reading()),
    reasons=_REASONS,
    libraries=("deepdiff", "pyyaml"),
    counterexample=_two_documents,
    example_params=[{}],
)
def structured_equal(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Two documents have the same full content.

    Compares the parsed documents: formatting, comments and the order of mapping keys
    are ignored; list order is kept (reordering a list is a change). Types are strict:
    the integer 1 and the string "1" differ. One reason per difference, naming the
    path (``decisions[1]``) and both values.
    """
    return _compare(inputs)


@checker(
    "structured-equal",
    2,
    roles=_roles(Reading(yaml_aliases=True)),
    reasons=_REASONS,
    libraries=("deepdiff", "pyyaml"),
    counterexample=_two_documents,
    example_params=[{}],
)
def structured_equal_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Two documents have the same full content, YAML anchors and aliases read as written out.

    structured-equal@1's comparison and reasons. An anchor and its aliases are formatting,
    as the seed counts it ("ignore YAML formatting and the order of mapping keys"): a
    candidate that repeats a block with ``*name`` is compared as if the block were
    written out each time (@1 refused it as unreadable). The expansion is bounded: at
    most 100,000 extra nodes a document, no alias inside the node it names; merge keys
    (``<<``) and a ``%YAML`` directive other than 1.1 stay refused (``input.unreadable``).
    JSON is read as in @1 (no NaN).
    """
    return _compare(inputs)
