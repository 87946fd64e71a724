"""merge-reconstruct@1 and @2: the candidate rebuilt from original + request is the expected one.

@2 is @1 with its YAML inputs read with anchors and aliases expanded (bounded) instead of
refused: the same function, params and reasons (``model._reading_version``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
)
from ..arithmetic import left_sum
from ..compare import compare_documents, format_path
from ..plain import brief, via_json
from .model import choice, json_type, reading_version

_CONTENT_REASONS = {
    "content.added": "the candidate has a path the expected candidate does not (collateral)",
    "content.removed": "a path of the expected candidate is missing (collateral: e.g. a rule "
    "deleted while the target was changed)",
    "content.changed": "a value outside the intended change differs (collateral)",
    "content.type_changed": "a value outside the intended change has another type (collateral)",
}


def reconstruct(
    original: Any,
    request: Any,
    *,
    mappings: str = "merge",
    lists: str = "replace",
    list_key: str = "name",
) -> Any:
    """The candidate a merge-mode request produces from ``original``.

    ``mappings="merge"`` merges mappings field by field, recursively; ``"replace"``
    makes the request replace the whole document. ``lists="replace"`` replaces a
    list wholesale by the request's list (the seed's API: it does *not* look items up
    by name); ``"by_key"`` merges lists of mappings item by item on ``list_key``
    (matching items merged, new items appended, others kept in place). Lists holding
    anything but mappings are always replaced. Inputs are not modified.
    """
    return _merge(original, request, mappings, lists, list_key, [])


def _merge(
    original: Any, request: Any, mappings: str, lists: str, key: str, path: list[Any]
) -> Any:
    if mappings == "merge" and isinstance(original, Mapping) and isinstance(request, Mapping):
        out = {k: copy.deepcopy(v) for k, v in original.items()}
        for name, value in request.items():
            if name in original:
                out[name] = _merge(original[name], value, mappings, lists, key, [*path, name])
            else:
                out[name] = copy.deepcopy(value)
        return out
    if (
        lists == "by_key"
        and isinstance(original, list)
        and isinstance(request, list)
        and all(isinstance(item, Mapping) for item in [*original, *request])
    ):
        result = [copy.deepcopy(item) for item in original]
        position = _positions(original, key, path, "original")
        _positions(request, key, path, "request")
        for item in request:
            at = position.get(item[key])
            if at is None:
                position[item[key]] = len(result)
                result.append(copy.deepcopy(item))
            else:
                result[at] = _merge(result[at], item, mappings, lists, key, [*path, at])
        return result
    return copy.deepcopy(request)


def _positions(items: list[Any], key: str, path: list[Any], side: str) -> dict[Any, int]:
    where = format_path(path)
    found: dict[Any, int] = {}
    for index, item in enumerate(items):
        if key not in item:
            raise CheckerInputError(
                "input.invalid",
                f"{side} {where}[{index}] has no {key!r} field, so lists cannot merge by key",
            )
        if not isinstance(item[key], str | int | float | bool) or item[key] in found:
            raise CheckerInputError(
                "input.invalid",
                f"{side} {where}[{index}].{key} is {brief(item[key])}: "
                "keys must be unique scalars to merge by key",
            )
        found[item[key]] = index
    return found


def _under(child: str, parent: str) -> bool:
    return parent == "$" or child.startswith(parent + ".") or child.startswith(parent + "[")


def _overlaps(a: str, b: str) -> bool:
    return a == b or _under(a, b) or _under(b, a)


_ABSENT = object()


def _same_key(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _keyed(items: list[Any], key: str) -> bool:
    """Every item is a mapping with a unique scalar ``key``: items can be named."""
    seen: list[Any] = []
    for item in items:
        if not isinstance(item, Mapping) or key not in item:
            return False
        value = item[key]
        if not isinstance(value, str | int | float | bool):
            return False
        if any(_same_key(value, v) for v in seen):
            return False
        seen.append(value)
    return True


Step = tuple[str, Any]  # ("key", mapping key) | ("index", i) | ("item", list_key value)


def _intended(original: Any, expected: Any, key: str, steps: list[Step]) -> list[list[Step]]:
    """Where ``expected`` differs from ``original``, as steps that name list items by
    ``key`` where both lists allow it: an item added, removed or changed by name, not
    by a position that shifts when another item goes."""
    if isinstance(original, Mapping) and isinstance(expected, Mapping):
        out: list[list[Step]] = []
        for name in [*original, *(k for k in expected if k not in original)]:
            here = [*steps, ("key", name)]
            if name in original and name in expected:
                out += _intended(original[name], expected[name], key, here)
            else:
                out.append(here)
        return out
    if isinstance(original, list) and isinstance(expected, list):
        if _keyed(original, key) and _keyed(expected, key):
            out = []
            names = [item[key] for item in original]
            for item in expected:
                if not any(_same_key(item[key], known) for known in names):
                    names.append(item[key])
            common = []
            for name in names:
                was = _follow(original, [("item", name)], key)
                now = _follow(expected, [("item", name)], key)
                if was is _ABSENT or now is _ABSENT:
                    out.append([*steps, ("item", name)])
                else:
                    common.append(name)
                    out += _intended(was, now, key, [*steps, ("item", name)])
            in_expected = [i[key] for i in expected if any(_same_key(i[key], c) for c in common)]
            if any(not _same_key(a, b) for a, b in zip(common, in_expected, strict=True)):
                out.append(steps)  # the items kept were reordered: the order is the change
            return out
        if len(original) == len(expected):
            out = []
            for index, (was, now) in enumerate(zip(original, expected, strict=True)):
                out += _intended(was, now, key, [*steps, ("index", index)])
            return out
    return [steps] if compare_documents(expected, original, deepest=True) else []


def _follow(document: Any, steps: list[Step], key: str) -> Any:
    node = document
    for kind, step in steps:
        if kind == "key":
            if not isinstance(node, Mapping) or step not in node:
                return _ABSENT
            node = node[step]
        elif kind == "index":
            if not isinstance(node, list) or not 0 <= step < len(node):
                return _ABSENT
            node = node[step]
        else:
            if not isinstance(node, list):
                return _ABSENT
            named = [i for i in node if isinstance(i, Mapping) and _same_key(i.get(key), step)]
            if len(named) != 1:  # none, or ambiguous: the change is not cleanly there
                return _ABSENT
            node = named[0]
    return node


def _position(document: Any, steps: list[Step], key: str) -> str | None:
    """The positional path (``decisions[1].description``) of ``steps`` in ``document``."""
    node, parts = document, []
    for kind, step in steps:
        if kind == "item":
            if not isinstance(node, list):
                return None
            at = [
                index
                for index, item in enumerate(node)
                if isinstance(item, Mapping) and _same_key(item.get(key), step)
            ]
            if len(at) != 1:
                return None
            step = at[0]
        if _follow(node, [("key" if kind == "key" else "index", step)], key) is _ABSENT:
            return None
        node = node[step]
        parts.append(step)
    return format_path(parts)


def _missed_targets(original: Any, expected: Any, candidate: Any, key: str) -> list[str]:
    """The positional paths of the intended changes the candidate does not carry.

    Intended changes are followed by item name where lists allow it, so a right
    target that only moved (because rules before it were lost) is not called wrong,
    and an intended deletion is checked by name; where items cannot be named,
    positions are used."""
    missed: list[str] = []
    for steps in _intended(original, expected, key, []):
        want, got = _follow(expected, steps, key), _follow(candidate, steps, key)
        if want is _ABSENT and got is _ABSENT:
            continue
        if want is _ABSENT or got is _ABSENT or compare_documents(got, want, deepest=True):
            where = _position(expected, steps, key) or _position(original, steps, key)
            missed.append(where or "$")
    return missed


def _merge_counterexample(_params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A request that changes nothing, where a change was expected: wrong under any
    merge semantics."""
    original = {"counterexample": {"value": 1, "kept": True}}
    return {
        "original": original,
        "request": original,
        "expected": {"counterexample": {"value": 2, "kept": True}},
    }


