"""Every file a command writes goes through here, so all outputs behave alike.

- A regular file (new or existing) is written to a temporary file beside it and renamed
  over it once complete (``bundler.atomic``): readers see the old content or the new,
  never half of it.
- A device, FIFO or pipe (``/dev/full``, ``mkfifo``, ``--json >(jq .)``) is written in
  place: renaming over it would replace the device with a regular file, and a FIFO's
  reader would get nothing.
- A link is followed: its target is written by the same two rules (the link stays a
  link, as with ``>`` in a shell).
- Every problem (a folder in the way, a path under a file, no permission, a full disk)
  is an ``OutputError`` (exit 2) naming the path; never a traceback.
- An output is never one of the same command's inputs (``verify B --json B`` would
  replace the bundle under test with its report), and no two outputs are one file
  (``--json X --html X`` would keep only the last): ``check_distinct`` refuses both
  before any work, comparing the files themselves (links, ``..`` and hard links seen
  through), not their names.
- An output replaces only a file of the kind the command writes (``check_output``: a
  bundle over a bundle, a JSON report over a JSON report; an empty file or a device is
  fine), unless the user says ``--force``, and its name's extension must say what is
  written (``-o out.zip`` is refused for a zstd bundle). ``-`` names a file output
  nowhere: a command that writes a file only (a bundle, a checkpoint) refuses ``-o -``
  rather than writing a file named ``-``.
- Outputs a command names itself inside a folder (``ci``'s reports in ``--out``) are
  written by ``write_in``, which follows no link at all: a link planted in that folder
  cannot send a report outside it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NamedTuple

from bundler.atomic import beside, publish
from bundler.errors import UsageError, os_reason


class OutputError(UsageError):
    """An output could not be written (exit 2); the message names the path."""


def _problem(path: Path, what: str, exc: OSError) -> OutputError:
    return OutputError(f"cannot write {what} to {path}: {os_reason(exc)}")


def _in_place(path: Path, what: str) -> bool:
    """Whether ``path`` (links followed) is something other than a regular file or
    nothing; raises OutputError for a folder or a path that cannot be looked at."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _problem(path, what, exc) from None
    if stat.S_ISDIR(mode):
        raise OutputError(f"cannot write {what} to {path}: it is a folder; give the path of a file")
    return not stat.S_ISREG(mode)


def check(target: Path | str, what: str = "the output") -> None:
    """Refuse now, before any work, an output that cannot be written: a folder, or a
    path under something that is not a folder."""
    path = Path(target)
    _in_place(path, what)
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(
                    f"cannot write {what} to {path}: {parent} is a file, not a folder"
                )
            return


