"""The `ci` command: verify bundles in a CI job in one step.

Everything a CI job needs and nothing it would write glue for: each bundle verified as
`verify` does (the same trust, code and case options), its JUnit and HTML reports written
as files for the job to keep, its Markdown appended to the run's summary
(``$GITHUB_STEP_SUMMARY`` on GitHub Actions), an attestation if a key is given, and one
exit code by a stated policy. The GitHub Action (``action.yml``) and the GitLab job in the
README call this command; tests run it with a temporary summary file.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import click

from bundler.cli._shared import exit_help, handle_errors
from bundler.cli._verifying import (
    Judging,
    attestation_bytes,
    disclose_option,
    signing_key,
    verify_options,
)
from bundler.codes import COMMAND_EXITS, EXIT_CODES
from bundler.errors import UNSAFE_ABOVE_C0

CI_EXIT_HELP = exit_help(
    "0 every bundle passed the --fail-on policy",
    "1 a bundle did not (a claim contradicted; with --fail-on inconclusive, also a claim "
    "inconclusive)",
    "2 usage error",
    "3 a bundle was rejected (integrity, format, signature, trust; nothing ran)",
)


# what a report's file name never holds: a path separator, what artifact uploads refuse
# (actions/upload-artifact: " : < > | * ? and line breaks), and every control character
_NOT_IN_NAMES = re.compile(f'[\\x00-\\x1f/\\\\":<>|*?{UNSAFE_ABOVE_C0}]')


def report_name(bundle: Path, taken: set[str]) -> str:
    """A file name stem for ``bundle``'s reports, unique among ``taken``: what the
    bundle's file name says, with every character a file name or an artifact upload
    cannot take as ``_``, and no leading dot or dash (a hidden report would be left out of
    an artifact; a leading dash reads as an option)."""
    stem = _NOT_IN_NAMES.sub("_", bundle.name.split(".bundle.tar")[0])
    stem = re.sub(r"^[.-]", "_", stem) or "bundle"
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}"
    taken.add(name)
    return name


def fails(result: str, fail_on: str) -> bool:
    """Whether a bundle's result fails the job under the ``--fail-on`` policy."""
    if result in ("rejected", "error", "contradicted"):
        return True
    return result == "inconclusive" and fail_on == "inconclusive"


