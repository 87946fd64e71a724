"""The download cache of `verify URL` is a folder other programs (and other users of a
shared CI cache) can write: what verify judges must be the bytes it checked against the
pin, and nothing planted in the cache may make it write outside the cache."""

from __future__ import annotations

import contextlib
import hashlib
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bundler.cli import main
from bundler.container import download
from tests.bundle_server import serving
from tests.helpers import build_quickstart

NAME = "quickstart.bundle.tar.gz"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_quickstart(tmp_path_factory.mktemp("built"))


def run(cache: Path, *args: str) -> Result:
    return CliRunner(env={"XDG_CACHE_HOME": str(cache)}).invoke(main, ["verify", *args, "-q"])


@pytest.mark.parametrize("planted", ["bundles/PIN", "bundles", "identities"])
def test_a_link_planted_in_the_cache_cannot_send_a_download_outside_it(
    built: Path, tmp_path: Path, planted: str
) -> None:
    pin = hashlib.sha256(built.read_bytes()).hexdigest()
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    link = cache / "reprobundle" / planted.replace("PIN", pin)
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    with serving(built.read_bytes(), NAME) as served:
        result = run(cache, served.url(), "--sha256", pin)
    assert result.exit_code == 0, result.output
    assert list(outside.iterdir()) == [], "nothing written through the planted link"


def test_a_cached_file_swapped_after_its_check_is_not_what_verify_reads(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin = hashlib.sha256(built.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    with serving(built.read_bytes(), NAME) as served:
        url = served.url()
        assert run(cache, url, "--sha256", pin).exit_code == 0
    (cached,) = (cache / "reprobundle" / "bundles" / pin).iterdir()
    fetched = download.fetched

    @contextlib.contextmanager
    def swapped_once_checked(*args: Any, **kwargs: Any) -> Iterator[download.Fetched]:
        with fetched(*args, **kwargs) as got:
            # another writer of the cache, once the file was checked against the pin
            cached.write_bytes(b"not the bundle the report cited")
            yield got

    monkeypatch.setattr(download, "fetched", swapped_once_checked)
    result = run(cache, url, "--sha256", pin)
    assert result.exit_code == 0, result.output
    assert "from the cache (offline)" in result.stderr


def test_the_pin_line_printed_for_a_link_is_one_shell_word_per_argument(
    built: Path, tmp_path: Path
) -> None:
    # a link may hold ; $( ) that a shell runs when the reviewer pastes the line
    name = "b;$(reboot).bundle.tar.gz"
    with serving(built.read_bytes(), name) as served:
        url = served.url()
        result = run(tmp_path, url, "--trust-on-first-use")
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("pin it next time: ")]
    # read as a shell reads it: ; ( ) end a word unless quoted
    lexer = shlex.shlex(line[len("pin it next time: ") :], posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    assert words[:3] == ["reprobundle", "verify", url] and words[3] == "--sha256"
