"""A built-in case that runs too long is stopped and is inconclusive, never a hang."""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import checkers
from bundler.cli import main
from bundler.format.manifest import Case
from bundler.run.runner import run_case
from checkers.api import Checker, Reason, Verdict, checker


def _nothing(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """No inputs."""
    return {}


def _asked_to_fail(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """Inputs that ask it to fail."""
    return {"fail": True}


@checker("spin", 1, roles=[], reasons={}, counterexample=_nothing, example_params=[{}])
def spin(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Never returns, and swallows every Exception on the way."""
    while True:
        with contextlib.suppress(Exception):  # the timer's signal is not an Exception
            time.sleep(0.01)


@checker(
    "quick",
    1,
    roles=[],
    reasons={"quick.failed": "asked to fail"},
    counterexample=_asked_to_fail,
    example_params=[{}],
)
def quick(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Passes at once (fails at once on its counterexample, so it is not vacuous)."""
    if inputs.get("fail"):
        return Verdict.failed("asked to", [Reason("quick.failed", "asked to")])
    return Verdict.passed("fine")


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    known: dict[str, Checker] = {spin.key: spin, quick.key: quick}
    monkeypatch.setattr(checkers, "get", known.get)


def case(key: str) -> Case:
    return Case(id="c", checker=key, inputs={}, params={}, expect="pass")


@pytest.mark.usefixtures("registered")
def test_a_checker_that_never_returns_is_stopped(tmp_path: Path) -> None:
    """spin@1 cannot return by itself: that run_case returns at all is the stop."""
    before = signal.getsignal(signal.SIGALRM)
    verdict = run_case(case("spin@1"), tmp_path, {}, seconds=0.3)
    assert verdict.status == "error"
    assert verdict.codes == ("checker.timeout",)
    assert "ran longer than 0.3 s" in verdict.message
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.usefixtures("registered")
def test_a_quick_checker_is_untouched_and_no_timer_is_left(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGALRM)
    verdict = run_case(case("quick@1"), tmp_path, {}, seconds=0.3)
    assert verdict.status == "pass"
    # an armed timer shows here as a remaining time, whatever the machine's speed
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before


def test_a_backtracking_regex_in_a_bundle_runs_in_linear_time(tmp_path: Path) -> None:
    """The real attack: a contamination marker that backtracks for ever on a line."""
    source = tmp_path / "src"
    (source / "runs").mkdir(parents=True)
    (source / "runs" / "run.log").write_text("a" * 64 + "!\n")
    (source / "bundle.yaml").write_text(
        "name: redos\nversion: 1.0.0\ntitle: A marker that never finishes matching\n"
        "files: [runs/**]\n"
        "cases:\n"
        "  - id: clean\n    checker: contamination@1\n    inputs: {transcripts: runs}\n"
        "    params: {markers: ['^(a+)+$']}\n    expect: pass\n"
        "  - id: caught\n    checker: contamination@1\n    inputs: {transcripts: runs}\n"
        "    params: {markers: ['!']}\n    expect: fail\n"
        "    expect_reasons: [contamination.detected]\n"
        "claims:\n  - id: clean\n    statement: The run is clean.\n"
        "    cases: [clean, caught]\n"
        "    negative_control_waiver: the control runs another marker; this is about time\n"
    )
    # build checks at home with the default limit, which this would take hours to reach;
    # the same file, packed by hand, is what a stranger would send
    from bundler.authoring.build import make_manifest, members_of
    from bundler.authoring.source import read_source
    from bundler.container.pack import write_tar

    plan = read_source(source)
    manifest, readme = make_manifest(plan, 0)
    bundle = tmp_path / "redos.bundle.tar.zst"
    with bundle.open("wb") as out:
        write_tar(out, members_of(manifest, manifest.to_bytes(), readme, plan.root), 0)
    # the marker backtracks for hours on this line under `re`; RE2 (issue 42 item 4) decides
    # it in time linear in the line, so the case is decided, well inside any case timeout
    result = CliRunner().invoke(
        main, ["verify", str(bundle), "--case-timeout", "600", "--json", "-", "-q"]
    )
    assert result.exit_code == 0, result.output
    cases = {c["id"]: c for c in json.loads(result.stdout)["cases"]}
    assert cases["clean"]["outcome"] == "reproduced" and cases["clean"]["verdict"] == "pass"
    assert cases["caught"]["outcome"] == "reproduced"


def test_an_out_of_subset_marker_in_a_bundle_source_is_refused_as_not_rerun_under_v2(
    tmp_path: Path,
) -> None:
    """A lookahead and a back-reference (outside what RE2 reads as Python does): under
    contamination@2 the case is refused by name, never run on `re`."""
    from bundler.authoring.source import read_source
    from bundler.errors import SourceError

    source = tmp_path / "src"
    (source / "runs").mkdir(parents=True)
    (source / "runs" / "run.log").write_text("a" * 64 + "!\n")
    (source / "bundle.yaml").write_text(
        "name: redos2\nversion: 1.0.0\ntitle: A marker outside the linear subset\n"
        "files: [runs/**]\n"
        "cases:\n"
        "  - id: clean\n    checker: contamination@2\n    inputs: {transcripts: runs}\n"
        "    params: {markers: ['^(a+)+(?=b)$']}\n    expect: pass\n"
        "claims:\n  - id: clean\n    statement: The run is clean.\n    cases: [clean]\n"
        "    negative_control_waiver: this is about which engine runs the marker\n"
    )
    with pytest.raises(SourceError) as raised:
        read_source(source)
    (problem,) = raised.value.problems
    assert problem.code == "case.pattern.not_rerun"
    assert "'^(a+)+(?=b)$' is not re-run" in problem.message


@pytest.mark.usefixtures("registered")
def test_the_limit_holds_in_worker_processes_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bundler.run import runner
    from bundler.run.limits import Budget

    monkeypatch.setattr(runner, "PARALLEL_FROM", 1)
    cases = [case("spin@1"), case("quick@1")]
    verdicts = runner._run_built_in(cases, tmp_path, {}, 2, None, 2, Budget(0.3))
    assert [v.status for v in verdicts] == ["error", "pass"]
    assert verdicts[0].codes == ("checker.timeout",)
