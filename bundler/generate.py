"""The files generated from the declarations, and the command that writes them.

Each declaration is written once and the files that repeat it are generated:
``checkers/_index.py`` (which module declares each checker) and the layout, the table of
counterexamples and the reference of ``checkers/README.md`` from the ``@checker``
declarations, ``manifests/CODES.md`` from
``bundler/codes.py``. ``python -m bundler.generate`` rewrites all three; tests fail when
one is stale and name that command.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import checkers
from bundler import codes
from bundler.format.advisories import advisories, of_checker
from checkers.api import Checker, Param, Role

REPO = Path(checkers.__file__).resolve().parent.parent
INDEX = REPO / "checkers" / "_index.py"
README = REPO / "checkers" / "README.md"
CODES = REPO / "manifests" / "CODES.md"
COMMAND = "python -m bundler.generate"
BEGIN = "<!-- generated from the @checker declarations by python -m bundler.generate -->"
END = "<!-- end of the generated reference -->"
LAYOUT_BEGIN = "<!-- the layout, generated from the modules by python -m bundler.generate -->"
LAYOUT_END = "<!-- end of the generated layout -->"
TABLE_BEGIN = "<!-- generated from the counterexamples by python -m bundler.generate -->"
TABLE_END = "<!-- end of the generated counterexamples -->"
LAYOUT_COLUMN = 21  # where the descriptions start
LAYOUT_WIDTH = 92


def modules() -> list[str]:
    """Every module under ``checkers/``."""
    return [info.name for info in pkgutil.walk_packages(checkers.__path__, prefix="checkers.")]


def declared(names: Iterable[str] | None = None) -> dict[str, str]:
    """Every checker the modules ``names`` (all of ``checkers/`` by default) declare (a
    ``Checker`` whose function the module defines), ``name@version`` -> that module.
    Imports them; a key declared twice is refused."""
    found: dict[str, str] = {}
    for name in modules() if names is None else names:
        for value in vars(importlib.import_module(name)).values():
            if not isinstance(value, Checker) or value.module != name:
                continue
            if found.setdefault(value.key, name) != name:
                raise RuntimeError(f"checker {value.key} is registered twice")
        checkers.defined_in(name)  # two checkers with one key in a module: refused
    return dict(sorted(found.items()))


def index_source(modules: Mapping[str, str]) -> str:
    """The text of ``checkers/_index.py`` for ``modules`` (``name@version`` -> module)."""
    lines = [
        '"""Which module declares each built-in checker, by ``name@version``.',
        "",
        f"Generated from the ``@checker`` declarations by ``{COMMAND}``; do not",
        'edit by hand (tests/checkers/test_registry.py fails when it is stale)."""',
        "",
        "MODULE_OF = {",
        *(f'    "{key}": "{module}",' for key, module in sorted(modules.items())),
        "}",
    ]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _takes(role: Role) -> str:
    shape = "list of paths" if role.many else ("folder" if role.kind.value == "tree" else "path")
    words = [
        shape,
        "optional" if role.optional else "",
        "YAML aliases expanded" if role.reading.yaml_aliases else "",
        "NaN/Infinity read" if role.reading.json_constants else "",
        "lines end at \\n only" if role.reading.lines_at_newline else "",
        "compared with the other compared roles" if role.compared else "",
    ]
    return ", ".join(w for w in words if w)


def _param_row(param: Param) -> str:
    types = " or ".join(t.__name__ for t in param.types)
    default = "required" if param.required else f"`{json.dumps(param.default)}`"
    doc = param.doc + (
        f" (a wrong value fails with {', '.join(param.states)})" if param.states else ""
    )
    return f"| `{param.name}` | {types} | {_cell(default)} | {param.range} | {_cell(doc)} |"