@click.command(epilog=CI_EXIT_HELP)
@click.argument("bundles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("reprobundle-reports"),
    show_default=True,
    help="Folder for NAME.junit.xml and NAME.html per bundle (and NAME.intoto.json).",
)
@click.option(
    "--summary",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="GITHUB_STEP_SUMMARY",
    show_envvar=True,
    help="A Markdown file each bundle's report is appended to (the run's summary page).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["contradicted", "inconclusive"]),
    default="contradicted",
    show_default=True,
    help="What fails the job besides a rejected bundle: a contradicted claim, or also an "
    "inconclusive one.",
)
@click.option(
    "--attest-key",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write NAME.intoto.json, a signed attestation of each verification.",
)
@click.option("--verbose", "-v", is_flag=True, help="Tracebacks for internal errors.")
@disclose_option
@verify_options(limits_first=True)
@handle_errors
def ci(
    bundles: tuple[Path, ...],
    out_dir: Path,
    summary: Path | None,
    fail_on: str,
    attest_key: Path | None,
    verbose: bool,
    disclose: Path | None,
    judging: Judging,
) -> None:
    """Verify BUNDLES for a CI job: reports as files, a summary, one exit code.

    Each bundle is verified as `verify` verifies it (with the same trust, code and case
    options). For each, OUT/NAME.junit.xml and OUT/NAME.html are written for the job to
    keep as artifacts, and its Markdown report is appended to --summary (on GitHub
    Actions, $GITHUB_STEP_SUMMARY: the run's page). With --attest-key, OUT/NAME.intoto.json
    is a signed attestation of the verification. The job fails (exit 1) when a claim is
    contradicted, or with --fail-on inconclusive also when one is inconclusive; a rejected
    bundle always fails it (exit 3). --disclose DIR gives the withheld files of redacted
    bundles, as to `verify` (each checked against its digest; a bundle that withholds
    nothing is then a usage error, as in `verify`).

    Every line printed is escaped for the CI runner's log (GitHub Actions, GitLab), so no
    file or bundle name can become a workflow command; reports are written only as regular
    files inside OUT, never through a link. Put the files after -- so that no file name
    can be read as an option.

    \b
    Example:
      reprobundle ci --trust-store trust.toml --fail-on inconclusive -- dist/*.bundle.tar.zst
    """
    import datetime as dt

    from bundler.errors import BundleRejected, UsageError, one_line
    from bundler.format.hashing import HashingReader
    from bundler.output import check, encode, remove_in, write_in
    from bundler.reports.cilog import line, lines, runner_of
    from bundler.reports.document import rejection_json, to_json
    from bundler.reports.formats import render
    from bundler.reports.view import report_view
    from bundler.run.verify import must_be_file, verify

    runner = runner_of(os.environ)
    for bundle in bundles:
        must_be_file(bundle)
    _no_link_on_the_way(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir} is a file, not a folder")
    if summary is not None:
        check(summary, "--summary")
        _check_summary(summary)
    signer = signing_key(attest_key) if attest_key else None  # read before any work
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make --out folder {out_dir}: {exc.strerror}") from None
    taken: set[str] = set()
    worst = EXIT_CODES["supported"]
    sections = []
    for bundle in bundles:
        name = report_name(bundle, taken)
        try:
            hashed = HashingReader(bundle.open("rb"))
        except OSError as exc:
            raise UsageError(f"cannot read {bundle}: {exc.strerror}") from None
        started = dt.datetime.now(dt.UTC)
        verification = None
        try:
            stream: Any = hashed
            verification = verify(bundle, judging.options(bundle), stream=stream, disclose=disclose)
            report = to_json(verification)
        except (BundleRejected, UsageError) as exc:
            text = f"reprobundle: {one_line(bundle)}: {exc.diagnostics()}"
            click.echo(lines(text, runner), err=True)
            report = rejection_json(exc, exc.exit_code)
        view = report_view(report)  # what every output shows, derived once
        for fmt, suffix in (("junit", "junit.xml"), ("html", "html")):
            write_in(out_dir, f"{name}.{suffix}", encode(render(fmt, view)), f"the {fmt} report")
        sections.append(render("markdown", view))
        attested = f"{name}.intoto.json"
        if verification is not None and signer is not None and not view.rejected:
            data = attestation_bytes(report, bundle, hashed, verification.options, signer, started)
            write_in(out_dir, attested, data, "the attestation")
        elif remove_in(out_dir, attested, "an older attestation"):
            why = "this run rejected the bundle" if signer else "this run attests nothing"
            click.echo(
                line(f"reprobundle: removed {out_dir / attested} of an earlier run: {why}", runner),
                err=True,
            )
        failed = fails(view.result, fail_on)
        withheld = view.not_accepted
        why = f" (advisory {', '.join(withheld)} not accepted)" if withheld else ""
        status = f"{'FAIL' if failed else 'ok  '} {bundle}: {view.result_words}{why}"
        click.echo(line(status, runner))
        if failed:
            worst = max(
                worst,
                EXIT_CODES["rejected"] if view.rejected else COMMAND_EXITS["failed"],
            )
    if summary is not None:
        _append(summary, "\n".join(sections))
    sys.exit(worst)


def _no_link_on_the_way(out_dir: Path) -> None:
    """Refuse a relative ``--out`` with a symbolic link on its way (``reports`` in
    ``reports/ci``, or the folder itself): the folders below the job's working folder are
    the checked-out repository's, which a pull request controls, and a link there would
    send the reports outside. (An absolute path is the workflow's own choice.)"""
    from bundler.errors import UsageError

    if out_dir.is_absolute():
        return
    walked = Path()
    for part in out_dir.parts:
        walked = walked / part
        if walked.is_symlink():
            raise UsageError(
                f"--out {out_dir}: {walked} is a symbolic link; the reports are written "
                "only inside a real folder, never through a link: give a folder without one"
            )


def _check_summary(summary: Path) -> None:
    """Refuse a summary that is a link or not a regular file (before any work, and again
    just before it is appended to)."""
    import stat

    from bundler.errors import UsageError, os_reason

    try:
        info = os.lstat(summary)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"cannot append to --summary {summary}: {os_reason(exc)}") from None
    if not stat.S_ISREG(info.st_mode):
        what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        raise UsageError(
            f"cannot append to --summary {summary}: it is {what}; the summary is appended "
            "only to a regular file, never through a link"
        )


def _append(summary: Path, text: str) -> None:
    """Append to the summary file (the CI owns it and may have written to it before),
    opened without following a link: a link planted where the summary goes (a summary
    inside the reports folder a bundle's repository could hold) is refused, never
    written through."""
    from bundler.errors import UsageError, os_reason
    from bundler.output import encode

    _check_summary(summary)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(summary, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
        with os.fdopen(fd, "ab") as stream:
            stream.write(encode(text if text.endswith("\n") else text + "\n"))
    except OSError as exc:
        raise UsageError(f"cannot append to --summary {summary}: {os_reason(exc)}") from None
