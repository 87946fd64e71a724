"""The `archive` command group: a thin shell over ``bundler.store.Archive``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from bundler.cli._shared import (
    exit_help,
    handle_errors,
    limit_options,
    limits_from,
    trust_options,
    write_json,
)

_WRITE = "2 usage error, or the archive cannot be read or written (full, read-only, damaged)"
_LOG = "3 the audit log no longer holds what its last checkpoint pinned"
ARCHIVE_EXIT_HELP = exit_help(
    "0 done (verify: every bundle supported)",
    "1 a claim contradicted",
    _WRITE,
    "3 refused, bit rot, or the audit log does not match its checkpoints",
    "4 inconclusive",
)
EXITS = {
    "init": exit_help("0 the archive was created", _WRITE),
    "add": exit_help(
        "0 every file added (or already there)",
        _WRITE,
        "3 a file was refused (integrity, signature, a name and version stored with other bytes)",
    ),
    "list": exit_help("0 listed", _WRITE, _LOG),
    "preregister": exit_help(
        "0 recorded",
        _WRITE,
        "3 refused (it does not read as a pre-registration)",
    ),
    "show": exit_help(
        "0 shown", "2 usage error (no such bundle), or the archive cannot be read", _LOG
    ),
    "verify": exit_help(
        "0 every bundle verified supported",
        "1 a claim contradicted",
        _WRITE,
        "3 bit rot, a missing or rejected bundle",
        "4 inconclusive",
    ),
    "export": exit_help(
        "0 exported", _WRITE, "3 the stored file no longer has its digest (bit rot)"
    ),
    "checkpoint": exit_help("0 the checkpoint was written", _WRITE, _LOG),
    "log": exit_help("0 consistent, or shown", _WRITE, "3 the log does not match"),
    "log verify": exit_help(
        "0 the log is consistent",
        _WRITE,
        "3 a record was edited, reordered, removed or rewritten, or a checkpoint does not match",
    ),
    "log show": exit_help("0 shown", _WRITE, _LOG),
}


if TYPE_CHECKING:
    from bundler.store import BundleRow, Reverification


def on_terminal() -> bool:
    """Is a person watching standard error (so a progress bar helps rather than clutters)?"""
    return sys.stderr.isatty()


def given(root: Path | None) -> Path:
    """The archive folder the command was given (--archive or the environment)."""
    from bundler.errors import UsageError
    from bundler.store import ENV_VAR

    if root is None:
        raise UsageError(f"no archive given: pass --archive DIR or set {ENV_VAR}")
    return root


@contextmanager
def opened(
    root: Path | None, /, check_checkpoint: bool = True, read_only: bool = False
) -> Iterator[Any]:
    """The archive, opened for one command; ``read_only`` for the commands that only read,
    so that an auditor with read access (or a read-only mount) can run them."""
    from bundler.store import Archive

    archive = Archive.open(given(root), check_checkpoint=check_checkpoint, read_only=read_only)
    try:
        yield archive
    finally:
        archive.close()


@click.group(epilog=ARCHIVE_EXIT_HELP)
@click.option(
    "--archive",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="REPROBUNDLE_ARCHIVE",
    show_envvar=True,
    help="The archive folder.",
)
@click.pass_context
def archive(ctx: click.Context, root: Path | None) -> None:
    """Keep bundles for later audit: stored by content digest, re-verified on demand,
    every event in a tamper-evident audit log.

    \b
    Example:
      export REPROBUNDLE_ARCHIVE=~/bundle-archive
      reprobundle archive init
      reprobundle archive add starter-0.1.0.bundle.tar.zst
      reprobundle archive verify --all --jobs 2
      reprobundle archive checkpoint -o checkpoint-2026-11.json
      reprobundle archive log verify --checkpoint checkpoint-2026-11.json
    """
    ctx.obj = root


@archive.command("init", epilog=EXITS["init"])
@trust_options("the archive trusts from now on (kept in its trust.toml)")
@click.pass_obj
@handle_errors
def init(root: Path | None, /, trust_files: tuple[Path, ...], trust_store: Path | None) -> None:
    """Create a new archive (a missing or empty folder) with its index, key and log.

    Keys given with --trust and --trust-store are copied into the archive's trust store
    (trust.toml in the archive folder): add and verify judge bundle signatures against
    them, so a bundle signed by one is recorded as signed by that trusted key.

    \b
    Example:
      reprobundle archive --archive ~/bundle-archive init --trust-store team-trust.toml
    """
    from bundler.signatures.trust import load_trusted_keys
    from bundler.store import Archive

    keys = load_trusted_keys(trust_files, trust_store)
    with Archive.init(given(root), keys) as created:
        click.echo(f"created archive {created.root} (id {created.archive_id})")
        click.echo(f"archive key: {created.key_path} (keep it private; it signs checkpoints)")
        if keys:
            names = ", ".join(k.name for k in keys)
            click.echo(f"trusted keys: {names} (in {created.root / 'trust.toml'})")


@archive.command("add", epilog=EXITS["add"])
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@trust_options("to trust for this add, besides the archive's own")
@click.option(
    "--attestation",
    "attestations",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="An attestation of a verification of one of these bundles (`verify --attest`), "
    "signed by a trusted key: kept beside it and logged (repeatable).",
)
@limit_options
@click.pass_obj
@handle_errors
def add(
    root: Path | None,
    /,
    files: tuple[Path, ...],
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    attestations: tuple[Path, ...],
    **limit_values: int,
) -> None:
    """Check each FILE (strict read, signatures, every hash) and store it by its SHA-256.

    Refuses a bundle that fails its integrity check or carries a bad signature, and a
    NAME@VERSION already stored with other bytes; warns when a version lower than the
    highest stored is added. Records the signer: unsigned, signed by an unknown key, or
    signed by a trusted key (the archive's trust.toml, plus --trust/--trust-store).
    Every add and refusal is written to the audit log.

    \b
    Example:
      reprobundle archive add out/*.bundle.tar.zst
      reprobundle archive add signed.bundle.tar.gz --trust alice.pub
      reprobundle archive add b.bundle.tar.zst --attestation b.intoto.json --trust rita.pub
    """
    from bundler.signatures.trust import load_trusted_keys
    from bundler.store.errors import ArchiveRefused

    keys = load_trusted_keys(trust_files, trust_store)
    with opened(root) as store:
        report = store.add(files, limits_from(limit_values), keys)
        kept, refused = [], []
        for file in attestations if not report.refused else ():
            try:
                kept.append(store.attest(file, keys))
            except ArchiveRefused as exc:  # the bundles stay added; say what was not kept
                refused += exc.problems
    for bundle in report.added:
        click.echo(f"added    {_named(bundle)}  {bundle.signer}")
    for bundle in report.repaired:
        click.echo(
            f"repaired {_named(bundle)}  (the stored copy had rotted; it holds these bytes again)"
        )
    for bundle in report.already:
        click.echo(f"present  {_named(bundle)}")
    if report.added or report.repaired or report.already:
        click.echo(
            "(identity: the manifest's SHA-256, what reports print and "
            "--expect-manifest-sha256 takes; file: the bundle file's SHA-256, what the "
            "archive stores it by)"
        )
    for done in kept:
        d = done.data
        click.echo(
            f"attested {d['name']}@{d['version']}  {d['result']}  signed by "
            f"{', '.join(k[:16] for k in d['signers'])}  (log record #{done.seq})"
        )
    for problem in report.warnings:
        click.echo(f"reprobundle: warning: {problem}", err=True)
    failure = report.failure()
    if failure is not None:
        raise failure
    if refused:
        raise ArchiveRefused(f"{len(refused)} attestation(s) were not recorded", refused)


@archive.command("preregister", epilog=EXITS["preregister"])
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@trust_options("whose signatures on it to name, besides the archive's own")
@click.option(
    "--timestamp",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An RFC 3161 time-stamp response (.tsr) over FILE's bytes, checked and kept with it.",
)
@click.option(
    "--tsa-cert",
    "tsa_roots",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The time-stamping authority's root certificate (PEM) you trust (repeatable).",
)
@click.pass_obj
@handle_errors
def preregister(
    root: Path | None,
    /,
    file: Path,
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    timestamp: Path | None,
    tsa_roots: tuple[Path, ...],
) -> None:
    """Record FILE, a pre-registration (`reprobundle preregister`), in the archive's log.

    The file is stored by its SHA-256 and the log records its identity, bundle name and
    version, claims and the trusted keys that signed it; the next checkpoint then shows
    it existed no later than that entry (the pre-registration cannot show its own time).
    `archive show NAME@VERSION` lists the pre-registrations of that name.

    With --timestamp, an RFC 3161 response over FILE (ask any time-stamping authority:
    `openssl ts -query -data FILE -sha256 -cert -out req.tsq`, then send req.tsq) is
    checked against --tsa-cert and kept: its time is a third party's, not the archive's.

    \b
    Example:
      reprobundle archive preregister mybundle.prereg.json
      reprobundle archive preregister p.json --timestamp p.tsr --tsa-cert tsa-root.pem
    """
    from bundler.errors import UsageError
    from bundler.signatures.trust import load_trusted_keys

    if tsa_roots and timestamp is None:
        raise UsageError("--tsa-cert checks a --timestamp; give the time-stamp response too")
    keys = load_trusted_keys(trust_files, trust_store)
    with opened(root) as store:
        done = store.preregister(file, keys, timestamp, tsa_roots)
    d = done.data
    signed = ", ".join(k[:16] for k in d["signers"]) or "no trusted key"
    click.echo(
        f"recorded pre-registration of {d['name']}@{d['version']} identity sha256:"
        f"{d['identity']} (signed by {signed}) as log record #{done.seq} at {done.at}"
    )
    if "timestamp" in d:
        stamp = d["timestamp"]
        click.echo(f"time-stamped {stamp['time']} by {stamp['authority']} (RFC 3161, checked)")


def _named(bundle: BundleRow) -> str:
    """NAME@VERSION with both of its digests, each labelled: they are easily confused."""
    return (
        f"{bundle.name}@{bundle.version}  identity sha256:{bundle.identity}  "
        f"file sha256:{bundle.digest}"
    )


@archive.command("list", epilog=EXITS["list"])
@click.option("--name", help="Only this bundle name.")
@click.option("--version", "version", help="Only this version.")
@click.option(
    "--signer",
    help="Only bundles signed by this trusted key name or key id (8+ hex digits), or 'unsigned'.",
)
@click.option(
    "--status",
    type=click.Choice(
        [
            "unverified",
            "supported",
            "contradicted",
            "inconclusive",
            "rejected",
            "rotted",
            "missing",
            "error",
        ]
    ),
    help="Only bundles whose latest verification had this result.",
)
@click.option(
    "--claim-status",
    type=click.Choice(["supported", "contradicted", "inconclusive"]),
    help="Only bundles with a claim of this status in their latest verification.",
)
@click.option("--json", "json_target", metavar="FILE|-", help="Write the list as JSON.")
@click.pass_obj
@handle_errors
def list_bundles(
    root: Path | None,
    /,
    name: str | None,
    version: str | None,
    signer: str | None,
    status: str | None,
    claim_status: str | None,
    json_target: str | None,
) -> None:
    """List stored bundles, by name and version, with each one's identity (the SHA-256 of
    its manifest, as a report's appendix prints it) and file digest.

    \b
    Example:
      reprobundle archive list --name quickstart --status supported
      reprobundle archive list --signer alice
    """
    with opened(root, read_only=True) as store:
        rows = store.list_bundles(name, version, signer, status, claim_status)
    if json_target:
        write_json(json_target, {"bundles": [r.to_dict() for r in rows]})
        if json_target == "-":
            return
    if not rows:
        click.echo("no bundle matches")
        return
    click.echo(
        f"{'NAME@VERSION':28} {'IDENTITY':12} {'DIGEST':12} {'SIZE':>9}  {'ADDED':19} "
        f"{'LAST RESULT':13} SIGNER"
    )
    for r in rows:
        click.echo(
            f"{r.name + '@' + r.version:28} {r.identity[:12]:12} {r.digest[:12]:12} "
            f"{r.size:>9}  {r.added_at[:19]:19} {r.last_result:13} {r.signer}"
        )
    click.echo(
        "IDENTITY is the manifest's SHA-256 (what a report's appendix prints), DIGEST the "
        "file's; either, or a unique prefix of 8+ hex digits, names a bundle"
    )
    click.echo(f"{len(rows)} bundle(s)")


@archive.command("show", epilog=EXITS["show"])
@click.argument("bundle")
@click.option("--json", "json_target", metavar="FILE|-", help="Write the details as JSON.")
@click.pass_obj
@handle_errors
def show(root: Path | None, /, bundle: str, json_target: str | None) -> None:
    """Show one BUNDLE with its whole verification history. BUNDLE is NAME@VERSION, its
    identity (the manifest's SHA-256, as a report's appendix prints it) or its file digest,
    whole or a unique prefix of at least 8 hex digits.

    \b
    Example:
      reprobundle archive show quickstart@1.0.0
      reprobundle archive show sha256:3f2a9c41
    """
    with opened(root, read_only=True) as store:
        shown = store.show(bundle)
        kept = store.statements(shown.bundle.name, shown.bundle.digest)
    if json_target:
        write_json(json_target, {**shown.to_dict(), "statements": [k.to_dict() for k in kept]})
        if json_target == "-":
            return
    from bundler.errors import one_line as t  # bundle text stays on its line

    b = shown.bundle
    click.echo(f"Bundle    {t(b.name)}@{t(b.version)}: {t(b.title)}")
    click.echo(f"Identity  sha256:{b.identity} (the manifest's SHA-256, as reports print it)")
    click.echo(f"Digest    sha256:{b.digest} (the file's SHA-256, {b.size} bytes)")
    click.echo(f"Signer    {b.signer}")
    click.echo(f"Added     {b.added_at} by {b.added_by} with {b.tool}")
    click.echo("Claims")
    for claim in shown.claims:
        click.echo(f"  {t(claim['id'])}: {t(claim['statement'])}")
    click.echo(f"History   {len(shown.history)} verification(s), oldest first")
    for v in shown.history:
        env = v.environment
        where = f"Python {env.get('python', '?')} on {env.get('platform', '?')}" if env else ""
        click.echo(f"  #{v.id} {v.at}  {v.result} (exit {v.exit_code})  {v.tool}  {where}")
        if isinstance(v.detail.get("signature"), dict):
            click.echo(f"      {v.detail['signature'].get('text')}")
        for claim in v.claims:
            click.echo(f"      {claim['status']:13} {t(claim['id'])}: {t(claim['why'])}")
        if "message" in v.detail:
            click.echo(f"      {t(v.detail['message'])}")
        for problem in v.detail.get("problems", []):
            click.echo(
                f"      - {t(problem['where'])}: {t(problem['message'])} [{t(problem['code'])}]"
            )
    click.echo(f"Statements {len(kept)} kept beside it (log record, time, what)")
    for k in kept:
        signed = ", ".join(s[:16] for s in k.data.get("signers", [])) or "no trusted key"
        if k.event == "preregister":
            what = (
                f"pre-registration of {t(k.data.get('name'))}@{t(k.data.get('version'))}, "
                f"identity sha256:{t(k.data.get('identity'))}"
            )
            stamp = k.data.get("timestamp")
            if isinstance(stamp, dict):
                what += f", time-stamped {t(stamp.get('time'))} by {t(stamp.get('authority'))}"
        else:
            what = f"attestation of a verification: {t(k.data.get('result'))}"
        click.echo(f"  #{k.seq} {k.at}  {what}; signed by {signed}")


@archive.command("verify", epilog=EXITS["verify"])
@click.argument("bundles", nargs=-1)
@click.option("--all", "all_bundles", is_flag=True, help="Every stored bundle.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Worker processes.",
)
@click.option(
    "--scheduler",
    metavar="tcp://HOST:PORT",
    help="Fan the verifications out to the Dask cluster of this scheduler (needs "
    "reprobundle[distributed]; every worker must see the archive folder at the same path).",
)
@click.option("--json", "json_target", metavar="FILE|-", help="Write the results as JSON.")
@trust_options("to trust for this verification, besides the archive's own")
@limit_options
@click.pass_obj
@handle_errors
def verify(
    root: Path | None,
    /,
    bundles: tuple[str, ...],
    all_bundles: bool,
    jobs: int,
    scheduler: str | None,
    json_target: str | None,
    trust_files: tuple[Path, ...],
    trust_store: Path | None,
    **limit_values: int,
) -> None:
    """Re-verify stored BUNDLES (identities, digests, NAME@VERSION, NAME) or --all, in
    parallel: in --jobs local processes, or on a Dask cluster with --scheduler.

    Each stored file is re-hashed first (bit rot is reported loudly), then verified as
    `reprobundle verify` would, signatures judged against the archive's trusted keys
    (trust.toml, plus --trust/--trust-store); every result, with the signer, goes into
    the bundle's history and the audit log. Exits with the worst result. First checks
    the index and the trust store against the audit log, and refuses (exit 3, nothing
    run) when they differ.

    With --scheduler, each Dask worker verifies bundles from the archive folder (the same
    path on every worker) in its own work folder; only this process writes the index and
    the log. Workers running another reprobundle version are refused; a bundle whose
    workers died is re-run elsewhere, or recorded as an error.

    \b
    Example:
      reprobundle archive verify --all --jobs 4
      reprobundle archive verify --all --scheduler tcp://10.0.0.5:8786
    """
    out = sys.stderr if json_target == "-" else sys.stdout
    from bundler.signatures.trust import load_trusted_keys

    keys = load_trusted_keys(trust_files, trust_store)
    with opened(root) as store:
        total = len(store.select(bundles, all_bundles))
        if not total:
            click.echo("reprobundle: the archive holds no bundle; nothing was verified", err=True)
            sys.exit(4)
        with Progress(total, out) as show:

            def on_result(outcome: Reverification, bundle: BundleRow) -> None:
                show(result_lines(outcome, bundle))

            batch = store.verify(
                bundles,
                all_bundles,
                jobs,
                limits_from(limit_values),
                on_result,
                keys,
                scheduler=scheduler,
                on_note=lambda text: click.echo(f"reprobundle: warning: {text}", err=True),
            )
    for line in show.held:
        click.echo(line, file=out)
    for outcome in batch:
        if outcome.bit_rot:
            click.echo(
                f"reprobundle: BIT ROT in {batch.name(outcome)} (sha256:{outcome.digest}): "
                f"{outcome.detail.get('message')}",
                err=True,
            )
    click.echo(batch.summary, file=out)
    if json_target:
        write_json(json_target, batch.to_dict())
    if not batch:
        click.echo("reprobundle: nothing was verified", err=True)
    sys.exit(batch.exit_code)


def result_lines(outcome: Reverification, bundle: BundleRow) -> list[str]:
    """One verification's lines: the result, then each claim, then any message."""
    signed = outcome.signed
    lines = [
        f"{outcome.result:13} {bundle.name}@{bundle.version}  {bundle.digest[:12]}"
        + (f"  {signed.text}" if signed else "")
    ]
    lines += [f"    {c['status']:13} {c['id']}: {c['why']}" for c in outcome.claims]
    if not outcome.bit_rot and "message" in outcome.detail:
        lines.append(f"    {outcome.detail['message']}")
    return lines


class Progress:
    """Each result's lines, printed at once; or, when a person watches a batch of more
    than one, a progress bar on standard error and the lines held until it is done."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.bar: Any = None
        if on_terminal() and total > 1:
            self.bar = click.progressbar(length=total, label="verifying", file=sys.stderr)
        self.out = out
        self.held: list[str] = []

    def __enter__(self) -> Progress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def __call__(self, lines: list[str]) -> None:
        if self.bar is None:
            for line in lines:
                click.echo(line, file=self.out)
        else:
            self.held.extend(lines)
            self.bar.update(1)


@archive.command("export", epilog=EXITS["export"])
@click.argument("bundle")
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="The file to write.",
)
@click.pass_obj
@handle_errors
def export(root: Path | None, /, bundle: str, out: Path) -> None:
    """Write the stored BUNDLE (digest or NAME@VERSION) to a file, checking its digest.

    \b
    Example:
      reprobundle archive export quickstart@1.0.0 -o quickstart-1.0.0.bundle.tar.zst
    """
    with opened(root) as store:
        row = store.export(bundle, out)
    click.echo(f"exported {row.name}@{row.version} (sha256:{row.digest}) to {out}")


@archive.command("checkpoint", epilog=EXITS["checkpoint"])
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path),
    help="Also write the checkpoint to this file (default: standard output only).",
)
@click.pass_obj
@handle_errors
def checkpoint(root: Path | None, /, out: Path | None) -> None:
    """Print a checkpoint of the audit log (its size and head hash), signed by the archive
    key. Keep it somewhere the archive's writers cannot reach.

    \b
    Example:
      reprobundle archive checkpoint -o /mnt/elsewhere/checkpoint-2026-11-30.json
    """
    from bundler.output import OutputError, write_bytes

    with opened(root) as store:
        issued = store.checkpoint()
    text = issued.to_json()
    click.echo(text, nl=False)
    if out is not None:
        try:
            write_bytes(out, text.encode("utf-8"), "the checkpoint")
        except OutputError as exc:
            exc.headline = (
                f"the checkpoint was issued (printed above, and kept in {store.checkpoints}) "
                f"but {exc.headline}"
            )
            raise


@archive.group("log", epilog=EXITS["log"])
def log() -> None:
    """The audit log: show it, or verify its hash chain against checkpoints.

    \b
    Example:
      reprobundle archive log verify --checkpoint checkpoint-2026-11-30.json
    """


@log.command("verify", epilog=EXITS["log verify"])
@click.option(
    "--checkpoint",
    "checkpoints",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A checkpoint kept elsewhere (repeatable).",
)
@click.pass_obj
@handle_errors
def log_verify(root: Path | None, /, checkpoints: tuple[Path, ...]) -> None:
    """Check every link of the audit log, the log against every checkpoint (those the
    archive kept and those given), and every fact of the index and the trust store
    against the log, row by row. Exit 3 on any inconsistency (edits, reordering,
    truncation, rewrites, an index row or trusted key the log does not describe).
    Only reads: works on a read-only archive.

    \b
    Example:
      reprobundle archive log verify --checkpoint checkpoint-2026-11-30.json
    """
    with opened(root, check_checkpoint=False, read_only=True) as store:
        report = store.verify_log(checkpoints)
    failure = report.failure()
    if failure is not None:
        raise failure
    click.echo(report.summary)


@log.command("show", epilog=EXITS["log show"])
@click.option("--tail", type=click.IntRange(1), help="Only the last N records.")
@click.pass_obj
@handle_errors
def log_show(root: Path | None, /, tail: int | None) -> None:
    """Print the audit log records, one exact record per line.

    \b
    Example:
      reprobundle archive log show --tail 5
    """
    with opened(root, read_only=True) as store:
        for record in store.log_records(tail):
            click.echo(record.decode("utf-8", "replace"))


@archive.command("rebuild", epilog=ARCHIVE_EXIT_HELP)
@click.pass_obj
@handle_errors
def rebuild(root: Path | None, /) -> None:
    """Rebuild the index from the audit log and the stored objects: every bundle row,
    signer, claim, verification and claim result as the log says it is, the log itself
    byte for byte. The old index is kept beside the new one (index.sqlite.before-rebuild-*).
    Refuses when the log's chain is broken. Run it while no other archive command runs.

    \b
    Example:
      reprobundle archive log verify     # lists what no longer matches the log
      reprobundle archive rebuild
    """
    with opened(root) as store:
        bundles, verifications = store.rebuild()
        click.echo(
            f"rebuilt the index of {store.root} from its audit log: {bundles} bundle(s), "
            f"{verifications} verification(s)"
        )


@archive.group("trust", epilog=ARCHIVE_EXIT_HELP)
def trust() -> None:
    """The keys the archive trusts (its trust.toml). Every change is an event in the audit
    log with each key's permissions, and add and verify refuse a trust store that differs
    from what the log says (an edit of trust.toml behind the log's back).

    \b
    Example:
      reprobundle archive trust add alice.pub --name alice
      reprobundle archive trust revoke alice
    """


@trust.command("list", epilog=ARCHIVE_EXIT_HELP)
@click.pass_obj
@handle_errors
def trust_list(root: Path | None, /) -> None:
    """Print the trusted keys and whether the trust store is what the log says. Only
    reads: works on a read-only archive.

    \b
    Example:
      reprobundle archive trust list
    """
    with opened(root, read_only=True) as store:
        keys = store.trust_keys()
    if not keys:
        click.echo("the archive trusts no key")
        return
    for k in keys:
        flags = [f for f, on in (("allow_code", k.allow_code), ("revoked", k.revoked)) if on]
        window = "".join(
            f" {label} {when.isoformat()}"
            for label, when in (("from", k.valid_from), ("until", k.valid_until))
            if when
        )
        click.echo(f"{k.name:24} {k.key.keyid}  {' '.join(flags) or '-'}{window}")
    click.echo(f"{len(keys)} key(s); the trust store matches the audit log")


@trust.command("add", epilog=ARCHIVE_EXIT_HELP)
@click.argument("keyfile", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--name", help="The name reports print for this key (default: the file name).")
@click.option(
    "--allow-code",
    is_flag=True,
    help="Bundles this key signed may run their bundled code on archive verify.",
)
@click.option("--valid-from", type=click.DateTime(), help="Trusted from this UTC time on.")
@click.option("--valid-until", type=click.DateTime(), help="Trusted until this UTC time.")
@click.pass_obj
@handle_errors
def trust_add(
    root: Path | None,
    /,
    keyfile: Path,
    name: str | None,
    allow_code: bool,
    valid_from: Any,
    valid_until: Any,
) -> None:
    """Trust the public key in KEYFILE from now on (logged with its permissions).

    \b
    Example:
      reprobundle archive trust add keys/alice.pub --name alice
    """
    import dataclasses
    import datetime as dt

    from bundler.signatures.trust import load_key_file

    def utc(when: Any) -> dt.datetime | None:
        return when.replace(tzinfo=dt.UTC) if when is not None else None

    key = dataclasses.replace(
        load_key_file(keyfile),
        name=name or keyfile.name,
        allow_code=allow_code,
        valid_from=utc(valid_from),
        valid_until=utc(valid_until),
    )
    with opened(root) as store:
        store.change_trust("add", key)
    flags = " (may run bundled code)" if allow_code else ""
    click.echo(f"trusted {key.name} (key id {key.key.keyid}){flags}; logged")


def _change_by_name(change: str, done: str, help_text: str) -> None:
    """``archive trust revoke|remove NAME``: one change of the key NAME, logged."""

    @trust.command(change, epilog=ARCHIVE_EXIT_HELP, help=help_text)
    @click.argument("name")
    @click.pass_obj
    @handle_errors
    def command(root: Path | None, /, name: str) -> None:
        with opened(root) as store:
            store.change_trust(change, name=name)
        click.echo(f"{done} {name}; logged")


_change_by_name(
    "revoke",
    "revoked",
    "Revoke the trusted key NAME: bundles it signed are refused from now on (logged).\n\n"
    "\b\nExample:\n  reprobundle archive trust revoke alice",
)
_change_by_name(
    "remove",
    "removed",
    "Stop trusting the key NAME (its bundles count as signed by an unknown key; logged).\n\n"
    "\b\nExample:\n  reprobundle archive trust remove alice",
)


@trust.command("restore", epilog=ARCHIVE_EXIT_HELP)
@click.pass_obj
@handle_errors
def trust_restore(root: Path | None, /) -> None:
    """Write trust.toml back as the audit log says it is (after an edit behind the log's
    back, or a crash between writing it and logging the change); the restore is logged.

    \b
    Example:
      reprobundle archive trust restore
    """
    with opened(root) as store:
        keys = store.restore_trust()
    click.echo(f"restored the trust store from the audit log: {len(keys)} key(s)")
