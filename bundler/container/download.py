"""A bundle from a link: downloaded with bounds, checked against its pin, kept by digest.

A report cites a bundle by its link and its file digest (``reprobundle cite``). Before
anything in the file is read, its SHA-256 is compared with the pin: a file that is not the
cited one is rejected naming both digests, and never opened as a bundle. The download is
bounded in every way a server can misbehave: https only (http only on the loopback
address, for tests and local mirrors), the size cap of ``verify``'s limits (a declared
length over it is refused before the body, a body that goes past it is cut off), connect
and read timeouts (a stalled server ends the download, it never hangs it), a bounded
number of redirects each of which keeps the scheme (no https -> http, no ``file:``), and a
body shorter than its declared length is refused.

Files are kept in the platform's cache folder by their SHA-256 (``bundles/HEX/NAME``), so
a pinned bundle verified once verifies again offline; an identity pin finds its file
through ``identities/HEX``, written once a verification of that file did not reject it.
A cached file is copied to a private folder before use, hashed as it is copied (what
verify reads is what was checked, whatever another writer of the cache swaps in later):
one that rotted is dropped and fetched again. Nothing is written into the cache through a
link planted there.

urllib3 does the HTTP: no dependency of its own, explicit connect and read timeouts,
redirects left to this module (so each target is checked before it is contacted), and a
streamed body whose declared length it enforces.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bundler.errors import BundleRejected, Problem, UsageError
from bundler.format.hashing import CHUNK
from bundler.format.paths import path_problem

if TYPE_CHECKING:
    import urllib3

# (tempfile, ipaddress and urllib.parse are imported where used: every `verify` imports
# this module for its options, and only a link needs them)

MAX_REDIRECTS = 5
TIMEOUT = 30.0  # seconds to connect, and between two pieces of the body
_HEX = re.compile(r"[0-9a-f]{64}")
_LOOPBACK_NAMES = frozenset({"localhost"})


def is_url(text: str) -> bool:
    """Whether a command line's BUNDLE names a link rather than a file."""
    return text.lower().startswith(("https://", "http://"))


def file_pin(text: str) -> str:
    """A file digest as a reviewer writes it (``HEX`` or ``sha256:HEX``), lower-case hex."""
    if not re.fullmatch(r"(sha256:)?[0-9a-fA-F]{64}", text):
        raise UsageError("--sha256 takes the file's SHA-256: 64 hex digits (sha256:HEX works too)")
    return text.removeprefix("sha256:").lower()


def default_cache() -> Path:
    """The platform's cache folder for reprobundle: ``$XDG_CACHE_HOME/reprobundle`` (else
    ``~/.cache/reprobundle``); ``~/Library/Caches/reprobundle`` on macOS and
    ``%LOCALAPPDATA%\\reprobundle\\Cache`` on Windows."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"], "reprobundle", "Cache")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "reprobundle"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "reprobundle"


@dataclass(frozen=True)
class Fetched:
    """A local file holding the bytes of the link, with its SHA-256."""

    path: Path
    sha256: str
    from_cache: bool
    url: str


def _rejected(url: str, code: str, message: str) -> BundleRejected:
    return BundleRejected(
        f"the bundle at {url} could not be verified: nothing was read from it",
        [Problem(url, code, message)],
    )


def _loopback(host: str) -> bool:
    import ipaddress

    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> None:
    """An https link, or http to the loopback address; a UsageError otherwise."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname and _loopback(parts.hostname):
        return
    raise UsageError(
        f"{url}: only https links are fetched (http only on this machine's loopback address)",
        [Problem(url, "download.scheme", f"scheme {parts.scheme or '(none)'!r} is not https")],
    )


def _file_name(url: str) -> str:
    """The file name the link ends in, when it is a safe one; else ``bundle``."""
    from urllib.parse import unquote, urlsplit

    name = unquote(urlsplit(url).path.rpartition("/")[2])
    return name if name and "/" not in name and path_problem(name) is None else "bundle"


# -- the cache --------------------------------------------------------------------------
#
# The cache is a folder other programs can write (another user of a shared CI cache):
# nothing read from it is judged until copied to a private folder, hashed as it is copied
# (the bytes verify reads are the bytes checked against the pin, whatever is swapped in
# the cache afterwards), and nothing is written into it through a link planted there
# (each folder under the cache is opened without following links, each file created new).

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW


