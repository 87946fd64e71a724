"""Built-in checkers, one module per family, registered by ``name@version``.

Old versions stay registered forever so that old bundles keep verifying: a change of
semantics is a new version, never an edit of an old one.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from . import config_change, fault_injection, intent, metrics, structured, trajectory
from .api import Checker

FAMILIES = (structured, config_change, fault_injection, trajectory, metrics, intent)


@cache
def registry() -> Mapping[str, Checker]:
    """Every built-in checker by ``name@version``."""
    found: dict[str, Checker] = {}
    for module in FAMILIES:
        for value in vars(module).values():
            if isinstance(value, Checker):
                if value.key in found and found[value.key] is not value:
                    raise RuntimeError(f"checker {value.key} is registered twice")
                found[value.key] = value
    return MappingProxyType(dict(sorted(found.items())))


def get(key: str) -> Checker | None:
    return registry().get(key)