def describe(found: Checker) -> list[str]:
    """One checker's reference, in Markdown: all of it read from its declaration."""
    where = found.module.replace(".", "/") + ".py"
    lines = [f"### `{found.key}`: {found.summary}", "", f"Declared in `{where}`."]
    if found.libraries:
        lines[-1] += f" Relies on: {', '.join(found.libraries)}."
    lines += ["", "| input | kind | takes | content |", "| --- | --- | --- | --- |"]
    lines += [
        f"| `{r.name}` | {r.kind.value} | {_takes(r)} | {_cell(r.doc)} |" for r in found.roles
    ]
    lines.append("")
    if found.params:
        lines += ["| param | type | default | range | meaning |", "| --- | --- | --- | --- | --- |"]
        lines += [_param_row(p) for p in found.params]
    else:
        lines.append("No params.")
    lines += ["", "| reason (verdict fail) | meaning |", "| --- | --- |"]
    lines += [f"| `{code}` | {_cell(meaning)} |" for code, meaning in found.reasons.items()]
    for advisory in of_checker(found.key):
        lines += [
            "",
            f"**Advisory {advisory.id}** ({advisory.published}): {advisory.summary}. An author "
            f"can make it say supported for {advisory.can_make_supported}. Fixed in "
            f"{', '.join(f'`{k}`' for k in advisory.fixed_in)}. Verify judges a claim resting "
            f"on it inconclusive unless given `--accept-advisory {advisory.id}`.",
        ]
    if found.doc:
        lines += ["", found.doc]
    return [*lines, ""]


def checkers_reference(registry: Mapping[str, Checker]) -> str:
    """The generated section of ``checkers/README.md``, markers included."""
    lines = [
        BEGIN,
        "## Reference",
        "",
        "Per checker, from its declaration: its inputs, params (type, default, range), the",
        "reason codes it fails with, and its docstring (what it reads, compares and cannot",
        "decide). Every checker may also return the error codes of `checkers/api.py`'s",
        "`COMMON_ERRORS` (verdict error: the case is inconclusive), listed in",
        "`manifests/CODES.md`.",
        "",
    ]
    for found in registry.values():
        lines += describe(found)
    lines += advisories_reference()
    return "\n".join([*lines, END]) + "\n"


def advisories_reference() -> list[str]:
    """Every shipped advisory (``checkers/advisories/``), in Markdown."""
    lines = [
        "## Advisories",
        "",
        "A checker version an author can make say supported against its evidence, and the",
        "version that fixes it (one file each in `checkers/advisories/`; `reprobundle checkers",
        "--advisories`). Verify, report, ci, build and archive verify judge a claim whose",
        "passing cases use an advised version inconclusive unless given `--accept-advisory ID`.",
        "",
        "| id | affected | fixed in | an author can make supported |",
        "| --- | --- | --- | --- |",
    ]
    for a in advisories():
        affected = ", ".join(f"`{k}`" for k in a.affected)
        fixed = ", ".join(f"`{k}`" for k in a.fixed_in)
        lines.append(f"| {a.id} | {affected} | {fixed} | {_cell(a.can_make_supported)} |")
    return [*lines, ""]


def readme_with_reference(readme: str, reference: str) -> str:
    """``readme`` with its generated section replaced by ``reference`` (appended when it
    has none)."""
    return with_section(readme, BEGIN, END, reference, append=True)


def with_section(text: str, begin: str, end: str, section: str, *, append: bool = False) -> str:
    """``text`` with the part from the line ``begin`` to the line ``end`` replaced by
    ``section`` (which holds both markers); appended when ``append`` and it has none."""
    head, found, rest = text.partition(begin)
    if not found:
        if append:
            return text.rstrip("\n") + "\n\n" + section
        raise ValueError(f"{README}: no {begin!r}")
    _, ended, tail = rest.partition(end + "\n")
    if not ended:
        raise ValueError(f"{README}: {begin!r} without {end!r}")
    return head + section + tail


def _first_sentence(doc: str | None) -> str:
    """A module's docstring up to its first colon or full stop, on one line."""
    words = " ".join((doc or "").split()).replace("``", "`")
    cut = min((i for i in (words.find(": "), words.find(". ")) if i >= 0), default=len(words))
    return words[:cut].rstrip(".")


def _wrapped(label: str, text: str) -> list[str]:
    """``label`` and ``text`` as lines of the layout: the text in a column, wrapped."""
    import textwrap

    lines = textwrap.wrap(text, LAYOUT_WIDTH - LAYOUT_COLUMN, break_on_hyphens=False) or [""]
    first = f"{label:<{LAYOUT_COLUMN}}{lines[0]}".rstrip()
    return [first, *(" " * LAYOUT_COLUMN + line for line in lines[1:])]


