"""Every command that verifies honours advisories the same way (issue 41, items 2-4):
verify, report, ci, build and archive verify take one ``--accept-advisory`` option; every
report format and the attestation name the advisory; build refuses an advised version
with the line to write; diff lists advisory changes; the archive shows what an advisory
changed since the last verification, and logs it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.cli import main
from bundler.reports.diff import diff
from bundler.run.verify import check_integrity

SOURCES = Path(__file__).parent / "sources"
ID = "RB-2026-0007"  # fault-report@2 reads a report without `blocked` as not blocked
FIX = "fault-report@3"
PASSPHRASE = {"REPROBUNDLE_PASSPHRASE": "a passphrase"}


def run(*args: object) -> tuple[int, str, str]:
    result = CliRunner(env=PASSPHRASE).invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def forged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The forged source of RB-2026-0007, built with its advisory accepted."""
    folder = tmp_path_factory.mktemp("forged")
    source = folder / "source"
    shutil.copytree(SOURCES / ID, source)
    out = folder / "forged.bundle.tar.gz"
    build(source, out, source_date_epoch=0, accept_advisories=[ID])
    return out


# the commands that verify, and preregister, which reads a source as build does
VERIFYING = [
    ("verify",),
    ("report",),
    ("ci",),
    ("build",),
    ("archive", "verify"),
    ("preregister",),
]


def command(path: tuple[str, ...]) -> click.Command:
    found: Any = main
    context = click.Context(main)
    for name in path:
        found = found.get_command(context, name)
    assert isinstance(found, click.Command)
    return found


@pytest.mark.parametrize("path", VERIFYING, ids=" ".join)
def test_every_command_that_verifies_takes_the_one_accept_advisory_option(
    path: tuple[str, ...],
) -> None:
    options = [p for p in command(path).params if "--accept-advisory" in getattr(p, "opts", [])]
    assert len(options) == 1
    reference = next(p for p in command(("verify",)).params if p.name == "accept_advisory")
    assert isinstance(options[0], click.Option) and options[0].multiple
    assert options[0].help == reference.help


def test_verify_names_the_advisory_in_every_format_and_accepting_it_restores_support(
    forged: Path, tmp_path: Path
) -> None:
    outputs = {f: tmp_path / f"r.{f}" for f in ("json", "markdown", "junit", "html")}
    flags = [x for f, path in outputs.items() for x in (f"--{f}", path)]
    code, out, _ = run("verify", forged, *flags)
    assert code == 4
    assert ID in out and FIX in out and f"--accept-advisory {ID}" in out
    for fmt, path in outputs.items():
        text = path.read_text("utf-8")
        assert ID in text and FIX in text, fmt
    report = json.loads(outputs["json"].read_text("utf-8"))
    assert report["result"] == "inconclusive" and report["accepted_advisories"] == []
    assert {a["id"] for c in report["claims"] for a in c["advisories"]} == {ID}
    assert all(not a["accepted"] for c in report["claims"] for a in c["advisories"])

    code, out, _ = run(
        "verify", forged, "--accept-advisory", ID, "--json", outputs["json"], "--markdown", "-"
    )
    assert code == 0, out
    # the appendix's command reproduces the verdict it shows, acceptance included
    assert f"--accept-advisory {ID}" in out and "reprobundle verify forged.bundle.tar.gz" in out
    report = json.loads(outputs["json"].read_text("utf-8"))
    assert report["result"] == "supported" and report["accepted_advisories"] == [ID]
    assert all(a["accepted"] for c in report["claims"] for a in c["advisories"])
    assert f"advisory {ID} accepted by the reviewer" in report["claims"][0]["why"]


def test_an_unknown_advisory_id_is_a_usage_error(forged: Path) -> None:
    code, _, err = run("verify", forged, "--accept-advisory", "RB-2026-9999")
    assert code == 2 and "RB-2026-9999: no such advisory" in err


def test_the_attestation_records_the_advisories(forged: Path, tmp_path: Path) -> None:
    assert run("keygen", "alice", "--out-dir", tmp_path)[0] == 0
    key = tmp_path / "alice.key"
    for accepted, code in (([], 4), ([ID], 0)):
        target = tmp_path / f"a{len(accepted)}.intoto.json"
        flags = [x for i in accepted for x in ("--accept-advisory", i)]
        done = run("verify", forged, "--attest", target, "--attest-key", key, "-q", *flags)
        assert done[0] == code, done
        envelope = json.loads(target.read_text("utf-8"))
        import base64

        statement = json.loads(base64.b64decode(envelope["payload"]))
        options = statement["predicate"]["configuration"][0]["annotations"]
        assert options["acceptedAdvisories"] == accepted
        withheld = options["advisoriesNotAccepted"]
        named = {"id": ID, "checker": "fault-report@2", "fixedIn": [FIX]}
        assert withheld == ({} if accepted else {"forged-claim": [named]})


