"""Cases -> outcomes: load each case's inputs, call its checker, compare with the expectation.

Built-in checkers run in-process and import nothing from the bundle. Whatever a
checker does wrong (raises, returns garbage, names an undeclared code, runs past the time
limit per case) becomes an ``error`` verdict, and an error is never evidence: its outcome
is ``inconclusive``.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import checkers
from bundler.format import documents, strictjson
from checkers.api import (
    STRICT,
    Bound,
    Checker,
    CheckerInputError,
    InputKind,
    Reading,
    Verdict,
    failed_substantively,
)

try:
    import resource
except ImportError:  # pragma: no cover (not POSIX)
    resource = None  # type: ignore[assignment]
from bundler.format.manifest import BUNDLED_PREFIX, Case, Manifest
from bundler.format.results import CaseResult, judge, police

# A built-in case running longer is stopped: a bundle's params can hold a regex that
# backtracks for ever on its inputs. 0 means no limit.
CASE_SECONDS = 120.0
# Address space a built-in case may add to the verifier's (RLIMIT_AS, raised with
# --case-memory); a whole verification ends within VERIFY_SECONDS (--time-limit).
CASE_MEMORY = 2 << 30
VERIFY_SECONDS = 3600.0
T = TypeVar("T")
# Told (cases done, cases in all, the case about to run or "") as work goes on.
Progress = Callable[[int, int, str], None]


def checker_environment(keys: Iterable[str], code_ran: bool = True) -> dict[str, Any]:
    """``checkers`` (each ``name@version`` -> where it came from here) and ``libraries``
    (the version of each library those checkers rely on): what explains a divergence
    between the build's machine and this one."""
    from bundler.run.libraries import versions

    used = sorted(set(keys))
    found_by_key = {key: checkers.get(key) for key in used}
    libraries = versions(
        library for found in found_by_key.values() for library in (found.libraries if found else ())
    )

    def origin(key: str) -> str:
        if key.startswith(BUNDLED_PREFIX):
            return "bundled code" if code_ran else "bundled code (not run here)"
        return "built-in" if found_by_key[key] else "unavailable"

    return {
        "checkers": {key: origin(key) for key in used},
        "libraries": dict(sorted(libraries.items())),
    }


class _LoadError(Exception):
    def __init__(self, message: str, code: str = "input.unreadable") -> None:
        super().__init__(message)
        self.code = code


class LoadLimits(NamedTuple):
    """Caps on what a built-in case's input may make the verifier hold, checked before
    (or, for what only parsing can tell, while) the input is parsed."""

    bytes: int = 256 << 20  # per input file
    values: int = 5_000_000  # JSON and JSON Lines: values in one input
    yaml_values: int = 200_000  # YAML builds about 1 KiB of nodes per value
    depth: int = strictjson.MAX_DEPTH


LOAD_LIMITS = LoadLimits()


