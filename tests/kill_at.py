"""Run the reprobundle CLI and have a signal sent at a named point: the N-th call of a
function, just before or just after it runs. This is the deterministic twin of a kill at a
random moment, which on a fast machine may land only after the work is done.

    python -m tests.kill_at MODULE:QUALNAME before|after N [--signal NAME] [--group]
        -- CLI ARGS...

The signal is SIGKILL unless ``--signal`` names another (TERM, INT, HUP). With ``--group``
it goes to the whole process group, as a terminal sends Ctrl-C (start the command in a
session of its own, so that the group is only it and its children). A group killed so has
no resource tracker left to remove its pools' named semaphores: if ``KILL_AT_SEMAPHORES``
names a file, the names of those this process made are written there first, for the test
to remove exactly them (never another process's).
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
            _note_semaphores()
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


def _note_semaphores() -> None:
    """Write the names of this process's multiprocessing semaphores where the test said."""
    where = os.environ.get("KILL_AT_SEMAPHORES")
    if not where:
        return
    import gc
    from multiprocessing.synchronize import SemLock

    handles = [getattr(o, "_semlock", None) for o in gc.get_objects() if isinstance(o, SemLock)]
    names = [h.name for h in handles if getattr(h, "name", None)]
    with open(where, "w") as out:
        out.write("\n".join(names))


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
