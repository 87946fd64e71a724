"""Helpers for the archive tests: many small distinct bundles, fast, without building."""

from __future__ import annotations

import contextlib
import sqlite3
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import tomli_w
from click.testing import CliRunner

from bundler.cli import main
from tests.helpers import Entry, edit_manifest, read_entries, write_entries


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    """``reprobundle archive --archive ROOT ARGS``: exit code, stdout, stderr (no bug allowed)."""
    result = CliRunner().invoke(main, ["archive", "--archive", str(root), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def rebadge(
    bundle: Path,
    target: Path,
    name: str | None = None,
    version: str | None = None,
    edit: Callable[[dict[str, Any]], None] | None = None,
) -> Path:
    """A copy of ``bundle`` under another name and/or version (hashes kept honest)."""
    entries = read_entries(bundle)
    doc = tomllib.loads(entries[0].data.decode())
    old_top = entries[0].name.split("/")[0]
    doc["bundle"]["name"] = name or doc["bundle"]["name"]
    doc["bundle"]["version"] = version or doc["bundle"]["version"]
    new_top = f"{doc['bundle']['name']}-{doc['bundle']['version']}"
    moved = [Entry(new_top + e.name[len(old_top) :], e.data, e.type) for e in entries]
    moved[0].data = tomli_w.dumps(doc).encode()
    write_entries(moved, target)
    if edit is not None:
        edit_manifest(target, target, edit)
    return target


def flip_expectation(doc: dict[str, Any]) -> None:
    """Make the first case expect the opposite verdict: its claim becomes contradicted."""
    case = doc["cases"][0]
    case["expect"] = "fail" if case["expect"] == "pass" else "pass"
    case.pop("expect_reasons", None)


def db(root: Path) -> contextlib.closing[sqlite3.Connection]:
    """A raw connection to an archive's index, as someone editing it by hand would open it;
    ``with db(root) as conn:`` closes it at the end of the block."""
    return contextlib.closing(sqlite3.connect(root / "index.sqlite", isolation_level=None))


def sql(root: Path, statement: str, params: Sequence[Any] = ()) -> list[Any]:
    """Run one statement on the index by hand (autocommit) and close the connection."""
    with db(root) as conn:
        return conn.execute(statement, params).fetchall()
