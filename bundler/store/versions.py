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


def order(version: str) -> str | None:
    """Text whose byte order is ``key``'s order (None for a version that is not semver),
    so the index can find the highest version of a name by an index lookup instead of
    parsing every version it holds. Each number is written as its count of digits (four
    digits) and its digits; the parts of a pre-release are joined by ``!``, which sorts
    before every character a part may hold, so a shorter list of parts sorts first."""
    try:
        major, minor, patch, release, parts = key(version)
    except ValueError:
        return None

    def number(value: int) -> str:
        digits = str(value)
        if len(digits) > 9999:
            raise OverflowError
        return f"{len(digits):04d}{digits}"

    try:
        head = number(major) + number(minor) + number(patch)
        if release:
            return head + "1"
        return (
            head
            + "0"
            + "".join(
                "!" + ("0" + number(n) if kind == 0 else "1" + text) for kind, n, text in parts
            )
        )
    except OverflowError:
        return None
