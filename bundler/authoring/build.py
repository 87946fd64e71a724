"""Build a bundle from a source folder, then prove it verifies at home before keeping it.

The new file is written beside its destination under a temporary name, verified in a
separate process started in a fresh empty folder (so nothing can lean on the source
folder or the current directory), and only then renamed into place. A bundle whose
claims are not all supported at home is refused and removed.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler.authoring.readme import bundle_readme
from bundler.authoring.source import SourcePlan, read_source
from bundler.container import compression
from bundler.container.compression import Codec
from bundler.container.pack import Member, write_tar
from bundler.errors import BuildRefused, Problem, SourceError, UsageError
from bundler.format.hashing import sha256_files
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
from bundler.run.runner import checker_environment
from bundler.version import __version__

HOME_VERIFY_TIMEOUT = 3600
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
    home_report: dict[str, Any]
    skipped: tuple[str, ...] = ()  # bundle files in the source, not packed


def default_name(
    manifest_or_plan: Manifest | SourcePlan, codec: Codec = compression.DEFAULT
) -> str:
    if isinstance(manifest_or_plan, Manifest):
        return f"{manifest_or_plan.top}{codec.suffix}"
    bundle = manifest_or_plan.document["bundle"]
    return f"{bundle['name']}-{bundle['version']}{codec.suffix}"


def build_environment(plan: SourcePlan, source_date_epoch: int) -> dict[str, Any]:
    used = checker_environment(c["checker"] for c in plan.document["cases"])
    return {
        "tool": f"reprobundle {__version__}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "source_date_epoch": source_date_epoch,
        **used,
    }


def make_manifest(
    plan: SourcePlan, source_date_epoch: int, extra: Mapping[str, bytes] | None = None
) -> tuple[Manifest, bytes]:
    """Hash every file and assemble the manifest. Returns it and the generated README.
    ``extra`` are files made by the build itself (a pre-registration), listed like the rest."""
    root = str(plan.root)
    paths = [os.path.join(root, rel) for rel in plan.files]
    try:
        hashes = sha256_files(paths)
    except OSError as exc:  # (EIO from a failing disk): a refusal naming the file
        raise SourceError(f"cannot read {exc.filename or root}: {exc.strerror or exc}") from None
    entries = [FileEntry(rel, *hashed) for rel, hashed in zip(plan.files, hashes, strict=True)]
    document = dict(plan.document)
    document["environment"] = build_environment(plan, source_date_epoch)
    document["files"] = [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in entries]
    draft = from_dict(document, ())
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
    out: Path,
    source_date_epoch: int | None = None,
    progress: Callable[[str], None] | None = None,
    codec: Codec | None = None,
    preregistration: bytes | None = None,
) -> BuildResult:
    """Build ``source`` into ``out`` (a file path). Raises SourceError or BuildRefused.
    Every member is stamped ``source_date_epoch`` (default: ``$SOURCE_DATE_EPOCH``, else
    0), so two builds with the same one are byte-identical. ``progress`` is told the name
    of each step as it starts. The compression is ``codec``, else the one the file name
    asks for (``.zst`` or ``.gz``), else zstd. ``preregistration`` (a file ``reprobundle
    preregister`` wrote for this bundle's name) is packed as ``preregistration.json``."""
    source, out = Path(source), Path(out)  # (a library caller may give str)
    if source_date_epoch is None:
        source_date_epoch = read_source_date_epoch()
    step = progress or (lambda _name: None)
    step("reading the source")
    _refuse_source_file_as_output(source, out)
    plan = read_source(source, out)
    _refuse_source_file_as_output(source, out, plan.files)
    extra = {}
    if preregistration is None and plan.preregistration is not None:
        preregistration = _read_bounded(plan.root / plan.preregistration)
    if preregistration is not None:
        extra[PREREGISTRATION_FILE] = _checked_preregistration(preregistration, plan)
    step(f"hashing {len(plan.files)} files")
    manifest, readme = make_manifest(plan, source_date_epoch, extra)
    manifest_bytes = manifest.to_bytes()
    members = members_of(manifest, manifest_bytes, readme, plan.root, extra)

    with staged(out, "the bundle") as tmp:
        step("packing")
        with tmp.open("wb") as stream:
            write_tar(stream, members, source_date_epoch, codec or _codec_of(out.name))
        step("verifying at home from a fresh folder")
        report = verify_at_home(tmp, allow_code=bool(manifest.code))
        _refuse_unless_supported(report)
        size = tmp.stat().st_size
    return BuildResult(
        out.absolute(), manifest, identity(manifest_bytes), size, report, plan.skipped
    )


def _refuse_source_file_as_output(root: Path, out: Path, files: Iterable[str] = ()) -> None:
    """The bundle may replace an older bundle in the source folder, never a file the
    source is made of (its bundle.yaml, a listed file, or one the output's name hid from
    the file patterns)."""
    from bundler.authoring.source import SOURCE_NAME, is_bundle_file

    names = [SOURCE_NAME, *files]
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
    from bundler.signatures.envelope import MAX_ENVELOPE
    from bundler.signatures.trust import read_bounded

    return read_bounded(path, MAX_ENVELOPE, "pre-registration")


def _checked_preregistration(data: bytes, plan: SourcePlan) -> bytes:
    """The pre-registration's bytes, if it reads strictly and is for this bundle's name
    (its signatures are judged by the verifier, against the verifier's keys)."""
    from bundler.signatures.envelope import EnvelopeProblem
    from bundler.signatures.preregistration import open_preregistration

    try:
        pre = open_preregistration(data, ())
    except EnvelopeProblem as exc:
        raise UsageError(
            "the pre-registration cannot be read",
            [Problem("--preregistration", exc.code, exc.message)],
        ) from None
    name = plan.document["bundle"]["name"]
    if pre.view.name != name:
        raise UsageError(
            f"the pre-registration is for bundle {pre.view.name!r}, not {name!r}",
            [Problem("--preregistration", "preregistration.other_bundle", "another bundle's")],
        )
    return data


def _codec_of(name: str) -> Codec:
    if name.endswith((".gz", ".tgz")):
        return compression.GZIP
    return compression.ZSTD if name.endswith(".zst") else compression.DEFAULT


def verify_at_home(bundle_file: Path, allow_code: bool = False) -> dict[str, Any]:
    """Verify in a separate process whose working directory is a new empty folder.

    The author's own bundled code (if any) is allowed to run here: it is theirs. The
    process never outlives this call: interrupted (Ctrl-C, or SIGTERM/SIGHUP under
    ``exiting_on_signals``), it is stopped with SIGTERM, so that it removes its own work
    folder, and waited for."""
    with tempfile.TemporaryDirectory(prefix="reprobundle-home-") as home:
        child = subprocess.Popen(
            [
                sys.executable,
                "-P",
                "-m",
                "bundler",
                "verify",
                str(bundle_file),
                "--json",
                "-",
                "--quiet",
                *(["--allow-code"] if allow_code else []),
            ],
            cwd=home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            stdout, stderr = _collect(child)
        except subprocess.TimeoutExpired:
            stop_child(child)
            raise BuildRefused(
                "the new bundle did not verify at home within the time limit"
            ) from None
        except BaseException:
            stop_child(child)
            raise
    try:
        report: dict[str, Any] = json.loads(stdout)
    except ValueError:
        detail = stderr.decode("utf-8", "replace").strip()[-2000:]
        raise BuildRefused(
            f"the new bundle could not be verified at home (exit {child.returncode})",
            [Problem("verify", "build.home_verify", detail or "no output")],
        ) from None
    return report


def _collect(child: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """The home verification's output, once it has ended."""
    return child.communicate(timeout=HOME_VERIFY_TIMEOUT)


STOP_SECONDS = 30  # how long a stopped child may take to clean up before it is killed


def stop_child(child: subprocess.Popen[bytes]) -> None:
    """End ``child`` and wait for it: SIGTERM first (it removes its work folder), SIGKILL
    if it has not ended within ``STOP_SECONDS``. Signals wait until it is done."""
    from bundler.container.workfolder import signals_wait

    with signals_wait():
        if child.poll() is None:
            child.terminate()
        try:
            child.communicate(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()


def _refuse_unless_supported(report: dict[str, Any]) -> None:
    if report.get("result") == "supported":
        return
    problems = []
    for case in report.get("cases", []):
        if case["outcome"] != "reproduced":
            why = case["explanation"]
            if case["expect"] == "fail" and case["verdict"] == "fail":
                codes = ", ".join(sorted({r["code"] for r in case["reasons"]}))
                why += (
                    f"; if that is the failure this case is meant to show, set "
                    f"expect_reasons: [{codes}]"
                )
            problems.append(Problem(f"case {case['id']}", f"case.{case['outcome']}", why))
    for claim in report.get("claims", []):
        if claim["status"] != "supported":
            problems.append(
                Problem(f"claim {claim['id']}", f"claim.{claim['status']}", claim["why"])
            )
    for problem in report.get("problems", []):  # rejected (or failed) before any case ran
        problems.append(Problem(problem["where"], problem["code"], problem["message"]))
    raise BuildRefused(
        f"refusing to build: the bundle's claims are not all supported at home "
        f"(result: {report.get('result')}); no file was written",
        problems or [Problem("", "build.rejected", str(report.get("message", "")))],
    )
