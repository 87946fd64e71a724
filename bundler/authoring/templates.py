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


def bundle_name_for(folder: Path) -> str | None:
    """A bundle name made from a folder's name (``My Bundle``: ``my-bundle``), as the
    manifest's rule for names allows, or None when nothing of it is left."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", folder.absolute().name)
    text = text.encode("ascii", "ignore").decode().lower()
    name = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:64].rstrip("-")
    return name or None


def copy_template(name: str, dest: Path, bundle_name: str | None = None) -> list[Path]:
    """Copy template ``name`` into ``dest`` (new or empty). Returns the files written.
    ``bundle_name`` replaces the template's own name in its bundle.yaml (and in the
    file names its comments show), so two sources made by ``init`` do not share a name."""
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
    if bundle_name is not None:
        _rename(dest / "bundle.yaml", bundle_name)
    return written


def _rename(source_file: Path, bundle_name: str) -> None:
    """Give the bundle.yaml of a copied template ``bundle_name``: its ``name:`` line, and
    the ``NAME-VERSION`` its comments show."""
    import re

    text = source_file.read_text("utf-8")
    found = re.search(r"^name: *(\S+) *$", text, re.M)
    if found is None:
        return
    old = found.group(1)
    text = text[: found.start()] + f"name: {bundle_name}" + text[found.end() :]
    text = re.sub(rf"(?m)^(#.*){re.escape(old)}-", lambda m: f"{m.group(1)}{bundle_name}-", text)
    source_file.write_text(text, "utf-8")
