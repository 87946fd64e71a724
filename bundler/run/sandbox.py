"""Run a bundle's own checker code, opt-in, in separate limited processes.

This is **not** a sandbox: the code runs with the reviewer's user id and can read what
that user can read. What it does give: each bundled checker runs in its own persistent
worker (``python -I``, a scrubbed environment, a new session, resource limits set before
any bundle code loads, and, where the system allows, new user, network and PID
namespaces so it has no network and none of its processes outlive it). Each case runs
in a fresh folder holding a copy of its declared inputs and nothing else; the inputs are
re-hashed afterwards; output is capped; a timeout kills the worker's whole process tree,
and the next case gets a new worker. The verifier itself never imports bundle code,
never puts the bundle on ``sys.path`` and never runs in the bundle's folder.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler.codes import CODE_ERRORS
from bundler.format import strictjson
from bundler.format.manifest import BundledChecker, Case, Manifest
from bundler.format.results import bad_verdict, police
from checkers.api import COMMON_ERRORS, Reason, Verdict

WORKER = Path(__file__).with_name("_sandbox_worker.py")
MARKER = b"\n\0reprobundle-end-"


@dataclass(frozen=True)
class CodeLimits:
    """Per-case limits for bundled code; the defaults are ``verify``'s (its flags and
    ``--help`` read them from here)."""

    timeout: float = 60.0  # wall clock seconds per case
    memory_bytes: int = 1 << 30
    file_bytes: int = 64 << 20
    open_files: int = 64
    output_bytes: int = 64 << 10
    cases_per_worker: int = 100
    processes: int = 64  # processes a worker may have running at once, itself included
    written_bytes: int = 256 << 20  # all files it writes (the size of its tmpfs)

    @property
    def cpu_seconds(self) -> int:
        """CPU seconds per case: one past the timeout, so that a busy case is stopped by
        the clock (``code.timeout``) before the CPU limit kills it."""
        return max(1, int(self.timeout) + 1)


@dataclass(frozen=True)
class CodePolicy:
    allow: bool = False  # --allow-code
    limits: CodeLimits = field(default_factory=CodeLimits)


def namespaces_available() -> bool:
    """Whether new user, network and PID namespaces can be made here (Linux ``unshare``)."""
    return _unshare_works()


_UNSHARE_ARGS = ["--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"]


def jail_available() -> bool:
    """Whether a mount namespace can be made too (for the worker's own root on a tmpfs:
    see ``_sandbox_worker._jail``)."""
    return namespaces_available() and _unshare_works("--mount")


@functools.cache
def _unshare_works(*extra: str) -> bool:
    """Whether ``unshare`` with the worker's namespaces (and ``extra`` ones) runs here."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return False
    try:
        done = subprocess.run(
            [unshare, *extra, *_UNSHARE_ARGS, "true"],
            capture_output=True,
            timeout=10,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _read_only_paths() -> list[str]:
    """What a jailed worker sees (read-only) besides its own folder: the system's programs
    and libraries and this Python; not /etc, /home, /root, /tmp, /run, /proc or /sys."""
    paths = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}
    paths |= {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(p for p in paths if os.path.lexists(p))


def isolation(limits: CodeLimits) -> dict[str, Any]:
    """What is in force around bundled code on this machine, for the report."""
    ns = namespaces_available()
    return {
        "separate_process": True,
        "python_isolated_mode": True,
        "scrubbed_environment": True,
        "fresh_home_and_workdir": True,
        "inputs_copied_and_rehashed": True,
        "new_session_killed_as_group": True,
        "network_namespace": ns,
        "pid_namespace": ns,
        "file_system_jail": jail_available(),
        "processes": limits.processes,
        "written_bytes": limits.written_bytes if jail_available() else None,
        "timeout_seconds": limits.timeout,
        "cpu_seconds": limits.cpu_seconds,
        "memory_bytes": limits.memory_bytes,
        "file_bytes": limits.file_bytes,
        "open_files": limits.open_files,
        "output_bytes": limits.output_bytes,
        "not_a_sandbox": (
            "in a file-system jail the code sees only the system's programs and libraries, "
            "Python and its own inputs, and writes only to a tmpfs of written_bytes"
            if jail_available()
            else "no file-system jail here: the code runs as your user and can read and "
            "write what you can (written_bytes is not limited, only each file's size)"
        ),
    }


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


class _WorkerDied(Exception):
    pass


class _BadAnswer(Exception):
    """The worker's result line broke the protocol (bundle code can write to it)."""


class _TooManyProcesses(Exception):
    pass


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
        if jail_available():
            config["jail"] = {
                "root": str(self.home),
                "own": str(base),
                "read_only": _read_only_paths(),
                "bytes": limits.written_bytes,
            }
        command = [sys.executable, "-I", str(WORKER), json.dumps(config)]
        self._own = 0 if namespaces_available() else 1  # is proc the worker itself?
        if namespaces_available():
            mount = ["--mount"] if jail_available() else []
            command = [str(shutil.which("unshare")), *mount, *_UNSHARE_ARGS, *command]
        self._closed = False

        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.home),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }
        self.proc = subprocess.Popen(
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
        inner = _descendants(self.proc.pid)[:1] if namespaces_available() else [self.proc.pid]
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
                if len(_descendants(self.proc.pid)) + self._own > self.limits.processes:
                    raise _TooManyProcesses
                continue
            chunk = os.read(self._res, 1 << 16)
            if not chunk:
                raise _WorkerDied
            self._buffer += chunk
            if len(self._buffer) > 16 << 20:
                raise _WorkerDied
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:  # strictly: a NaN must not reach the report, nor nesting a RecursionError
            value = strictjson.loads(line)
        except ValueError as exc:
            raise _BadAnswer(f"wrote a result line that is not strict JSON ({exc})") from None
        if not isinstance(value, dict):
            raise _BadAnswer("wrote a result line that is not a JSON object")
        return value

    def ask(self, request: dict[str, Any]) -> tuple[dict[str, Any], bytes, int]:
        """Send one case; returns (answer, output kept, output total). Raises on timeout/death."""
        self.served += 1
        deadline = time.monotonic() + self.limits.timeout
        self._send((json.dumps(request, default=str) + "\n").encode(), deadline)
        answer = self._read_line(max(0.0, deadline - time.monotonic()))
        output, total = self._output.collect(request["nonce"], wait=2.0)
        if answer.get("nonce") != request["nonce"]:
            raise _WorkerDied
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
                raise _WorkerDied from None

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
        for fd in (self._req, self._res):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._output.join(timeout=2)

    def close(self) -> None:
        self.kill()


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


def _copy_checked(source: Path, target: Path, sha256: str) -> bool:
    """Copy one input for a case, hashing the bytes copied: False if they are not the
    bytes the manifest lists (the work folder changed after it was checked)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as stream, target.open("xb") as out:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest() == sha256


def _sha256(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class BundledCode:
    """Runs the bundled-code cases of one verification; close() when done."""

    def __init__(self, manifest: Manifest, root: Path, limits: CodeLimits) -> None:
        self.manifest = manifest
        self.root = root
        self.limits = limits
        self.files = {f.path: f.sha256 for f in manifest.files}
        self.base = Path(tempfile.mkdtemp(prefix="reprobundle-code-"))
        self.workers: dict[str, Worker] = {}
        self.started = 0
        self.limits_applied: dict[str, bool] = {}  # as the last worker reported them
        self.count = 0
        for checker in manifest.code:  # copied before any bundle code runs
            self._code_root(checker)

    def _code_root(self, checker: BundledChecker) -> Path:
        """A private copy of the checker's folder (its entry file and its neighbours)."""
        target = self.base / f"code-{checker.name}"
        if not target.exists():
            for path in checker.code_files(self.files):
                (target / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self.root / path, target / path, follow_symlinks=False)
        return target

    def _worker(self, checker: BundledChecker) -> Worker:
        worker = self.workers.get(checker.name)
        if worker is not None and (
            worker.proc.poll() is not None or worker.served >= self.limits.cases_per_worker
        ):
            worker.kill()
            worker = None
        if worker is None:
            worker = Worker(checker, self._code_root(checker), self.base, self.limits)
            self.workers[checker.name] = worker
            self.started += 1
            self.limits_applied = dict(worker.limits_applied)
        return worker

    def _inputs(self, case: Case) -> list[str]:
        paths: list[str] = []
        for ref in case.inputs.values():
            for path in [ref] if isinstance(ref, str) else ref:
                if path in self.files:
                    paths.append(path)
                else:
                    prefix = path.rstrip("/") + "/"
                    paths += [p for p in self.files if p.startswith(prefix)]
        return sorted(set(paths))

    def __call__(self, case: Case) -> Verdict:
        checker = self.manifest.bundled(case.checker)
        if checker is None:
            return Verdict.errored("checker.unavailable", f"no code entry for {case.checker}")
        self.count += 1
        case_dir = self.base / f"case-{self.count}"
        workdir, home = case_dir / "work", case_dir / "home"
        inputs = self._inputs(case)
        refused = self._copy_inputs(case, workdir, home, inputs)
        if refused is not None:
            shutil.rmtree(case_dir, ignore_errors=True)
            return refused
        nonce = secrets.token_hex(16)
        request = {
            "nonce": nonce,
            "workdir": str(workdir),
            "home": str(home),
            "copy": inputs,
            "inputs": {k: v if isinstance(v, str) else list(v) for k, v in case.inputs.items()},
            "params": dict(case.params),
        }
        worker: Worker | None = None
        try:
            worker = self._worker(checker)
            answer, output, total = worker.ask(request)
        except (TimeoutError, _TooManyProcesses, _BadAnswer, _WorkerDied, OSError) as exc:
            return self._failed(checker, case, exc)
        finally:
            # the copies the checker read: in a jail, on its own tmpfs, seen through /proc
            seen = worker.view / "work" / nonce if worker and worker.view else workdir
            tampered = [p for p in inputs if _sha256(seen / p) != self.files[p]]
            shutil.rmtree(case_dir, ignore_errors=True)
        details = {
            "output": output.decode("utf-8", "replace"),
            "output_bytes": total,
            "output_truncated": total > len(output),
        }
        if tampered:
            return Verdict.errored(
                "input.tampered",
                f"{case.checker} changed its input(s) {', '.join(tampered)}: input tampered",
                **details,
            )
        if "error" in answer:
            return Verdict.errored(
                "code.raised", f"{case.checker} {str(answer['error'])[:2000]}", **details
            )
        return _verdict_of(checker, answer.get("result"), details)

    def _copy_inputs(
        self, case: Case, workdir: Path, home: Path, inputs: list[str]
    ) -> Verdict | None:
        """The case's folders, with a checked copy of each input; an ``input.tampered``
        verdict if something rewrote the work folder after it was checked."""
        home.mkdir(parents=True)
        workdir.mkdir()
        changed = [
            p for p in inputs if not _copy_checked(self.root / p, workdir / p, self.files[p])
        ]
        if not changed:
            return None
        return Verdict.errored(
            "input.tampered",
            f"{', '.join(changed)} changed after the bundle was checked, before "
            f"{case.checker} ran: input tampered",
        )

    def _failed(self, checker: BundledChecker, case: Case, exc: Exception) -> Verdict:
        """The verdict of a case whose worker did not answer; the worker is dropped."""
        why = self._drop(checker)
        if isinstance(exc, TimeoutError):
            return Verdict.errored(
                "code.timeout",
                f"{case.checker} gave no verdict within {self.limits.timeout:g} s; "
                "its processes were killed",
            )
        if isinstance(exc, _TooManyProcesses):
            return Verdict.errored(
                "code.processes",
                f"{case.checker} ran more than {self.limits.processes} processes at once; "
                "they were killed",
            )
        if isinstance(exc, _BadAnswer):
            return Verdict.errored("checker.bad_verdict", f"{case.checker} {exc}")
        return Verdict.errored("code.crashed", f"{case.checker}'s process died: {why}")

    def _drop(self, checker: BundledChecker) -> str:
        worker = self.workers.pop(checker.name, None)
        if worker is None:
            return "it could not be started"
        worker.kill()
        return worker.exit_description()

    def close(self) -> None:
        for worker in self.workers.values():
            worker.kill()
        self.workers.clear()
        shutil.rmtree(self.base, ignore_errors=True)


def _verdict_of(checker: BundledChecker, value: Any, details: dict[str, Any]) -> Verdict:
    """A bundled checker's result (JSON data) as a Verdict, policed like a built-in's."""
    why = _shape_problem(value)
    if why is not None:
        return bad_verdict(checker.key, why, details)
    extra = value.get("details", {})
    verdict = Verdict(
        value.get("status"),
        value.get("message", ""),
        tuple(Reason(r["code"], str(r.get("message", ""))) for r in value.get("reasons", [])),
        {**(extra if isinstance(extra, dict) else {"value": extra}), **details},
    )
    return police(checker.key, verdict, {*checker.reasons, *COMMON_ERRORS, *CODE_ERRORS}, details)


def _shape_problem(value: Any) -> str | None:
    """Why a result is not a mapping of a status, a message and reasons (or None)."""
    if not isinstance(value, dict):
        return f"returned {type(value).__name__}, expected a mapping with a status"
    if not isinstance(value.get("message", ""), str):
        return "returned a message that is not text"
    reasons = value.get("reasons", [])
    if not isinstance(reasons, list) or not all(
        isinstance(r, dict) and isinstance(r.get("code"), str) for r in reasons
    ):
        return "returned reasons that are not a list of {code, message}"
    return None
