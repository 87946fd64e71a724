"""Order semantic versions (the manifest's ``version``), to notice a rollback."""

from __future__ import annotations

import re

_SEMVER = re.compile(
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\Z"
)

Key = tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]


def key(version: str) -> Key:
    """A sort key following semver precedence: a pre-release sorts before its release,
    numeric identifiers numerically and before alphanumeric ones; build metadata is ignored."""
    match = _SEMVER.match(version)
    if not match:
        raise ValueError(f"{version!r} is not a semantic version")
    major, minor, patch, pre = match.groups()
    if pre is None:
        return int(major), int(minor), int(patch), 1, ()
    parts = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in pre.split("."))
    return int(major), int(minor), int(patch), 0, parts


def sort_key(version: str) -> tuple[int, Key | str]:
    """``key`` for listing: a version that is not semver (an index edited by hand) sorts
    after every valid one instead of failing the whole list."""
    try:
        return 0, key(version)
    except ValueError:
        return 1, version
