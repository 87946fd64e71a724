"""The friction a new user met (issue 32): each place where the words on screen could be
misread, or a file beside the bundle was ignored, now says what it means."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from bundler.authoring.build import build
from bundler.cli import main
from bundler.reports.formats import render
from bundler.reports.terminal import render as render_terminal
from bundler.reports.text import to_text
from tests.archive_support import cli as archive_cli
from tests.helpers import REPO

PASSPHRASE = {"REPROBUNDLE_PASSPHRASE": "a passphrase"}


def run(*args: object) -> tuple[int, str, str]:
    result = CliRunner(env=PASSPHRASE).invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def bundle(quickstart_bundle: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "q.bundle.tar.gz"
    shutil.copyfile(quickstart_bundle, copy)
    return copy


def report_of(bundle: Path) -> dict[str, Any]:
    code, out, err = run("verify", bundle, "--json", "-", "-q")
    assert code in (0, 4), err
    found: dict[str, Any] = json.loads(out)
    return found


@pytest.fixture(scope="module")
def inconclusive(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of a bundle whose cases run its own code, verified without
    --allow-code: each case inconclusive with one reason."""
    folder = tmp_path_factory.mktemp("own")
    built = build(REPO / "tests" / "sources" / "own-code", folder / "own.bundle.tar.gz", 0)
    return report_of(built.path)


# --- the two digests of a bundle --------------------------------------------------------


def test_archive_add_labels_the_identity_and_the_file_digest(bundle: Path, tmp_path: Path) -> None:
    root = tmp_path / "archive"
    assert archive_cli(root, "init")[0] == 0
    code, out, _ = archive_cli(root, "add", str(bundle))
    assert code == 0
    identity = report_of(bundle)["bundle"]["identity"]
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert f"identity sha256:{identity}" in out
    assert f"file sha256:{digest}" in out


def test_a_file_digest_given_as_the_identity_pin_gets_a_hint(bundle: Path) -> None:
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    code, _, err = run("verify", bundle, "--expect-manifest-sha256", digest)
    assert code == 3
    assert "identity.mismatch" in err
    assert "not the SHA-256 of the bundle file" in err


# --- a detached signature beside the bundle ----------------------------------------------


def sign_detached(bundle: Path, tmp_path: Path) -> Path:
    assert run("keygen", "alice", "--out-dir", tmp_path)[0] == 0
    code, _, err = run("sign", bundle, "--key", tmp_path / "alice.key", "--detached")
    assert code == 0, err
    signature = bundle.with_name(bundle.name + ".sig.json")
    assert signature.is_file()
    return signature


def test_a_detached_signature_beside_the_bundle_is_checked(bundle: Path, tmp_path: Path) -> None:
    sign_detached(bundle, tmp_path)
    code, out, err = run("verify", bundle, "-q")
    assert code == 0, err
    assert "unsigned" not in out
    code, _, err = run("verify", bundle, "-q", "--trust", tmp_path / "alice.pub")
    assert code == 0, err  # trusted through the file beside it, no --signature given


def test_a_detached_signature_of_another_bundle_is_reported_as_such(
    bundle: Path, tmp_path: Path, example_bundle: Any
) -> None:
    signature = sign_detached(bundle, tmp_path)
    other = tmp_path / "other.bundle.tar.gz"
    shutil.copyfile(example_bundle("config-change"), other)
    shutil.copyfile(signature, other.with_name(other.name + ".sig.json"))
    code, _, err = run("verify", other)
    assert code == 3
    assert "made for another bundle" in err
    assert "the bundle was altered" not in err


# --- the case table -----------------------------------------------------------------------


def test_piped_case_lines_have_column_headers_and_an_expected_verdict(bundle: Path) -> None:
    text = to_text(report_of(bundle), verbose=True)
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Cases:")) + 1
    assert lines[header].split() == ["outcome", "case", "expected", "observed"]
    controls = [line for line in lines if "dropped-rule-is-caught" in line]
    assert "fail (control)" in controls[0]
    assert " control " not in controls[0].replace("(control)", "")


def test_the_terminal_case_table_has_an_expected_column(bundle: Path) -> None:
    console = Console(width=160, record=True, force_terminal=False, no_color=True)
    render_terminal(report_of(bundle), console, verbose=True)
    screen = console.export_text()
    assert "EXPECTED" in screen and "OBSERVED" in screen


def test_html_labels_the_limits_of_a_claim(bundle: Path) -> None:
    page = render("html", report_of(bundle))
    assert '<p class="limits-label muted">Limits of this claim:</p><ul class="limits">' in page


def test_an_inconclusive_case_says_its_sentence_once(inconclusive: dict[str, Any]) -> None:
    sentence = inconclusive["cases"][0]["reasons"][0]["message"]
    per_case = len(inconclusive["cases"])
    assert to_text(inconclusive, verbose=True).count(sentence) == per_case
    console = Console(width=400, record=True, no_color=True)
    render_terminal(inconclusive, console, verbose=True)
    assert console.export_text().count(sentence) == per_case
    assert render("html", inconclusive).count(sentence) == per_case


# --- diff and signatures -----------------------------------------------------------------


def test_diff_of_a_signed_and_an_unsigned_copy_mentions_the_signatures(
    bundle: Path, tmp_path: Path
) -> None:
    signed = tmp_path / "signed.bundle.tar.gz"
    assert run("keygen", "alice", "--out-dir", tmp_path)[0] == 0
    assert run("sign", bundle, "--key", tmp_path / "alice.key", "-o", signed)[0] == 0
    code, out, _ = run("diff", bundle, signed)
    assert code == 0  # the same bundle (identity): identical
    assert "identical" in out
    assert "Signatures differ: OLD is unsigned, NEW is signed by key id(s)" in out
    code, out, _ = run("diff", bundle, bundle)
    assert "Signatures" not in out
