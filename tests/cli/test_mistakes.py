"""A new user's ordinary mistakes (issue 32, items 1-8), each ending in a clear message,
the documented exit code and nothing left behind. The rules they break are general:
an output is never an input of the same command nor two outputs one file; every command
cleans up after any signal, its child processes included; every OS error is a usage
error naming the path; every command's help lists every exit code it can give."""

from __future__ import annotations

import ast
import inspect
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bundler.cli import main
from tests.archive_support import cli as archive_cli
from tests.helpers import QUICKSTART, REPO

SIGNALS = {"TERM": 143, "HUP": 129, "INT": 130}


def run(*args: object, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner(env=env).invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


# --- 1. an output is never an input, nor two outputs one file ------------------------


@pytest.fixture
def bundle(quickstart_bundle: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "b.bundle.tar.gz"
    shutil.copyfile(quickstart_bundle, copy)
    return copy


def _hard_link(bundle: Path) -> Path:
    other = bundle.parent / "elsewhere" / "same.bundle.tar.gz"
    other.parent.mkdir()
    os.link(bundle, other)
    return other


def _file(bundle: Path, name: str) -> Path:
    """A file beside the bundle for an option to read (its content does not matter: the
    refusal comes before anything is read)."""
    return _touch(bundle.parent / name)


OUTPUT_IS_INPUT: dict[str, Callable[[Path], list[object]]] = {
    "verify --json BUNDLE": lambda b: ["verify", b, "--json", b],
    "verify --html through ..": lambda b: [
        "verify", b, "--html", b.parent / ".." / b.parent.name / b.name
    ],
    "verify --junit a hard link": lambda b: ["verify", b, "--junit", _hard_link(b)],
    "verify --markdown a symlink": lambda b: ["verify", b, "--markdown", _symlink(b)],
    "verify --json the detached signature": lambda b: [
        "verify", b, "--signature", _file(b, "b.sig.json"), "--json", _file(b, "b.sig.json")
    ],
    "verify --json a trusted key": lambda b: [
        "verify", b, "--trust", _file(b, "k.pub"), "--json", _file(b, "k.pub")
    ],
    "report -o BUNDLE": lambda b: ["report", b, "-o", b],
    "report -o the JSON report": lambda b: ["report", _file(b, "r.json"), "-o", _file(b, "r.json")],
    "sign --detached -o BUNDLE": lambda b: [
        "sign", b, "--key", _file(b, "k.key"), "--detached", "-o", b
    ],
    "sign -o the key": lambda b: ["sign", b, "--key", _file(b, "k.key"), "-o", _file(b, "k.key")],
    "import promptfoo -o the log": lambda b: [
        "import", "promptfoo", _file(b, "r.json"), "-o", _file(b, "r.json")
    ],
    "trajectory learn -o a trace": lambda b: [
        "trajectory", "learn", _file(b, "t.json"), "-o", _file(b, "t.json")
    ],
    "diff --json the new bundle": lambda b: ["diff", b, _hard_link(b), "--json", b],
}  # fmt: skip


def _touch(path: Path) -> Path:
    path.write_text("{}")
    return path


def _symlink(bundle: Path) -> Path:
    link = bundle.parent / "link.tar.gz"
    link.symlink_to(bundle)
    return link


@pytest.mark.parametrize("case", list(OUTPUT_IS_INPUT))
def test_an_output_that_is_an_input_of_the_same_command_is_refused(bundle: Path, case: str) -> None:
    before = {p: p.read_bytes() for p in bundle.parent.rglob("*") if p.is_file()}
    code, _, err = run(*OUTPUT_IS_INPUT[case](bundle))
    assert code == 2, err
    assert "an input of this command" in err and "give another file" in err
    after = {p: p.read_bytes() for p in bundle.parent.rglob("*") if p.is_file()}
    assert after == {**before, **{p: v for p, v in after.items() if p not in before}}


def test_build_output_that_is_a_source_file_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(QUICKSTART, source)
    before = {p: p.read_bytes() for p in source.rglob("*") if p.is_file()}
    for target in (
        source / "bundle.yaml",
        *sorted(p for p in before if p.name != "bundle.yaml")[:1],
    ):
        code, _, err = run("build", source, "-o", target)
        assert code == 2, err
        assert "an input of this command" in err
    assert {p: p.read_bytes() for p in source.rglob("*") if p.is_file()} == before


def test_build_output_that_is_a_hard_link_to_a_listed_file_elsewhere_is_refused(
    tmp_path: Path,
) -> None:
    # outside the source folder, only the inode tells it is one of the listed files
    source = tmp_path / "src"
    shutil.copytree(QUICKSTART, source)
    listed = source / "inputs" / "expected.yaml"
    before = listed.read_bytes()
    os.link(listed, tmp_path / "out.bundle.tar.zst")
    code, _, err = run("build", source, "-o", tmp_path / "out.bundle.tar.zst")
    assert code == 2, err
    assert "an input of this command" in err and "inputs/expected.yaml" in err
    assert listed.read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(bundle: Path, tmp_path: Path) -> None:
    code, _, err = run("verify", bundle, "--json", tmp_path / "x", "--html", f"{tmp_path}/./x")
    assert code == 2
    assert "--json and --html both name" in err
    assert not (tmp_path / "x").exists()
    (tmp_path / "y").write_text("old")
    os.link(tmp_path / "y", tmp_path / "z")
    code, _, err = run("verify", bundle, "--junit", tmp_path / "y", "--markdown", tmp_path / "z")
    assert code == 2
    assert "both name" in err
    assert (tmp_path / "y").read_text() == "old"


def test_two_outputs_to_a_device_are_allowed(bundle: Path) -> None:
    code, _, err = run("verify", bundle, "-q", "--json", os.devnull, "--html", os.devnull)
    assert code == 0, err


@pytest.fixture
def archive(bundle: Path, tmp_path: Path) -> Path:
    """An archive folder holding the quickstart bundle."""
    root = tmp_path / "archive"
    assert archive_cli(root, "init")[0] == 0
    assert archive_cli(root, "add", str(bundle))[0] == 0
    return root


def test_an_archive_output_inside_the_archive_folder_is_refused(archive: Path) -> None:
    root = archive
    index = root / "index.sqlite"
    before = index.read_bytes()
    code, _, err = archive_cli(root, "verify", "--all", "--json", str(index))
    assert code == 2
    assert "inside the archive folder" in err
    assert index.read_bytes() == before
    code, _, err = archive_cli(root, "export", "quickstart@1.0.0", "-o", str(root / "x"))
    assert code == 2


# --- 2. every command cleans up after any signal, child processes included ----------


def _left_processes(marker: str) -> Iterator[int]:
    """Processes still running whose command line names ``marker``."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if marker.encode() in line:
                yield int(entry.name)


def signalled(
    tmp_path: Path, point: str, options: list[str], args: list[str], session: bool = False
) -> subprocess.CompletedProcess[str]:
    """The CLI with ARGS, a signal sent just after the first call of ``point`` as
    ``tests.kill_at`` OPTIONS say; TMPDIR is ``tmp_path/temp``; ``session``: in a process
    group of its own (for a signal to the group)."""
    (tmp_path / "temp").mkdir()
    return subprocess.run(
        [sys.executable, "-m", "tests.kill_at", point, "after", "1", *options, "--", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path / "temp")},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        start_new_session=session,
    )


def interrupted_build(
    tmp_path: Path, point: str, name: str, source: Path = QUICKSTART
) -> subprocess.CompletedProcess[str]:
    """``build`` of ``source`` with signal ``name`` sent at ``point``; the output is
    ``tmp_path/out/q.bundle.tar.zst``."""
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "q.bundle.tar.zst"
    build = ["build", str(source), "-o", str(out)]
    return signalled(tmp_path, point, ["--signal", name], build)


def stopped_cleanly(tmp_path: Path, done: subprocess.CompletedProcess[str], name: str) -> None:
    """The build ended with its signal's exit code, printed no traceback, and left no
    process, output or temporary folder (leftover processes are killed first, so that a
    failure leaves nothing running)."""
    left = list(_left_processes(str(tmp_path)))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert done.returncode == SIGNALS[name], done.stderr
    assert "Traceback" not in done.stderr
    assert left == [], "a child process outlived the build"
    assert list((tmp_path / "out").iterdir()) == []  # no OUT.partial
    assert list((tmp_path / "temp").iterdir()) == []  # no reprobundle-home-*, reprobundle-*


@pytest.mark.parametrize("name", list(SIGNALS))
def test_build_interrupted_while_packing_leaves_no_partial_output(
    tmp_path: Path, name: str
) -> None:
    done = interrupted_build(tmp_path, "bundler.authoring.build:write_tar", name)
    stopped_cleanly(tmp_path, done, name)


@pytest.mark.parametrize("name", list(SIGNALS))
def test_build_interrupted_while_verifying_at_home_leaves_nothing(
    tmp_path: Path, name: str
) -> None:
    """The signal comes once the verification at home has unpacked the bundle into its
    work folder: the folder and the partial output are removed."""
    done = interrupted_build(tmp_path, "bundler.run.verify:extract", name)
    stopped_cleanly(tmp_path, done, name)


def _processes_gone(marker: str, seconds: float = 120.0) -> list[int]:
    """The processes naming ``marker`` still running once none is, or ``seconds`` have
    passed (a process whose parent died ends on its own, not at once)."""
    deadline = time.monotonic() + seconds
    left = list(_left_processes(marker))
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = list(_left_processes(marker))
    for pid in left:  # so that a failure leaves nothing running
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.parametrize(
    ("source", "point"),
    [
        (QUICKSTART, "bundler.run.verify:extract"),
        # its first case done, the bundled checker's worker waits for the next one
        (REPO / "tests" / "sources" / "own-code", "bundler.run.sandbox:BundledCode.__call__"),
    ],
    ids=["built-in", "bundled-code"],
)
def test_build_killed_while_verifying_at_home_leaves_no_process_running(
    tmp_path: Path, source: Path, point: str
) -> None:
    """SIGKILL cannot be caught: whatever the verification at home runs must end with
    the build (the verification once ran in a child process that SIGKILL left running)."""
    done = interrupted_build(tmp_path, point, "KILL", source)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert _processes_gone(str(tmp_path)) == [], "a process outlived the killed build"


def test_ctrl_c_during_archive_verify_with_jobs_prints_no_worker_traceback(
    example_bundles: dict[str, Path], tmp_path: Path
) -> None:
    """Ctrl-C reaches the whole process group, workers included: sent to the group once
    the first of two results is in, when the worker that gave it has no more work and the
    other runs or has finished."""
    root = tmp_path / "archive"
    assert archive_cli(root, "init")[0] == 0
    two = [str(example_bundles[name]) for name in ("quickstart", "config-change")]
    assert archive_cli(root, "add", *two)[0] == 0
    done = signalled(
        tmp_path,
        "bundler.cli.archive.verifying:result_lines",
        ["--signal", "INT", "--group"],
        ["archive", "--archive", str(root), "verify", "--all", "--jobs", "2"],
        session=True,
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "KeyboardInterrupt" not in done.stderr
    assert list((tmp_path / "temp").iterdir()) == []


# --- 3. every OS error is a usage error naming the path ------------------------------


def test_init_under_a_file_is_a_usage_error_naming_the_path(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    code, _, err = run("init", tmp_path / "afile" / "sub")
    assert code == 2, err
    assert f"{tmp_path / 'afile'}" in err and "not a folder" in err
    assert "internal error" not in err


def _deny(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make ``folder`` read-only even for root (who ignores mode bits): every file made in
    it fails with EACCES, as it does for a user in a read-only folder."""
    real_open = os.open
    real_mkdir = os.mkdir

    def opened(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT and Path(os.fsdecode(path)).absolute().parent == folder:  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", os.fsdecode(path))  # type: ignore[arg-type]
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    def made(path: object, *args: object, **kwargs: object) -> None:
        if Path(os.fsdecode(path)).absolute().parent == folder:  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", os.fsdecode(path))  # type: ignore[arg-type]
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", opened)
    monkeypatch.setattr(os, "mkdir", made)


@pytest.mark.parametrize("command", ["init", "keygen"])
def test_init_and_keygen_in_a_read_only_folder_are_usage_errors_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    _deny(monkeypatch, folder)
    if command == "init":
        code, _, err = run("init", folder / "mybundle")
    else:
        code, _, err = run("keygen", "alice", "--out-dir", folder, "--no-passphrase")
    assert code == 2, err
    assert str(folder) in err and "Permission denied" in err
    assert "internal error" not in err


def test_an_internal_error_never_points_to_an_option_the_command_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("bundler.authoring.templates.copy_template", broken)
    code, _, err = run("init", tmp_path / "x")
    assert code == 5
    assert "--verbose" not in err  # init has no --verbose
    assert "REPROBUNDLE_VERBOSE=1" in err
    monkeypatch.setattr("bundler.authoring.build.build", broken)
    code, _, err = run("build", QUICKSTART, "-o", tmp_path / "b.tar.zst")
    assert code == 5
    assert "Re-run with --verbose" in err  # build has one


# --- 6. keygen with nothing to read a passphrase from --------------------------------


@pytest.mark.parametrize("command", ["keygen", "sign"])
def test_keygen_and_sign_with_no_terminal_for_the_passphrase_are_usage_errors(
    tmp_path: Path, bundle: Path, command: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REPROBUNDLE_PASSPHRASE"}
    if command == "sign":
        assert (
            run("keygen", "k", "--out-dir", tmp_path, env={"REPROBUNDLE_PASSPHRASE": "pw"})[0] == 0
        )
        args: list[object] = ["sign", bundle, "--key", tmp_path / "k.key"]
    else:
        args = ["keygen", "alice"]
    done = subprocess.run(
        [sys.executable, "-m", "bundler", *map(str, args)],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "REPROBUNDLE_PASSPHRASE" in done.stderr
    assert "Aborted" not in done.stderr and "GetPassWarning" not in done.stderr
    assert not (tmp_path / "alice.key").exists()


# --- 7. report on JSON that is neither a bundle nor a report -------------------------


@pytest.mark.parametrize("text", ['{"a": 1}', '{"result": "supported"', "{"])
def test_report_on_json_that_is_neither_bundle_nor_report_is_rejected_exit_3(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / "f.json").write_text(text)
    code, _, err = run("report", tmp_path / "f.json")
    assert code == 3, err
    assert "neither a bundle" in err


# --- 8. a checkpoint given that the archive also keeps --------------------------------


def test_log_verify_counts_the_archives_own_checkpoint_given_again_once(
    archive: Path, tmp_path: Path
) -> None:
    root = archive
    elsewhere = tmp_path / "checkpoint.json"
    assert archive_cli(root, "checkpoint", "-o", str(elsewhere))[0] == 0
    (kept,) = (root / "checkpoints").glob("*.json")
    for given in (kept, elsewhere):
        code, out, err = archive_cli(root, "log", "verify", "--checkpoint", str(given))
        assert code == 0, err
        assert "checked against 1 checkpoint(s)" in out


# --- every command's help lists every exit code it can give --------------------------


def _commands() -> Iterator[tuple[tuple[str, ...], click.Command]]:
    def walk(
        command: click.Command, words: tuple[str, ...]
    ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
        yield words, command
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None
                yield from walk(sub, (*words, name))

    for words, command in walk(main, ()):
        if words:
            yield words, command


def listed_codes(words: tuple[str, ...]) -> set[int]:
    code, out, _ = run(*words, "--help")
    assert code == 0
    listed = " ".join(out.split("Exit codes:")[1].split()) if "Exit codes:" in out else ""
    return {int(n) for n in re.findall(r"(?:^|· |, )([0-9]+) ", listed)}


def codes_it_can_give(command: click.Command) -> set[int]:
    """What the command's own code exits with (its ``sys.exit(N)`` with a literal N, the
    exit code of each error class it raises), and what every command can end with: a
    usage error (click's, or an OS error), a bug, and the three stopping signals."""
    codes = {2, 5, 129, 130, 143}
    callback = inspect.unwrap(command.callback) if command.callback else None
    if callback is None:
        return codes
    module = sys.modules[callback.__module__]
    tree = ast.parse(textwrap.dedent(inspect.getsource(callback)))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "sys.exit"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, int)
        ):
            codes.add(node.args[0].value)
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            error = getattr(module, ast.unparse(node.exc.func), None)
            if isinstance(getattr(error, "exit_code", None), int):
                codes.add(error.exit_code)  # type: ignore[union-attr]
    return codes


@pytest.mark.parametrize("words", [w for w, _ in _commands()], ids=" ".join)
def test_every_command_help_lists_every_exit_code_it_can_give(words: tuple[str, ...]) -> None:
    command = dict(_commands())[words]
    missing = codes_it_can_give(command) - listed_codes(words)
    assert missing == set(), f"`{' '.join(words)} --help` does not list exit code(s) {missing}"
