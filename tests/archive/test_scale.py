"""The archive's work per bundle does not grow with the archive (issue 47, item 4).

Each test counts work (version parses, records decoded), never time."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bundler.store import Archive, auditlog, versions
from bundler.store import index as archive_index
from tests.archive_support import cli, db, rebadge, sql


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "archive"
    Archive.init(path).close()
    return path


def counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every version parsed (``versions.key``, ``versions.order``) is appended here."""
    parsed: list[str] = []
    key, order = versions.key, versions.order

    def counted_key(version: str) -> versions.Key:
        parsed.append(version)
        return key(version)

    def counted_order(version: str) -> str | None:
        parsed.append(version)
        return order(version)

    monkeypatch.setattr(versions, "key", counted_key)
    monkeypatch.setattr(versions, "order", counted_order)
    return parsed


def test_an_add_parses_the_same_few_versions_however_many_are_stored(
    root: Path, quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: every add parsed every stored version of its name (_rollback_warning ->
    # versions_of), 1,015,150 parses for 100 adds at 10,000 versions
    files = [
        rebadge(quickstart_bundle, tmp_path / f"v{n}.tar.gz", version=f"1.{n}.0") for n in range(12)
    ]
    parsed = counting_parses(monkeypatch)
    per_add = []
    with Archive.open(root) as archive:
        for file in files:
            parsed.clear()
            archive.add([file])
            per_add.append(len(parsed))
    assert per_add[-1] == per_add[1] <= 4, per_add  # constant, not one per stored version


def test_the_highest_version_is_found_in_semver_order_and_a_rollback_still_warned(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    for version in ("1.0.0-rc.1", "1.10.0", "1.9.0", "1.10.0-beta"):
        with Archive.open(root) as archive:
            archive.add(
                [rebadge(quickstart_bundle, tmp_path / f"{version}.tar.gz", version=version)]
            )
    with db(root) as conn:
        assert archive_index.highest_version(conn, "quickstart") == "1.10.0"
        assert archive_index.highest_version(conn, "other") is None
    code, _, err = cli(
        root, "add", str(rebadge(quickstart_bundle, tmp_path / "l.tar.gz", version="1.2.0"))
    )
    assert code == 0 and "quickstart@1.2.0 is lower than quickstart@1.10.0" in err


def test_an_index_migrated_from_schema_3_orders_the_versions_it_held(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    with Archive.open(root) as archive:
        archive.add([rebadge(quickstart_bundle, tmp_path / "a.tar.gz", version="2.0.0")])
    with db(root) as conn:  # back to schema 3, as an archive written before issue 47
        conn.execute("DROP INDEX bundles_by_version_order")
        conn.execute("DROP TABLE log_keys")
        conn.execute("ALTER TABLE bundles DROP COLUMN version_order")
        conn.execute("PRAGMA user_version = 3")
    code, _, err = cli(
        root, "add", str(rebadge(quickstart_bundle, tmp_path / "b.tar.gz", version="1.0.0"))
    )
    assert code == 0 and "lower than quickstart@2.0.0" in err
    assert sql(root, "SELECT version, version_order FROM bundles ORDER BY version") == [
        ("1.0.0", versions.order("1.0.0")),
        ("2.0.0", versions.order("2.0.0")),
    ]


def test_an_edited_version_order_is_caught_by_log_verify(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    with Archive.open(root) as archive:
        archive.add([rebadge(quickstart_bundle, tmp_path / "a.tar.gz", version="2.0.0")])
    with db(root) as conn:  # hides 2.0.0 from the rollback warning
        conn.execute("UPDATE bundles SET version_order = NULL")
    code, _, err = cli(root, "log", "verify")
    assert code != 0
    assert "version_order: not the order of its version '2.0.0'" in err


def grow_log(root: Path, records: int) -> None:
    """``records`` refusal records appended (as many refused adds of other versions of
    quickstart would leave: the name's records grow with them)."""
    with Archive.open(root) as archive, archive.context.transaction("grow the log"):
        for n in range(records):
            archive.context.append(
                "refuse",
                {
                    "action": "add",
                    "file": f"f{n}",
                    "digest": "0" * 64,
                    "name": "quickstart",
                    "version": f"9.{n}.0",
                    "reason": "x",
                    "codes": [],
                },
            )


def sqlite_steps(archive: Archive, work: Callable[[], object]) -> int:
    """How many tens of SQLite VM instructions ``work`` ran on the archive's index (each
    statement's own count, as SQLite calls the handler)."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    archive.conn.set_progress_handler(count, 10)
    try:
        work()
    finally:
        archive.conn.set_progress_handler(None, 0)
    return steps[0]


def decoded_records(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``seq`` of every log record decoded is appended here."""
    seen: list[int] = []
    decode = auditlog.decode

    def counted(row: auditlog.Row) -> Any:
        seen.append(row.seq)
        return decode(row)

    monkeypatch.setattr(auditlog, "decode", counted)
    return seen


def add_and_show_work(
    root: Path, bundle: Path, version: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, int, int]:
    """SQLite work of an add, SQLite work of a show, records a show decoded."""
    with Archive.open(root) as archive:
        adding = sqlite_steps(archive, lambda: archive.add([bundle]))
        seen = decoded_records(monkeypatch)
        name = f"quickstart@{version}"

        def show() -> None:
            shown = archive.show(name)
            archive.statements(shown.bundle.name, shown.bundle.digest)

        showing = sqlite_steps(archive, show)
        monkeypatch.undo()
    return adding, showing, len(seen)


def test_add_and_show_read_the_same_records_however_long_the_log(
    root: Path, quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: show decoded every record of the log (the pre-registrations and attestations
    # of the bundle were looked for in all of them: 21,306 records to show one bundle), and
    # add and show scanned every record's bytes for the trust records and the bundle's own
    small = add_and_show_work(
        root,
        rebadge(quickstart_bundle, tmp_path / "1.0.0.tar.gz", version="1.0.0"),
        "1.0.0",
        monkeypatch,
    )
    grow_log(root, 3000)
    large = add_and_show_work(
        root,
        rebadge(quickstart_bundle, tmp_path / "1.1.0.tar.gz", version="1.1.0"),
        "1.1.0",
        monkeypatch,
    )
    assert large[2] == small[2] <= 3  # the bundle's add record (and the trust record)
    assert large[0] < small[0] * 1.5 + 50, (small, large)
    assert large[1] < small[1] * 1.5 + 50, (small, large)


def test_an_edited_lookup_of_the_log_is_caught_by_log_verify(
    root: Path, quickstart_bundle: Path
) -> None:
    with Archive.open(root) as archive:
        archive.add([quickstart_bundle])
    with db(root) as conn:  # hides the bundle's add record from show's lookup
        conn.execute("DELETE FROM log_keys WHERE key LIKE 'digest:%'")
    code, _, err = cli(root, "log", "verify")
    assert code == 3
    assert "index log_keys of record 2" in err and "[index.altered]" in err
    assert cli(root, "show", "quickstart@1.0.0")[0] == 3  # show finds no add record: refused


def log_verify_peak(root: Path) -> int:
    """The peak of Python memory (tracemalloc) of ``log verify``, in bytes."""
    with Archive.open(root) as archive:
        tracemalloc.start()
        try:
            report = archive.verify_log()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert report.problems == []
    return peak


def test_log_verify_holds_no_more_memory_for_a_longer_log(
    root: Path, quickstart_bundle: Path
) -> None:
    # before: every decoded record was held until the walk ended (169 MiB at 21,306
    # records, growing with the log); now each is replayed and dropped as it comes
    with Archive.open(root) as archive:
        archive.add([quickstart_bundle])
        archive.verify(all_bundles=True, jobs=1)
    grow_log(root, 500)
    small = log_verify_peak(root)
    grow_log(root, 5000)
    large = log_verify_peak(root)
    assert large < small + 512 * 1024, (small, large)


def open_work(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """SQLite work (tens of VM instructions) of opening the archive with its checkpoint
    check, and the log records decoded meanwhile."""
    steps = [0]
    connect = archive_index.connect

    def counted(path: Path) -> Any:
        conn = connect(path)

        def count() -> int:
            steps[0] += 1
            return 0

        conn.set_progress_handler(count, 10)
        return conn

    seen = decoded_records(monkeypatch)
    monkeypatch.setattr(archive_index, "connect", counted)
    Archive.open(root).close()
    monkeypatch.undo()
    return steps[0], len(seen)


def test_opening_reads_the_same_few_records_however_long_the_log(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: every open counted the log's records up to the last checkpoint (SELECT
    # count(*): about 1 s a command at 1,000,000 records); now it looks up two records
    grow_log(root, 10)
    with Archive.open(root) as archive:
        archive.checkpoint()
    small = open_work(root, monkeypatch)
    grow_log(root, 3000)
    with Archive.open(root) as archive:
        archive.checkpoint()
    large = open_work(root, monkeypatch)
    assert large[0] < small[0] * 1.5 + 50, (small, large)
    assert large[1] == small[1] == 1, (small, large)  # the record after the pinned one


def test_a_record_removed_before_the_checkpoint_is_left_to_log_verify(
    root: Path, quickstart_bundle: Path
) -> None:
    # opening no longer counts the records up to the checkpoint (it looks up the pinned
    # record and the one after it): a record removed before it, the pinned one untouched,
    # is found by the walk of the chain that log verify makes
    with Archive.open(root) as archive:
        archive.add([quickstart_bundle])
    grow_log(root, 10)
    with Archive.open(root) as archive:
        archive.checkpoint()
    sql(root, "DELETE FROM audit_log WHERE seq = 5")
    assert cli(root, "list")[0] == 0
    code, _, err = cli(root, "log", "verify")
    assert code == 3
    assert "audit log record 6" in err and "[log.gap]" in err and "[log.chain]" in err
    # archive verify checks the bundles it verifies against their own records only (issue
    # 47): the removed record was none of theirs, so finding it is log verify's (above)
    assert cli(root, "verify", "--all")[0] == 0


def test_a_log_cut_back_to_its_checkpoint_is_refused_at_open(root: Path) -> None:
    # the pinned record still hashes as the checkpoint says, but the record of issuing the
    # checkpoint, and all after it, were removed: the count the open made before missed it
    grow_log(root, 10)
    with Archive.open(root) as archive:
        size = archive.checkpoint().size
        archive.context.log_refusal({"action": "add", "codes": []})
    sql(root, "DELETE FROM audit_log WHERE seq > ?", (size,))
    code, _, err = cli(root, "list")
    assert code == 3
    assert "no longer matches the last checkpoint" in err
    assert f"record {size + 1}, the record of issuing the checkpoint, is missing" in err


def test_a_record_after_the_checkpoint_that_no_longer_links_is_refused_at_open(
    root: Path,
) -> None:
    grow_log(root, 10)
    with Archive.open(root) as archive:
        size = archive.checkpoint().size
        archive.context.log_refusal({"action": "add", "codes": []})
    # the record of issuing the checkpoint removed, the next one moved into its place
    sql(root, "DELETE FROM audit_log WHERE seq = ?", (size + 1,))
    sql(
        root,
        "UPDATE audit_log SET seq = ? WHERE seq = (SELECT max(seq) FROM audit_log)",
        (size + 1,),
    )
    code, _, err = cli(root, "list")
    assert code == 3
    assert f"record {size + 1}, the record of issuing the checkpoint, does not link" in err


def one_name_work(
    root: Path, monkeypatch: pytest.MonkeyPatch, out: Path
) -> tuple[int, int, int, int, int]:
    """Of the last version of quickstart: SQLite work of show (with its statements), of
    export, and records each decodes; and log verify's SQLite work per record."""
    with Archive.open(root) as archive:
        name = archive.list_bundles(name="quickstart")[-1]
        selector = f"{name.name}@{name.version}"

        def show() -> None:
            shown = archive.show(selector)
            archive.statements(shown.bundle.name, shown.bundle.digest)

        seen = decoded_records(monkeypatch)
        showing = sqlite_steps(archive, show)
        shown = len(seen)
        seen.clear()
        exporting = sqlite_steps(archive, lambda: archive.export(selector, out))
        exported = len(seen)
        monkeypatch.undo()
        size = archive.context.head()[0]
        walking = sqlite_steps(archive, archive.verify_log)
    return showing, shown, exporting, exported, walking // size


def test_show_export_and_log_verify_work_the_same_however_many_versions_of_one_name(
    root: Path, quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the one-name run of bench/archive_scale.py showed wall-time slopes of 1.8-2x for
    # these from 100 to 10,000 versions on a loaded machine; their work does not grow
    # (this held before the slopes were measured too: the slopes were the machine's load)
    def add_versions(first: int, last: int) -> None:
        with Archive.open(root) as archive:
            archive.add(
                [
                    rebadge(quickstart_bundle, tmp_path / f"v{n}.tar.gz", version=f"1.{n}.0")
                    for n in range(first, last)
                ]
            )

    add_versions(0, 3)
    small = one_name_work(root, monkeypatch, tmp_path / "small.tar.gz")
    add_versions(3, 60)
    large = one_name_work(root, monkeypatch, tmp_path / "large.tar.gz")
    assert large[1] == small[1] and large[3] == small[3], (small, large)  # records decoded
    for step in (0, 2, 4):  # show, export, log verify per record
        assert large[step] < small[step] * 1.5 + 20, (step, small, large)


def verify_work(root: Path, selector: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """SQLite work (tens of VM instructions) of ``archive verify`` of one bundle in this
    process (the worker re-hashes and verifies the bundle; it reads no log), and the log
    records it decoded."""
    with Archive.open(root) as archive:
        seen = decoded_records(monkeypatch)
        batch: list[Any] = []
        steps = sqlite_steps(archive, lambda: batch.extend(archive.verify([selector], jobs=1)))
        monkeypatch.undo()
    assert [o.result for o in batch] == ["supported"], batch
    return steps, len(seen)


def test_verifying_one_bundle_reads_its_own_records_however_long_the_log(
    root: Path, quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: archive verify walked and replayed the whole log before it ran, to verify
    # one bundle (138 s, 102 s of it CPU, at 1,000,001 records); now it checks the bundle's
    # own records (found through log_keys) and its rows against them
    with Archive.open(root) as archive:
        archive.add(
            [
                rebadge(quickstart_bundle, tmp_path / f"{v}.tar.gz", version=v)
                for v in ("1.0.0", "1.1.0")
            ]
        )
    grow_log(root, 10)
    small = verify_work(root, "quickstart@1.0.0", monkeypatch)
    grow_log(root, 3000)
    large = verify_work(root, "quickstart@1.1.0", monkeypatch)  # as many records of its own
    assert large[1] == small[1] <= 3, (small, large)  # its add record (and the trust record)
    assert large[0] < small[0] * 1.5 + 50, (small, large)


def test_archive_verify_catches_an_edited_record_of_the_bundle_it_verifies(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    other = rebadge(quickstart_bundle, tmp_path / "o.tar.gz", name="other")
    with Archive.open(root) as archive:
        archive.add([quickstart_bundle, other])
    grow_log(root, 2)  # the edited record is not the last one (appending after it is refused)
    seq_of = dict(sql(root, "SELECT substr(key, 6), seq FROM log_keys WHERE key LIKE 'name:%'"))
    edit = "UPDATE audit_log SET record = CAST(replace(CAST(record AS TEXT), ?, ?) AS BLOB) "
    sql(root, edit + "WHERE seq = ?", ('"version":"1.0.0"', '"version":"9.0.0"', seq_of["other"]))
    before = sql(root, "SELECT count(*) FROM verifications")
    code, _, err = cli(root, "verify", "other@1.0.0")
    assert code == 3 and f"audit log record {seq_of['other']}" in err and "[log.edited]" in err
    assert sql(root, "SELECT count(*) FROM verifications") == before  # nothing ran
    # another bundle's record edited is not what verifying quickstart checks: log verify
    # walks the whole chain and finds it
    code, _, err = cli(root, "verify", "quickstart@1.0.0")
    assert code == 0, err
    code, _, err = cli(root, "log", "verify")
    assert code == 3 and f"audit log record {seq_of['other']}" in err