def _versions(keys: Iterable[str]) -> str:
    """``a@1, @2, b@1`` for ``a@1``, ``a@2``, ``b@1``."""
    words, last = [], ""
    for key in keys:
        name, _, version = key.partition("@")
        words.append(f"@{version}" if name == last else key)
        last = name
    return ", ".join(words)


def layout(modules: Mapping[str, str]) -> str:
    """The generated "Layout" of ``checkers/README.md``: each shared module with the first
    sentence of its docstring; each family with its own, its model modules (which declare
    no checker) and its check modules with the checker versions each declares
    (``modules``: ``name@version`` -> the module declaring it)."""
    root = REPO / "checkers"
    by_module: dict[str, list[str]] = {}
    for key, module in sorted(modules.items(), key=lambda item: _key_order(item[0])):
        by_module.setdefault(module, []).append(key)
    lines = [LAYOUT_BEGIN, "```", "checkers/"]
    for path in sorted(root.glob("*.py")):
        name = f"checkers.{path.stem}" if path.stem != "__init__" else "checkers"
        doc = importlib.import_module(name).__doc__
        lines += _wrapped(f"  {path.name}", _first_sentence(doc))
    for family in sorted(p for p in root.iterdir() if (p / "__init__.py").is_file()):
        package = f"checkers.{family.name}"
        lines += _wrapped(
            f"  {family.name}/", _first_sentence(importlib.import_module(package).__doc__)
        )
        models: list[str] = []
        checks: list[str] = []
        for part in sorted(family.iterdir()):
            if part.suffix == ".py" and part.stem != "__init__":
                keys = by_module.get(f"{package}.{part.stem}", [])
                (checks if keys else models).append(
                    f"{part.name}: {_versions(keys)}" if keys else part.name
                )
            elif (part / "__init__.py").is_file():
                inner = sorted(p.stem for p in part.glob("*.py") if p.stem != "__init__")
                prefix = f"{package}.{part.name}"
                keys = [
                    k for m, ks in by_module.items() if f"{m}.".startswith(f"{prefix}.") for k in ks
                ]
                listed = f"{part.name}/ ({', '.join(inner)})"
                (checks if keys else models).append(
                    f"{listed}: {_versions(keys)}" if keys else listed
                )
        if models:
            lines += _wrapped(
                "", f"{'model' if len(models) == 1 else 'models'}: {', '.join(models)}"
            )
        for check in checks:
            lines += _wrapped("", check)
    return "\n".join([*lines, "```", LAYOUT_END]) + "\n"


def _key_order(key: str) -> tuple[str, int]:
    name, _, version = key.partition("@")
    return name, int(version)


def counterexamples(registry: Mapping[str, Checker]) -> str:
    """The generated table of what each checker's counterexample gives, and when it gives
    none (its docstring), one row per counterexample (the checkers that share it)."""
    rows: dict[object, list[Checker]] = {}
    for found in sorted(registry.values(), key=lambda c: _key_order(c.key)):
        rows.setdefault(found.counterexample, []).append(found)
    lines = [
        TABLE_BEGIN,
        "| checker | its counterexample, and when it has none (the params are vacuous) |",
        "| --- | --- |",
    ]
    for sharing in rows.values():
        doc = " ".join((sharing[0].counterexample.__doc__ or "").split()).replace("``", "`")
        lines.append(f"| {', '.join(f'`{c.key}`' for c in sharing)} | {_cell(doc)} |")
    return "\n".join([*lines, TABLE_END]) + "\n"


def generated() -> dict[Path, str]:
    """Each generated file and the text it must hold."""
    modules = declared()
    return {
        INDEX: index_source(modules),
        README: readme_text(README.read_text(encoding="utf-8"), modules),
        CODES: codes.reference(),
    }


def readme_text(readme: str, modules: Mapping[str, str]) -> str:
    """``readme`` with its three generated sections (the layout, the counterexample table,
    the reference) made from the declarations of ``modules`` (``name@version`` -> module)."""
    every = {key: checkers.defined_in(module)[key] for key, module in modules.items()}
    readme = with_section(readme, LAYOUT_BEGIN, LAYOUT_END, layout(modules))
    readme = with_section(readme, TABLE_BEGIN, TABLE_END, counterexamples(every))
    return readme_with_reference(readme, checkers_reference(every))


def main() -> None:
    for path, text in generated().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
