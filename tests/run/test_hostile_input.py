"""No input gives an internal error (exit 5), and no input takes unbounded memory or time.

Each test is one failure found by trying the tool as an attacker or a hurried user would.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import checkers
from bundler.cli import main
from bundler.format.manifest import Case
from bundler.run import inputs, runner
from bundler.run.limits import Budget, CaseBudget
from bundler.run.runner import run_case
from bundler.run.verify import VerifyOptions, verify
from tests.helpers import Entry, edit_manifest, with_entries, with_input

DEEP_JSON = b"[" * 100_000 + b"]" * 100_000
JSON_INPUT = "inputs/candidate-reformatted.json"


def cli(*args: object) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_json_input_nested_100000_deep_is_inconclusive_not_an_internal_error(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    bundle = with_input(quickstart_bundle, tmp_path / "deep.bundle.tar.gz", JSON_INPUT, DEEP_JSON)
    result = cli("verify", bundle)
    assert result.exit_code == 4, result.output
    assert "nested deeper than 200 levels" in result.output


def test_jsonl_line_nested_100000_deep_is_unreadable_not_a_recursion_error() -> None:
    from checkers import strictjson

    with pytest.raises(ValueError, match=r"^2: not a JSON value: nested deeper"):
        strictjson.loads_lines('{"a": 1}\n' + DEEP_JSON.decode() + "\n")


def test_lone_surrogate_in_a_differing_input_stays_contradicted(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    bundle = with_input(
        quickstart_bundle, tmp_path / "s.bundle.tar.gz", JSON_INPUT, b'{"a": "\\ud800"}'
    )
    for args in ([], ["-q"], ["--verbose"]):
        result = cli("verify", bundle, *args)
        assert result.exit_code == 1, result.output
        assert "contradicted" in result.output
    report = tmp_path / "r.json"
    for flag, name in [("--json", "r.json"), ("--markdown", "r.md"), ("--html", "r.html")]:
        result = cli("verify", bundle, flag, tmp_path / name, "-q")
        assert result.exit_code == 1, result.output
        (tmp_path / name).read_bytes().decode("utf-8")  # valid UTF-8 on disk
    assert json.loads(report.read_text())["result"] == "contradicted"


def _bundle_with_non_utf8_name(source: Path, target: Path) -> Path:
    """A member name that is not UTF-8: GNU tar writes the surrogate as the byte 0xff."""
    odd = Entry("quickstart-1.0.0/inputs/\udcff.yaml", b"x")
    return with_entries(source, target, odd, fmt=tarfile.GNU_FORMAT)


@pytest.mark.parametrize("flag", ["--json", "--markdown", "--html", "--junit"])
def test_non_utf8_member_name_in_a_rejection_written_to_a_file(
    quickstart_bundle: Path, tmp_path: Path, flag: str
) -> None:
    bundle = _bundle_with_non_utf8_name(quickstart_bundle, tmp_path / "n.bundle.tar.gz")
    out = tmp_path / "out"
    result = cli("verify", bundle, flag, out)
    assert result.exit_code == 3, result.output
    assert "member.name" in result.output
    text = out.read_bytes().decode("utf-8")  # valid UTF-8, the name shown escaped
    assert "\\udcff" in text or flag == "--junit"


def test_non_utf8_member_name_in_a_rejection_on_stdout_is_valid_json(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    bundle = _bundle_with_non_utf8_name(quickstart_bundle, tmp_path / "n.bundle.tar.gz")
    result = CliRunner().invoke(main, ["verify", str(bundle), "--json", "-"])
    assert result.exit_code == 3
    report = json.loads(result.stdout_bytes.decode("utf-8"))
    assert report["problems"][0]["code"] == "member.name"


def test_trust_store_nested_deeper_than_the_toml_reader_allows_is_a_usage_error(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store.toml"
    store.write_text("a = " + "[" * 2000 + "]" * 2000 + "\n")
    result = cli("verify", quickstart_bundle, "--trust-store", store)
    assert result.exit_code == 2, result.output
    assert "nested too deeply" in result.output


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (lambda doc: doc["files"][0].update(size=float(doc["files"][0]["size"])), "size"),
        (lambda doc: doc["environment"].update(source_date_epoch=10**12), "epoch"),
        # past 64 bits it is not TOML 1.0 at all (FORMAT.md), before any field rule
        (lambda doc: doc["environment"].update(source_date_epoch=10**20), "toml"),
    ],
    ids=["size-3.0", "huge-source-date-epoch", "source-date-epoch-past-64-bits"],
)
def test_sign_of_a_manifest_with_a_float_size_or_a_huge_epoch_is_a_rejection(
    quickstart_bundle: Path, tmp_path: Path, edit: Any, code: str
) -> None:
    bundle = edit_manifest(quickstart_bundle, tmp_path / "e.bundle.tar.gz", edit)
    assert cli("keygen", "k", "--out-dir", tmp_path, "--no-passphrase").exit_code == 0
    before = bundle.read_bytes()
    result = cli("sign", bundle, "--key", tmp_path / "k.key")
    assert result.exit_code == 3, result.output
    assert f"manifest.{code}" in result.output
    assert bundle.read_bytes() == before
    assert cli("verify", bundle).exit_code == 3


def test_build_refuses_a_source_date_epoch_a_tar_header_cannot_hold(tmp_path: Path) -> None:
    from tests.helpers import copy_source

    source = copy_source(tmp_path)
    result = CliRunner(env={"SOURCE_DATE_EPOCH": str(10**20)}).invoke(
        main, ["build", str(source), "-o", str(tmp_path / "x.bundle.tar.gz")]
    )
    assert result.exit_code == 2, result.output
    assert "SOURCE_DATE_EPOCH" in result.output
    assert not (tmp_path / "x.bundle.tar.gz").exists()


# -- memory and time -----------------------------------------------------------------------


def _case(checker: str, inputs: dict[str, str], case_id: str = "c") -> Case:
    return Case(id=case_id, checker=checker, inputs=inputs, params={}, expect="pass")


def _listed(root: Path, *names: str) -> dict[str, str]:
    import hashlib

    return {n: hashlib.sha256((root / n).read_bytes()).hexdigest() for n in names}


def test_yaml_of_2_mib_one_item_lines_is_refused_by_the_value_cap(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("- a\n" * (1 << 19))
    (tmp_path / "b.yaml").write_text("- a\n")
    listed = _listed(tmp_path, "a.yaml", "b.yaml")
    case = _case("structured-equal@1", {"actual": "a.yaml", "expected": "b.yaml"})
    verdict = run_case(case, tmp_path, listed)
    assert verdict.codes == ("input.unreadable",)
    assert "holds more than 200000 values" in verdict.message
    assert "JSON" in verdict.message  # the way out


def test_json_input_over_the_value_cap_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(list(range(5000))))
    (tmp_path / "b.json").write_text("[1, 2]")
    listed = _listed(tmp_path, "a.json", "b.json")
    case = _case("structured-equal@1", {"actual": "a.json", "expected": "b.json"})
    found = checkers.get(case.checker)
    assert found is not None
    caps = inputs.LoadLimits(values=1000)
    with pytest.raises(inputs.LoadError, match="more than 1000 values") as refused:
        inputs.load_inputs(found, case, tmp_path, listed, caps)
    assert refused.value.code == "input.unreadable"


def test_input_over_the_size_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[" + "1," * 100 + "1]")
    (tmp_path / "b.json").write_text("[1]")
    listed = _listed(tmp_path, "a.json", "b.json")
    case = _case("structured-equal@1", {"actual": "a.json", "expected": "b.json"})
    found = checkers.get(case.checker)
    assert found is not None
    with pytest.raises(inputs.LoadError, match="an input is at most 100"):
        inputs.load_inputs(found, case, tmp_path, listed, inputs.LoadLimits(bytes=100))


def test_a_case_past_its_memory_limit_is_inconclusive_and_the_verifier_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import checkers
    from checkers.api import InputKind, Reason, Role, Verdict, checker

    def empty(params: Any) -> Any:
        """An empty input, so its params are not vacuous."""
        return {"x": b""}

    @checker(
        "hog",
        1,
        roles=[Role("x", InputKind.BYTES, "any")],
        reasons={"hog.x": "an empty input"},
        counterexample=empty,
        example_params=[{}],
    )
    def hog(inputs: Any, params: Any) -> Verdict:
        """Allocates 4 GiB."""
        if not inputs["x"]:
            return Verdict.failed("empty", [Reason("hog.x", "empty")])
        return Verdict.passed(str(len(bytearray(4 << 30))))

    monkeypatch.setattr(checkers, "get", {hog.key: hog}.get)
    (tmp_path / "x").write_bytes(b"x")
    listed = _listed(tmp_path, "x")
    verdict = run_case(_case("hog@1", {"x": "x"}), tmp_path, listed, memory=256 << 20)
    assert verdict.codes == ("checker.memory",)
    assert "--case-memory" in verdict.message
    assert len(bytearray(512 << 20)) == 512 << 20  # the limit was lifted again


def test_whole_verification_time_limit_makes_remaining_cases_inconclusive(
    quickstart_bundle: Path,
) -> None:
    result = verify(quickstart_bundle, VerifyOptions(budget=CaseBudget(time_limit=1e-9)))
    assert result.status == "inconclusive"
    assert all(r.verdict.codes == ("checker.timeout",) for r in result.cases)
    assert all("--time-limit" in r.verdict.message for r in result.cases)


def test_an_input_changed_after_it_was_checked_is_input_tampered(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n")
    (tmp_path / "b.yaml").write_text("a: 1\n")
    listed = _listed(tmp_path, "a.yaml", "b.yaml")
    (tmp_path / "a.yaml").write_text("a: 2\n")  # another process rewrote it
    case = _case("structured-equal@1", {"actual": "a.yaml", "expected": "b.yaml"})
    verdict = run_case(case, tmp_path, listed)
    assert verdict.codes == ("input.tampered",)


def test_whole_verification_deadline_reaches_the_worker_processes(tmp_path: Path) -> None:
    """The deadline is a monotonic time, the same in the -j worker processes."""
    (tmp_path / "a.yaml").write_text("a: 1\n")
    listed = _listed(tmp_path, "a.yaml")
    cases = [
        _case("structured-equal@1", {"actual": "a.yaml", "expected": "a.yaml"}, f"c{i}")
        for i in range(runner.PARALLEL_FROM)
    ]
    verdicts = runner._run_built_in(
        cases, tmp_path, listed, 2, None, len(cases), Budget(deadline=0.0)
    )
    assert {v.codes for v in verdicts} == {("checker.timeout",)}
