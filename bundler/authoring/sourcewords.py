"""A bundle source's problems said in the author's words, with the fix: why a path is no
source folder, why an input is not found, a name in Unicode NFD, and the schema's
complaints. Apart from ``source`` so that the rules read without their wording."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import checkers
from bundler.format.manifest import Locator

SOURCE_NAME = "bundle.yaml"  # the file that makes a folder a bundle source


def not_a_source(root: Path) -> str:
    """Why ``root`` is no bundle source folder, in words, with the fix."""
    if root.name == SOURCE_NAME and root.is_file():
        return (
            f"{root} is the {SOURCE_NAME} itself: give the folder, not {SOURCE_NAME} "
            f"(`reprobundle build {root.parent}`)"
        )
    if root.is_file():
        return (
            f"{root} is a file, not a folder: give the bundle source folder holding {SOURCE_NAME}"
        )
    if not root.exists():
        return f"{root} does not exist: give the bundle source folder holding {SOURCE_NAME}"
    return f"{root} is not a folder holding a {SOURCE_NAME}"


def unlisted_input(root: Path, message: str) -> str:
    """Say whether an input that is not a bundle file is missing or merely not listed."""
    match = re.match(r"^'(.*)' is not one of the bundle's files or folders$", message)
    if match is None:
        return message
    path = match.group(1)
    if not (root / path).exists():
        return f"{path!r} does not exist in the source folder {root}; fix the path or add the file"
    return (
        f"{path!r} exists but no pattern under files takes it; add it (or a folder holding it) "
        "to files"
    )


def not_nfc(rel: str) -> str:
    """A file named in Unicode NFD (as macOS writes names): the name looks like the NFC one
    bundle.yaml spells, so the message shows both as escapes and gives the rename."""
    nfc = unicodedata.normalize("NFC", rel)
    return (
        f"the file {nfc!r} is named in Unicode NFD in the source folder: {rel!a}, a "
        f"letter and a combining mark (as macOS writes names), not {nfc!a}; it looks "
        "the same but its bytes differ, and a bundle holds NFC names only. Rename every such "
        "file, from the source folder: python3 -c 'import os, unicodedata as u; "
        '[os.rename(os.path.join(d, n), os.path.join(d, u.normalize("NFC", n))) '
        'for d, _, names in os.walk(".") for n in names if u.normalize("NFC", n) != n]\''
    )


# What a value must look like, in words, for the fields whose schema is a pattern.
PATTERN_WORDS = {
    "name": "lower case letters, digits and dashes, e.g. my-bundle",
    "version": 'a semantic version MAJOR.MINOR.PATCH, e.g. "1.0.0"',
    "id": "letters, digits, '.', '_' and '-', starting with a letter or digit",
    "checker": "name@version of a built-in checker (e.g. structured-equal@1), or bundle:NAME",
}


def schema_hint(where: Locator, error: Any) -> str:
    """The schema's complaint in the author's words, with the fix where one is known."""
    key = str(where[-1]) if where else ""
    value = error.instance
    if error.validator == "type" and error.validator_value == "string" and value is None:
        return f"{key} is empty; write its text after the colon"
    if (
        error.validator == "type"
        and error.validator_value == "string"
        and isinstance(value, (bool, int, float))
    ):
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        if key == "version":  # 1.0 -> "1.0.0": a semantic version has three numbers
            shown += ".0" * max(0, 2 - shown.count("."))
        return (
            f"YAML read {value!r} as a {type(value).__name__}, not as text; put it in quotes: "
            f'{key}: "{shown}"'
        )
    if error.validator == "pattern" and key == "checker" and isinstance(value, str):
        versions = sorted(
            (c.version for c in checkers.registry().values() if c.name == value), reverse=True
        )
        if versions:
            return (
                f"{value!r} needs a version: checker: {value}@{versions[0]} "
                f"(see `reprobundle checkers {value}`)"
            )
    if error.validator == "pattern" and key in PATTERN_WORDS:
        return f"{value!r} is not {PATTERN_WORDS[key]}"
    if isinstance(where[-1] if where else None, int) and error.validator == "pattern":
        return f"{value!r} is not {PATTERN_WORDS['id']}"
    return str(error.message)
