"""The archive: store, index, add/list/show/verify/export, through the library and the CLI."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from bundler.cli import main
from bundler.store import Archive, ArchiveError, reverify, signers
from bundler.store import index as archive_index
from bundler.store.versions import key as version_key
from tests import archive_workers
from tests.archive_support import cli, db, flip_expectation, rebadge, sql
from tests.helpers import read_entries, write_entries


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "archive"
    Archive.init(path).close()
    return path


def events(root: Path) -> list[dict[str, object]]:
    with Archive.open(root) as archive:
        return [json.loads(r) for r in archive.log_records()]


# -- init and opening ------------------------------------------------------------------


def test_init_creates_wal_index_key_and_first_log_record(root: Path) -> None:
    assert sql(root, "PRAGMA journal_mode") == [("wal",)]
    assert sql(root, "PRAGMA user_version") == [(archive_index.SCHEMA_VERSION,)]
    assert (root / "keys" / "archive-ed25519.key").stat().st_mode & 0o077 == 0
    assert [e["event"] for e in events(root)] == ["init"]


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "stuff.txt").write_text("x")
    code, _, err = cli(tmp_path, "init")
    assert code == 2
    assert "not an empty folder" in err


def test_init_refuses_an_existing_archive(root: Path) -> None:
    code, _, err = cli(root, "init")
    assert code == 2
    assert "already an archive" in err


def test_command_without_archive_is_a_usage_error() -> None:
    result = CliRunner(env={"REPROBUNDLE_ARCHIVE": None}).invoke(main, ["archive", "list"])
    assert result.exit_code == 2
    assert "--archive DIR or set REPROBUNDLE_ARCHIVE" in result.stderr


def test_archive_from_environment_variable(root: Path) -> None:
    result = CliRunner(env={"REPROBUNDLE_ARCHIVE": str(root)}).invoke(main, ["archive", "list"])
    assert result.exit_code == 0
    assert "no bundle matches" in result.stdout


def test_folder_that_is_not_an_archive_is_named(tmp_path: Path) -> None:
    code, _, err = cli(tmp_path, "list")
    assert code == 2
    assert "is not an archive" in err and "archive init" in err


def test_index_from_a_newer_tool_is_refused(root: Path) -> None:
    sql(root, f"PRAGMA user_version = {archive_index.SCHEMA_VERSION + 1}")
    code, _, err = cli(root, "list")
    assert code == 2
    assert "use a newer reprobundle" in err


def test_old_index_is_migrated_and_the_migration_logged(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = archive_index.create(path)
    archive_index.migrate(conn, upto=1)
    conn.execute("INSERT INTO meta VALUES ('archive', 'x')")
    conn.close()
    with contextlib.closing(archive_index.connect(path)) as conn:
        assert archive_index.migrate(conn) == (1, archive_index.SCHEMA_VERSION)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "bundles_by_signer" in names
        assert conn.execute("SELECT value FROM meta").fetchone()[0] == "x"


def test_opening_an_archive_at_an_older_schema_logs_the_migration(root: Path) -> None:
    with db(root) as conn:
        conn.execute("DROP INDEX bundles_by_version_order")
        conn.execute("DROP TABLE log_keys")  # undo migration 3
        conn.execute("ALTER TABLE bundles DROP COLUMN version_order")
        conn.execute("DROP TABLE bundle_signers")  # undo migration 2 (its indexes go with it)
        for statement in archive_index.MIGRATIONS[1]:
            conn.execute(f"DROP INDEX {statement.split()[2]}")
        conn.execute("PRAGMA user_version = 1")
    assert events(root)[-1]["event"] == "migrate"
    assert events(root)[-1]["data"] == {"from": 1, "to": archive_index.SCHEMA_VERSION}


# -- add -------------------------------------------------------------------------------------


def test_add_stores_by_file_digest_once(root: Path, quickstart_bundle: Path) -> None:
    code, out, _ = cli(root, "add", str(quickstart_bundle))
    assert code == 0 and out.startswith("added    quickstart@1.0.0")
    code, out, _ = cli(root, "add", str(quickstart_bundle))
    assert code == 0 and out.startswith("present  quickstart@1.0.0")
    import hashlib

    digest = hashlib.sha256(quickstart_bundle.read_bytes()).hexdigest()
    objects = list((root / "objects" / "sha256").rglob("*"))
    assert [p.name for p in objects if p.is_file()] == [digest]
    assert [e["event"] for e in events(root)] == ["init", "add", "add.duplicate"]
    assert list((root / "tmp").iterdir()) == []


def test_add_records_identity_name_version_size_signer_and_tool(
    root: Path, quickstart_bundle: Path
) -> None:
    cli(root, "add", str(quickstart_bundle))
    code, out, _ = cli(root, "show", "quickstart@1.0.0", "--json", "-")
    bundle = json.loads(out)["bundle"]
    assert code == 0
    assert bundle["size"] == quickstart_bundle.stat().st_size
    assert bundle["signer"] == "unsigned"
    assert bundle["tool"].startswith("reprobundle ")
    assert len(bundle["identity"]) == 64 and bundle["identity"] != bundle["digest"]
    assert bundle["last_result"] == "unverified"
    assert "@" in bundle["added_by"]


def test_add_refuses_a_tampered_bundle_and_logs_the_refusal(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    entries[-1].data += b"tampered"
    bad = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    code, _, err = cli(root, "add", str(bad))
    assert code == 3
    assert "[member.size]" in err
    assert cli(root, "list")[1].startswith("no bundle matches")
    refusal = events(root)[-1]
    assert refusal["event"] == "refuse"
    assert refusal["data"]["action"] == "add"  # type: ignore[index]
    assert list((root / "objects" / "sha256").rglob("*.*")) == []


def test_add_refuses_a_reused_name_and_version_with_other_bytes(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    other = rebadge(quickstart_bundle, tmp_path / "other.tar.gz", edit=flip_expectation)
    assert cli(root, "add", str(quickstart_bundle))[0] == 0
    code, _, err = cli(root, "add", str(other))
    assert code == 3
    assert "quickstart@1.0.0 is already stored with other bytes" in err
    assert "[add.version_reused]" in err
    assert events(root)[-1]["event"] == "refuse"
    assert (
        len(
            cli(root, "list", "--json", "-")[1]
            and json.loads(cli(root, "list", "--json", "-")[1])["bundles"]
        )
        == 1
    )


def test_add_warns_when_a_lower_version_follows_a_higher_one(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    high = rebadge(quickstart_bundle, tmp_path / "high.tar.gz", version="2.0.0")
    low = rebadge(quickstart_bundle, tmp_path / "low.tar.gz", version="1.10.0")
    assert cli(root, "add", str(high))[0] == 0
    code, _, err = cli(root, "add", str(low))
    assert code == 0
    assert "quickstart@1.10.0 is lower than quickstart@2.0.0" in err
    assert events(root)[-1]["data"]["warnings"] == ["add.rollback"]  # type: ignore[index]


def test_add_of_a_missing_file_adds_nothing(root: Path, quickstart_bundle: Path) -> None:
    code, _, err = cli(root, "add", str(quickstart_bundle), "/nonexistent.tar.gz")
    assert code == 2
    assert "/nonexistent.tar.gz: is not a file" in err
    assert [e["event"] for e in events(root)] == ["init"]


def test_add_refuses_a_file_over_the_size_limit(root: Path, quickstart_bundle: Path) -> None:
    code, _, err = cli(root, "add", "--max-archive-bytes", "100", str(quickstart_bundle))
    assert code == 2
    assert "larger than 100 bytes" in err


def test_semver_order_for_rollback_detection() -> None:
    ordered = [
        "0.9.9",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.2.0",
        "1.10.0",
        "2.0.0",
    ]
    assert sorted(reversed(ordered), key=version_key) == ordered
    with pytest.raises(ValueError):
        version_key("1.0")


# -- list and show -------------------------------------------------------------------------


@pytest.fixture
def three(root: Path, quickstart_bundle: Path, tmp_path: Path) -> Path:
    """quickstart 1.0.0 (supported), other 1.0.0 (contradicted), other 1.1.0 (unverified)."""
    contradicted = rebadge(
        quickstart_bundle, tmp_path / "o1.tar.gz", name="other", edit=flip_expectation
    )
    later = rebadge(quickstart_bundle, tmp_path / "o2.tar.gz", name="other", version="1.1.0")
    assert cli(root, "add", str(quickstart_bundle), str(contradicted), str(later))[0] == 0
    assert cli(root, "verify", "quickstart@1.0.0", "other@1.0.0")[0] == 1
    return root


def names(root: Path, *filters: str) -> list[str]:
    code, out, _ = cli(root, "list", "--json", "-", *filters)
    assert code == 0
    return [f"{b['name']}@{b['version']}" for b in json.loads(out)["bundles"]]


def test_list_filters_by_name_version_signer_and_status(three: Path) -> None:
    assert names(three) == ["other@1.0.0", "other@1.1.0", "quickstart@1.0.0"]
    assert names(three, "--name", "other") == ["other@1.0.0", "other@1.1.0"]
    assert names(three, "--version", "1.1.0") == ["other@1.1.0"]
    assert names(three, "--signer", "unsigned") == names(three)
    assert names(three, "--signer", "someone") == []
    assert names(three, "--status", "supported") == ["quickstart@1.0.0"]
    assert names(three, "--status", "unverified") == ["other@1.1.0"]
    assert names(three, "--claim-status", "contradicted") == ["other@1.0.0"]
    assert names(three, "--claim-status", "supported") == ["quickstart@1.0.0"]
    assert names(three, "--claim-status", "inconclusive") == []


def test_list_prints_a_table(three: Path) -> None:
    code, out, _ = cli(three, "list")
    assert code == 0
    assert "other@1.0.0" in out and "contradicted" in out and "3 bundle(s)" in out


def test_show_gives_the_whole_verification_history(three: Path) -> None:
    assert cli(three, "verify", "quickstart")[0] == 0
    code, out, _ = cli(three, "show", "quickstart@1.0.0", "--json", "-")
    history = json.loads(out)["history"]
    assert code == 0
    assert [h["result"] for h in history] == ["supported", "supported"]
    assert history[0]["id"] < history[1]["id"]
    first = history[0]
    assert {c["status"] for c in first["claims"]} == {"supported"}
    assert first["environment"]["python"] and first["tool"].startswith("reprobundle")
    code, text, _ = cli(three, "show", "quickstart@1.0.0")
    assert "History   2 verification(s)" in text


def test_archive_history_counts_findings_and_controls_as_verify_does(three: Path) -> None:
    """Friction 9 of issue 43: the archive said "2 of them negative control(s)" where verify
    says "1 fail as expected: 1 control" (a finding counted as a control)."""
    code, out, _ = cli(three, "verify", "quickstart")
    assert code == 0
    assert "accepts-equivalent-content: 2 of 2 verdicts reproduced (1 pass, 1 fail as " in out
    assert "negative control(s)" not in out


def test_show_by_digest_and_unique_prefix(three: Path) -> None:
    digest = json.loads(cli(three, "list", "--json", "-", "--name", "quickstart")[1])["bundles"][0][
        "digest"
    ]
    for selector in (digest, f"sha256:{digest}", digest[:12]):
        code, out, _ = cli(three, "show", selector)
        assert code == 0 and "quickstart@1.0.0" in out


def test_show_of_an_ambiguous_or_unknown_bundle_is_a_usage_error(three: Path) -> None:
    code, _, err = cli(three, "show", "other")
    assert code == 2 and "names 2 bundles" in err
    code, _, err = cli(three, "show", "nothing@1.0.0")
    assert code == 2 and "no bundle nothing@1.0.0" in err


def test_queries_use_indexes_not_table_scans(three: Path) -> None:
    def plan(query: str, *args: object) -> str:
        return " | ".join(str(r[3]) for r in sql(three, f"EXPLAIN QUERY PLAN {query}", args))

    assert "USING INDEX" in plan("SELECT * FROM bundles WHERE name = ?", "x")
    assert "USING INDEX" in plan("SELECT * FROM bundles WHERE name = ? AND version = ?", "x", "1")
    assert "bundles_by_signer" in plan("SELECT * FROM bundles WHERE signer = ?", "x")
    assert "bundles_by_result" in plan("SELECT * FROM bundles WHERE last_result = ?", "x")
    assert "verifications_by_bundle" in plan("SELECT * FROM verifications WHERE digest = ?", "x")
    assert "claim_results_by_status" in plan(
        "SELECT verification FROM claim_results WHERE status = ?", "x"
    )
    selector, args = signers.selector("59fd200ad8")  # list --signer NAME|KEYID|KEYID-PREFIX
    by_signer = plan(f"SELECT * FROM bundles WHERE digest IN ({selector})", *args)
    assert "SCAN" not in by_signer
    assert "bundle_signers_by_name" in by_signer and "bundle_signers_by_keyid" in by_signer


# -- verify ---------------------------------------------------------------------------------


def test_verify_records_results_and_exits_with_the_worst(three: Path) -> None:
    code, out, _ = cli(three, "verify", "--all", "--jobs", "2", "--json", "-")
    report = json.loads(out)
    assert code == 1
    assert report["exit_code"] == 1
    assert sorted(r["result"] for r in report["results"]) == [
        "contradicted",
        "supported",
        "supported",
    ]
    assert [e["event"] for e in events(three)].count("verify") == 5


def test_archive_verify_judges_with_verify_s_code_and_case_options(
    three: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # archive verify declares verify's judging options (one declaration, _verifying):
    # its code and case budget reach each worker's verification as verify's would
    verify = Archive.verify

    def seen_by_workers(archive: Archive, /, *args: Any, **kwargs: Any) -> Any:
        kwargs["function"] = archive_workers.options_seen
        return verify(archive, *args, **kwargs)

    monkeypatch.setattr(Archive, "verify", seen_by_workers)
    code, out, err = cli(
        three,
        *("verify", "quickstart@1.0.0", "--json", "-", "--allow-code", "--code-timeout", "7"),
        *("--case-timeout", "30", "--case-memory", "0", "--time-limit", "900"),
        *("--max-members", "999"),
    )
    assert code == 0, err
    (result,) = json.loads(out)["results"]
    assert result["result"] == "supported"
    assert result["detail"]["options"] == {
        "allow_code": True,
        "code_timeout": 7.0,
        "budget": [30.0, 0, 900.0],
        "jobs": 1,  # one bundle's cases in one process: --jobs is bundles at once
        "max_members": 999,
        "trusted": 0,
    }


def test_verify_needs_bundles_or_all(root: Path) -> None:
    code, _, err = cli(root, "verify")
    assert code == 2 and "or --all" in err


def test_verify_all_of_an_empty_archive_is_not_a_pass(root: Path) -> None:
    code, _, err = cli(root, "verify", "--all")
    assert code == 4 and "nothing was verified" in err


def object_path(root: Path, bundle: Path) -> Path:
    import hashlib

    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    return root / "objects" / "sha256" / digest[:2] / digest


def test_bit_rot_is_reported_loudly_and_recorded(root: Path, quickstart_bundle: Path) -> None:
    cli(root, "add", str(quickstart_bundle))
    stored = object_path(root, quickstart_bundle)
    os.chmod(stored, 0o644)
    data = bytearray(stored.read_bytes())
    data[100] ^= 0x01
    stored.write_bytes(bytes(data))
    code, out, err = cli(root, "verify", "--all")
    assert code == 3
    assert "BIT ROT in quickstart@1.0.0" in err
    assert out.startswith("rotted")
    assert names(root, "--status", "rotted") == ["quickstart@1.0.0"]


def test_readding_the_good_file_repairs_a_rotted_object(
    root: Path, quickstart_bundle: Path
) -> None:
    cli(root, "add", str(quickstart_bundle))
    stored = object_path(root, quickstart_bundle)
    os.chmod(stored, 0o644)
    stored.write_bytes(b"rotten")
    code, out, _ = cli(root, "add", str(quickstart_bundle))
    assert code == 0 and out.startswith("repaired quickstart@1.0.0") and "present" not in out
    assert stored.read_bytes() == quickstart_bundle.read_bytes()
    assert events(root)[-1]["event"] == "repair"


def test_missing_object_is_reported(root: Path, quickstart_bundle: Path) -> None:
    cli(root, "add", str(quickstart_bundle))
    object_path(root, quickstart_bundle).unlink()
    code, out, err = cli(root, "verify", "quickstart@1.0.0")
    assert code == 3
    assert out.startswith("missing") and "is missing" in err


def test_a_bundle_the_verifier_rejects_is_recorded_as_rejected(
    root: Path, quickstart_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli(root, "add", str(quickstart_bundle))
    code, out, _ = cli(root, "verify", "--all", "--max-file-bytes", "10", "--json", "-")
    assert code == 3
    result = json.loads(out)["results"][0]
    assert result["result"] == "rejected"
    assert result["detail"]["problems"][0]["code"].startswith("limit.")


# -- export -------------------------------------------------------------------------------


def test_export_writes_the_stored_bytes(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    cli(root, "add", str(quickstart_bundle))
    target = tmp_path / "exported.tar.gz"
    code, out, _ = cli(root, "export", "quickstart@1.0.0", "-o", str(target))
    assert code == 0 and "exported quickstart@1.0.0" in out
    assert target.read_bytes() == quickstart_bundle.read_bytes()
    assert events(root)[-1]["event"] == "export"


def test_export_refuses_a_rotted_object_and_leaves_no_file(
    root: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    cli(root, "add", str(quickstart_bundle))
    stored = object_path(root, quickstart_bundle)
    os.chmod(stored, 0o644)
    data = bytearray(stored.read_bytes())
    data[200] ^= 0xFF
    stored.write_bytes(bytes(data))
    code, _, err = cli(root, "export", "quickstart@1.0.0", "-o", str(tmp_path / "x.tar.gz"))
    assert code == 3 and "bit rot" in err
    assert list(tmp_path.glob("*x.tar.gz*")) == []
    assert events(root)[-1]["event"] == "refuse"


# -- the CLI's help -------------------------------------------------------------------------


def test_every_archive_command_help_has_an_example() -> None:
    group = main.get_command(click.Context(main), "archive")
    paths = [["archive"]]
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        paths.append(["archive", name])
        for sub in getattr(command, "commands", {}):
            paths.append(["archive", name, sub])
    assert len(paths) >= 10
    for path in paths:
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0 and "Example" in result.stdout, path


def test_sqlite_busy_timeout_is_set(root: Path) -> None:
    with Archive.open(root) as archive:
        assert archive.conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
        with pytest.raises(ArchiveError):
            archive.resolve("0" * 64)
    assert sql(root, "SELECT count(*) FROM audit_log")[0][0] >= 1  # not left locked


# -- worker processes ----------------------------------------------------------------------


def jobs_for(root: Path) -> list[reverify.Job]:
    with Archive.open(root) as archive:
        return [reverify.Job(str(root), b.digest) for b in archive.list_bundles()]


def failed(job: reverify.Job, why: str) -> reverify.Reverification:
    return reverify.Reverification(job.digest, "error", {}, [], {"message": why})


def test_verification_runs_the_library_verify_in_worker_processes(three: Path) -> None:
    outcomes = list(reverify.run(jobs_for(three), 2, failed, archive_workers.pid_of_worker))
    assert len(outcomes) == 3
    assert all(o.detail["pid"] != os.getpid() for o in outcomes)
    assert sorted(o.result for o in outcomes) == ["contradicted", "supported", "supported"]


def test_a_worker_that_dies_costs_only_its_own_bundle(
    three: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = jobs_for(three)
    monkeypatch.setenv("ARCHIVE_TEST_KILLER", jobs[0].digest)
    outcomes = {o.digest: o for o in reverify.run(jobs, 2, failed, archive_workers.die_on_other)}
    assert outcomes[jobs[0].digest].result == "error"
    assert "worker process died" in outcomes[jobs[0].digest].detail["message"]
    assert {outcomes[j.digest].result for j in jobs[1:]} <= {"supported", "contradicted"}


def test_progress_bar_only_on_a_terminal(three: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bundler.cli.archive import verifying as archive_verify

    code, out, err = cli(three, "verify", "--all")
    assert code == 1 and "verifying" not in err
    monkeypatch.setattr(archive_verify, "on_terminal", lambda: True)
    code, out, err = cli(three, "verify", "--all")
    assert code == 1 and "verifying" in err
    assert "3 bundle(s) verified" in out  # the lines are printed after the bar


def test_a_refusal_names_the_file_given_not_the_staged_copy(root: Path, tmp_path: Path) -> None:
    junk = tmp_path / "junk.bundle.tar.gz"
    junk.write_bytes(b"not a bundle")
    code, _, err = cli(root, "add", str(junk))
    assert code == 3
    assert "junk.bundle.tar.gz: is neither gzip- nor zstd-compressed" in err
    assert ".partial" not in err


def test_checkpoint_that_cannot_be_written_out_says_it_was_issued(
    root: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, out, err = cli(root, "checkpoint", "-o", str(blocker / "cp.json"))
    assert code == 2
    assert "the checkpoint was issued" in err and json.loads(out)["checkpoint"]["size"] == 1
    assert len(list((root / "checkpoints").iterdir())) == 1
