"""Every command says the same about a bundle's signatures, and names a signer only once
its signature is checked (issue 42 item 8, issue 43 defect 4): ``verify``, ``inspect`` and
``diff`` judge a detached signature beside the bundle alike; ``diff`` never names a key
from a signature's file name; ``report`` of a stored JSON report says it checked nothing;
a rebuild says when it leaves a stale detached signature beside the new bundle."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bundler.cli import main
from tests.helpers import QUICKSTART, key_files, read_entries, write_entries

RUN = CliRunner()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return key_files(tmp_path_factory.mktemp("words-keys"), "author")


def _copy(bundle: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    return Path(shutil.copy(bundle, folder / bundle.name))


def test_diff_names_no_signer_from_a_signature_file_name(
    quickstart_bundle: Path, tmp_path: Path, keys: dict[str, Path]
) -> None:
    signed = _copy(quickstart_bundle, tmp_path / "signed")
    assert RUN.invoke(main, ["sign", str(signed), "--key", f"{keys['author']}.key"]).exit_code == 0
    entries = read_entries(signed)
    for entry in entries:
        if "/signatures/" in entry.name:
            entry.data = b'{"garbage": true}'
    forged = write_entries(entries, tmp_path / "forged.bundle.tar.gz")
    done = RUN.invoke(main, ["diff", str(quickstart_bundle), str(forged)])
    assert done.exit_code == 3, done.output
    assert "signed by key" not in done.output and "identical" not in done.output
    assert "NEW" in done.output and "signature" in done.output


def test_a_detached_signature_is_judged_alike_by_verify_inspect_and_diff(
    quickstart_bundle: Path, tmp_path: Path, keys: dict[str, Path]
) -> None:
    bundle = _copy(quickstart_bundle, tmp_path / "detached")
    args = ["sign", str(bundle), "--key", f"{keys['author']}.key", "--detached"]
    assert RUN.invoke(main, args).exit_code == 0
    said = "signed by a key you do not trust (key id "
    verified = RUN.invoke(main, ["verify", str(bundle)])
    assert said in verified.output
    inspected = RUN.invoke(main, ["inspect", str(bundle)])
    assert inspected.exit_code == 0 and said in inspected.output
    assert "unsigned" not in inspected.output
    compared = RUN.invoke(main, ["diff", str(quickstart_bundle), str(bundle)])
    assert compared.exit_code == 0, compared.output
    assert "OLD is unsigned, NEW is signed by key id(s)" in compared.output


def test_a_detached_signature_of_another_bundle_is_rejected_by_inspect_and_diff(
    quickstart_bundle: Path, tmp_path: Path, keys: dict[str, Path]
) -> None:
    bundle = _copy(quickstart_bundle, tmp_path / "stale")
    other = tmp_path / "other.bundle.tar.gz"
    _rebuilt(tmp_path / "src", other)
    args = ["sign", str(other), "--key", f"{keys['author']}.key", "--detached"]
    assert RUN.invoke(main, args).exit_code == 0
    shutil.copy(f"{other}.sig.json", f"{bundle}.sig.json")
    for command in (["verify", str(bundle)], ["inspect", str(bundle)]):
        done = RUN.invoke(main, command)
        assert done.exit_code == 3 and "signature.bad" in done.output, command
    done = RUN.invoke(main, ["diff", str(quickstart_bundle), str(bundle)])
    assert done.exit_code == 3 and "signature.bad" in done.output


def _rebuilt(source: Path, out: Path, statement: str | None = None) -> str:
    if not source.exists():
        shutil.copytree(QUICKSTART, source)
    if statement is not None:
        text = (source / "bundle.yaml").read_text()
        (source / "bundle.yaml").write_text(text.replace("is accepted, while", statement, 1))
    done = RUN.invoke(main, ["build", str(source), "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    return done.stderr


def test_a_rebuild_warns_of_the_stale_detached_signature_beside_it(
    tmp_path: Path, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out = tmp_path / "q.bundle.tar.gz"
    _rebuilt(tmp_path / "src", out)
    args = ["sign", str(out), "--key", f"{keys['author']}.key", "--detached"]
    assert RUN.invoke(main, args).exit_code == 0
    assert "stale" not in _rebuilt(tmp_path / "src", out)  # the same bytes: it still signs them
    said = _rebuilt(tmp_path / "src", out, "is accepted (edited), while")
    assert f"{out}.sig.json" in said and "stale detached signature" in said
    assert "reprobundle sign" in said


def test_report_of_a_stored_json_report_says_it_checked_no_signature(
    quickstart_bundle: Path, tmp_path: Path, keys: dict[str, Path]
) -> None:
    bundle = _copy(quickstart_bundle, tmp_path / "r")
    assert RUN.invoke(main, ["sign", str(bundle), "--key", f"{keys['author']}.key"]).exit_code == 0
    stored = tmp_path / "r.json"
    trust = ["--trust", f"{keys['author']}.pub"]
    assert (
        RUN.invoke(main, ["verify", str(bundle), "-q", "--json", str(stored), *trust]).exit_code
        == 0
    )
    for fmt in ("markdown", "html"):
        done = RUN.invoke(main, ["report", str(stored), "-f", fmt, "-o", "-"])
        assert done.exit_code == 0, done.output
        assert "signed by a trusted key" in done.output, fmt
        assert "not checked again" in done.output, fmt
    direct = RUN.invoke(main, ["report", str(bundle), "-o", "-", *trust])
    assert "signed by a trusted key" in direct.output and "not checked again" not in direct.output
