"""The work folder a bundle is read into: made (or taken empty), held, and removed.

It is held by directory descriptors opened when it was made, and emptied through them,
never through its path: if the path is swapped during the run (the folder renamed and a
link put in its place), the removal still reaches the folder that was made and nothing
the link points to. Removal happens on Ctrl-C and on SIGTERM as well: while a work
folder is held, SIGTERM raises ``SystemExit(143)`` in the main thread (when nothing else
handles it), so the ``finally`` blocks run; the making and the removing themselves are
not interrupted (the two signals wait until they are done).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from bundler.errors import UsageError

_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@contextlib.contextmanager
def _signals_wait() -> Iterator[None]:
    """Ctrl-C and SIGTERM arrive only after the block (main thread; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _terminated(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


class WorkFolder:
    """A new folder (``path`` None: a temporary one), or an existing empty one, to read a
    bundle into. ``remove`` empties it, and removes it if it was made here."""

    def __init__(self, path: Path | None = None) -> None:
        with _signals_wait():
            self.path, self.created = _make(path)
            self._parent = os.open(self.path.parent, _DIRECTORY)
            self._fd = os.open(self.path.name, _DIRECTORY, dir_fd=self._parent)
        self._old_handler: object = None
        main = threading.current_thread() is threading.main_thread()
        if main and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            self._old_handler = signal.signal(signal.SIGTERM, _terminated)

    def remove(self) -> None:
        """Empty the folder through its descriptor (never following a link); remove it if
        it was made here and its name still names it. Best effort, never raises OSError."""
        with _signals_wait():
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
        """Let go of the folder (kept, or removed): close its descriptors, restore SIGTERM."""
        for fd in (self._fd, self._parent):
            if fd >= 0:
                os.close(fd)
        self._fd = self._parent = -1
        if self._old_handler is not None:
            signal.signal(signal.SIGTERM, self._old_handler)  # type: ignore[arg-type]
            self._old_handler = None


def _make(path: Path | None) -> tuple[Path, bool]:
    """A new empty folder, and whether it was made here."""
    if path is None:
        return Path(tempfile.mkdtemp(prefix="reprobundle-")).absolute(), True
    path = path.absolute()
    if path.is_symlink():
        raise UsageError(f"--workdir {path} is a link; give a new or empty folder")
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
        why = (
            "a part of the path is a file, not a folder"
            if exc.errno == errno.ENOTDIR
            else exc.strerror
        )
        raise UsageError(f"--workdir {path} cannot be made: {why}") from None
    return path, True
