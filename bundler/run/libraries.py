"""The installed version of a library, as ``importlib.metadata.version`` gives it.

Every verification records the versions of the libraries its checkers rely on. Importing
``importlib.metadata`` costs more than verifying a small bundle's cases (on Python 3.11 it
loads ``email``, ``zipfile`` and ``csv`` and compiles a long pattern), so the common case,
a distribution installed by pip as a ``NAME-VERSION.dist-info`` folder on ``sys.path``,
is read here by the same search: the first folder of ``sys.path`` (in order, each
listed as ``os.listdir`` gives it) holding a ``.dist-info`` or ``.egg-info`` folder of
that normalised name, and the ``Version`` header of its ``METADATA`` (else ``PKG-INFO``).
Anything else (a zip on ``sys.path``, an egg, another finder of distributions, a header
this reading does not take) is asked of ``importlib.metadata`` itself.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

UNKNOWN = "unknown"  # what is recorded for a library that is not installed


def version(name: str) -> str:
    """The version of the distribution ``name``, or ``UNKNOWN`` when none is installed."""
    return versions([name])[name]


def versions(names: Iterable[str]) -> dict[str, str]:
    """``version`` of each of ``names``, from one search of ``sys.path`` for all of them."""
    found: dict[str, str] = {}
    for name, value in _read_all(names).items():
        found[name] = value if value is not None else _from_importlib(name)
    return found


def _from_importlib(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return UNKNOWN


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _read(name: str) -> str | None:
    """The version by the search ``importlib.metadata`` makes, or None when this reading
    cannot be sure it gives the same answer."""
    return _read_all([name])[name]


def _read_all(names: Iterable[str]) -> dict[str, str | None]:
    """``_read`` of each of ``names``, each directory of ``sys.path`` listed once."""
    import importlib.machinery

    found: dict[str, str | None] = dict.fromkeys(names)
    finders = [f for f in sys.meta_path if hasattr(f, "find_distributions")]
    if finders != [importlib.machinery.PathFinder]:
        return found
    wanted: dict[str, list[str]] = {}
    for name in found:
        wanted.setdefault(_normalize(name), []).append(name)
    for entry in sys.path:
        if not wanted:
            break
        if os.path.basename(entry).lower().endswith(".egg"):
            return found
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.isfile(entry):
                return found  # a zip: importlib.metadata reads inside it
            continue
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                named = wanted.pop(_normalize(low.rpartition(".")[0].partition("-")[0]), ())
                for name in named:
                    found[name] = _version_header(os.path.join(entry, child))
    return found


def _version_header(folder: str) -> str | None:
    """The ``Version`` header of the metadata in ``folder`` (None: ask importlib.metadata)."""
    for file_name in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, file_name), encoding="utf-8") as stream:
                text = stream.read()
        except (OSError, UnicodeDecodeError):
            continue
        if not text:
            continue
        lines = text.split("\n")
        for at, line in enumerate(lines):
            if not line.strip():
                return None  # the end of the headers: none is the version
            key, colon, value = line.partition(":")
            if colon and key.lower() == "version":
                following = lines[at + 1] if at + 1 < len(lines) else ""
                if following[:1] in (" ", "\t") or not value.strip():
                    return None  # a folded or empty header: email's rules decide it
                return value.strip()
        return None
    return None
