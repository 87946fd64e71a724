"""Cases -> outcomes: load each case's inputs, call its checker, compare with the expectation.

Built-in checkers run in-process and import nothing from the bundle. Whatever a
checker does wrong (raises, returns garbage, names an undeclared code, runs past the time
limit per case) becomes an ``error`` verdict, and an error is never evidence: its outcome
is ``inconclusive``. Inputs are read by ``bundler.run.inputs``, each case runs within the
limits of ``bundler.run.limits``, and ADR 0005's rules come from ``checkers.vacuity``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import checkers
from bundler.format.manifest import BUNDLED_PREFIX, Case, Manifest
from bundler.format.results import CaseResult, judge, police
from bundler.run.inputs import LoadError, load_inputs
from bundler.run.limits import CASE_MEMORY, CASE_SECONDS, Budget, limited, out_of_time
from checkers import vacuity as rules
from checkers.api import Bound, Checker, CheckerInputError, Verdict

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


def vacuity(found: Checker, params: Mapping[str, Any]) -> Verdict | None:
    """``checkers.vacuity.vacuity`` with the checker called as a case calls it (``call``)."""
    return rules.vacuity(found, params, call)


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
    twice = rules.same_file(found, case.inputs)
    if twice:
        return Verdict.errored("input.same_file", twice)
    refused = vacuity(found, case.params)
    if refused is not None:
        return refused
    try:
        inputs = load_inputs(found, case, root, listed)
    except LoadError as exc:
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
