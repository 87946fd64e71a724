"""Built-in checkers, one package per family, registered by ``name@version``.

Old versions stay registered forever so that old bundles keep verifying: a change of
semantics is a new version, never an edit of an old one.

A family is imported only when one of its checkers is asked for (``FAMILY_OF`` says
where each lives), so verifying a bundle does not load what its cases never use; a test
keeps the table equal to what the packages define. A family's ``__init__`` imports its
checkers from its check modules; the shared modules beside the families (``api``,
``yamlfile``, ``compare``, ``plain``, ``witness``) import no family, and nothing here
imports ``bundler`` (see README.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from functools import cache
from types import MappingProxyType, ModuleType

from .api import Checker

FAMILIES = (
    "structured",
    "config_change",
    "fault_injection",
    "trajectory",
    "metrics",
    "intent",
    "inspect_log",
    "promptfoo",
    "lm_eval",
)
FAMILY_OF = {
    "call-args-schema@1": "config_change",
    "call-args-schema@2": "config_change",
    "classification-metrics@1": "metrics",
    "classification-metrics@2": "metrics",
    "contamination@1": "intent",
    "fault-report@1": "fault_injection",
    "fault-report@2": "fault_injection",
    "fault-report@3": "fault_injection",
    "group-rates@1": "intent",
    "inspect-counts@1": "inspect_log",
    "inspect-counts@2": "inspect_log",
    "inspect-metric@1": "inspect_log",
    "inspect-metric@2": "inspect_log",
    "inspect-rescore@1": "inspect_log",
    "inspect-rescore@2": "inspect_log",
    "inspect-status@1": "inspect_log",
    "inspect-status@2": "inspect_log",
    "intent-expectations@1": "intent",
    "intent-expectations@2": "intent",
    "lm-eval-counts@1": "lm_eval",
    "lm-eval-hashes@1": "lm_eval",
    "lm-eval-metric@1": "lm_eval",
    "merge-reconstruct@1": "config_change",
    "merge-reconstruct@2": "config_change",
    "no-write-attempts@1": "config_change",
    "no-write-attempts@2": "config_change",
    "promptfoo-assert@1": "promptfoo",
    "promptfoo-assert@2": "promptfoo",
    "promptfoo-stats@1": "promptfoo",
    "promptfoo-stats@2": "promptfoo",
    "review-matches-submission@1": "config_change",
    "review-matches-submission@2": "config_change",
    "state-unchanged@1": "config_change",
    "state-unchanged@2": "config_change",
    "structured-equal@1": "structured",
    "structured-equal@2": "structured",
    "suite-threshold@1": "intent",
    "suite-threshold@2": "intent",
    "trajectory-skeleton@1": "trajectory",
    "trajectory-skeleton@2": "trajectory",
    "trial-stats@1": "fault_injection",
    "trial-stats@2": "fault_injection",
    "trial-stats@3": "fault_injection",
}


def _by_key(values: Iterable[object], where: str) -> dict[str, Checker]:
    """The checkers among ``values`` by ``name@version``; two different checkers with
    one key are refused, never one of them kept silently."""
    found: dict[str, Checker] = {}
    for value in values:
        if isinstance(value, Checker) and found.setdefault(value.key, value) is not value:
            raise RuntimeError(f"checker {value.key} is registered twice in {where}")
    return found


@cache
def defined_in(family: str) -> Mapping[str, Checker]:
    """The checkers the package of ``family`` defines, by ``name@version``."""
    module: ModuleType = importlib.import_module(f"{__name__}.{family}")
    return _by_key(vars(module).values(), module.__name__)


@cache
def registry() -> Mapping[str, Checker]:
    """Every built-in checker by ``name@version``."""
    every = (c for family in FAMILIES for c in defined_in(family).values())
    return MappingProxyType(dict(sorted(_by_key(every, __name__).items())))


def get(key: str) -> Checker | None:
    family = FAMILY_OF.get(key)
    return defined_in(family).get(key) if family else None
