"""The work folder a bundle is read into: made (or taken empty), held, and removed.

It is held by directory descriptors opened when it was made, and emptied through them,
never through its path: if the path is swapped during the run (the folder renamed and a
link put in its place), the removal still reaches the folder that was made and nothing
the link points to. Removal happens on Ctrl-C, SIGTERM and SIGHUP as well: while a work
folder is held (``exiting_on_signals``), SIGTERM and SIGHUP raise ``Stopped`` (a
``SystemExit(128 + N)``) in the main thread (when nothing else handles them), so the
``finally`` blocks run; the making and the removing themselves are not interrupted (the
signals wait until they are done).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from bundler.errors import UsageError, os_reason

# what stops a command run from a terminal, a service manager or `timeout`: SIGINT raises
# KeyboardInterrupt by itself; the others are made to raise SystemExit
TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_SIGNALS = {signal.SIGINT, *TERMINATING}
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@contextlib.contextmanager
def signals_wait() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP arrive only after the block (main thread; elsewhere a
    no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Stopped(SystemExit):
    """Raised by SIGTERM or SIGHUP (``exiting_on_signals``): exit ``128 + N``, as a shell
    reports a process ended by signal N, after every ``finally`` has run."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signal_name = signal.Signals(signum).name


def _terminated(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextlib.contextmanager
def exiting_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise ``SystemExit(128 + N)`` instead of
    ending the process at once, so every ``finally`` (a partial output, a work folder, a
    child process) is cleaned up. Only signals nothing else handles, only in the main
    thread (elsewhere a no-op); the old handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    for signum in TERMINATING:
        if signal.getsignal(signum) is signal.SIG_DFL:
            old[signum] = signal.signal(signum, _terminated)
    try:
        yield
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)


class WorkFolder:
    """A new folder (``path`` None: a temporary one), or an existing empty one, to read a
    bundle into. ``remove`` empties it, and removes it if it was made here."""

    def __init__(self, path: Path | None = None) -> None:
        with signals_wait():
            self.path, self.created = _make(path)
            self._parent = self._fd = -1
            try:
                self._parent = os.open(self.path.parent, _DIRECTORY)
                self._fd = os.open(self.path.name, _DIRECTORY, dir_fd=self._parent)
            except OSError as exc:  # swapped for a link or a file since it was checked
                self._undo()
                raise UsageError(
                    f"--workdir {self.path} cannot be held: {_held_reason(exc)}"
                ) from None
        self._signals: contextlib.ExitStack | None = contextlib.ExitStack()
        self._signals.enter_context(exiting_on_signals())

    def _undo(self) -> None:
        """Close what was opened, and remove the folder if it was made here and is empty."""
        for fd in (self._fd, self._parent):
            if fd >= 0:
                os.close(fd)
        self._fd = self._parent = -1
        if self.created:
            with contextlib.suppress(OSError):
                os.rmdir(self.path)

    def remove(self) -> None:
        """Empty the folder through its descriptor (never following a link); remove it if
        it was made here and its name still names it. Best effort, never raises OSError."""
        with signals_wait():
            try:
                for name in os.listdir(self._fd):
                    with contextlib.suppress(OSError):
                        info = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
                        if stat.S_ISDIR(info.st_mode):
                            shutil.rmtree(name, dir_fd=self._fd)
                        else:
                            os.unlink(name, dir_fd=self._fd)
                if self.created:
                    with contextlib.suppress(OSError):
                        now = os.stat(self.path.name, dir_fd=self._parent, follow_symlinks=False)
                        mine = os.fstat(self._fd)
                        if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                            os.rmdir(self.path.name, dir_fd=self._parent)
            finally:
                self.release()

    def release(self) -> None:
        """Let go of the folder (kept, or removed): close its descriptors, restore the
        signal handlers."""
        for fd in (self._fd, self._parent):
            if fd >= 0:
                os.close(fd)
        self._fd = self._parent = -1
        if self._signals is not None:
            self._signals.close()
            self._signals = None


def _held_reason(exc: OSError) -> str:
    """Why a folder cannot be opened without following a link: ``O_NOFOLLOW`` with
    ``O_DIRECTORY`` on a link reports ENOTDIR or ELOOP, which would read "a part of the
    path is a file" when it is a link."""
    import errno

    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        return "it or the folder it is in is a link or not a folder"
    return os_reason(exc)


def _make(path: Path | None) -> tuple[Path, bool]:
    """A new empty folder, and whether it was made here."""
    if path is None:
        return Path(tempfile.mkdtemp(prefix="reprobundle-")).absolute(), True
    path = path.absolute()
    if path.is_symlink():
        raise UsageError(f"--workdir {path} is a link; give a new or empty folder")
    if path.parent.is_symlink():  # held by a descriptor that follows no link: refuse first
        raise UsageError(
            f"--workdir {path}: the folder it is in, {path.parent}, is a link (to "
            f"{os.readlink(path.parent)}); give a path whose folder is not a link (nothing "
            "was made)"
        )
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"--workdir {path} exists and is not a folder")
        if any(path.iterdir()):
            raise UsageError(
                f"--workdir {path} is not empty: stale files could feed a checker; "
                "give a new or empty folder"
            )
        return path, False
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise UsageError(f"--workdir {path} cannot be made: {os_reason(exc)}") from None
    return path, True
