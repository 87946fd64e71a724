"""`reprobundle cite`: what a report attaches, with only checked signers, and a verify
line that checks exactly the cited bundle."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from bundler.cli import main
from bundler.reports.citation import Citation, render, verify_line
from bundler.reports.formats import render as render_report
from bundler.reports.html import command
from bundler.run.verify import check_integrity
from tests.bundle_server import serving
from tests.helpers import build_quickstart, key_files

URL = "https://example.org/records/7/quickstart.bundle.tar.gz"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_quickstart(tmp_path_factory.mktemp("built"))


@pytest.fixture(scope="module")
def signed(built: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    folder = tmp_path_factory.mktemp("signed")
    keys = key_files(folder, "alice", "bob")
    target = folder / "signed.bundle.tar.gz"
    result = CliRunner().invoke(
        main, ["sign", str(built), "--key", f"{keys['alice']}.key", "-o", str(target)]
    )
    assert result.exit_code == 0, result.output
    return target, keys


def cite(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["cite", *map(str, args)])


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_cite_names_identity_file_digest_and_the_pinned_verify_line(built: Path) -> None:
    result = cite(built, "--url", URL)
    assert result.exit_code == 0, result.output
    identity = check_integrity(built).identity
    assert f"Identity: sha256:{identity}" in result.stdout
    assert sha(built) in result.stdout
    assert f"Verify:   reprobundle verify {URL} --sha256 {sha(built)}" in result.stdout
    assert "Signed:   unsigned" in result.stdout


def test_without_a_link_the_verify_line_pins_the_identity(built: Path) -> None:
    identity = check_integrity(built).identity
    result = cite(built)
    assert f"reprobundle verify {built.name} --expect-manifest-sha256 {identity}" in result.stdout


def test_signers_are_named_only_when_checked(signed: tuple[Path, dict[str, Path]]) -> None:
    bundle, keys = signed
    unchecked = cite(bundle)
    assert unchecked.exit_code == 0, unchecked.output
    assert "not checked" in unchecked.stdout and "alice" not in unchecked.stdout
    checked = cite(bundle, "--trust", f"{keys['alice']}.pub")
    assert "Signed:   alice.pub" in checked.stdout
    other = cite(bundle, "--trust", f"{keys['bob']}.pub")
    assert "no key you named" in other.stdout and "not checked" in other.stdout


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ("valid_until = 2020-01-01T00:00:00Z", "expired"),
        ("valid_from = 2999-01-01T00:00:00Z", "not yet valid"),
    ],
)
def test_a_named_key_outside_its_trust_window_is_not_called_unnamed(
    signed: tuple[Path, dict[str, Path]], tmp_path: Path, entry: str, why: str
) -> None:
    # the trust rule's words, as verify says them: not "a key you did not name"
    bundle, keys = signed
    public = Path(f"{keys['alice']}.pub").read_text().strip()
    store = tmp_path / "trust.toml"
    store.write_text(f'[[key]]\nname = "alice"\npublic_key = """{public}"""\n{entry}\n')
    result = cite(bundle, "--trust-store", store)
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("Signed:")]
    assert why in line and "alice" in line and "not named" not in line
    # (a revoked key's signature rejects the bundle, as verify does: not cited)
    revoked = store.read_text().replace(entry, "revoked = true")
    store.write_text(revoked)
    refused = cite(bundle, "--trust-store", store)
    assert refused.exit_code == 3 and "revoked" in refused.output and refused.stdout == ""


def test_a_rejected_bundle_is_not_cited(built: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.bundle.tar.gz"
    data = bytearray(built.read_bytes())
    data[len(data) // 2] ^= 0xFF
    broken.write_bytes(bytes(data))
    result = cite(broken)
    assert result.exit_code == 3
    assert result.stdout == ""


def test_cite_refuses_a_link_that_is_not_https(built: Path) -> None:
    result = cite(built, "--url", "http://example.org/b.bundle.tar.gz")
    assert result.exit_code == 2


def test_the_cited_line_verifies_exactly_the_cited_bundle(built: Path, tmp_path: Path) -> None:
    """The line cite prints, run against a server holding the bundle, verifies it."""
    with serving(built.read_bytes(), built.name) as served:
        line = cite(built, "--url", served.url()).stdout.splitlines()[-1]
        words = shlex.split(line.removeprefix("Verify:").strip())
        assert words[:2] == ["reprobundle", "verify"]
        result = CliRunner(env={"XDG_CACHE_HOME": str(tmp_path)}).invoke(main, [*words[1:], "-q"])
    assert result.exit_code == 0, result.output


def test_bibtex_and_cff_carry_the_pins(built: Path) -> None:
    bib = cite(built, "--url", URL, "--format", "bibtex", "--author", "Ada Lovelace").stdout
    assert bib.startswith("@misc{quickstart-") and "author = {Ada Lovelace}" in bib
    assert f"\\url{{{URL}}}" in bib and sha(built) in bib
    cff = yaml.safe_load(cite(built, "--url", URL, "--format", "cff").stdout)
    assert cff["cff-version"] == "1.2.0" and cff["url"] == URL
    values = [i["value"] for i in cff["identifiers"]]
    assert values == [f"sha256:{check_integrity(built).identity}", sha(built)]
    markdown = cite(built, "--url", URL, "--format", "markdown").stdout
    assert f"```sh\nreprobundle verify {URL} --sha256 {sha(built)}\n```" in markdown


def test_text_from_the_bundle_cannot_break_out_of_a_format() -> None:
    citation = Citation(
        name="n",
        version="1.0.0",
        title="a}\n@misc{evil, title={x}",
        identity="0" * 64,
        file_name="n.bundle.tar.gz",
        file_sha256="1" * 64,
        file_bytes=1,
    )
    bib = render(citation, "bibtex")
    assert bib.count("@misc{") == 1 and "\\}" in bib
    assert yaml.safe_load(render(citation, "cff"))["title"] == "a}\\n@misc{evil, title={x}"
    assert render(citation, "text").count("\n") == 5


def test_the_html_verify_it_line_is_the_cite_line(built: Path) -> None:
    result = CliRunner().invoke(main, ["verify", str(built), "--json", "-", "-q"])
    report = json.loads(result.stdout)
    identity = report["bundle"]["identity"]
    html = render_report("html", report, expect_identity=True)
    assert command(verify_line(built.name, identity=identity)) in html


@pytest.mark.parametrize("name", ["--trust=k.bundle.tar.gz", "-v.bundle.tar.gz"])
def test_a_bundle_file_name_cannot_become_an_option_of_the_verify_line(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    bundle = tmp_path / name
    bundle.write_bytes(built.read_bytes())
    monkeypatch.chdir(tmp_path)
    result = cite("--", name)
    assert result.exit_code == 0, result.output
    (line,) = [
        x[len("Verify:") :].strip() for x in result.stdout.splitlines() if x.startswith("Verify:")
    ]
    words = shlex.split(line)
    assert words[:2] == ["reprobundle", "verify"] and not words[2].startswith("-")
    pasted = CliRunner().invoke(main, [*words[1:], "-q"])  # the line as a reviewer pastes it
    assert pasted.exit_code == 0, pasted.output
