"""The work folder is removed on Ctrl-C and SIGTERM, through the descriptors opened when it
was made: a path swapped for a link during the run cannot redirect the removal.

Each signal is sent at a known point (the first case about to run), never on a timer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bundler.container.workfolder import WorkFolder

# Runs `reprobundle verify ARGS...`, sending itself SIGNUM when the first case is about to
# run, after renaming SWAP (if given) and putting a link to "victim" beside it in its place.
SCRIPT = """
import os, sys
from pathlib import Path
import bundler.run.runner as runner
signum, swap = int(sys.argv[1]), sys.argv[2]
real = runner.run_case
def run_case(*args, **kwargs):
    if swap:
        work = Path(swap)
        os.rename(work, work.with_name("moved"))
        work.symlink_to(work.with_name("victim"), target_is_directory=True)
    os.kill(os.getpid(), signum)
    return real(*args, **kwargs)
runner.run_case = run_case
from bundler.cli import main
sys.argv = ["reprobundle", "verify", *sys.argv[3:]]
main()
"""


def interrupted(
    tmp_path: Path, bundle: Path, signum: int, swap: Path | None = None, *args: str
) -> int:
    temp = tmp_path / "temp"
    temp.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(signum), str(swap or ""), str(bundle), "-q", *args],
        env={**os.environ, "TMPDIR": str(temp)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]
)
def test_the_temporary_work_folder_is_removed_on_a_signal(
    quickstart_bundle: Path, tmp_path: Path, signum: int, status: int
) -> None:
    assert interrupted(tmp_path, quickstart_bundle, signum) == status
    assert list((tmp_path / "temp").iterdir()) == []


@pytest.mark.parametrize("made_by_verify", [True, False])
def test_a_workdir_swapped_for_a_link_cannot_redirect_the_removal(
    quickstart_bundle: Path, tmp_path: Path, made_by_verify: bool
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    work = tmp_path / "work"
    if not made_by_verify:
        work.mkdir()
    status = interrupted(tmp_path, quickstart_bundle, signal.SIGTERM, work, "--workdir", str(work))
    assert status == 143
    assert [p.name for p in victim.iterdir()] == ["precious.txt"]
    assert (victim / "precious.txt").read_text() == "keep me"
    assert list((tmp_path / "moved").iterdir()) == []  # the folder it made, emptied
    assert work.is_symlink()  # the link is not ours to remove


def test_removal_goes_through_the_descriptor_not_the_path(tmp_path: Path) -> None:
    folder = WorkFolder(tmp_path / "work")
    (folder.path / "sub").mkdir()
    (folder.path / "sub" / "f").write_text("x")
    (folder.path / "link").symlink_to(tmp_path / "victim")
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "v").write_text("keep")
    os.rename(folder.path, tmp_path / "moved")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "other").write_text("not ours")
    folder.remove()
    assert list((tmp_path / "moved").iterdir()) == []
    assert (tmp_path / "work" / "other").read_text() == "not ours"
    assert (tmp_path / "victim" / "v").read_text() == "keep"


def test_a_made_folder_is_removed_and_a_given_one_emptied(tmp_path: Path) -> None:
    made = WorkFolder(tmp_path / "new")
    (made.path / "f").write_text("x")
    made.remove()
    assert not (tmp_path / "new").exists()
    (tmp_path / "given").mkdir()
    given = WorkFolder(tmp_path / "given")
    (given.path / "f").write_text("x")
    given.remove()
    assert list((tmp_path / "given").iterdir()) == []


def test_sigterm_is_handled_only_while_a_folder_is_held(tmp_path: Path) -> None:
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    folder = WorkFolder(tmp_path / "w")
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    folder.remove()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_workdir_under_a_file_is_a_usage_error(tmp_path: Path) -> None:
    from bundler.errors import UsageError

    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="cannot be made"):
        WorkFolder(tmp_path / "file" / "work")
