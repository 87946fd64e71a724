"""`reprobundle verify URL`: a pinned link verifies exactly the cited bundle, offline the
second time; an unpinned one is refused unless the reviewer trusts it on first use."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bundler.cli import main
from bundler.run.verify import check_integrity
from tests.bundle_server import Served, serving
from tests.helpers import build_quickstart

NAME = "quickstart.bundle.tar.gz"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_quickstart(tmp_path_factory.mktemp("built"))


@pytest.fixture
def server(built: Path) -> Iterator[Served]:
    with serving(built.read_bytes(), NAME) as served:
        yield served


def run(cache: Path, *args: str) -> Result:
    return CliRunner(env={"XDG_CACHE_HOME": str(cache)}).invoke(main, ["verify", *args, "-q"])


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_link_without_a_pin_is_refused_saying_how_to_pin(server: Served, tmp_path: Path) -> None:
    result = run(tmp_path, server.url())
    assert result.exit_code == 2, result.output
    assert "--sha256" in result.stderr and "--trust-on-first-use" in result.stderr
    assert "download.pin" in result.stderr
    assert server.hits == []


def test_pinned_link_verifies_and_again_offline(built: Path, tmp_path: Path) -> None:
    pin = sha(built)
    with serving(built.read_bytes(), NAME) as served:
        url = served.url()
        first = run(tmp_path, url, "--sha256", pin)
        assert first.exit_code == 0, first.output
        assert "downloaded" in first.stderr
    again = run(tmp_path, url, "--sha256", pin)  # the server is gone
    assert again.exit_code == 0, again.output
    assert "from the cache (offline)" in again.stderr


def test_link_serving_another_file_is_rejected_naming_both_digests(
    server: Served, built: Path, tmp_path: Path
) -> None:
    wrong = hashlib.sha256(b"another").hexdigest()
    result = run(tmp_path, server.url(), "--sha256", f"sha256:{wrong}")
    assert result.exit_code == 3
    assert wrong in result.stderr and sha(built) in result.stderr
    assert "bundle.sha256" in result.stderr


def test_trust_on_first_use_verifies_and_prints_the_pin(
    server: Served, built: Path, tmp_path: Path
) -> None:
    result = run(tmp_path, server.url(), "--trust-on-first-use", "--no-cache")
    assert result.exit_code == 0, result.output
    assert f"pin it next time: reprobundle verify {server.url()} --sha256 {sha(built)}" in (
        result.stderr
    )
    assert not (tmp_path / "reprobundle").exists()  # --no-cache kept nothing


def test_identity_pin_checks_the_manifest_and_finds_the_file_offline(
    built: Path, tmp_path: Path
) -> None:
    identity = check_integrity(built).identity
    with serving(built.read_bytes(), NAME) as served:
        url = served.url()
        assert run(tmp_path, url, "--identity", f"sha256:{identity}").exit_code == 0
    again = run(tmp_path, url, "--identity", f"sha256:{identity}")
    assert again.exit_code == 0, again.output


def test_identity_pin_of_another_bundle_rejects(server: Served, tmp_path: Path) -> None:
    other = hashlib.sha256(b"x").hexdigest()
    result = run(tmp_path, server.url(), "--identity", f"sha256:{other}")
    assert result.exit_code == 3
    assert "identity.mismatch" in result.stderr


def test_misbehaving_server_rejects_with_exit_3(server: Served, tmp_path: Path) -> None:
    result = run(tmp_path, server.url("/to-file"), "--trust-on-first-use")
    assert result.exit_code == 3
    assert "download.redirect" in result.stderr


def test_http_link_off_this_machine_is_refused(tmp_path: Path) -> None:
    result = run(tmp_path, "http://example.org/b.bundle.tar.gz", "--sha256", "0" * 64)
    assert result.exit_code == 2
    assert "download.scheme" in result.stderr


def test_local_file_pinned_by_its_digest(built: Path, tmp_path: Path) -> None:
    assert run(tmp_path, str(built), "--sha256", sha(built)).exit_code == 0
    result = run(tmp_path, str(built), "--sha256", "0" * 64)
    assert result.exit_code == 3
    assert "bundle.sha256" in result.stderr


def test_the_pin_trust_on_first_use_prints_verifies_offline_next_time(
    built: Path, tmp_path: Path
) -> None:
    with serving(built.read_bytes(), NAME) as served:
        url = served.url()
        first = run(tmp_path, url, "--trust-on-first-use")
        assert first.exit_code == 0, first.output
    line = next(x for x in first.stderr.splitlines() if x.startswith("pin it next time: "))
    words = line.removeprefix("pin it next time: ").split()
    assert words[:3] == ["reprobundle", "verify", url]
    again = run(tmp_path, *words[2:])
    assert again.exit_code == 0, again.output
    assert "from the cache (offline)" in again.stderr


def test_a_rejected_download_is_not_remembered_by_its_identity(built: Path, tmp_path: Path) -> None:
    """A bundle that failed its identity pin leaves no identity note: a later pin of that
    identity cannot be met from the cache by another file."""
    other = hashlib.sha256(b"x").hexdigest()
    with serving(built.read_bytes(), NAME) as served:
        assert run(tmp_path, served.url(), "--identity", f"sha256:{other}").exit_code == 3
    assert not (tmp_path / "reprobundle" / "identities").exists()