def test_report_and_ci_judge_as_verify_does(forged: Path, tmp_path: Path) -> None:
    code, out, _ = run("report", forged, "-q")
    assert code == 4 and ID in out
    code, out, _ = run("report", forged, "-q", "--accept-advisory", ID)
    assert code == 0
    summary = tmp_path / "summary.md"
    args = ("ci", forged, "--out", tmp_path / "ci", "--summary", summary, "--fail-on")
    code, out, _ = run(*args, "inconclusive")
    assert code == 1 and ID in summary.read_text("utf-8")
    assert f"inconclusive (advisory {ID} not accepted)" in out  # the CI log's one line says why
    code, out, _ = run("verify", forged, "-q")
    assert code == 4 and f"; advisory {ID} not accepted" in out
    code, out, _ = run(*args, "inconclusive", "--accept-advisory", ID)
    assert code == 0 and "supported" in out


def test_build_refuses_an_advised_version_naming_the_line_to_write(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(SOURCES / ID, source)
    out = tmp_path / "b.bundle.tar.zst"
    code, _, err = run("build", source, "-o", out)
    assert code == 2 and not out.exists()
    assert "case.advised_checker" in err and f"checker: {FIX}" in err and "bundle.yaml:" in err
    code, said, err = run("build", source, "-o", out, "--accept-advisory", ID)
    assert code == 0 and out.is_file(), err
    assert f"advisories accepted: {ID}" in said


def test_preregister_refuses_an_advised_version_as_build_does(tmp_path: Path) -> None:
    out = tmp_path / "p.prereg.json"
    code, _, err = run("preregister", SOURCES / ID, "-o", out)
    assert code == 2 and "case.advised_checker" in err and not out.exists()
    code, _, err = run("preregister", SOURCES / ID, "-o", out, "--accept-advisory", ID)
    assert code == 0 and out.is_file(), err


def test_inspect_lists_the_advisories_a_bundle_rests_on(forged: Path) -> None:
    code, out, _ = run("inspect", forged)
    assert code == 0
    assert f"{ID} fault-report@2 (fixed in {FIX})" in out and "cases forged" in out


def test_diff_lists_the_advisories_one_bundle_rests_on_and_the_other_not(forged: Path) -> None:
    checked = check_integrity(forged)
    manifest = checked.manifest
    from dataclasses import replace

    fixed = replace(manifest, cases=tuple(c._replace(checker=FIX) for c in manifest.cases))
    found = diff(fixed, manifest, "a" * 64, checked.identity)
    assert [a["id"] for a in found["advisories"]["added"]] == [ID]
    assert found["advisories"]["added"][0]["claims"] == ["forged-claim"]
    assert found["advisories"]["removed"] == []
    back = diff(manifest, fixed, checked.identity, "a" * 64)
    assert [a["id"] for a in back["advisories"]["removed"]] == [ID]


def test_diff_command_shows_the_advisory(forged: Path, quickstart_bundle: Path) -> None:
    code, out, _ = run("diff", quickstart_bundle, forged)
    assert code == 1
    assert f"+ {ID} on fault-report@2 (fixed in {FIX}; added): claims forged-claim" in out
    code, out, _ = run("diff", forged, quickstart_bundle, "--json", "-")
    assert [a["id"] for a in json.loads(out)["advisories"]["removed"]] == [ID]


def archive(root: Path, *args: object) -> tuple[int, str, str]:
    return run("archive", "--archive", root, *args)


def test_archive_verify_says_and_logs_what_an_advisory_changed(
    forged: Path, tmp_path: Path
) -> None:
    root = tmp_path / "archive"
    assert archive(root, "init")[0] == 0
    assert archive(root, "add", forged)[0] == 0
    code, out, _ = archive(root, "verify", "--all", "--accept-advisory", ID)
    assert code == 0 and "supported" in out and "changed since" not in out
    # what we believed then (supported, the advisory accepted), what we know now
    code, out, _ = archive(root, "verify", "--all")
    assert code == 4
    assert "changed since the last verification: supported -> inconclusive" in out
    assert f"because of advisory {ID}" in out
    code, out, _ = archive(root, "verify", "--all")  # nothing new: no change to report
    assert code == 4 and "changed since" not in out
    code, out, _ = archive(root, "verify", "--all", "--accept-advisory", ID)
    assert code == 0
    assert f"inconclusive -> supported, advisory {ID} accepted (--accept-advisory)" in out
    code, out, _ = archive(root, "verify", "--all")
    assert code == 4 and f"because of advisory {ID}" in out
    code, log, _ = archive(root, "log", "show")
    assert code == 0 and ID in log
    code, shown, _ = archive(root, "show", "forged-rb-2026-0007@1.0.0")
    assert code == 0
    assert "Advisories 1 on the checker versions it uses" in shown
    assert f"{ID} fault-report@2 (fixed in {FIX})" in shown
    assert f"because of advisory {ID}" in shown  # the history keeps the change
    code, _, err = archive(root, "log", "verify")
    assert code == 0, err  # the index and the log still agree
    code, out, _ = archive(root, "show", "forged-rb-2026-0007@1.0.0", "--json", "-")
    data = json.loads(out)
    assert [a["id"] for a in data["advisories"]] == [ID]
    changes = [v["detail"].get("advisory_change") for v in data["history"]]
    withheld = {
        "from": "supported",
        "to": "inconclusive",
        "advisories": [ID],
        "claims": ["forged-claim"],
    }
    accepted = {"from": "inconclusive", "to": "supported", "accepted": [ID]}
    assert changes == [None, withheld, None, accepted, withheld]
