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

The policy and the isolation are in ``bundler.run.isolation``, the worker process and
its protocol in ``bundler.run.worker``; this module runs the cases.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bundler.codes import CODE_ERRORS
from bundler.format.manifest import BundledChecker, Case, Manifest
from bundler.format.results import bad_verdict, police
from bundler.run.isolation import CodeLimits
from bundler.run.worker import BadAnswer, TooManyProcesses, Worker, WorkerDied
from checkers.api import COMMON_ERRORS, Reason, Verdict


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
        except (TimeoutError, TooManyProcesses, BadAnswer, WorkerDied, OSError) as exc:
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
        if isinstance(exc, TooManyProcesses):
            how = (
                "tried to run more than {n} processes at once (the pids cgroup refused the rest)"
                if exc.refused
                else "ran more than {n} processes at once"
            )
            return Verdict.errored(
                "code.processes",
                f"{case.checker} {how.format(n=self.limits.processes)}; they were killed",
            )
        if isinstance(exc, BadAnswer):
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
