"""The process that runs one bundled checker's cases (started by ``bundler.run.worker``).

Run as ``python -I _sandbox_worker.py CONFIG_JSON`` with a scrubbed environment: it
imports only the standard library, applies its resource limits before any bundle code
is loaded, then answers requests (one JSON line each on the request pipe) with results
(one JSON line each on the result pipe). The checker's own output goes to stdout and
stderr, which the parent caps; after each case a marker line tells the parent where that
case's output ends.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import resource
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any


def _limit(which: int, value: int) -> bool:
    try:
        resource.setrlimit(which, (value, value))
        return True
    except (ValueError, OSError):
        return False


def _set_cpu(budget_per_case: int, hard: int) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = int(usage.ru_utime + usage.ru_stime)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (min(hard, used + budget_per_case + 1), hard))


_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC = 1, 2, 4, 32, 4096, 16384
_MS_PRIVATE = 1 << 18
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 24, 38


def _jail(jail: dict[str, Any]) -> str:
    """Inside a new mount namespace (and user namespace, where we are root): a new root
    on a tmpfs of ``jail["bytes"]`` bytes (every byte the code can write lands there)
    holding only read-only views of what Python needs and of this checker's own folder
    of code and inputs, then every capability dropped so that none of it can be undone.
    Returns "" when done, else why not (the caller then runs without it and says so)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def call(result: int, what: str) -> None:
        if result != 0:
            number = ctypes.get_errno()
            raise OSError(number, f"{what}: {os.strerror(number)}")

    def mount(source: str | None, target: str, kind: str | None, flags: int, data: str) -> None:
        call(
            libc.mount(
                source.encode() if source else None,
                target.encode(),
                kind.encode() if kind else None,
                flags,
                data.encode() if data else None,
            ),
            f"mount {target}",
        )

    def remount_read_only(source: str, target: str) -> None:
        # a user namespace may not clear the flags its mounts came with: keep them
        kept = os.statvfs(source).f_flag
        flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | (kept & 0b110000001100)
        mount(None, target, None, flags | (1 << 21 if kept & 4096 else 0), "")

    def read_only(source: str, target: str) -> None:
        mount(source, target, None, _MS_BIND | _MS_REC, "")
        remount_read_only(source, target)

    root = jail["root"]
    try:
        mount(None, "/", None, _MS_REC | _MS_PRIVATE, "")
        mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={jail['bytes']},mode=0755")
        for path in sorted(jail["read_only"]):
            target = root + path
            if os.path.islink(path):  # /bin -> usr/bin on merged systems
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(os.readlink(path), target)
            elif os.path.isdir(path):
                os.makedirs(target, exist_ok=True)
                read_only(path, target)
        own = jail["own"]  # this checker's code and case folders; not what is mounted below
        os.makedirs(root + own, exist_ok=True)
        mount(own, root + own, None, _MS_BIND, "")
        remount_read_only(own, root + own)
        os.makedirs(root + "/dev", exist_ok=True)
        for device in ("null", "zero", "random", "urandom"):
            with open(f"{root}/dev/{device}", "wb"):
                pass
            mount(f"/dev/{device}", f"{root}/dev/{device}", None, _MS_BIND, "")
        for folder in ("work", "home", "tmp"):
            os.makedirs(f"{root}/{folder}", mode=0o777, exist_ok=True)
        os.chdir(root)
        os.chroot(".")
        os.chdir("/")
        for capability in range(64):  # nothing may remount, unmount or leave the root
            if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                break
        call(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # capability version 3, this process
        data = (ctypes.c_uint32 * 6)()
        call(libc.capset(header, data), "capset")
    except OSError as exc:
        return str(exc)
    return ""


def _copy_inputs(source: str, target: str, paths: list[str]) -> None:
    """The case's inputs, from the read-only view into a fresh folder on the tmpfs."""
    import shutil

    for path in paths:
        os.makedirs(os.path.dirname(os.path.join(target, path)), exist_ok=True)
        shutil.copyfile(os.path.join(source, path), os.path.join(target, path))


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1])
    requests = os.fdopen(config["request_fd"], "r", encoding="utf-8")
    results = os.fdopen(config["result_fd"], "w", encoding="utf-8")
    jail_problem = _jail(config["jail"]) if config.get("jail") else "no mount namespace"
    jailed = not jail_problem
    applied, cpu_hard = _apply_limits(config)
    function, load_error = _load_checker(config)
    ready = {"ready": True, "limits": applied, "jail": jailed, "jail_problem": jail_problem}
    results.write(json.dumps(ready) + "\n")
    results.flush()
    previous = ""
    for line in requests:
        request = json.loads(line)
        answer = {"nonce": request["nonce"]}
        try:
            if function is None:
                raise RuntimeError(load_error)
            if jailed:  # the last case's copies go, this case's come onto the tmpfs
                last, previous = previous, request["nonce"]
                workdir, home = _jailed_folders(request, last)
            else:
                workdir, home = request["workdir"], request["home"]
            os.chdir(workdir)
            os.environ["HOME"] = home
            os.environ["TMPDIR"] = home
            _set_cpu(config["cpu_seconds"], cpu_hard)
            value = function(request["inputs"], request["params"])
            answer["result"] = json.loads(json.dumps(value, allow_nan=False))
        except MemoryError:
            answer["error"] = "ran out of memory (the memory limit was reached)"
        except SystemExit as exc:
            answer["error"] = f"called exit({exc.code!r}) instead of returning a verdict"
        except BaseException as exc:
            tail = traceback.format_exc(limit=-3)[-2000:]
            answer["error"] = f"raised {type(exc).__name__}: {exc}\n{tail}"
        _answer(results, request["nonce"], answer)


