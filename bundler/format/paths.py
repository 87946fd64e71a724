"""Which relative paths a bundle may contain: portable on every OS, one spelling each.

Used three times with the same rules: on a bundle source's files, on the manifest's
paths, and on archive member names. A name that fails is refused, never rewritten.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MAX_COMPONENT_BYTES = 255
MAX_PATH_BYTES = 1024

_WINDOWS_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)
_WINDOWS_STEMS = frozenset({"con", "prn", "aux", "nul", "com", "lpt"})  # a quick first test
_BIDI = {
    "\u200e",
    "\u200f",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u061c",
}
_FORBIDDEN_CHARS = set('\\:*?"<>|')
# Most names use only these characters; they skip the checks for the others.
_PLAIN = re.compile(r"[A-Za-z0-9._/-]*")


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a portable relative POSIX path, or None if it is."""
    if not path:
        return "empty path"
    if _PLAIN.fullmatch(path):
        return _plain_problem(path)
    return _full_problem(path)


def _plain_problem(path: str) -> str | None:
    """The checks left for an ASCII name of letters, digits, '.', '_', '-' and '/'."""
    if path.startswith("/"):
        return "is an absolute path"
    if len(path) > MAX_PATH_BYTES:
        return f"is longer than {MAX_PATH_BYTES} bytes"
    return _components_problem(path)


def _full_problem(path: str) -> str | None:
    if "\x00" in path:
        return "contains a NUL byte"
    if any("\ud800" <= c <= "\udfff" for c in path):
        return "is not valid UTF-8"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return "contains a control character"
    if any(c in _BIDI for c in path):
        return "contains a bidirectional-text control character"
    if path.startswith("/"):
        return "is an absolute path"
    if "\\" in path:
        return "contains a backslash"
    if re.match(r"^[A-Za-z]:", path):
        return "starts with a drive letter"
    if unicodedata.normalize("NFC", path) != path:
        return "is not in Unicode NFC"
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        return f"is longer than {MAX_PATH_BYTES} bytes"
    return _components_problem(path)


def _components_problem(path: str) -> str | None:
    for part in path.split("/"):
        if part == "":
            return "has an empty component (// or a trailing /)"
        if part == ".":
            return "has a '.' component"
        if part == "..":
            return "has a '..' component"
        if len(part) > MAX_COMPONENT_BYTES // 4 and len(part.encode()) > MAX_COMPONENT_BYTES:
            return f"has a component longer than {MAX_COMPONENT_BYTES} bytes"
        if part[:3].lower() in _WINDOWS_STEMS and _WINDOWS_RESERVED.match(part):
            return f"has a Windows-reserved name {part!r}"
        if part[-1] in " .":
            return "has a component ending in a space or a dot"
    if not _FORBIDDEN_CHARS.isdisjoint(path):
        return 'has a character not portable to Windows (\\:*?"<>|)'
    return None


def fold(path: str) -> str:
    """The key under which two names would collide on a case-insensitive file system."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFKD", path).casefold())


def folders_of(paths: Iterable[str]) -> set[str]:
    """Every folder the paths lie in, their ancestors included ("a/b/c" gives "a", "a/b")."""
    folders: set[str] = set()
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent and parent not in folders:  # a known folder's ancestors are known
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    return folders
