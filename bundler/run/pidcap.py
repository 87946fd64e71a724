"""The process cap of bundled code, held by the kernel where it can be: a pids cgroup per
worker, whose ``pids.max`` makes every fork past the cap fail at the instant it is tried.

The worker is put in its cgroup before it runs anything (a shell writes its own id to
``cgroup.procs`` and then becomes the worker's command), so every process it starts is
counted, however fast it forks and whatever it does next. Where no pids cgroup can be
made (no cgroup file system with the pids controller, or no right to write it: an
ordinary user without a delegated cgroup), the cap falls back to the worker's poll of its
descendants (``worker.py``), which a burst between two polls escapes; ``isolation``
reports which of the two applied.

cgroup v1 (a hierarchy with the ``pids`` controller) and v2 (the unified hierarchy, where
``pids`` is already enabled for the children of this process's cgroup: the machine's
cgroup settings are never changed) are both used.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import time
from pathlib import Path

_COUNTER = itertools.count()
# the shell that enters the cgroup: $0 is cgroup.procs, "$@" the worker's command
_ENTER = 'echo $$ > "$0" && unset PWD OLDPWD && exec "$@"'


def _hierarchies() -> list[Path]:
    """This process's own cgroup folder in each hierarchy that can hold a pids cap."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    v1: Path | None = None
    v2: Path | None = None
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields, extra = left.split(), right.split()
        if len(fields) < 5 or len(extra) < 3:
            continue
        if extra[0] == "cgroup" and "pids" in extra[2].split(","):
            v1 = Path(fields[4])
        elif extra[0] == "cgroup2" and v2 is None:
            v2 = Path(fields[4])
    found = []
    for line in own:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if v1 is not None and "pids" in controllers.split(","):
            found.append(v1 / path.lstrip("/"))
        elif v2 is not None and number == "0" and controllers == "":
            found.append(v2 / path.lstrip("/"))
    return found


class ProcessCap:
    """One worker's pids cgroup: at most ``limit`` processes in it at any instant."""

    def __init__(self, folder: Path, limit: int) -> None:
        self.folder = folder
        self.limit = limit

    @classmethod
    def make(cls, limit: int) -> ProcessCap | None:
        """A new pids cgroup capped at ``limit``, or None where none can be made here."""
        for parent in _hierarchies():
            _sweep(parent)
            folder = parent / f"reprobundle-{os.getpid()}-{next(_COUNTER)}"
            try:
                control = parent / "cgroup.subtree_control"  # (v2: enabled, never by us)
                if control.exists() and "pids" not in control.read_text().split():
                    continue
                folder.mkdir()
            except OSError:
                continue
            try:
                (folder / "pids.max").write_text(str(limit))
            except OSError:
                with contextlib.suppress(OSError):
                    folder.rmdir()
                continue
            return cls(folder, limit)
        return None

    def command(self, command: list[str]) -> list[str]:
        """``command`` started inside the cgroup: nothing runs before it is in it."""
        return ["/bin/sh", "-c", _ENTER, str(self.folder / "cgroup.procs"), *command]

    def refused(self) -> int:
        """How many forks the cap has refused so far."""
        try:
            for line in (self.folder / "pids.events").read_text().splitlines():
                name, _, count = line.partition(" ")
                if name == "max":
                    return int(count)
        except (OSError, ValueError):
            pass
        return 0

    def kill(self) -> None:
        """SIGKILL every process in the cgroup, until none is left (a fork in flight can
        add one while the list is read); then remove it."""
        for _ in range(100):
            try:
                pids = [int(p) for p in (self.folder / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                break
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.sched_yield()
        for _ in range(2500):  # the killed are counted until they are reaped (bounded wait)
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.002)


def _sweep(parent: Path) -> None:
    """Remove the empty cgroups a verification that has ended left behind (its processes
    were still being reaped when it gave up waiting): by name, only ours, and only those
    of a process that no longer exists."""
    try:
        folders = list(parent.glob("reprobundle-*-*"))
    except OSError:
        return
    for folder in folders:
        pid = folder.name.split("-")[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                folder.rmdir()  # (refused while a process is still in it)


@functools.cache
def available() -> bool:
    """Whether a pids cgroup can be made here (probed once: made and removed)."""
    cap = ProcessCap.make(1)
    if cap is None:
        return False
    cap.kill()
    return True
