from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

import bundler.authoring.build
from bundler.authoring.build import build
from bundler.errors import BuildRefused, BundleRejected, Problem, SourceError
from bundler.run.verify import Verification, verify
from tests.helpers import QUICKSTART, copy_source


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_builds_with_same_epoch_are_byte_identical(tmp_path: Path) -> None:
    first = build(QUICKSTART, tmp_path / "a.bundle.tar.gz", 1700000000).path
    second = build(QUICKSTART, tmp_path / "b.bundle.tar.gz", 1700000000).path
    assert sha(first) == sha(second)


def test_small_files_packed_from_memory_give_the_bytes_read_again_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = copy_source(tmp_path)
    for i in range(50):
        (source / "inputs" / f"extra-{i}.bin").write_bytes(os.urandom(i * 997))
    kept = build(source, tmp_path / "kept.bundle.tar.zst", 1700000000).path
    monkeypatch.setattr(bundler.authoring.build, "KEEP_BELOW", 0)  # every file read again
    again = build(source, tmp_path / "again.bundle.tar.zst", 1700000000).path
    assert kept.read_bytes() == again.read_bytes()


def test_one_changed_input_byte_changes_the_bundle(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    first = build(source, tmp_path / "a.bundle.tar.gz", 1700000000)
    expected = source / "inputs" / "expected.yaml"
    data = expected.read_bytes()
    assert data.startswith(b"# The routing")
    expected.write_bytes(b"# the routing" + data[len(b"# The routing") :])  # one byte, in a comment
    second = build(source, tmp_path / "b.bundle.tar.gz", 1700000000)
    assert sha(first.path) != sha(second.path)
    assert first.identity != second.identity


def test_epoch_changes_only_timestamps(tmp_path: Path) -> None:
    first = build(QUICKSTART, tmp_path / "a.bundle.tar.gz", 1).path
    second = build(QUICKSTART, tmp_path / "b.bundle.tar.gz", 2).path
    assert sha(first) != sha(second)


def test_build_refuses_when_a_case_diverges_and_leaves_no_file(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(
        text.replace("expect_reasons: [content.removed]", "expect_reasons: [content.changed]")
    )
    out = tmp_path / "out" / "x.bundle.tar.gz"
    with pytest.raises(BuildRefused) as caught:
        build(source, out, 0)
    report = "\n".join(str(p) for p in caught.value.problems)
    assert "case dropped-rule-is-caught" in report
    assert "expected fail ['content.changed'], observed fail ['content.removed']" in report
    assert not out.exists()
    assert os.listdir(out.parent) == []


def test_a_rejection_at_home_is_refused_with_its_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundle the verifier at home rejects (here: it could not write a file) names why."""
    rejected = BundleRejected(
        "the bundle was rejected",
        [Problem("(work directory)", "archive.write", "cannot write: Too many open files")],
    )

    def rejecting(*args: object, **kwargs: object) -> Verification:
        raise rejected

    monkeypatch.setattr(bundler.authoring.build, "verify", rejecting)
    out = tmp_path / "x.bundle.tar.gz"
    with pytest.raises(BuildRefused) as caught:
        build(QUICKSTART, out, 0)
    assert "(result: rejected)" in str(caught.value)
    assert [(p.where, p.code) for p in caught.value.problems] == [
        ("(work directory)", "archive.write")
    ]
    assert not out.exists()


def test_build_refuses_escaping_path_before_writing(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(text.replace("inputs/expected.yaml", "../expected.yaml", 1))
    with pytest.raises(SourceError):
        build(source, tmp_path / "x.bundle.tar.gz", 0)
    assert not (tmp_path / "x.bundle.tar.gz").exists()


def test_output_is_replaced_atomically(tmp_path: Path) -> None:
    out = tmp_path / "q.bundle.tar.gz"
    out.write_bytes(b"old")
    build(QUICKSTART, out, 0)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert [p.name for p in tmp_path.iterdir()] == ["q.bundle.tar.gz"]


def test_bundle_records_build_environment(tmp_path: Path) -> None:
    result = build(QUICKSTART, tmp_path / "q.bundle.tar.gz", 0)
    env = result.manifest.environment
    assert env["checkers"] == {"structured-equal@1": "built-in"}
    assert set(env["libraries"]) == {"deepdiff", "pyyaml"}
    assert env["tool"].startswith("reprobundle ")
    assert any(f.path == "README.md" for f in result.manifest.files)


def test_built_bundle_is_readable_by_others_per_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = build(QUICKSTART, tmp_path / "q.bundle.tar.zst", 0).path
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_build_verifies_at_home_without_starting_a_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verification at home is the library's ``verify``, called in this process (as a
    reviewer's ``verify`` runs built-in checkers in its own), not the command line in a
    child process."""
    import subprocess
    import sys

    started = []

    class Recorded(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            started.append(args)
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    result = build(QUICKSTART, tmp_path / "q.bundle.tar.zst", 0)
    assert [a for a in started if sys.executable in a] == []  # (uname -p may run: platform)
    assert isinstance(result.home, Verification)
    assert result.home.status == "supported"
    assert result.home.extracted.identity == result.identity
    assert result.home.workdir is None  # its work folder is gone


def test_the_verification_at_home_is_a_reviewers(tmp_path: Path) -> None:
    result = build(QUICKSTART, tmp_path / "q.bundle.tar.zst", 0)
    reviewer = verify(result.path)

    def seen(v: Verification) -> list[object]:
        return [
            *[(r.case.id, r.verdict, r.outcome, r.explanation) for r in v.cases],
            *[(c.claim.id, c.status, c.why) for c in v.claims],
            v.status,
            v.environment,
        ]

    assert seen(result.home) == seen(reviewer)
    assert result.home.bundle_file == reviewer.bundle_file == result.path


def test_build_and_verify_record_the_same_machine(tmp_path: Path) -> None:
    result = build(QUICKSTART, tmp_path / "q.bundle.tar.zst", 0)
    machine = ("tool", "python", "implementation", "platform")
    built, here = result.manifest.environment, result.home.environment
    assert [built[k] for k in machine] == [here[k] for k in machine]
    assert built["checkers"] == here["checkers"] and built["libraries"] == here["libraries"]


def test_without_an_output_the_bundle_is_named_from_the_source_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``build SOURCE`` names its file NAME-VERSION.bundle.tar.zst in the current folder,
    from the source the library read: the source is read once."""
    from click.testing import CliRunner

    import bundler.authoring.source
    from bundler.cli import main

    reads = []
    original = bundler.authoring.source.read_source

    def counted(*args: object, **kwargs: object) -> object:
        reads.append(args)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bundler.authoring.source, "read_source", counted)
    monkeypatch.setattr(bundler.authoring.build, "read_source", counted)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["build", str(QUICKSTART), "-q"])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == str(tmp_path / "quickstart-1.0.0.bundle.tar.zst")
    assert len(reads) == 1
