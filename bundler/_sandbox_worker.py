"""The process that runs one bundled checker's cases (started by ``bundler.sandbox``).

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


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1])
    requests = os.fdopen(config["request_fd"], "r", encoding="utf-8")
    results = os.fdopen(config["result_fd"], "w", encoding="utf-8")
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

    function: Callable[..., Any] | None = None
    load_error: str | None = None
    entry = os.path.join(config["code_root"], config["entry_path"])
    try:
        sys.path.insert(0, os.path.dirname(entry))  # the bundle's code, in this process only
        spec = importlib.util.spec_from_file_location("bundled_checker", entry)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {entry}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        function = getattr(module, config["function"])
    except BaseException as exc:  # any failure of bundle code is reported, never raised
        load_error = f"loading {config['entry_path']} failed: {type(exc).__name__}: {exc}"

    results.write(json.dumps({"ready": True, "limits": applied}) + "\n")
    results.flush()
    for line in requests:
        request = json.loads(line)
        answer = {"nonce": request["nonce"]}
        try:
            if function is None:
                raise RuntimeError(load_error)
            os.chdir(request["workdir"])
            os.environ["HOME"] = request["home"]
            os.environ["TMPDIR"] = request["home"]
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
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os.write(1, ("\n\0reprobundle-end-" + request["nonce"] + "\0\n").encode())
        try:
            results.write(json.dumps(answer) + "\n")
        except (TypeError, ValueError):
            results.write(json.dumps({"nonce": request["nonce"], "error": "unreadable result"}))
            results.write("\n")
        results.flush()


if __name__ == "__main__":
    main()
