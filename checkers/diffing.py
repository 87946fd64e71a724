"""deepdiff, loaded without the optional libraries it would import for types we never give it.

Checkers hand deepdiff plain data only (what JSON and YAML load: mappings, lists,
strings, numbers, booleans, None, dates), never a numpy array, a pydantic model or a
pandas or polars frame. Yet deepdiff imports each of those libraries whenever it is
installed: numpy and pydantic alone are two thirds of its import time, about 0.2 s of
verifying a small bundle on a machine that happens to have them (a plain install of
reprobundle does not). They are hidden while deepdiff loads, so that it decides as on a
machine without them (the same here as there) and costs a third as much to load. Its
cache library (cachebox) imports ``asyncio`` only to make the lock of an async cache,
which deepdiff never makes; that import (with ssl and socket) was a third of what was
left, so cachebox is given a stand-in that imports asyncio if it is ever used.

Import ``DeepDiff`` from here, inside the function that describes a difference: a
comparison that finds none imports nothing.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

# what deepdiff imports only to recognise values of these libraries' own types
UNUSED = ("numpy", "pydantic", "pandas", "polars")
# what its cache library (cachebox) imports for a use it never has here (the lock of an
# async cache): bound, in the modules that import it while deepdiff loads, to a stand-in
# that imports the real module on first use
DEFERRED = ("asyncio",)


class _OnFirstUse(types.ModuleType):
    """Stands for the module of its name, which it imports when an attribute is read."""

    def __getattr__(self, attribute: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), attribute)


def _load() -> Any:
    """``deepdiff.DeepDiff``, imported with ``UNUSED`` hidden (unless already imported:
    then deepdiff sees them, which changes nothing for plain data)."""
    hidden = [name for name in UNUSED if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # import then raises ImportError
    deferred = [name for name in DEFERRED if name not in sys.modules]
    for name in deferred:
        sys.modules[name] = _OnFirstUse(name)
    try:
        from deepdiff import DeepDiff
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
        for name in deferred:  # later imports get the real module
            if isinstance(sys.modules.get(name), _OnFirstUse):
                del sys.modules[name]
    return DeepDiff


DeepDiff = _load()
