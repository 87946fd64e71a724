"""Where `verify` gets its bundle: a file, standard input, or a link pinned by digest."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from bundler.container.download import Fetched


def pin_identity(identity: str, expect: str | None) -> str:
    """``--identity sha256:HEX`` as the pin ``--expect-manifest-sha256`` reads; the two
    given with other digests contradict each other."""
    from bundler.errors import UsageError
    from bundler.signatures.trust import identity_pin

    pin = identity_pin(identity)
    if expect is not None and identity_pin(expect) != pin:
        raise UsageError("--identity and --expect-manifest-sha256 name two different bundles")
    return pin


def obtain(
    stack: contextlib.ExitStack,
    text: str,
    *,
    sha256: str | None,
    identity: str | None,
    trust_on_first_use: bool,
    cache: Path | None,
    timeout: float,
    max_bytes: int,
) -> tuple[Path, Fetched | None]:
    """The bundle file BUNDLE names: a local path (checked against --sha256 when given,
    before anything in it is read), or a link, downloaded and checked against its pin."""
    from bundler.container.download import check_file, fetched, file_pin, is_url
    from bundler.errors import Problem, UsageError
    from bundler.signatures.trust import identity_pin

    pin = file_pin(sha256) if sha256 is not None else None
    if not is_url(text):
        path = Path(text)
        if pin is not None:
            if text == "-":
                raise UsageError("--sha256 needs a bundle file or link, not - (standard input)")
            from bundler.run.verify import must_be_file

            must_be_file(path)
            check_file(path, pin)
        return path, None
    manifest_pin = identity_pin(identity) if identity is not None else None
    if pin is None and manifest_pin is None and not trust_on_first_use:
        raise UsageError(
            f"{text} is a link: pin the bundle the report cited, or nothing ties the file "
            "you get to it",
            [
                Problem(
                    text,
                    "download.pin",
                    "give --sha256 HEX (the file's SHA-256, as `reprobundle cite` prints "
                    "it) or --identity sha256:HEX; or --trust-on-first-use to verify what "
                    "the link serves now and print its pin",
                )
            ],
        )
    got = stack.enter_context(
        fetched(
            text,
            sha256=pin,
            identity=manifest_pin,
            max_bytes=max_bytes,
            cache=cache,
            timeout=timeout,
        )
    )
    return got.path, got


def after_download(fetched: Fetched, identity: str, no_cache: bool) -> None:
    """Once a downloaded bundle verified (rejected or not, but not refused): note its
    identity in the cache, and say where it came from and the pin to use next time."""
    from bundler.container.download import default_cache, remember_identity

    if not no_cache:
        with contextlib.suppress(OSError):  # a cache that cannot be written costs a download
            remember_identity(default_cache(), identity, fetched.sha256)
    source = "from the cache (offline)" if fetched.from_cache else "downloaded"
    click.echo(f"{fetched.url}: {source}, SHA-256 {fetched.sha256}", err=True)
    from bundler.reports.citation import verify_line

    # (quoted as `cite` quotes it: a link may hold ; $( ) ' that a shell would run)
    pin = verify_line(fetched.url, sha256=fetched.sha256)
    click.echo(f"pin it next time: {pin}", err=True)
