"""Starter bundle sources shipped with the tool (``reprobundle init --template NAME``)."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from bundler.errors import UsageError

DEFAULT = "starter"


def _root() -> Traversable:
    return resources.files(__package__).joinpath("templates")


def names() -> list[str]:
    return sorted(
        entry.name
        for entry in _root().iterdir()
        if entry.is_dir() and not entry.name.startswith("_")
    )


def copy_template(name: str, dest: Path) -> list[Path]:
    """Copy template ``name`` into ``dest`` (new or empty). Returns the files written."""
    if name not in names():
        raise UsageError(f"no template {name!r}; templates: {', '.join(names())}")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not an empty folder; init never overwrites")
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def copy(node: Traversable, target: Path) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name == "__pycache__":
                continue
            if child.is_dir():
                (target / child.name).mkdir()
                copy(child, target / child.name)
            else:
                (target / child.name).write_bytes(child.read_bytes())
                written.append(target / child.name)

    copy(_root().joinpath(name), dest)
    return written
