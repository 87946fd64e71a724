"""Importers: eval-harness logs -> bundle sources (one module per harness).

An importer reads a log people already have, copies it unchanged into a new bundle
source, and writes the cases, claims, limits and negative controls that let
``reprobundle build`` turn it into a bundle. It writes files and never prints; what
the author should know before building comes back as ``Imported.notes``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bundler.errors import UsageError

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


def read_log_file(log_file: Path, dest: Path) -> bytes:
    """The log's bytes, once ``dest`` is known to be new or empty (never overwritten)."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not an empty folder; import never overwrites")
    from bundler.run import runner

    cap = runner.LOAD_LIMITS.bytes  # verify's cap on one input, checked before parsing
    try:
        with log_file.open("rb") as stream:
            data = stream.read(cap + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {log_file}: {exc.strerror}") from None
    if len(data) > cap:
        raise UsageError(
            f"{log_file} is larger than {cap} bytes, the largest input a "
            "verifier reads; a bundle holding it could not be verified"
        )
    return data


def write_source(
    dest: Path, document: Mapping[str, Any], files: Mapping[str, bytes], tool: str
) -> list[str]:
    """Write ``files`` (relative path -> bytes) and ``bundle.yaml``; returns the paths."""
    dest.mkdir(parents=True, exist_ok=True)
    for path, content in sorted(files.items()):
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(content)
    head = (
        f"# Written by `reprobundle import {tool}`. Build it with: reprobundle build .\n"
        "# Each case re-derives one thing the log states from the log's own records.\n"
    )
    body = yaml.dump(dict(document), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=88)
    (dest / "bundle.yaml").write_text(head + body, "utf-8")
    return sorted([*files, "bundle.yaml"])


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # a repeated value is written out again
        return True