@checker(
    "merge-reconstruct",
    1,
    roles=[
        Role("original", InputKind.DATA, "the config as it was before the change", compared=True),
        Role(
            "request",
            InputKind.DATA,
            "the change document the agent actually submitted",
            compared=True,
        ),
        Role(
            "expected",
            InputKind.DATA,
            "the expected candidate, prepared independently",
            compared=True,
        ),
    ],
    params=[
        Param(
            "mappings",
            "how mappings merge: 'merge' (field by field, recursively) or 'replace' "
            "(the request replaces the whole document)",
            (str,),
            "merge",
        ),
        Param(
            "lists",
            "how lists merge: 'replace' (the request's list replaces the old one wholesale, "
            "as in the seed's API) or 'by_key' (lists of mappings merge item by item on "
            "list_key)",
            (str,),
            "replace",
        ),
        Param(
            "list_key",
            "the item field lists merge on when lists is 'by_key'; also how the intended "
            "change is found in a list whose items shifted",
            (str,),
            "name",
        ),
    ],
    reasons={
        "target.wrong": "the intended change itself is wrong: at a path where the expected "
        "candidate differs from the original, the reconstructed candidate has another value",
        **_CONTENT_REASONS,
    },
    libraries=("deepdiff", "pyyaml"),
    counterexample=_merge_counterexample,
    example_params=[{"lists": "by_key"}],
)
def merge_reconstruct(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The candidate rebuilt from original + request has the expected full content.

    The API's answers (valid = true, a plan, an ETag) do not contain the candidate,
    so the candidate is reconstructed here from the original config and the request
    the agent really sent, under the declared merge semantics (default: mappings
    field by field, lists replaced wholesale, as in the seed's API). It is then
    compared with the independently prepared expected candidate by the rules of
    structured-equal@1 (formatting and key order ignored, list order and types kept).

    Each difference is sorted into one of two kinds. Where the expected candidate
    differs from the original (the intended change, e.g. ``decisions[0].description``)
    and the reconstructed candidate does not carry that change, a difference is
    ``target.wrong``; the change is looked up by item name (``list_key``) in lists
    whose items all have a unique one, so a right target that only moved because
    rules before it were lost is not called wrong, and an intended deletion of a rule
    is checked by name. Anywhere else a difference is collateral damage and keeps its
    content code: a merge request that sends only the target rule replaces the whole
    ``decisions`` list, and the lost ``other`` rule shows as ``content.removed`` at
    ``decisions[1]`` although the target description is right.
    The verdict's details carry the reconstructed candidate for the reviewer.

    A pass means this content is what the request produces under the declared
    semantics; it does not show the semantics match a given server (that is a
    reading of the server's code), nor that anything was saved or not.
    """
    mappings = choice(params, "mappings", ("merge", "replace"))
    lists = choice(params, "lists", ("replace", "by_key"))
    original, expected = inputs["original"], inputs["expected"]
    candidate = reconstruct(
        original, inputs["request"], mappings=mappings, lists=lists, list_key=params["list_key"]
    )
    intended = [str(r.details["path"]) for r in compare_documents(expected, original, deepest=True)]
    missed = _missed_targets(original, expected, candidate, params["list_key"])
    reasons: list[Reason] = []
    for diff in compare_documents(candidate, expected, deepest=True):
        path = str(diff.details["path"])
        if any(_overlaps(path, target) for target in missed):
            reasons.append(_target_reason(path, candidate, expected, original, diff))
        else:
            reasons.append(_collateral_reason(path, diff, params["list_key"], candidate))
    details = {
        "reconstructed": via_json(candidate),
        "intended_paths": intended,
        "semantics": {"mappings": mappings, "lists": lists, "list_key": params["list_key"]},
    }
    if reasons:
        targets = left_sum(r.code == "target.wrong" for r in reasons)
        return Verdict.failed(
            f"reconstructed candidate differs from the expected one: {targets} difference(s) "
            f"in the intended change, {len(reasons) - targets} collateral",
            reasons,
            **details,
        )
    return Verdict.passed(
        f"the request reconstructs to the expected candidate ({len(intended)} intended "
        f"change(s), nothing else changed; mappings {mappings}, lists {lists})",
        **details,
    )


def _collateral_reason(path: str, diff: Reason, key: str, candidate: Any) -> Reason:
    """A difference outside the intended change, worded for the reconstructed candidate."""
    expected, observed = diff.details.get("expected"), diff.details.get("actual")
    if diff.code == "content.removed":
        if isinstance(expected, Mapping) and key in expected:
            named = f"the item with {key} {brief(expected[key])}"
            text = f"{path} was lost: expected {named}, absent from the reconstructed candidate"
            if _has_item(candidate, key, expected[key]):
                # Lists are compared by position: the item moved, others were lost.
                text = (
                    f"{path} was lost: expected {named} at this position; an item with that "
                    f"{key} is elsewhere in the reconstructed candidate (lists are compared "
                    "by position, so items before it were lost or added)"
                )
        else:
            text = (
                f"{path} was lost: expected {brief(expected)}, "
                "absent from the reconstructed candidate"
            )
    elif diff.code == "content.added":
        text = f"{path} was added: {brief(observed)} is not in the expected candidate"
    elif diff.code == "content.type_changed":
        text = (
            f"{path} changed type: expected {json_type(expected)} {brief(expected)}, "
            f"reconstructed {json_type(observed)} {brief(observed)}"
        )
    else:
        text = f"{path} changed: expected {brief(expected)}, reconstructed {brief(observed)}"
    return Reason(
        diff.code,
        f"collateral (outside the intended change): {text}",
        via_json(dict(diff.details)),
    )


def _has_item(document: Any, key: str, value: Any) -> bool:
    """Whether some list anywhere in ``document`` holds a mapping with ``key`` = value."""
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list):
            for item in node:
                if isinstance(item, Mapping) and _same_key(item.get(key), value):
                    return True
                stack.append(item)
    return False


def _target_reason(path: str, candidate: Any, expected: Any, original: Any, diff: Reason) -> Reason:
    observed = diff.details.get("actual", "<absent>")
    wanted = diff.details.get("expected", "<absent>")
    return Reason(
        "target.wrong",
        f"{path}: the intended change is wrong: expected {brief(wanted)}, "
        f"reconstructed {brief(observed)}",
        via_json({"path": path, "expected": wanted, "reconstructed": observed, "kind": diff.code}),
    )


def _merge_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The intended change (b) missing from what the request rebuilds: target.wrong."""
    return {"original": {"a": 1, "b": 1}, "request": {"a": 2}, "expected": {"a": 2, "b": 2}}


merge_reconstruct_v2 = reading_version(merge_reconstruct, _merge_counterexample_v2)
