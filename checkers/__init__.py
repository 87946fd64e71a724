"""Built-in checkers, one package per family, registered by ``name@version``.

Old versions stay registered forever so that old bundles keep verifying: a change of
semantics is a new version, never an edit of an old one.

A checker is declared once, with ``@checker(...)`` in its check module; that declaration
is its registration. ``_index.py``, generated from the declarations (``python -m
bundler.generate``, which imports every module here), says which module declares each
checker, so verifying a bundle imports only the modules of the checkers its cases name;
a test fails when the index is stale. The shared modules beside the families (``api``,
``yamlfile``, ``compare``, ``plain``, ``witness``) import no family, and nothing here
imports ``bundler`` (see README.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from functools import cache
from types import MappingProxyType

from ._index import MODULE_OF as MODULE_OF  # (re-exported: which keys exist)
from .api import Checker


def _by_key(values: Iterable[object], where: str) -> dict[str, Checker]:
    """The checkers among ``values`` by ``name@version``; two different checkers with
    one key are refused, never one of them kept silently."""
    found: dict[str, Checker] = {}
    for value in values:
        if isinstance(value, Checker) and found.setdefault(value.key, value) is not value:
            raise RuntimeError(f"checker {value.key} is registered twice in {where}")
    return found


@cache
def defined_in(module: str) -> Mapping[str, Checker]:
    """The checkers the module ``module`` holds, by ``name@version``."""
    return _by_key(vars(importlib.import_module(module)).values(), module)


@cache
def registry() -> Mapping[str, Checker]:
    """Every built-in checker by ``name@version``."""
    every = (c for module in sorted(set(MODULE_OF.values())) for c in defined_in(module).values())
    return MappingProxyType(dict(sorted(_by_key(every, __name__).items())))


def get(key: str) -> Checker | None:
    module = MODULE_OF.get(key)
    return defined_in(module).get(key) if module else None
