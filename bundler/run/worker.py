"""The worker protocol: one persistent process (``_sandbox_worker.py``) per bundled
checker, started with its limits and, where the system allows, in new namespaces; one
JSON line per case each way on its own pipes, its output drained and capped per case
between markers, its whole process tree killed on timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bundler.format.manifest import BundledChecker
from bundler.run import isolation
from bundler.run.isolation import CodeLimits
from bundler.run.pidcap import ProcessCap
from checkers import strictjson

WORKER = Path(__file__).with_name("_sandbox_worker.py")
MARKER = b"\n\0reprobundle-end-"


class _Output(threading.Thread):
    """Drains a worker's stdout+stderr, keeping at most ``cap`` bytes per case."""

    def __init__(self, fd: int, cap: int) -> None:
        super().__init__(daemon=True)
        self._fd = fd
        self._cap = cap
        self._lock = threading.Lock()
        self._pending = bytearray()  # not yet attributed to a case (bounded)
        self._kept = bytearray()
        self._total = 0
        self._done: dict[bytes, tuple[bytes, int]] = {}
        self._event = threading.Event()

    def run(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._event.set()
                return
            with self._lock:
                self._pending += chunk
                self._split()

    def _split(self) -> None:
        while True:
            at = self._pending.find(MARKER)
            if at < 0:
                keep = len(self._pending) - len(MARKER) - 64  # a marker may straddle chunks
                if keep > 0:
                    self._take(bytes(self._pending[:keep]))
                    del self._pending[:keep]
                return
            end = self._pending.find(b"\0\n", at + len(MARKER))
            if end < 0:
                return
            nonce = bytes(self._pending[at + len(MARKER) : end])
            self._take(bytes(self._pending[:at]))
            if len(self._done) > 16:  # markers forged by the checker's own output
                self._done.clear()
            self._done[nonce] = (bytes(self._kept), self._total)
            self._kept = bytearray()
            self._total = 0
            del self._pending[: end + 2]
            self._event.set()

    def _take(self, data: bytes) -> None:
        self._total += len(data)
        room = self._cap - len(self._kept)
        if room > 0:
            self._kept += data[:room]

    def collect(self, nonce: str, wait: float) -> tuple[bytes, int]:
        key = nonce.encode()
        deadline = time.monotonic() + wait
        while True:
            with self._lock:
                if key in self._done:
                    return self._done.pop(key)
            left = deadline - time.monotonic()
            if left <= 0 or not self.is_alive():
                with self._lock:
                    self._take(bytes(self._pending))
                    self._pending.clear()
                    out = (bytes(self._kept), self._total)
                    self._kept, self._total = bytearray(), 0
                    return out
            self._event.wait(min(left, 0.05))
            self._event.clear()


class WorkerDied(Exception):
    pass


class BadAnswer(Exception):
    """The worker's result line broke the protocol (bundle code can write to it)."""


class TooManyProcesses(Exception):
    """More processes than the cap: seen by the poll, or refused by the pids cgroup."""

    def __init__(self, refused: bool = False) -> None:
        super().__init__()
        self.refused = refused  # by the kernel (a pids cgroup), at the instant of the fork


class Worker:
    """One persistent process serving the cases of one bundled checker."""

    def __init__(self, checker: BundledChecker, code_root: Path, base: Path, limits: CodeLimits):
        self.checker = checker
        self.limits = limits
        self.served = 0
        self.home = Path(tempfile.mkdtemp(prefix="home-", dir=base))
        config = {
            "code_root": str(code_root),
            "entry_path": checker.path,
            "function": checker.function,
            "memory_bytes": limits.memory_bytes,
            "file_bytes": limits.file_bytes,
            "open_files": limits.open_files,
            "cpu_seconds": limits.cpu_seconds,
            "cases_per_worker": limits.cases_per_worker,
        }
        req_read, self._req = os.pipe()
        os.set_blocking(self._req, False)
        self._res, res_write = os.pipe()
        out_read, out_write = os.pipe()
        config["request_fd"], config["result_fd"] = req_read, res_write
        if isolation.jail_available():
            config["jail"] = {
                "root": str(self.home),
                "own": str(base),
                "read_only": isolation.read_only_paths(),
                "bytes": limits.written_bytes,
            }
        command = [sys.executable, "-I", str(WORKER), json.dumps(config)]
        self._own = 0 if isolation.namespaces_available() else 1  # is proc the worker itself?
        if isolation.namespaces_available():
            mount = ["--mount"] if isolation.jail_available() else []
            command = [str(shutil.which("unshare")), *mount, *isolation.UNSHARE_ARGS, *command]
        command = _dies_with_parent(command)
        # the kernel's cap where a pids cgroup can be made (unshare, above the worker in
        # its namespaces, is one more process); else only the poll in _read_line
        self.cap = ProcessCap.make(limits.processes + (1 - self._own))
        if self.cap is not None:
            command = self.cap.command(command)
        self._closed = False

        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.home),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }
        self.proc = subprocess.Popen(  # (the cap's folder is removed by kill)
            command,
            stdin=subprocess.DEVNULL,
            stdout=out_write,
            stderr=out_write,
            cwd=self.home,
            env=env,
            start_new_session=True,
            pass_fds=(req_read, res_write),
            close_fds=True,
        )
        for fd in (req_read, res_write, out_write):
            os.close(fd)
        self._output = _Output(out_read, limits.output_bytes)
        self._output.start()
        self._buffer = b""
        try:
            ready = self._read_line(timeout=max(limits.timeout, 30.0))
        except BaseException:
            self.kill()  # never leave a half-started worker behind
            raise
        self.limits_applied: dict[str, bool] = ready.get("limits", {})
        self.jailed = ready.get("jail") is True
        self.limits_applied["file_system_jail"] = self.jailed
        # the jailed worker's own view of its files (its root is a tmpfs only it mounts)
        inner = (
            _descendants(self.proc.pid)[:1] if isolation.namespaces_available() else [self.proc.pid]
        )
        self.view = Path(f"/proc/{inner[0]}/root") if inner and self.jailed else None

    def _read_line(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self._res], [], [], min(left, 0.1))
            if not ready:
                # counted, not RLIMIT_NPROC: that counts every process of the user (and
                # none of root's), not this worker's; below unshare, the worker is one
                if self.cap is not None and self.cap.refused():
                    raise TooManyProcesses(refused=True)
                if len(_descendants(self.proc.pid)) + self._own > self.limits.processes:
                    raise TooManyProcesses
                continue
            chunk = os.read(self._res, 1 << 16)
            if not chunk:
                raise WorkerDied
            self._buffer += chunk
            if len(self._buffer) > 16 << 20:
                raise WorkerDied
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:  # strictly: a NaN must not reach the report, nor nesting a RecursionError
            value = strictjson.loads(line)
        except ValueError as exc:
            raise BadAnswer(f"wrote a result line that is not strict JSON ({exc})") from None
        if not isinstance(value, dict):
            raise BadAnswer("wrote a result line that is not a JSON object")
        return value

    def ask(self, request: dict[str, Any]) -> tuple[dict[str, Any], bytes, int]:
        """Send one case; returns (answer, output kept, output total). Raises on timeout/death."""
        self.served += 1
        deadline = time.monotonic() + self.limits.timeout
        self._send((json.dumps(request, default=str) + "\n").encode(), deadline)
        answer = self._read_line(max(0.0, deadline - time.monotonic()))
        if self.cap is not None and self.cap.refused():
            raise TooManyProcesses(refused=True)
        output, total = self._output.collect(request["nonce"], wait=2.0)
        if answer.get("nonce") != request["nonce"]:
            raise WorkerDied
        return answer, output, total

    def _send(self, data: bytes, deadline: float) -> None:
        """Write a request without ever blocking past the deadline."""
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            _, ready, _ = select.select([], [self._req], [], left)
            if not ready:
                raise TimeoutError
            try:
                view = view[os.write(self._req, view[: 1 << 16]) :]
            except BlockingIOError:
                continue
            except OSError:
                raise WorkerDied from None

    def exit_description(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "it stopped answering"
        if code < 0:
            return f"it was killed by {signal.Signals(-code).name}"
        return f"it exited with status {code}"

    def kill(self) -> None:
        """Kill the worker and every process it started (once)."""
        if self._closed:
            return
        self._closed = True
        victims = _descendants(self.proc.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        if self.cap is not None:
            self.cap.kill()
        for fd in (self._req, self._res):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._output.join(timeout=2)

    def close(self) -> None:
        self.kill()


def _dies_with_parent(command: list[str]) -> list[str]:
    """``command`` made to receive SIGKILL when this process dies (Linux: util-linux's
    ``setpriv --pdeathsig``, which then runs it in its place). A verification killed with
    SIGKILL can stop nothing itself: without this, a worker in the middle of a case (or
    ``unshare`` above it, whose ``--kill-child`` then ends the whole namespace) would run
    on. Where ``setpriv`` is missing the command is unchanged: a worker waiting for work
    still ends when its request pipe closes, but one inside a case runs to its end."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "KILL", *command] if setpriv else command


def _descendants(root: int) -> list[int]:
    """Every process below ``root`` (by parent id), read from /proc when there is one."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    found: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found
