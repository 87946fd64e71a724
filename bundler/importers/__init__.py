"""Importers: eval-harness logs -> bundle sources (one module per harness).

An importer reads a log people already have, copies it unchanged into a new bundle
source, and writes the cases, claims, limits and negative controls that let
``reprobundle build`` turn it into a bundle. It writes files and never prints; what
the author should know before building comes back as ``Imported.notes``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from bundler.errors import SourceError
from bundler.importers.untrusted import Checks, ImportLimits, read_log_file

__all__ = [
    "Checks",
    "ImportLimits",
    "Imported",
    "is_count",
    "read_log_file",
    "slug",
    "write_source",
]

_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass
class Imported:
    """What the import wrote, and what the author should know before building."""

    source: Path
    files: list[str]
    cases: int
    claims: list[str]
    notes: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-") or "x"


def is_count(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is a count: a whole number, at least 0 (a boolean is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def write_source(
    dest: Path, document: Mapping[str, Any], files: Mapping[str, bytes], tool: str
) -> list[str]:
    """Write ``files`` (relative path -> bytes) and ``bundle.yaml``; returns the paths.
    Text that cannot be written as UTF-8 is refused (SourceError) before anything is."""
    head = (
        f"# Written by `reprobundle import {tool}`. Build it with: reprobundle build .\n"
        "# Each case re-derives one thing the log states from the log's own records.\n"
    )
    try:  # PyYAML would write a lone surrogate as an escape that reads back as one
        json.dumps(document, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = exc.object[max(exc.start - 40, 0) : exc.end + 20]
        raise SourceError(
            f"the log's text {shown!a} holds a lone surrogate, which cannot be written as "
            "UTF-8: nothing written"
        ) from None
    body = yaml.dump(dict(document), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=88)
    text = (head + body).encode("utf-8")
    dest.mkdir(parents=True, exist_ok=True)
    for path, content in sorted(files.items()):
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(content)
    (dest / "bundle.yaml").write_bytes(text)
    return sorted([*files, "bundle.yaml"])


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # a repeated value is written out again
        return True