def _apply_limits(config: dict[str, Any]) -> tuple[dict[str, bool], int]:
    """The resource limits, set before any bundle code loads: which took, and the hard
    CPU limit of the whole worker."""
    applied = {
        "memory": _limit(resource.RLIMIT_AS, config["memory_bytes"]),
        "file_size": _limit(resource.RLIMIT_FSIZE, config["file_bytes"]),
        "open_files": _limit(resource.RLIMIT_NOFILE, config["open_files"]),
        "core": _limit(resource.RLIMIT_CORE, 0),
    }
    cpu_hard = config["cpu_seconds"] * config["cases_per_worker"] + 5
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (config["cpu_seconds"] + 1, cpu_hard))
        applied["cpu"] = True
    except (ValueError, OSError):
        applied["cpu"] = False
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, not kills
    return applied, cpu_hard


def _load_checker(config: dict[str, Any]) -> tuple[Callable[..., Any] | None, str | None]:
    """The bundled checker's function, or why it could not be loaded."""
    entry = os.path.join(config["code_root"], config["entry_path"])
    try:
        sys.path.insert(0, os.path.dirname(entry))  # the bundle's code, in this process only
        spec = importlib.util.spec_from_file_location("bundled_checker", entry)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {entry}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, config["function"]), None
    except BaseException as exc:  # any failure of bundle code is reported, never raised
        return None, f"loading {config['entry_path']} failed: {type(exc).__name__}: {exc}"


def _jailed_folders(request: dict[str, Any], previous: str) -> tuple[str, str]:
    """This case's folders on the tmpfs, its inputs copied in; the last case's removed."""
    import shutil

    if previous:
        shutil.rmtree(f"/work/{previous}", ignore_errors=True)
        shutil.rmtree(f"/home/{previous}", ignore_errors=True)
    home, workdir = f"/home/{request['nonce']}", f"/work/{request['nonce']}"
    os.makedirs(home)
    os.makedirs(workdir)
    _copy_inputs(request["workdir"], workdir, request["copy"])
    return workdir, home


def _answer(results: Any, nonce: str, answer: dict[str, Any]) -> None:
    """The marker that ends this case's output, then its answer line."""
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
    os.write(1, ("\n\0reprobundle-end-" + nonce + "\0\n").encode())
    try:
        results.write(json.dumps(answer) + "\n")
    except (TypeError, ValueError):
        results.write(json.dumps({"nonce": nonce, "error": "unreadable result"}))
        results.write("\n")
    results.flush()


if __name__ == "__main__":
    main()
