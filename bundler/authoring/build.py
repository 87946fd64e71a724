"""Build a bundle from a source folder, then prove it verifies at home before keeping it.

The new file is written beside its destination under a temporary name, verified by the
library's ``verify`` exactly as a reviewer's ``reprobundle verify`` does (unpacked into a
new empty folder, nothing read from the source folder or the current directory, bundled
code in its own limited workers), and only then renamed into place. A bundle whose
claims are not all supported at home is refused and removed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bundler.authoring.readme import bundle_readme
from bundler.authoring.source import SourcePlan, expect_reasons_hint, read_source
from bundler.codes import EXIT_CODES
from bundler.container import compression
from bundler.container.compression import Codec
from bundler.container.pack import Member, write_tar
from bundler.errors import BuildRefused, BundlerError, Problem, SourceError, UsageError
from bundler.format.claims import accepted_advisories
from bundler.format.hashing import read_and_hash_files
from bundler.format.manifest import (
    MANIFEST_NAME,
    MAX_EPOCH,
    README_NAME,
    FileEntry,
    Manifest,
    from_dict,
    identity,
)
from bundler.format.preregistration import FILE_NAME as PREREGISTRATION_FILE
from bundler.output import check_distinct, staged
from bundler.run.isolation import CodePolicy
from bundler.run.runner import checker_environment
from bundler.run.verify import Verification, VerifyOptions, machine_environment, verify
from bundler.signatures.truststore import stale_detached

EPOCH_VARIABLE = "SOURCE_DATE_EPOCH"


def read_source_date_epoch(environ: Mapping[str, str] | None = None) -> int:
    """The time stamped on every member: ``$SOURCE_DATE_EPOCH`` (reproducible-builds.org),
    else 0. Raises ``UsageError`` unless it is a whole number of seconds a tar header holds."""
    text = (os.environ if environ is None else environ).get(EPOCH_VARIABLE, "0")
    if not text.isdigit() or not text.isascii() or int(text) > MAX_EPOCH:
        raise UsageError(
            f"{EPOCH_VARIABLE} must be a whole number of seconds from 0 to {MAX_EPOCH}, "
            f"observed {text!r}"
        )
    return int(text)


@dataclass(frozen=True)
class BuildResult:
    path: Path
    manifest: Manifest
    identity: str
    size: int
    home: Verification  # the verification at home, every claim supported
    skipped: tuple[str, ...] = ()  # bundle files in the source, not packed
    warnings: tuple[str, ...] = ()  # what the author should do (a stale detached signature)


def default_name(plan: SourcePlan, codec: Codec = compression.DEFAULT) -> str:
    """``NAME-VERSION.bundle.tar.zst`` (or the ``codec``'s suffix)."""
    bundle = plan.document["bundle"]
    return f"{bundle['name']}-{bundle['version']}{codec.suffix}"


def build_environment(plan: SourcePlan, source_date_epoch: int) -> dict[str, Any]:
    used = checker_environment(c["checker"] for c in plan.document["cases"])
    return {**machine_environment(), "source_date_epoch": source_date_epoch, **used}


# Files smaller than a page, whose open and reads cost more than keeping their bytes, are
# kept in memory as they are hashed (up to 16 MiB in all) and packed from there: each is
# read once (the bytes packed are the bytes hashed).
KEEP_BELOW = 4 << 10
KEEP_AT_MOST = 16 << 20


def make_manifest(
    plan: SourcePlan,
    source_date_epoch: int,
    extra: Mapping[str, bytes] | None = None,
    kept: dict[str, bytes] | None = None,
) -> tuple[Manifest, bytes]:
    """Hash every file and assemble the manifest. Returns it and the generated README.
    ``extra`` are files made by the build itself (a pre-registration), listed like the rest.
    Given ``kept``, the bytes of small files (``KEEP_BELOW``, at most ``KEEP_AT_MOST`` in
    all) go there by path, as they were hashed."""
    root = str(plan.root)
    paths = [os.path.join(root, rel) for rel in plan.files]
    keep = (KEEP_BELOW, KEEP_AT_MOST) if kept is not None else (0, 0)
    try:
        hashes = read_and_hash_files(paths, *keep)
    except OSError as exc:  # (EIO from a failing disk): a refusal naming the file
        raise SourceError(f"cannot read {exc.filename or root}: {exc.strerror or exc}") from None
    entries = [
        FileEntry(rel, digest, size)
        for rel, (digest, size, _) in zip(plan.files, hashes, strict=True)
    ]
    if kept is not None:
        kept.update(
            (rel, data)
            for rel, (_, _, data) in zip(plan.files, hashes, strict=True)
            if data is not None
        )
    document = dict(plan.document)
    document["environment"] = build_environment(plan, source_date_epoch)
    draft = from_dict({**document, "files": []}, ())  # (the README names no file)
    readme = bundle_readme(draft).encode("utf-8")
    made = [FileEntry(README_NAME, *_digest(readme))]
    made += [FileEntry(name, *_digest(data)) for name, data in (extra or {}).items()]
    document["files"] = [
        {"path": e.path, "sha256": e.sha256, "size": e.size}
        for e in sorted([*made, *entries], key=lambda e: e.path)
    ]
    return from_dict(document, ()), readme


def _digest(data: bytes) -> tuple[str, int]:
    import hashlib

    return hashlib.sha256(data).hexdigest(), len(data)


def build(
    source: Path,
    out: Path | None = None,
    source_date_epoch: int | None = None,
    progress: Callable[[str], None] | None = None,
    codec: Codec | None = None,
    preregistration: bytes | Path | None = None,
    accept_output: Callable[[Path], None] | None = None,
    accept_advisories: Sequence[str] = (),
) -> BuildResult:
    """Build ``source`` into ``out`` (a file path; by default ``NAME-VERSION`` and the
    compression's suffix in the current folder). Raises SourceError or BuildRefused.
    Every member is stamped ``source_date_epoch`` (default: ``$SOURCE_DATE_EPOCH``, else
    0), so two builds with the same one are byte-identical. ``progress`` is told the name
    of each step as it starts. The compression is ``codec``, else the one the file name
    asks for (``.zst`` or ``.gz``), else zstd. ``preregistration`` (a file ``reprobundle
    preregister`` wrote for this bundle's name, or its bytes) is packed as
    ``preregistration.json``. ``accept_output`` is called with the output's path once it
    is known and shown to be none of the source's files, before any work: it raises to
    refuse it (the CLI's rule for replacing a file of another kind). A case naming an
    advised checker version is refused unless its advisory is in ``accept_advisories``,
    which the verification at home accepts too."""
    accepted = accepted_advisories(accept_advisories)
    source = Path(source)  # (a library caller may give str)
    if source_date_epoch is None:
        source_date_epoch = read_source_date_epoch()
    step = progress or (lambda _name: None)
    step("reading the source")
    if out is not None:
        out = Path(out)
        _refuse_source_file_as_output(source, out)
    plan = read_source(source, out, accepted_advisories=accepted)
    if out is None:  # a bundle file's name: never one of the source's files
        out = Path.cwd() / default_name(plan, codec or compression.DEFAULT)
    _refuse_source_file_as_output(source, out, plan.files)
    if accept_output is not None:
        accept_output(out)
    extra = {}
    if preregistration is not None and not isinstance(preregistration, bytes):
        preregistration = _read_bounded(Path(preregistration))  # (a library caller: str)
    elif preregistration is None and plan.preregistration is not None:
        preregistration = _read_bounded(plan.root / plan.preregistration)
    if preregistration is not None:
        extra[PREREGISTRATION_FILE] = _checked_preregistration(preregistration, plan)
    step(f"hashing {len(plan.files)} files")
    kept: dict[str, bytes] = {}
    manifest, readme = make_manifest(plan, source_date_epoch, extra, kept)
    manifest_bytes = manifest.to_bytes()
    members = members_of(manifest, manifest_bytes, readme, plan.root, {**kept, **extra})

    with staged(out, "the bundle") as tmp:
        step("packing")
        with tmp.open("wb") as stream:
            write_tar(stream, members, source_date_epoch, codec or _codec_of(out.name))
        del members, kept  # (the small files' bytes are not held through the verification)
        step("verifying at home from a fresh folder")
        home = verify_at_home(tmp, allow_code=bool(manifest.code), accepted=accepted)
        size = tmp.stat().st_size
    path = out.absolute()
    home = replace(home, bundle_file=path)  # (it verified the file under its temporary name)
    stale = stale_detached(path, manifest_bytes)  # an older bundle's, left beside this one
    warnings = (stale,) if stale else ()
    return BuildResult(path, manifest, identity(manifest_bytes), size, home, plan.skipped, warnings)


def _refuse_source_file_as_output(root: Path, out: Path, files: Iterable[str] = ()) -> None:
    """The bundle may replace an older bundle in the source folder, never a file the
    source is made of (its bundle.yaml, a listed file, or one the output's name hid from
    the file patterns)."""
    from bundler.authoring.source import is_bundle_file
    from bundler.authoring.sourcewords import SOURCE_NAME

    # Only an existing regular file can be one of them (``check_distinct`` compares the
    # inodes of regular files): for a new output, the listed files need no stat each.
    names = [SOURCE_NAME, *(files if os.path.isfile(out) else ())]
    inside = out.absolute().parent.resolve() / out.name
    if root.resolve() in inside.parents:
        rel = inside.relative_to(root.resolve()).as_posix()
        if not is_bundle_file(rel):
            names.append(rel)
    inputs = {f"the source's {rel}": root / rel for rel in names}
    check_distinct({"the output": out}, inputs)


def members_of(
    manifest: Manifest,
    manifest_bytes: bytes,
    readme: bytes,
    root: Path,
    extra: Mapping[str, bytes] | None = None,
) -> Iterator[Member]:
    """What to pack, in order: the manifest first, then every listed file. Made one at a
    time, so memory does not grow with a Path per file."""
    top, folder = manifest.top, str(root)
    made = {README_NAME: readme, **(extra or {})}
    yield Member(f"{top}/{MANIFEST_NAME}", data=manifest_bytes)
    for entry in manifest.files:
        if entry.path in made:
            yield Member(f"{top}/{entry.path}", data=made[entry.path])
        else:
            source = os.path.join(folder, entry.path)
            yield Member(f"{top}/{entry.path}", source=source, size=entry.size)


def _read_bounded(path: Path) -> bytes:
    """A pre-registration file's bytes; one larger than any envelope is cut there (and so
    refused as too large when read), and one that is not a regular file is refused."""
    from bundler.files import read_bounded
    from bundler.signatures.envelope import MAX_ENVELOPE

    return read_bounded(path, MAX_ENVELOPE, "pre-registration")


def _checked_preregistration(data: bytes, plan: SourcePlan) -> bytes:
    """The pre-registration's bytes, if it reads strictly and is for this bundle's name
    (its signatures are judged by the verifier, against the verifier's keys)."""
    from bundler.signatures.envelope import EnvelopeProblem
    from bundler.signatures.preregistration import open_preregistration

    try:
        open_preregistration(data, name=plan.document["bundle"]["name"])
    except EnvelopeProblem as exc:
        headline = (
            "the pre-registration is for another bundle"
            if exc.code == "preregistration.other_bundle"
            else "the pre-registration cannot be read"
        )
        raise UsageError(headline, [Problem("--preregistration", exc.code, exc.message)]) from None
    return data


def _codec_of(name: str) -> Codec:
    if name.endswith((".gz", ".tgz")):
        return compression.GZIP
    return compression.ZSTD if name.endswith(".zst") else compression.DEFAULT


def verify_at_home(
    bundle_file: Path, allow_code: bool = False, accepted: Sequence[str] = ()
) -> Verification:
    """``bundle_file`` verified as a reviewer's ``reprobundle verify`` does by default (the
    same library call, in this process: built-in checkers run here for the reviewer
    too, bundled code in its own limited workers), with every claim supported. Raises
    ``BuildRefused`` naming every case and claim that was not, or why it was rejected.

    The author's own bundled code (if any) is allowed to run here: it is theirs. Its
    work folder is new and empty and is removed before this returns, interrupted or not
    (Ctrl-C, or SIGTERM/SIGHUP under ``exiting_on_signals``), as ``verify``'s always is."""
    try:
        options = VerifyOptions(
            code=CodePolicy(allow=allow_code),
            jobs=os.cpu_count() or 1,
            accept_advisories=accepted,
        )
        home = verify(bundle_file, options)
    except BundlerError as exc:  # rejected before any case ran
        result = "rejected" if exc.exit_code == EXIT_CODES["rejected"] else "error"
        why = exc.problems or [Problem("", "build.rejected", exc.headline)]
        raise _refused(result, why) from None
    if home.status != "supported":
        raise _refused(home.status, _not_supported(home))
    return home


def _refused(result: str, problems: list[Problem]) -> BuildRefused:
    return BuildRefused(
        f"refusing to build: the bundle's claims are not all supported at home "
        f"(result: {result}); no file was written",
        problems,
    )


def _not_supported(home: Verification) -> list[Problem]:
    """Each case that did not reproduce (with the reasons to pin, for an expected failure
    that failed otherwise) and each claim not supported."""
    problems = []
    for result in home.cases:
        if result.outcome != "reproduced":
            why = result.explanation
            if result.case.expect == "fail" and result.verdict.status == "fail":
                why += f"; {expect_reasons_hint(result.verdict.codes)}"
            where = f"case {result.case.id}"
            problems.append(Problem(where, f"case.{result.outcome}", why))
    for claim in home.claims:
        if claim.status != "supported":
            where = f"claim {claim.claim.id}"
            problems.append(Problem(where, f"claim.{claim.status}", claim.why))
    return problems