def _identity(path: Path) -> tuple[str, object] | None:
    """What makes two paths one file: the inode of an existing regular file (links and
    hard links seen through), or the resolved name of one not yet made; None for a
    device, FIFO or folder (``/dev/null`` may take any number of outputs)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return ("name", os.path.realpath(path))
    except OSError:
        return None  # (refused by `check` with its reason)
    if not stat.S_ISREG(info.st_mode):
        return None
    return ("file", (info.st_dev, info.st_ino))


def check_distinct(
    outputs: Mapping[str, Path | str],
    inputs: Mapping[str, Path | str],
    folders: Mapping[str, Path | str] | None = None,
) -> None:
    """Refuse (``OutputError``) an output that is one of the inputs, that lies in one of
    ``folders`` (a folder a command owns, such as an archive), or two outputs that are
    one file. Each maps a label (``--json``, ``BUNDLE``) to a path; ``-`` (stdout or
    stdin) is left out."""
    for label, folder in (folders or {}).items():
        inside = Path(os.path.realpath(folder))
        for name, path in outputs.items():
            if str(path) != "-" and inside in Path(os.path.realpath(path)).parents:
                raise OutputError(
                    f"{name} {path} is inside {label} {folder}, which only reprobundle "
                    "writes; give a file outside it"
                )
    seen: dict[tuple[str, object], str] = {}
    for label, path in inputs.items():
        if str(path) != "-" and (key := _identity(Path(path))) and key[0] == "file":
            seen.setdefault(key, f"{label} ({path})" if label.isupper() else f"{label} {path}")
    outputs_seen: dict[tuple[str, object], str] = {}
    for label, path in outputs.items():
        if str(path) == "-" or (key := _identity(Path(path))) is None:
            continue
        if key in seen:
            raise OutputError(
                f"{label} {path} is the same file as {seen[key]}, an input of this command: "
                "writing it would destroy what is read; give another file"
            )
        if key in outputs_seen:
            raise OutputError(
                f"{outputs_seen[key]} and {label} both name {path}: only the last would be "
                "kept; give each output its own file"
            )
        outputs_seen[key] = label


@contextmanager
def staged(target: Path | str, what: str = "the output") -> Iterator[Path]:
    """A temporary file to write ``target``'s new content into; when the block ends
    without an exception it becomes ``target`` (renamed over a regular file, copied into
    a device or FIFO), otherwise it is removed and ``target`` is untouched."""
    path = Path(target)
    if _in_place(path, what):
        fd, tmp = tempfile.mkstemp(prefix="reprobundle-output-")
        os.close(fd)
        try:
            yield Path(tmp)
            _copy_into(Path(tmp), path, what)
        finally:
            Path(tmp).unlink(missing_ok=True)
        return
    real = Path(os.path.realpath(path)) if path.is_symlink() else path.absolute()
    try:
        partial = beside(real)
    except OSError as exc:
        raise _problem(path, what, exc) from None
    try:
        yield partial
        try:
            publish(partial, real)
        except OSError as exc:
            raise _problem(path, what, exc) from None
    finally:
        partial.unlink(missing_ok=True)


def _copy_into(source: Path, path: Path, what: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _problem(path, what, exc) from None
    try:
        with source.open("rb") as stream:
            while chunk := stream.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
    except OSError as exc:
        raise _problem(path, what, exc) from None
    finally:
        os.close(fd)


def write_bytes(target: Path | str, data: bytes, what: str = "the output") -> None:
    """Write ``data`` to ``target`` by the rules above."""
    with staged(target, what) as tmp:
        try:
            tmp.write_bytes(data)
        except OSError as exc:
            raise _problem(Path(target), what, exc) from None


def encode(text: str) -> bytes:
    """UTF-8 that never fails: a lone surrogate (a name that was not UTF-8, a ``\\ud800``
    escape in evidence) is written as its escape ``\\udcff`` instead of raising."""
    return text.encode("utf-8", "backslashreplace")


def _folder_fd(folder: Path, what: str) -> int:
    """The folder itself, opened without following a link (``O_NOFOLLOW``)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(folder, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if os.path.islink(folder):
            raise OutputError(
                f"cannot write {what} in {folder}: it is a symbolic link; outputs are written "
                "only inside a real folder, never through a link: give the folder itself"
            ) from None
        raise _problem(folder, what, exc) from None


def _must_be_a_name(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"not a file name: {name!r}")


def write_in(folder: Path, name: str, data: bytes, what: str = "the output") -> Path:
    """Write ``data`` as the file ``name`` directly inside ``folder``, following no link:
    the folder is opened with ``O_NOFOLLOW``, the new content written to a new file in it
    (``O_EXCL | O_NOFOLLOW``) and renamed onto ``name`` within it, so nothing outside the
    folder can be written whatever was planted in it. An existing ``name`` that is not a
    regular file (a symbolic link, a FIFO, a device, a folder) is refused, not replaced:
    the folder holds something this command did not write."""
    _must_be_a_name(name)
    path = folder / name
    dfd = _folder_fd(folder, what)
    partial = f".{name}.{os.urandom(6).hex()}.partial"
    try:
        try:
            info = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise _problem(path, what, exc) from None
        if info is not None and not stat.S_ISREG(info.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else _kind(info.st_mode)
            raise OutputError(
                f"cannot write {what} to {path}: it is {kind}, not a report this command "
                "wrote; outputs are written only as regular files inside the folder, never "
                "through a link: remove it, or give another folder"
            )
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(partial, flags | getattr(os, "O_CLOEXEC", 0), 0o666, dir_fd=dfd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(partial, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except OSError as exc:
            raise _problem(path, what, exc) from None
        with suppress(OSError):
            os.fsync(dfd)
    finally:
        with suppress(OSError):
            os.unlink(partial, dir_fd=dfd)
        os.close(dfd)
    return path


def remove_in(folder: Path, name: str, what: str = "the output") -> bool:
    """Remove the entry ``name`` directly inside ``folder`` (a link itself, never its
    target); whether there was one to remove."""
    _must_be_a_name(name)
    dfd = _folder_fd(folder, what)
    try:
        os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise OutputError(f"cannot remove {what} {folder / name}: {os_reason(exc)}") from None
    finally:
        os.close(dfd)
    return True


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


# -- what an existing output may be replaced by (issue 43: outputs never replace the wrong file)


class Kind(NamedTuple):
    """A kind of file a command writes: how to say it, the name endings it takes, and how
    to recognise one already there (from its first bytes), which it may replace."""

    what: str
    suffixes: tuple[str, ...]
    marks: tuple[bytes, ...]  # the file starts (after blanks) with one of these ...
    inside: tuple[bytes, ...] = (b"",)  # ... and holds one of these in its first bytes


BUNDLE = Kind(
    "a bundle",
    (".bundle.tar.zst", ".bundle.tar.gz", ".tar.zst", ".tar.gz", ".tgz"),
    (b"\x28\xb5\x2f\xfd", b"\x1f\x8b"),
)
REPORTS = {
    "json": Kind("a JSON report", (".json",), (b"{",), (b'"reprobundle-report/',)),
    "markdown": Kind("a Markdown report", (".md", ".markdown"), (b"### Reproducibility bundle",)),
    "html": Kind(
        "an HTML report",
        (".html", ".htm"),
        (b"<!DOCTYPE html>",),
        # the generator's name, or (pages written before it was named) their policy line
        (b"reprobundle", b"default-src 'none'; style-src 'unsafe-inline'; img-src data:;"),
    ),
    "junit": Kind("a JUnit report", (".xml",), (b"<?xml",), (b'<testsuites name="reprobundle',)),
}
DIFF = Kind("a JSON diff", (".json",), (b"{",), (b'"reprobundle-diff/',))
ATTESTATION = Kind("an attestation", (), (b"{",), (b'"payloadType"',))
PREREGISTRATION = Kind(
    "a pre-registration", (), (b"{",), (b'"application/vnd.reprobundle.preregistration',)
)
SIGNATURE = Kind("a signature file", (), (b"{",), (b'"reprobundle-signature/',))
CHECKPOINT = Kind("an archive checkpoint", (), (b"{",), (b'"checkpoint"',))
TRAJECTORY_MODEL = Kind("a trajectory model", (), (b"{",), (b'"trajectory-model/',))
_HEAD = 4096


def _not_a_file_there(path: Path) -> bool:
    """Whether something other than a regular file is at ``path`` (links followed): a
    device or FIFO (written in place), a folder, a path that cannot be looked at. Those
    are for ``check`` and the writer to judge, with their own words."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def suffix_problem(target: Path | str, kind: Kind, option: str) -> str | None:
    """Why ``target``'s name does not fit ``kind`` (``-o out.zip`` for a zstd bundle),
    or None. A device, FIFO or other non-regular file that exists takes any name."""
    path = Path(target)
    if str(target) == "-" or not kind.suffixes or _not_a_file_there(path):
        return None
    if path.name.lower().endswith(kind.suffixes):
        return None
    return (
        f"{option} {path}: this writes {kind.what}, and its name does not say so: name it "
        f"{' or '.join('NAME' + suffix for suffix in kind.suffixes[:2])}"
    )


def replace_problem(target: Path | str, kind: Kind, option: str) -> str | None:
    """Why writing over ``target`` would replace a file that is not ``kind`` (a command
    replaces only what such a command wrote), or None: no file there, an empty file, a
    device or FIFO (written in place, never replaced), or a file of that kind."""
    path = Path(target)
    if str(target) == "-" or _not_a_file_there(path):
        return None
    try:
        with path.open("rb") as stream:
            head = stream.read(_HEAD)
    except OSError:
        return None  # (what cannot be read is reported by the writer, with its reason)
    stripped = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not head or (stripped.startswith(kind.marks) and any(m in head for m in kind.inside)):
        return None
    return (
        f"{option} {path} exists and is not {kind.what}: writing would replace it; give "
        "another name, or --force to replace it"
    )


def check_output(target: Path | str | None, kind: Kind, option: str, force: bool = False) -> None:
    """The rule every command's file output follows, before any work: its name fits what
    is written (``suffix_problem``) and, unless ``force``, it replaces no file of another
    kind (``replace_problem``). Raises ``OutputError`` naming the fix. ``-`` is refused:
    these outputs are files (a command that writes to standard output takes ``-`` before
    calling this), and a file named ``-`` is what the user almost never means."""
    if target is None:
        return
    if str(target) == "-":
        raise OutputError(
            f"{option} -: {kind.what} is written to a file, not to standard output; give "
            f"the file's name ({option} NAME{kind.suffixes[0] if kind.suffixes else ''})"
        )
    problem = suffix_problem(target, kind, option) or (
        None if force else replace_problem(target, kind, option)
    )
    if problem:
        raise OutputError(problem)
