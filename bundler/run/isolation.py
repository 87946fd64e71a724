"""What bundled code may do here: the reviewer's policy (``--allow-code`` and the limits
of each case) and the isolation this machine can give it, probed once per process.

Probing runs ``unshare``; nothing here runs unless a bundle holds code (``bundler.run.
verify`` asks only then), so verifying a bundle without code pays for none of it.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

from bundler.format.arguments import count, seconds


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

    def __post_init__(self) -> None:
        seconds("CodeLimits.timeout", self.timeout, 0.001)
        for name in self.__dataclass_fields__:
            if name != "timeout":
                count(f"CodeLimits.{name}", getattr(self, name), 1 if name != "output_bytes" else 0)

    @property
    def cpu_seconds(self) -> int:
        """CPU seconds per case: one past the timeout, so that a busy case is stopped by
        the clock (``code.timeout``) before the CPU limit kills it."""
        return max(1, int(self.timeout) + 1)


@dataclass(frozen=True)
class CodePolicy:
    """Whether bundled code may run (``--allow-code``), and within which limits."""

    allow: bool = False  # --allow-code
    limits: CodeLimits = field(default_factory=CodeLimits)


def namespaces_available() -> bool:
    """Whether new user, network and PID namespaces can be made here (Linux ``unshare``)."""
    return _unshare_works()


UNSHARE_ARGS = ["--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"]


def jail_available() -> bool:
    """Whether a mount namespace can be made too (for the worker's own root on a tmpfs:
    see ``_sandbox_worker._jail``)."""
    return namespaces_available() and _unshare_works("--mount")


@functools.cache
def _unshare_works(*extra: str) -> bool:
    """Whether ``unshare`` with the worker's namespaces (and ``extra`` ones) runs here."""
    import subprocess

    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return False
    try:
        done = subprocess.run(
            [unshare, *extra, *UNSHARE_ARGS, "true"],
            capture_output=True,
            timeout=10,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def read_only_paths() -> list[str]:
    """What a jailed worker sees (read-only) besides its own folder: the system's programs
    and libraries and this Python; not /etc, /home, /root, /tmp, /run, /proc or /sys."""
    paths = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}
    paths |= {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(p for p in paths if os.path.lexists(p))


def _process_cap() -> str:
    """Which cap on processes holds here, in words for the report."""
    from bundler.run import pidcap

    if pidcap.available():
        return "pids cgroup: the kernel refuses every process past the cap when it is started"
    return (
        "polled every 0.1 s (no pids cgroup can be made here): processes started and "
        "left between two polls are not seen"
    )


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
        "process_cap": _process_cap(),
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
