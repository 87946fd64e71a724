"""A bundle from a link: the download against a local server that also misbehaves."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.container.download import check_file, check_url, fetched
from bundler.errors import BundleRejected, UsageError
from tests.bundle_server import Served, self_signed, serving
from tests.helpers import build_quickstart

NAME = "quickstart.bundle.tar.gz"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return build_quickstart(tmp_path_factory.mktemp("built")).read_bytes()


@pytest.fixture
def server(bundle: bytes) -> Iterator[Served]:
    with serving(bundle, NAME) as served:
        yield served


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


Refused = pytest.ExceptionInfo[BundleRejected] | pytest.ExceptionInfo[UsageError]


def codes(exc: Refused) -> list[str]:
    return [p.code for p in exc.value.problems]


def fetch(url: str, pin: str | None, cache: Path | None, **kw: object) -> bytes:
    with fetched(url, sha256=pin, max_bytes=kw.pop("max_bytes", 1 << 30), cache=cache, **kw) as got:  # type: ignore[arg-type]
        return got.path.read_bytes()


def test_pinned_link_is_downloaded_and_kept_by_digest(server: Served, tmp_path: Path) -> None:
    pin = digest(server.bundle)
    assert fetch(server.url(), pin, tmp_path) == server.bundle
    assert (tmp_path / "bundles" / pin / NAME).read_bytes() == server.bundle
    assert not list((tmp_path / "bundles").glob(".*"))  # no partial download left


def test_pinned_link_verified_once_is_read_again_offline(bundle: bytes, tmp_path: Path) -> None:
    pin = digest(bundle)
    with serving(bundle, NAME) as served:
        url = served.url()
        fetch(url, pin, tmp_path)
        assert len(served.hits) == 1
    with fetched(url, sha256=pin, max_bytes=1 << 30, cache=tmp_path) as again:  # server gone
        assert again.from_cache and again.path.read_bytes() == bundle


def test_a_rotted_cached_file_is_fetched_again(server: Served, tmp_path: Path) -> None:
    pin = digest(server.bundle)
    fetch(server.url(), pin, tmp_path)
    (tmp_path / "bundles" / pin / NAME).write_bytes(b"rotted")
    assert fetch(server.url(), pin, tmp_path) == server.bundle
    assert len(server.hits) == 2


def test_file_not_the_cited_one_is_rejected_naming_both_digests(
    server: Served, tmp_path: Path
) -> None:
    other = digest(b"another bundle")
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url(), other, tmp_path)
    assert codes(exc) == ["bundle.sha256"]
    message = exc.value.problems[0].message
    assert digest(server.bundle) in message and other in message
    assert not list((tmp_path / "bundles").rglob("*.gz"))  # never kept, never read


def test_without_a_cache_nothing_is_left_behind(server: Served, tmp_path: Path) -> None:
    with fetched(server.url(), sha256=None, max_bytes=1 << 30, cache=None) as got:
        kept = got.path
        assert kept.read_bytes() == server.bundle
    assert not kept.exists()


def test_server_that_declares_more_than_it_sends_is_refused(server: Served) -> None:
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url("/longer"), None, None)
    assert codes(exc) == ["download.incomplete"]


def test_server_that_declares_less_than_it_sends_gives_another_file(server: Served) -> None:
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url("/shorter"), digest(server.bundle), None)
    assert codes(exc) == ["bundle.sha256"]


@pytest.mark.parametrize("path", ["/to-https", "/to-file"])
def test_redirect_to_another_scheme_is_refused(server: Served, path: str) -> None:
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url(path), None, None)
    assert codes(exc) == ["download.redirect"]
    assert server.hits == [path]  # the other target was never contacted


def test_redirect_loop_ends(server: Served) -> None:
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url("/loop"), None, None)
    assert codes(exc) == ["download.redirects"]
    assert len(server.hits) == 6


def test_redirect_that_keeps_the_scheme_is_followed(server: Served) -> None:
    assert fetch(server.url("/hop"), digest(server.bundle), None) == server.bundle


def test_stalled_server_ends_the_download_at_the_timeout(server: Served) -> None:
    """The stall never ends by itself; only the (tiny) read timeout ends the download."""
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url("/stall"), None, None, timeout=0.05)
    assert codes(exc) == ["download.timeout"]


def test_declared_length_over_the_cap_is_refused_before_the_body(server: Served) -> None:
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url("/huge-declared"), None, None, max_bytes=1000)
    assert codes(exc) == ["limit.archive_size"]


def test_body_past_the_cap_is_cut_off(server: Served, tmp_path: Path) -> None:
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url("/huge"), None, tmp_path, max_bytes=100_000)
    assert codes(exc) == ["limit.archive_size"]
    assert not list((tmp_path / "bundles").rglob("*"))


def test_missing_file_is_refused(server: Served) -> None:
    with pytest.raises(BundleRejected) as exc:
        fetch(server.url("/missing"), None, None)
    assert codes(exc) == ["download.failed"]


@pytest.mark.parametrize(
    "url",
    ["http://example.org/b.bundle.tar.gz", "ftp://127.0.0.1/b", "file:///etc/passwd", "https://"],
)
def test_only_https_links_are_fetched_and_http_only_on_loopback(url: str) -> None:
    with pytest.raises(UsageError) as exc:
        check_url(url)
    assert codes(exc) == ["download.scheme"]


def test_a_local_file_pinned_by_digest_is_hashed_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "x.bundle.tar.gz"
    path.write_bytes(b"not the cited bundle")
    with pytest.raises(BundleRejected) as exc:
        check_file(path, digest(b"the cited bundle"))
    assert codes(exc) == ["bundle.sha256"]


def test_https_server_whose_certificate_nobody_trusts_is_refused(
    bundle: bytes, tmp_path: Path
) -> None:
    with serving(bundle, NAME, tls=self_signed(tmp_path)) as served:
        assert served.url().startswith("https://127.0.0.1:")
        with pytest.raises(BundleRejected) as exc:
            fetch(served.url(), digest(bundle), None)
    assert codes(exc) == ["download.failed"]
    assert "CERTIFICATE_VERIFY_FAILED" in exc.value.problems[0].message
