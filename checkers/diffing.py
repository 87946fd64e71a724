"""deepdiff, loaded without the optional libraries it would import for types we never give it.

Checkers hand deepdiff plain data only (what JSON and YAML load: mappings, lists,
strings, numbers, booleans, None, dates), never a numpy array, a pydantic model or a
pandas or polars frame. Yet deepdiff imports each of those libraries whenever it is
installed: numpy and pydantic alone are two thirds of its import time, about 0.2 s of
verifying a small bundle on a machine that happens to have them (a plain install of
reprobundle does not). They are hidden while deepdiff loads, so that it decides as on a
machine without them (the same here as there) and costs a third as much to load.

Import ``DeepDiff`` from here, inside the function that describes a difference: a
comparison that finds none imports nothing.
"""

from __future__ import annotations

import sys
from typing import Any

# what deepdiff imports only to recognise values of these libraries' own types
UNUSED = ("numpy", "pydantic", "pandas", "polars")


def _load() -> Any:
    """``deepdiff.DeepDiff``, imported with ``UNUSED`` hidden (unless already imported:
    then deepdiff sees them, which changes nothing for plain data)."""
    hidden = [name for name in UNUSED if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # import then raises ImportError
    try:
        from deepdiff import DeepDiff
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
    return DeepDiff


DeepDiff = _load()