def _read(root: Path, path: str, sha256: str) -> bytes:
    """An input's bytes, re-hashed as they are read: whatever changed the work folder
    since it was checked (another process, a bundle's code) is caught, not believed."""
    import hashlib

    try:
        fd = os.open(root / path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if size > LOAD_LIMITS.bytes:
                raise _LoadError(f"{path} is {size} bytes; an input is at most {LOAD_LIMITS.bytes}")
            # the size it has, and a byte more to see it grew: asking for the cap instead
            # made Python allocate 256 MiB for every input, however small
            data = stream.read(size + 1)
    except OSError as exc:
        raise _LoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise _LoadError(
            f"{path} changed after it was checked (its SHA-256 no longer matches the "
            "manifest): input tampered",
            "input.tampered",
        )
    return data


def _load_one(
    root: Path, path: str, kind: InputKind, listed: Mapping[str, str], reading: Reading = STRICT
) -> Any:
    if kind is InputKind.TREE:
        prefix = path.rstrip("/") + "/"
        return {
            p[len(prefix) :]: _read(root, p, digest)
            for p, digest in sorted(listed.items())
            if p.startswith(prefix)
        }
    if path not in listed:
        raise _LoadError(f"{path} is not a file of the bundle")
    data = _read(root, path, listed[path])
    try:
        return parse_input(data, path, kind, reading, listed[path])
    except documents.DocumentProblem as exc:
        raise _LoadError(str(exc)) from None


def parse_input(
    data: bytes, path: str, kind: InputKind, reading: Reading = STRICT, sha256: str = ""
) -> Any:
    """A file's bytes as a role of ``kind`` receives them, read as verify reads them
    (strictly, within ``LOAD_LIMITS``): importers read logs with it before writing cases.
    ``sha256`` (of ``data``) keys the YAML memory. Raises ``documents.DocumentProblem``."""
    if len(data) > LOAD_LIMITS.bytes:
        raise documents.DocumentProblem(
            f"{path} is {len(data)} bytes; an input is at most {LOAD_LIMITS.bytes}"
        )
    if kind is InputKind.BYTES:
        return data
    caps = documents.Caps(
        values=LOAD_LIMITS.values,
        yaml_values=LOAD_LIMITS.yaml_values,
        depth=LOAD_LIMITS.depth,
        yaml_aliases=reading.yaml_aliases,
        json_constants=reading.json_constants,
        lines_at_newline=reading.lines_at_newline,
    )
    text = documents.decode(data, path)
    if kind is InputKind.TEXT:
        return text
    if kind is InputKind.JSONL:
        return documents.parse(text, path, "jsonl", caps)
    if path.endswith(".json"):
        return documents.parse(text, path, "json", caps)
    if not sha256:
        import hashlib

        sha256 = hashlib.sha256(data).hexdigest()
    return _parse_yaml(sha256, text, path, caps)


# YAML inputs parsed before, by content (SHA-256, as re-checked on reading) and caps: the
# cases of a bundle often share one YAML file (forty cases, one cases.yaml), and PyYAML
# builds each value in Python (~20 us). Kept like _VACUITY_CACHE (emptied when full): at
# most 16 files of at most 64 Ki characters and 20,000 values each.
_PARSED: dict[tuple[str, documents.Caps], Any] = {}
_PARSED_FILES = 16
_PARSED_CHARACTERS = 64 << 10
_PARSED_VALUES = 20_000  # aliases expanded


def _at_most(value: Any, limit: int) -> bool:
    """Whether ``value`` holds at most ``limit`` values (mapping keys and items counted)."""
    pending = [value]
    while pending:
        limit -= 1
        if limit < 0:
            return False
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def _parse_yaml(sha256: str, text: str, path: str, caps: documents.Caps) -> Any:
    """The document's value; every caller gets its own copy, so a checker that changes
    what it was given changes nothing another case reads."""
    import copy

    key = (sha256, caps)
    if key in _PARSED:
        return copy.deepcopy(_PARSED[key])
    value = documents.parse(text, path, "yaml", caps)
    if len(text) > _PARSED_CHARACTERS or not _at_most(value, _PARSED_VALUES):
        return value  # aliases can make a small file a large value: not kept
    if len(_PARSED) >= _PARSED_FILES:
        _PARSED.clear()
    _PARSED[key] = value
    return copy.deepcopy(value)


def load_inputs(
    found: Checker, case: Case, root: Path, listed: Mapping[str, str]
) -> dict[str, Any]:
    """The loaded value of each role; raises _LoadError naming the file (and line)."""
    loaded: dict[str, Any] = {}
    for role_name, ref in case.inputs.items():
        role = found.role(role_name)
        if role is None:
            raise _LoadError(f"{found.key} has no input {role_name!r}")
        if role.many != (not isinstance(ref, str)):
            raise _LoadError(
                f"input {role_name!r} must be {'a list of paths' if role.many else 'one path'}"
            )
        paths = [ref] if isinstance(ref, str) else list(ref)
        values = [_load_one(root, p, role.kind, listed, role.reading) for p in paths]
        loaded[role_name] = values if role.many else values[0]
    missing = [r.name for r in found.roles if not r.optional and r.name not in loaded]
    if missing:
        raise _LoadError(f"{found.key} needs input(s) {', '.join(missing)}")
    return loaded


def same_file(found: Checker, inputs: Mapping[str, Any]) -> str | None:
    """Why a case names one file (or folder) in two roles its checker compares with each
    other, or None. ``inputs`` maps role -> path or list of paths."""
    seen: dict[str, str] = {}
    for role in found.roles:
        ref = inputs.get(role.name)
        if not role.compared or ref is None:
            continue
        for path in dict.fromkeys([ref] if isinstance(ref, str) else list(ref)):
            key = path.rstrip("/")
            if key in seen:
                return (
                    f"{path!r} is given as both {seen[key]!r} and {role.name!r}, which "
                    f"{found.key} compares with each other: the file would be compared with "
                    "itself; give each role its own file"
                )
            seen[key] = role.name
    return None


_VACUITY_CACHE: dict[str, Verdict | None] = {}


def vacuity(found: Checker, params: Mapping[str, Any]) -> Verdict | None:
    """None when the checker can fail under ``params`` (its counterexample makes it fail
    for one of its own reasons); otherwise the error verdict the case gets instead:
    ``params.vacuous``, or ``params.invalid`` when the params are wrong. Remembered per
    checker and params, so 20,000 cases with the same params pay once."""
    if checkers.get(found.key) is not found:  # not the registered one: never remembered
        return _vacuity(found, params)
    key = f"{found.key} {strictjson.canonical(params)}"
    if key in _VACUITY_CACHE:
        return _VACUITY_CACHE[key]
    if len(_VACUITY_CACHE) >= 4096:
        _VACUITY_CACHE.clear()
    result = _vacuity(found, params)
    _VACUITY_CACHE[key] = result
    return result


def _vacuous(found: Checker, why: str) -> Verdict:
    return Verdict.errored(
        "params.vacuous",
        f"{found.key} cannot fail under these params ({why}): a pass would show nothing; "
        "change the params so that some input fails the check",
    )


def _vacuity(found: Checker, params: Mapping[str, Any]) -> Verdict | None:
    """The params as given must admit a failing input; and every statement they make (a
    param with ``states``; each entry of a mapping on its own, the rest as given) must
    admit an input that fails with a reason saying that statement is wrong: a check that
    can fail on one claimed figure, or for a reason no figure causes, says nothing of the
    others."""
    bound = found.bind(params)
    refused = bound.refused or _can_fail(bound)
    if refused is not None:
        return refused
    full = bound.params
    for param in found.params:
        value = full.get(param.name)
        if not param.states or value is None:
            continue
        if isinstance(value, Mapping) and len(value) > 1:
            parts = [
                (f"{param.name}.{k}", {**params, param.name: {k: v}}) for k, v in value.items()
            ]
        else:
            parts = [(param.name, dict(params))]
        for what, part in parts:
            refused = _can_fail(found.bind(part), param.states, what)
            if refused is not None:
                return refused
    return None


def _can_fail(bound: Bound, codes: tuple[str, ...] = (), what: str = "") -> Verdict | None:
    """None when the counterexample of the bound params fails the checker for one of its
    own reasons (one of ``codes``, when given: the reasons that say ``what`` is wrong)."""
    found = bound.checker
    if found.counterexample is None:
        return _vacuous(found, "it declares no counterexample, so nothing shows it can fail")
    try:
        inputs = found.counterexample(bound.params)
    except CheckerInputError as exc:
        code = exc.code if exc.code in found.all_reasons else "params.invalid"
        return Verdict.errored(code, exc.message)
    except RecursionError:
        return _vacuous(found, "its params are nested too deeply to build a failing input")
    except Exception as exc:  # a bug in the counterexample is never a verdict
        return Verdict.errored(
            "checker.raised", f"{found.key}'s counterexample raised {type(exc).__name__}: {exc}"
        )
    about = f"{what}: " if what else ""
    if inputs is None:
        return _vacuous(found, f"{about}no input fails it")
    verdict = call(bound, inputs)
    if failed_substantively(verdict) and (not codes or set(codes) & set(verdict.codes)):
        return None
    # params that are wrong, or a pattern in them that is not run: said as such, not vacuous
    refused = {"params.invalid", "params.out_of_range", "pattern.not_rerun"}
    if verdict.status == "error" and refused & set(verdict.codes):
        return verdict
    observed = verdict.status + (f" {list(verdict.codes)}" if verdict.reasons else "")
    wanted = f"a failure with {' or '.join(codes)}" if codes else "a failure of the check"
    return _vacuous(found, f"{about}its counterexample gives {observed}, not {wanted}")


def run_checker(found: Checker, inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Call a checker and police what comes back."""
    return call(found.bind(params), inputs)


def call(bound: Bound, inputs: Mapping[str, Any]) -> Verdict:
    """Call a checker with its bound params and police what comes back: refused params,
    an input error or an exception become an error verdict."""
    found = bound.checker
    refused = bound.refused
    if refused is not None:
        return refused
    try:
        verdict = bound(inputs)
    except CheckerInputError as exc:
        code = exc.code if exc.code in found.all_reasons else "input.invalid"
        return Verdict.errored(code, exc.message)
    except RecursionError:
        return Verdict.errored("input.invalid", "input nested too deeply to check")
    except MemoryError:
        raise  # the case's memory limit: run_case says so
    except Exception as exc:  # a bug in the checker is never a verdict
        return Verdict.errored("checker.raised", f"{found.key} raised {type(exc).__name__}: {exc}")
    return police(found.key, verdict, found.all_reasons)


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


def run_case(
    case: Case,
    root: Path,
    listed: Mapping[str, str],
    seconds: float = CASE_SECONDS,
    memory: int = CASE_MEMORY,
    deadline: float | None = None,
) -> Verdict:
    """The verdict of one built-in case, within ``seconds``, ``memory`` bytes more than the
    process holds, and the verification's ``deadline`` (a ``time.monotonic()`` value)."""
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            return out_of_time(case)
        seconds = min(seconds, left) if seconds > 0 else left
    return limited(
        lambda: _run_case(case, root, listed),
        case.checker,
        seconds,
        memory,
        ("--case-timeout, or the whole verification's --time-limit", "--case-memory"),
    )


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


def _run_case(case: Case, root: Path, listed: Mapping[str, str]) -> Verdict:
    found = checkers.get(case.checker)
    if found is None:
        return Verdict.errored(
            "checker.unavailable", f"this verifier has no checker {case.checker}"
        )
    bound = found.bind(case.params)
    refused = bound.refused
    if refused is not None:
        return refused
    twice = same_file(found, case.inputs)
    if twice:
        return Verdict.errored("input.same_file", twice)
    refused = vacuity(found, case.params)
    if refused is not None:
        return refused
    try:
        inputs = load_inputs(found, case, root, listed)
    except _LoadError as exc:
        return Verdict.errored(exc.code, str(exc))
    except OSError as exc:
        return Verdict.errored("input.unreadable", f"cannot read an input: {exc.strerror}")
    return call(bound, inputs)


def not_allowed(manifest: Manifest, case: Case) -> Verdict:
    code = manifest.bundled(case.checker)
    entry = f" (it would run {code.entry})" if code else ""
    return Verdict.errored(
        "code.not_allowed",
        f"bundled code not allowed{entry}; allow it with --allow-code or a trusted key "
        "allowed to run code",
    )


# Below this many built-in cases, starting worker processes costs more than it saves.
PARALLEL_FROM = 64


class Budget(NamedTuple):
    """What each built-in case may take, and when the whole verification must end."""

    seconds: float = CASE_SECONDS
    memory: int = CASE_MEMORY
    deadline: float | None = None  # time.monotonic() value


def _run_chunk(
    cases: list[Case], root: Path, listed: Mapping[str, str], budget: Budget
) -> list[Verdict]:
    return [
        run_case(case, root, listed, budget.seconds, budget.memory, budget.deadline)
        for case in cases
    ]


def _run_built_in(
    cases: list[Case],
    root: Path,
    listed: Mapping[str, str],
    jobs: int,
    progress: Progress | None,
    total: int,
    budget: Budget,
) -> list[Verdict]:
    """Verdicts of built-in cases, in their order, across ``jobs`` processes when it pays.
    Checkers are pure, so the verdicts are the same as a serial run's."""
    if jobs <= 1 or len(cases) < PARALLEL_FROM:
        verdicts = []
        for done, case in enumerate(cases):
            if progress:
                progress(done, total, case.id)
            verdicts.append(
                run_case(case, root, listed, budget.seconds, budget.memory, budget.deadline)
            )
        return verdicts
    import concurrent.futures
    import multiprocessing

    size = max(1, min(256, len(cases) // (jobs * 8)))
    chunks = [cases[i : i + size] for i in range(0, len(cases), size)]
    results: dict[int, list[Verdict]] = {}
    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    )
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {
            pool.submit(_run_chunk, chunk, root, listed, budget): i
            for i, chunk in enumerate(chunks)
        }
        done = 0
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
            done += len(results[futures[future]])
            if progress:
                progress(done, total, "")
    return [verdict for i in range(len(chunks)) for verdict in results[i]]


def run_cases(
    manifest: Manifest,
    root: Path,
    progress: Progress | None = None,
    bundled: Callable[[Case], Verdict] | None = None,
    jobs: int = 1,
    budget: Budget | None = None,
) -> list[CaseResult]:
    """Built-in checkers first (across ``jobs`` processes when there are many cases, each
    case within ``budget``, the default limits when none); bundled code last, through
    ``bundled`` (when allowed; otherwise those cases are inconclusive). A case not started
    by the budget's deadline is inconclusive."""
    budget = budget or Budget()
    listed = {f.path: f.sha256 for f in manifest.files}
    built_in = [c for c in manifest.cases if not c.checker.startswith(BUNDLED_PREFIX)]
    own_code = [c for c in manifest.cases if c.checker.startswith(BUNDLED_PREFIX)]
    total = len(manifest.cases)
    verdicts = dict(
        zip(
            (c.id for c in built_in),
            _run_built_in(built_in, root, listed, jobs, progress, total, budget),
            strict=True,
        )
    )
    for done, case in enumerate(own_code, start=len(built_in)):
        if progress:
            progress(done, total, case.id)
        if budget.deadline is not None and time.monotonic() >= budget.deadline:
            verdicts[case.id] = out_of_time(case)
        else:
            verdicts[case.id] = bundled(case) if bundled else not_allowed(manifest, case)
    results = []
    for case in manifest.cases:
        verdict = verdicts[case.id]
        outcome, explanation = judge(case, verdict)
        results.append(CaseResult(case, verdict, outcome, explanation))
    if progress:
        progress(total, total, "")
    return results
