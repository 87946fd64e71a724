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

UNKNOWN = "unknown"  # what is recorded for a library that is not installed


def version(name: str) -> str:
    """The version of the distribution ``name``, or ``UNKNOWN`` when none is installed."""
    found = _read(name)
    if found is not None:
        return found
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
    import importlib.machinery

    finders = [f for f in sys.meta_path if hasattr(f, "find_distributions")]
    if finders != [importlib.machinery.PathFinder]:
        return None
    wanted = _normalize(name)
    for entry in sys.path:
        if os.path.basename(entry).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.isfile(entry):
                return None  # a zip: importlib.metadata reads inside it
            continue
        for child in children:
            low = child.lower()
            stem = low.rpartition(".")[0].partition("-")[0]
            if low.endswith((".dist-info", ".egg-info")) and _normalize(stem) == wanted:
                return _version_header(os.path.join(entry, child))
    return None


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