def _copy_hashed(source: Path, target: Path) -> str | None:
    """Copy the regular file ``source`` (not a link) to the new file ``target``, and the
    SHA-256 of the bytes copied; None when ``source`` is not a regular file."""
    try:
        fd = os.open(source, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            return None
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(out, "wb") as copy:
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
                copy.write(chunk)
    return digest.hexdigest()


def _cached(cache: Path, sha256: str, private: Path) -> Path | None:
    """A private copy of the cached file with this digest (checked as it was copied); a
    rotted one is removed from the cache."""
    folder = cache / "bundles" / sha256
    try:
        entries = sorted(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        return None
    for entry in entries:
        if entry.name.startswith("."):
            continue
        copy = private / entry.name
        got = _copy_hashed(entry, copy)
        if got == sha256:
            return copy
        with contextlib.suppress(OSError):
            copy.unlink()
        if got is not None:
            with contextlib.suppress(OSError):
                entry.unlink()
    return None


def _store(cache: Path, parts: tuple[str, ...], name: str, write: Callable[[int], None]) -> None:
    """Write a new file ``cache/PARTS.../name`` by ``write(fd)``, opening each folder
    under ``cache`` without following a link and renaming a new file onto ``name``: a
    link planted in the cache makes this raise ``OSError`` (the caller keeps no copy)."""
    cache.mkdir(parents=True, exist_ok=True)
    fds = [os.open(cache, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))]
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fds[-1])
            fds.append(os.open(part, _FOLDER, dir_fd=fds[-1]))
        partial = f".{name}.{os.urandom(6).hex()}.partial"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        fd = os.open(partial, flags, 0o644, dir_fd=fds[-1])
        try:
            try:
                write(fd)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(partial, name, src_dir_fd=fds[-1], dst_dir_fd=fds[-1])
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(partial, dir_fd=fds[-1])
            raise
    finally:
        for fd in fds:
            os.close(fd)


def _keep(cache: Path, sha256: str, path: Path) -> None:
    """Keep a checked download in the cache, by its digest (best effort)."""

    def write(fd: int) -> None:
        with path.open("rb") as stream:
            while chunk := stream.read(CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]

    with contextlib.suppress(OSError):
        _store(cache, ("bundles", sha256), path.name, write)


def remember_identity(cache: Path, identity: str, sha256: str) -> None:
    """Note that the file ``sha256`` holds the manifest ``identity`` (after a
    verification that did not reject it), so an identity pin finds it offline."""
    if not (_HEX.fullmatch(identity) and _HEX.fullmatch(sha256)):
        return
    data = (sha256 + "\n").encode("ascii")

    def write(fd: int) -> None:
        os.write(fd, data)  # (65 bytes: one write)

    _store(cache, ("identities",), identity, write)


def _by_identity(cache: Path, identity: str, private: Path) -> Path | None:
    try:
        text = (cache / "identities" / identity).read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return _cached(cache, text, private) if _HEX.fullmatch(text) else None


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# -- the download -----------------------------------------------------------------------


@contextlib.contextmanager
def fetched(
    url: str,
    *,
    sha256: str | None,
    identity: str | None = None,
    max_bytes: int,
    cache: Path | None,
    timeout: float = TIMEOUT,
) -> Iterator[Fetched]:
    """The bytes of ``url`` in a private local file, removed on the way out, whose SHA-256
    is ``sha256`` (when given) or whatever the link served (trust on first use): copied
    from ``cache`` when it holds them (``identity``: the manifest pin, looked up there
    too), else downloaded and kept there. Raises ``UsageError`` for a link that is not
    fetched at all and ``BundleRejected`` for everything a server may do wrong."""
    import tempfile

    check_url(url)
    with tempfile.TemporaryDirectory(prefix="reprobundle-") as name:
        private = Path(name)
        if cache is not None:
            hit = (
                _cached(cache, sha256, private)
                if sha256
                else _by_identity(cache, identity, private)
                if identity
                else None
            )
            if hit is not None:
                yield Fetched(hit, _sha256_of(hit) if sha256 is None else sha256, True, url)
                return
        tmp = private / ".download.partial"
        with tmp.open("xb") as out:
            got = _download(url, out, max_bytes, timeout)
        if sha256 is not None and got != sha256:
            raise _rejected(url, "bundle.sha256", digest_mismatch(got, sha256))
        target = private / _file_name(url)
        os.replace(tmp, target)
        if cache is not None:
            _keep(cache, got, target)
        yield Fetched(target, got, False, url)


