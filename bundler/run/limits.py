"""The limits of built-in cases: seconds and memory per case, and the whole verification's
time (a ``Budget``); what running code ``within`` them gives, or the error verdict that
says which it passed."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple, TypeVar

from bundler.format.manifest import Case
from checkers.api import Verdict

try:
    import resource
except ImportError:  # pragma: no cover (not POSIX)
    resource = None  # type: ignore[assignment]

# A built-in case running longer is stopped: a bundle's params can hold a regex that
# backtracks for ever on its inputs. 0 means no limit.
CASE_SECONDS = 120.0
# Address space a built-in case may add to the verifier's (RLIMIT_AS, raised with
# --case-memory); a whole verification ends within VERIFY_SECONDS (--time-limit).
CASE_MEMORY = 2 << 30
VERIFY_SECONDS = 3600.0
T = TypeVar("T")


class CaseBudget(NamedTuple):
    """What the built-in cases of one verification may take: ``seconds`` and ``memory``
    bytes each (0: no limit), and ``time_limit`` seconds all together (0: no limit)."""

    seconds: float = CASE_SECONDS
    memory: int = CASE_MEMORY
    time_limit: float = VERIFY_SECONDS

    def started(self, now: float) -> Budget:
        """The ``Budget`` of a verification that starts at ``now`` (``time.monotonic()``)."""
        return Budget(
            self.seconds, self.memory, now + self.time_limit if self.time_limit > 0 else None
        )


class Budget(NamedTuple):
    """What each built-in case may take, and when the whole verification must end."""

    seconds: float = CASE_SECONDS
    memory: int = CASE_MEMORY
    deadline: float | None = None  # time.monotonic() value


class _OutOfTime(BaseException):
    """Raised inside a checker by the timer; not an Exception, so no checker swallows it."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the code inside after ``seconds``. SIGALRM reaches Python code and the
    ``re`` engine; signals arrive on the main thread only, so elsewhere there is no limit."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def _memory_limit(extra: int) -> Iterator[None]:
    """Let the code inside add at most ``extra`` bytes of address space: the soft
    RLIMIT_AS is set to what the process holds now plus ``extra``, and put back after.
    A checker (or a parser in C) past it gets MemoryError, never the machine's memory."""
    if extra <= 0 or resource is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm", "rb") as statm:
            used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        yield  # no way to know what the process holds: no limit rather than a wrong one
        return
    limit = used + extra if hard == resource.RLIM_INFINITY else min(used + extra, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


class LimitReached(Exception):
    """Code run ``within`` its limits went past one: ``what`` is ``time`` or ``memory``."""

    def __init__(self, what: str, message: str) -> None:
        super().__init__(message)
        self.what = what


def within(call: Callable[[], T], seconds: float, memory: int) -> T:
    """``call()`` within ``seconds`` and ``memory`` bytes more than the process holds, the
    limits of one built-in case; raises ``LimitReached`` past either."""
    try:
        with _time_limit(seconds), _memory_limit(memory):
            return call()
    except _OutOfTime:
        raise LimitReached("time", f"ran longer than {seconds:g} s") from None
    except MemoryError:
        raise LimitReached("memory", f"needed more than {memory >> 20} MiB") from None


def limited(
    call: Callable[[], Verdict],
    key: str,
    seconds: float = CASE_SECONDS,
    memory: int = CASE_MEMORY,
    raise_with: tuple[str, str] | None = None,
) -> Verdict:
    """The verdict ``call`` gives within a case's limits, or the error verdict that says
    which limit it passed (``raise_with``: the options that raise each, if any)."""
    try:
        return within(call, seconds, memory)
    except LimitReached as exc:
        code = "checker.timeout" if exc.what == "time" else "checker.memory"
        how = raise_with[exc.what != "time"] if raise_with else None
        return Verdict.errored(code, f"{key} {exc}" + (f" (raise with {how})" if how else ""))


def out_of_time(case: Case) -> Verdict:
    return Verdict.errored(
        "checker.timeout",
        f"not run: the verification's time limit was reached before {case.id} "
        "(raise with --time-limit)",
    )
