"""The archive under stress: concurrent writers, kill -9 at known points, a full disk,
a read-only index. Each test checks that nothing is lost, nothing is corrupt, and the
user gets a message instead of a traceback."""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bundler.store import Archive
from bundler.store import index as archive_index
from bundler.store import objects as archive_store
from tests.archive_support import cli, rebadge

REPO = Path(__file__).resolve().parents[2]


def archive_cmd(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "bundler", "archive", "--archive", str(root), *args]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def assert_consistent(root: Path) -> Archive:
    """No row without its intact object, no half-written object visible, the log chain
    whole and matching the index."""
    archive = Archive.open(root)
    try:
        assert archive.consistency() == []
        assert archive.verify_log().problems == []
    except BaseException:
        archive.close()
        raise
    return archive


@pytest.fixture(scope="module")
def many(quickstart_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("many")
    return [
        rebadge(quickstart_bundle, folder / f"b{i}.tar.gz", name=f"bundle-{i}") for i in range(16)
    ]


def test_concurrent_adders_and_a_verifier_lose_nothing(
    tmp_path: Path, quickstart_bundle: Path, many: list[Path]
) -> None:
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add([quickstart_bundle])
    first, second = many[:8], many[8:]
    processes = [
        subprocess.Popen(
            archive_cmd(root, "add", *map(str, first)),
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ),
        subprocess.Popen(
            archive_cmd(root, "add", *map(str, second)),
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ),
        subprocess.Popen(
            archive_cmd(root, "verify", "quickstart", "--jobs", "2"),
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ),
        # the same files again, racing the first adder: stored once, never refused
        subprocess.Popen(
            archive_cmd(root, "add", *map(str, first)),
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ),
    ]
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode()
    with assert_consistent(root) as archive:
        stored = archive.list_bundles()
        assert len(stored) == 17
        assert archive.show("quickstart@1.0.0").history[0].result == "supported"
        events = [json.loads(r)["event"] for r in archive.log_records()]
    assert events.count("add") == 17
    assert events.count("add.duplicate") == 8
    assert events.count("verify") == 1


@pytest.mark.parametrize("check", ["audit", "verify_log"])
def test_the_log_and_the_index_are_read_as_of_one_moment(
    tmp_path: Path,
    quickstart_bundle: Path,
    many: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    check: str,
) -> None:
    """An add committed by another process after the log was read and before the rows
    were read is not "in the index but never logged" (the race the concurrent test met):
    here the add lands exactly there, every run."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add([quickstart_bundle])
    real = archive_index.records
    landed: list[bool] = []

    def records_then_another_add(conn: sqlite3.Connection) -> list[bytes]:
        rows = list(real(conn))
        if not landed:
            landed.append(True)
            with Archive.open(root) as other:
                other.add([many[0]])
        return rows

    with Archive.open(root) as archive:
        monkeypatch.setattr(archive_index, "records", records_then_another_add)
        if check == "audit":
            archive.audit()  # raises ArchiveTampered (index.unlogged) on a torn read
        else:
            assert archive.verify_log().problems == []
        monkeypatch.setattr(archive_index, "records", real)
    assert landed
    with assert_consistent(root) as archive:
        assert len(archive.list_bundles()) == 2


def _remove_semaphores(listed: Path) -> None:
    """Remove the named semaphores that the killed command listed as its own (Linux keeps
    them in /dev/shm as ``sem.NAME``); a concurrent test's are never touched: the one who
    made a semaphore maps it under a temporary name, so no listing of /dev/shm can tell
    whose it is."""
    if not listed.exists():
        return
    for name in listed.read_text().split():
        Path("/dev/shm", "sem." + name.lstrip("/")).unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("point", "when"),
    [
        ("bundler.store.objects:Store.stage", "before"),  # nothing of it yet
        ("bundler.store.objects:Store.stage", "after"),  # copied in, not yet checked
        ("bundler.store.objects:Store.commit", "before"),  # checked, not yet in place
        ("bundler.store.objects:Store.commit", "after"),  # object in place, row not committed
        ("bundler.store.context:Context.append", "before"),  # row written, no log record
        ("bundler.store.context:Context.append", "after"),  # row and log, uncommitted
    ],
)
def test_kill_9_at_a_known_point_of_add_leaves_the_archive_consistent(
    tmp_path: Path, many: list[Path], point: str, when: str
) -> None:
    """The third bundle's add is killed at ``point``: two bundles stored, the third not,
    and the same add run again stores the rest."""
    root = tmp_path / "archive"
    Archive.init(root).close()
    args = archive_cmd(root, "add", *map(str, many))[3:]
    killed = subprocess.run(
        [sys.executable, "-m", "tests.kill_at", point, when, "3", "--", *args],
        env=environment(),
        cwd=REPO,
        capture_output=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    with assert_consistent(root) as archive:
        assert len(archive.list_bundles()) == 2
    done = subprocess.run(
        archive_cmd(root, "add", *map(str, many)),
        env=environment(),
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    with assert_consistent(root) as archive:
        assert len(archive.list_bundles()) == len(many)


@pytest.mark.parametrize("when", ["before", "after"])
def test_kill_9_during_verify_leaves_the_archive_consistent(
    tmp_path: Path, many: list[Path], when: str
) -> None:
    """``archive verify --all --jobs 2`` killed (its workers too) at its third record: two
    verifications recorded, each with its log record, and verify runs again to the end."""
    root = tmp_path / "archive"
    with Archive.init(root) as archive:
        archive.add(many[:6])
    args = archive_cmd(root, "verify", "--all", "--jobs", "2")[3:]
    point = "bundler.store.context:Context.append"
    listed = tmp_path / "semaphores"
    killed = subprocess.run(
        [sys.executable, "-m", "tests.kill_at", point, when, "3", "--group", "--", *args],
        env={**environment(), "KILL_AT_SEMAPHORES": str(listed)},
        cwd=REPO,
        capture_output=True,
        timeout=300,
        start_new_session=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    _remove_semaphores(listed)  # the killed pool's, by the names it gave

    def recorded(archive: Archive) -> int:
        rows = archive.conn.execute("SELECT count(*) FROM verifications").fetchone()[0]
        logged = sum(json.loads(r)["event"] == "verify" for r in archive.log_records())
        assert rows == logged
        return int(rows)

    with assert_consistent(root) as archive:
        assert recorded(archive) == 2
    done = subprocess.run(
        archive_cmd(root, "verify", "--all", "--jobs", "2"),
        env=environment(),
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    with assert_consistent(root) as archive:
        assert recorded(archive) == 2 + 6


def test_an_interrupted_add_leaves_no_row_without_its_object(
    tmp_path: Path, many: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deterministic version of the kill: the process dies right after the object is
    renamed in, before the row commits. The object is an orphan; no row names it."""
    root = tmp_path / "archive"
    Archive.init(root).close()
    commit = archive_store.Store.commit

    def commit_then_die(store: archive_store.Store, staged: archive_store.Staged) -> Path:
        commit(store, staged)
        raise KeyboardInterrupt

    monkeypatch.setattr(archive_store.Store, "commit", commit_then_die)
    with Archive.open(root) as archive, pytest.raises(KeyboardInterrupt):
        archive.add([many[0]])
    monkeypatch.undo()
    with assert_consistent(root) as archive:
        assert len(list(archive.store.digests())) == 1  # the orphan
        assert archive.list_bundles() == []
        assert [json.loads(r)["event"] for r in archive.log_records()] == ["init"]
        assert archive.add([many[0]]).added


# -- a full disk and a read-only archive --------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "archive"
    Archive.init(path).close()
    return path


def test_full_index_fails_with_a_message_and_changes_nothing(
    root: Path, many: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = archive_index.configure

    def no_room(conn: sqlite3.Connection) -> None:
        real(conn)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL on the next new page

    monkeypatch.setattr(archive_index, "configure", no_room)
    code, _, err = cli(root, "add", *map(str, many[:4]))
    assert code == 2
    assert "the disk is full" in err and "[index.full]" in err
    assert "Traceback" not in err
    monkeypatch.undo()
    with assert_consistent(root) as archive:
        stored = [f"{b.name}@{b.version}" for b in archive.list_bundles()]
    assert len(stored) < 4
    for name in stored:  # what was stored before the disk filled is named
        assert name in err


def test_full_disk_while_storing_fails_with_a_message(
    root: Path, many: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    class FullDisk:
        """``tempfile`` whose new files are /dev/full: every write fails with ENOSPC."""

        @staticmethod
        def mkstemp(prefix: str, suffix: str, dir: Path) -> tuple[int, str]:
            name = Path(dir) / f"{prefix}full{suffix}"
            name.touch()
            return os.open("/dev/full", os.O_WRONLY), str(name)

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    monkeypatch.setattr(archive_store, "tempfile", FullDisk)
    code, _, err = cli(root, "add", str(many[0]))
    assert code == 2
    assert "the disk is full" in err and "[os.ENOSPC]" in err
    assert list((root / "tmp").iterdir()) == []
    monkeypatch.undo()
    assert_consistent(root).close()


def test_read_only_index_fails_with_a_message(
    root: Path, many: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only(path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {archive_index.BUSY_TIMEOUT_MS}")
        return conn

    monkeypatch.setattr(archive_index, "connect", read_only)
    code, _, err = cli(root, "add", str(many[0]))
    assert code == 2
    assert "read-only" in err and "[index.readonly]" in err
    # friction 7 of issue 43: the message says what still works and how to write
    assert "the commands that only read (list, show," in err
    assert "copy the folder somewhere writable and give that copy with --archive" in err
    code, out, _ = cli(root, "list")  # reading still works
    assert code == 0 and "no bundle matches" in out


def test_read_only_file_system_fails_with_a_message(
    root: Path, many: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    class ReadOnly:
        @staticmethod
        def mkstemp(prefix: str, suffix: str, dir: Path) -> tuple[int, str]:
            raise OSError(errno.EROFS, "Read-only file system", str(dir))

    monkeypatch.setattr(archive_store, "tempfile", ReadOnly)
    code, _, err = cli(root, "add", str(many[0]))
    assert code == 2
    assert "read-only file system" in err and "[os.EROFS]" in err


def test_damaged_index_file_is_named(root: Path) -> None:
    index_file = root / "index.sqlite"
    for extra in ("index.sqlite-wal", "index.sqlite-shm"):
        (root / extra).unlink(missing_ok=True)
    index_file.write_bytes(b"not a database at all" * 100)
    code, _, err = cli(root, "list")
    assert code == 2
    assert "[index.corrupt]" in err and "Traceback" not in err


def test_add_sweeps_old_leftovers_of_killed_adds_but_not_fresh_ones(
    root: Path, many: list[Path]
) -> None:
    old = root / "tmp" / "add-old.partial"
    fresh = root / "tmp" / "add-fresh.partial"
    for leftover in (old, fresh):
        leftover.write_bytes(b"half a bundle")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    assert cli(root, "add", str(many[0]))[0] == 0
    assert not old.exists()
    assert fresh.exists()  # it may belong to an add running right now