def digest_mismatch(observed: str, pinned: str) -> str:
    """What a file that is not the pinned one is, naming both digests."""
    return (
        f"the file's SHA-256 is {observed}, the pin (--sha256) says {pinned}: this is not "
        "the bundle the report cited"
    )


def check_file(path: Path, sha256: str) -> None:
    """A local bundle file pinned by its digest: hashed before anything in it is read."""
    got = _sha256_of(path)
    if got != sha256:
        raise BundleRejected(
            f"{path} is not the pinned bundle: nothing was read from it",
            [Problem(str(path), "bundle.sha256", digest_mismatch(got, sha256))],
        )


def _pool(timeout: float) -> urllib3.PoolManager:
    import urllib3

    return urllib3.PoolManager(
        timeout=urllib3.Timeout(connect=timeout, read=timeout),
        retries=False,  # no retry, no redirect followed by urllib3: this module decides
    )


def _download(url: str, out: object, max_bytes: int, timeout: float) -> str:
    """Write the body of ``url`` (redirects checked and followed) to ``out``; its SHA-256."""
    import urllib3

    pool = _pool(timeout)
    current = url
    try:
        for _ in range(MAX_REDIRECTS + 1):
            response = pool.request(
                "GET", current, preload_content=False, redirect=False, decode_content=False
            )
            try:
                if response.status in (301, 302, 303, 307, 308):
                    current = _redirect_target(url, current, response.headers.get("Location"))
                    continue
                if response.status != 200:
                    raise _rejected(
                        url, "download.failed", f"the server answered {response.status}, not 200"
                    )
                return _body(url, response, out, max_bytes)
            finally:
                response.close()  # its socket closed now, not when it is collected
                response.release_conn()
    except urllib3.exceptions.TimeoutError:
        raise _rejected(
            url,
            "download.timeout",
            f"the server sent nothing for {timeout:g} s (raise with --download-timeout)",
        ) from None
    except urllib3.exceptions.ProtocolError as exc:
        raise _rejected(url, "download.incomplete", _incomplete(exc)) from None
    except urllib3.exceptions.HTTPError as exc:
        raise _rejected(url, "download.failed", f"cannot fetch it: {exc}") from None
    finally:
        pool.clear()
    raise _rejected(url, "download.redirects", f"more than {MAX_REDIRECTS} redirects (a loop?)")


def _incomplete(exc: Exception) -> str:
    text = str(exc)
    if "IncompleteRead" in text or "bytes read" in text:
        return f"the body ended before its declared length: {text}"
    return f"the connection broke: {text}"


def _redirect_target(url: str, current: str, location: str | None) -> str:
    from urllib.parse import urljoin, urlsplit

    if not location:
        raise _rejected(url, "download.redirect", "a redirect without a Location")
    target = urljoin(current, location)
    before, after = urlsplit(current).scheme, urlsplit(target).scheme
    if after != before:
        raise _rejected(
            url,
            "download.redirect",
            f"a redirect from {before}: to {after or '(none)'}: ({target}) is refused: a "
            "redirect keeps the scheme",
        )
    try:
        check_url(target)
    except UsageError:
        raise _rejected(url, "download.redirect", f"a redirect to {target} is refused") from None
    return target


def _body(url: str, response: urllib3.BaseHTTPResponse, out: object, max_bytes: int) -> str:
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise _rejected(
            url,
            "limit.archive_size",
            f"the server declares {declared} bytes, more than {max_bytes} "
            "(raise with --max-archive-bytes)",
        )
    digest = hashlib.sha256()
    size = 0
    write = out.write  # type: ignore[attr-defined]
    for chunk in response.stream(CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise _rejected(
                url,
                "limit.archive_size",
                f"the file is larger than {max_bytes} bytes (raise with --max-archive-bytes)",
            )
        digest.update(chunk)
        write(chunk)
    return digest.hexdigest()
