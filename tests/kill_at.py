"""Run the reprobundle CLI and have a signal sent at a named point: the N-th call of a
function, just before or just after it runs. This is the deterministic twin of a kill at a
random moment, which on a fast machine may land only after the work is done.

    python -m tests.kill_at MODULE:QUALNAME before|after N [--signal NAME] [--group]
        -- CLI ARGS...

The signal is SIGKILL unless ``--signal`` names another (TERM, INT, HUP). With ``--group``
it goes to the whole process group, as a terminal sends Ctrl-C (start the command in a
session of its own, so that the group is only it and its children).
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from typing import Any


def arm(
    target: str, when: str, nth: int, signum: int = signal.SIGKILL, group: bool = False
) -> None:
    module_name, _, qualname = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, attribute = qualname.split(".")
    for name in path:
        owner = getattr(owner, name)
    original = getattr(owner, attribute)
    calls = 0

    def fire() -> None:
        if group:
            os.killpg(os.getpgid(0), signum)
            return
        os.kill(os.getpid(), signum)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth and when == "before":
            fire()
        result = original(*args, **kwargs)
        if calls == nth and when == "after":
            fire()
        return result

    setattr(owner, attribute, wrapper)


def main() -> None:
    target, when, nth, *rest = sys.argv[1:]
    separator = rest.index("--") if "--" in rest else -1
    options, args = rest[:separator], rest[separator + 1 :]
    if when not in ("before", "after") or separator < 0:
        raise SystemExit(__doc__)
    signum = signal.SIGKILL
    if "--signal" in options:
        signum = signal.Signals[f"SIG{options[options.index('--signal') + 1]}"]
    arm(target, when, int(nth), signum, group="--group" in options)
    from bundler.cli import main as cli_main

    sys.argv = ["reprobundle", *args]
    cli_main()


if __name__ == "__main__":
    main()
