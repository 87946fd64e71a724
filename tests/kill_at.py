"""Run the reprobundle CLI and have a signal sent at a named point: the N-th call of a
function, just before or just after it runs. This is the deterministic twin of a kill at a
random moment, which on a fast machine may land only after the work is done.

    python -m tests.kill_at MODULE:QUALNAME before|after N [--signal NAME] [--group]
        [--child] -- CLI ARGS...

The signal is SIGKILL unless ``--signal`` names another (TERM, INT, HUP). With ``--group``
it goes to the whole process group, as a terminal sends Ctrl-C (start the command in a
session of its own, so that the group is only it and its children). With ``--child``
the point is armed not in this process but in the reprobundle process it starts (build's
verification at home), and that child sends the signal to this, its parent, then waits
to be stopped: the signal reaches the parent while the child holds its work folder.
(The child finds the point through ``tests/child_hook/sitecustomize.py``.)
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

CHILD_VARIABLE = "REPROBUNDLE_TEST_KILL_AT"
HOOK_FOLDER = Path(__file__).resolve().parent / "child_hook"


def arm(
    target: str,
    when: str,
    nth: int,
    signum: int = signal.SIGKILL,
    parent: bool = False,
    group: bool = False,
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
        if not parent:
            os.kill(os.getpid(), signum)
            return
        os.kill(os.getppid(), signum)
        while True:  # until the parent stops this process (its handler raises)
            time.sleep(3600)

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


def arm_in_child() -> None:
    """In a process started by the one ``--child`` armed: arm the point it named."""
    spec = json.loads(os.environ[CHILD_VARIABLE])
    if os.getppid() == spec["parent"]:
        arm(spec["target"], spec["when"], spec["nth"], spec["signal"], parent=True)


def main() -> None:
    target, when, nth, *rest = sys.argv[1:]
    separator = rest.index("--") if "--" in rest else -1
    options, args = rest[:separator], rest[separator + 1 :]
    if when not in ("before", "after") or separator < 0:
        raise SystemExit(__doc__)
    signum = signal.SIGKILL
    if "--signal" in options:
        signum = signal.Signals[f"SIG{options[options.index('--signal') + 1]}"]
    if "--child" in options:
        spec = {"target": target, "when": when, "nth": int(nth), "signal": int(signum)}
        os.environ[CHILD_VARIABLE] = json.dumps({**spec, "parent": os.getpid()})
        paths = [str(HOOK_FOLDER), os.environ.get("PYTHONPATH", "")]
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    else:
        arm(target, when, int(nth), signum, group="--group" in options)
    from bundler.cli import main as cli_main

    sys.argv = ["reprobundle", *args]
    cli_main()


if __name__ == "__main__":
    main()
