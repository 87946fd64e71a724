"""Run the reprobundle CLI and have it SIGKILL itself at a named point: the N-th call of a
function, just before or just after it runs. This is the deterministic twin of a kill at a
random moment, which on a fast machine may land only after the work is done.

    python -m tests.kill_at MODULE:QUALNAME before|after N -- CLI ARGS...
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from typing import Any


def arm(target: str, when: str, nth: int) -> None:
    module_name, _, qualname = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, attribute = qualname.split(".")
    for name in path:
        owner = getattr(owner, name)
    original = getattr(owner, attribute)
    calls = 0

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args, **kwargs)
        if calls == nth and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, attribute, wrapper)


def main() -> None:
    target, when, nth, separator, *args = sys.argv[1:]
    if when not in ("before", "after") or separator != "--":
        raise SystemExit(__doc__)
    arm(target, when, int(nth))
    from bundler.cli import main as cli_main

    sys.argv = ["reprobundle", *args]
    cli_main()


if __name__ == "__main__":
    main()
