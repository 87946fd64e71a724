"""The archive for audit: every fact of the index is checked against the audit log (each
edit an attacker with write access could make is caught by name), the index can be
rebuilt from the log, trust changes are logged, a read-only archive can be audited, and a
bundle is found by the identity a report prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.errors import Problem
from bundler.signatures.signing import new_private_key, public_of
from bundler.store import Archive
from tests.archive_support import cli, db, flip_expectation, rebadge, sql


@pytest.fixture(scope="module")
def three_once(tmp_path_factory: pytest.TempPathFactory, quickstart_bundle: Path) -> Path:
    """quickstart 1.0.0 (supported), other 1.0.0 (contradicted), other 1.1.0 (unverified),
    made once (the verify runs in worker processes); each test gets its own copy."""
    work = tmp_path_factory.mktemp("archive-audit")
    root = work / "archive"
    Archive.init(root).close()
    contradicted = rebadge(
        quickstart_bundle, work / "o1.tar.gz", name="other", edit=flip_expectation
    )
    later = rebadge(quickstart_bundle, work / "o2.tar.gz", name="other", version="1.1.0")
    assert cli(root, "add", str(quickstart_bundle), str(contradicted), str(later))[0] == 0
    assert cli(root, "verify", "quickstart@1.0.0", "other@1.0.0")[0] == 1
    return root


@pytest.fixture
def three(tmp_path: Path, three_once: Path) -> Path:
    """A copy of that archive, for this test alone to change."""
    return Path(shutil.copytree(three_once, tmp_path / "archive", symlinks=True))


def problems(root: Path) -> list[Problem]:
    with Archive.open(root, check_checkpoint=False, read_only=True) as archive:
        return archive.verify_log().problems


def digest_of(root: Path, selector: str) -> str:
    code, out, _ = cli(root, "show", selector, "--json", "-")
    assert code == 0
    return str(json.loads(out)["bundle"]["digest"])


def caught(root: Path, where: str, code: str, *words: str, by_verify: bool = True) -> None:
    """``log verify`` exits 3 naming the row (``where``) with ``code`` and ``words``, and
    ``archive verify`` refuses to run on the index (it checks each bundle it verifies
    against that bundle's own records: ``by_verify`` False for an edit no bundle's own
    records show, left to ``log verify``, issue 47)."""
    found = [p for p in problems(root) if where in p.where and p.code == code]
    assert found, problems(root)
    assert all(any(w in p.message for p in found) for w in words), found
    exit_code, _, err = cli(root, "log", "verify")
    assert exit_code == 3 and f"[{code}]" in err and where in err
    if not by_verify:
        return
    before = sql(root, "SELECT count(*) FROM verifications")
    exit_code, _, err = cli(root, "verify", "--all")
    assert exit_code == 3 and "does not match its audit log" in err and where in err
    assert sql(root, "SELECT count(*) FROM verifications") == before  # nothing ran


def snapshot(root: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table but the log, row by row (what a rebuild must restore)."""
    tables = ["meta", "bundles", "bundle_signers", "claims", "verifications", "claim_results"]
    with db(root) as conn:
        return {t: sorted(map(tuple, conn.execute(f"SELECT * FROM {t}"))) for t in tables}


def test_untouched_index_reconciles_with_its_log(three: Path) -> None:
    assert problems(three) == []
    code, out, _ = cli(three, "log", "verify")
    assert code == 0 and "audit log consistent" in out


# -- each edit of the index is caught, named row by row ----------------------------------


def test_edited_last_result_is_caught(three: Path) -> None:
    digest = digest_of(three, "other@1.0.0")
    sql(three, "UPDATE bundles SET last_result = 'supported' WHERE digest = ?", [digest])
    caught(three, f"bundle {digest}", "index.altered", "last_result", "'contradicted'")


def test_edited_claim_status_is_caught(three: Path) -> None:
    sql(three, "UPDATE claim_results SET status = 'supported' WHERE status = 'contradicted'")
    caught(three, "claim results of verification", "index.altered", "supported")


def test_deleted_verification_is_caught(three: Path) -> None:
    (vid,) = sql(three, "SELECT max(id) FROM verifications")[0]
    sql(three, "DELETE FROM claim_results WHERE verification = ?", [vid])
    sql(three, "DELETE FROM verifications WHERE id = ?", [vid])
    caught(three, f"verification {vid}", "index.missing", "the history has no row")


def test_deleted_bundle_row_is_caught(three: Path) -> None:
    digest = digest_of(three, "other@1.1.0")
    for table in ("claims", "bundle_signers", "bundles"):
        sql(three, f"DELETE FROM {table} WHERE digest = ?", [digest])
    # a bundle the index no longer lists is not one archive verify is asked to verify: its
    # rows are missing from the whole index, which log verify compares with the whole log
    caught(three, f"bundle {digest}", "index.missing", "other@1.1.0 was added", by_verify=False)


def test_rewritten_claim_statement_is_caught(three: Path) -> None:
    digest = digest_of(three, "quickstart@1.0.0")
    sql(
        three, "UPDATE claims SET statement = 'The check always passes.' WHERE digest = ?", [digest]
    )
    caught(three, f"claims of bundle {digest}", "index.altered", "The check always passes.")


def test_replaced_manifest_is_caught(three: Path) -> None:
    digest = digest_of(three, "quickstart@1.0.0")
    sql(
        three,
        "UPDATE bundles SET manifest = (SELECT manifest FROM bundles WHERE version = '1.1.0') "
        "WHERE digest = ?",
        [digest],
    )
    caught(three, f"bundle {digest}", "index.altered", "the manifest was replaced")


def test_replaced_manifest_and_identity_are_caught(three: Path) -> None:
    digest = digest_of(three, "quickstart@1.0.0")
    sql(
        three,
        "UPDATE bundles SET (manifest, identity) = (SELECT manifest, identity FROM bundles "
        "WHERE version = '1.1.0') WHERE digest = ?",
        [digest],
    )
    caught(three, f"bundle {digest}", "index.altered", "identity")


def test_edited_verification_exit_code_is_caught(three: Path) -> None:
    sql(three, "UPDATE verifications SET exit_code = 0 WHERE result = 'contradicted'")
    caught(three, "verification", "index.altered", "exit_code")


def test_edited_verification_detail_is_caught(three: Path) -> None:
    sql(three, "UPDATE verifications SET detail = '{}' WHERE result = 'contradicted'")
    caught(three, "verification", "index.altered", "detail")


def test_edited_verification_environment_is_caught(three: Path) -> None:
    sql(three, 'UPDATE verifications SET environment = \'{"python": "2.7"}\'')
    caught(three, "verification", "index.altered", "environment")


def test_verification_repointed_at_another_bundle_is_caught(three: Path) -> None:
    other = digest_of(three, "other@1.1.0")
    sql(three, "UPDATE verifications SET digest = ? WHERE result = 'contradicted'", [other])
    caught(three, "verification", "index.altered", "digest")


def test_edited_who_added_a_bundle_and_when_is_caught(three: Path) -> None:
    digest = digest_of(three, "quickstart@1.0.0")
    sql(
        three,
        "UPDATE bundles SET added_by = 'alice@elsewhere', added_at = '2020-01-01T00:00:00Z' "
        "WHERE digest = ?",
        [digest],
    )
    caught(three, f"bundle {digest}", "index.altered", "added_by", "added_at")


def test_edited_title_and_signing_keys_are_caught(three: Path) -> None:
    digest = digest_of(three, "quickstart@1.0.0")
    sql(three, "UPDATE bundles SET title = 'Another report' WHERE digest = ?", [digest])
    sql(three, "INSERT INTO bundle_signers VALUES (?, ?, 'alice')", [digest, "ab" * 32])
    caught(three, f"bundle {digest}", "index.altered", "title", "signing keys")


def test_edited_archive_id_is_caught(three: Path) -> None:
    sql(three, "UPDATE meta SET value = 'another' WHERE key = 'archive'")
    found = [p for p in problems(three) if p.where == "index meta 'archive'"]
    assert [p.code for p in found] == ["index.altered"]


def test_unlogged_claim_result_is_caught(three: Path) -> None:
    (vid,) = sql(three, "SELECT min(id) FROM verifications")[0]
    sql(three, "INSERT INTO claim_results VALUES (?, 'extra', 'supported', 'made up')", [vid])
    caught(three, f"claim results of verification {vid}: extra", "index.unlogged", "made up")


# -- the index rebuilt from the log and the store --------------------------------------


def test_rebuild_restores_every_row_the_log_describes(three: Path) -> None:
    before = snapshot(three)
    digest = digest_of(three, "other@1.0.0")
    sql(three, "UPDATE bundles SET last_result = 'supported' WHERE digest = ?", [digest])
    sql(three, "UPDATE claims SET statement = 'rewritten'")
    sql(three, "DELETE FROM claim_results")
    code, out, _ = cli(three, "rebuild")
    assert code == 0 and "3 bundle(s), 2 verification(s)" in out
    assert snapshot(three) == before
    assert problems(three) == []
    assert (
        json.loads(sql(three, "SELECT record FROM audit_log ORDER BY seq DESC")[0][0])["event"]
        == "rebuild"
    )
    assert list(three.glob("index.sqlite.before-rebuild-*"))  # the old index is kept
    code, out, _ = cli(three, "list", "--status", "contradicted", "--json", "-")
    assert [b["name"] for b in json.loads(out)["bundles"]] == ["other"]


def test_rebuild_takes_a_deleted_rows_manifest_from_the_store(three: Path) -> None:
    before = snapshot(three)
    digest = digest_of(three, "other@1.1.0")
    for table in ("claims", "bundle_signers", "bundles"):
        sql(three, f"DELETE FROM {table} WHERE digest = ?", [digest])
    assert cli(three, "rebuild")[0] == 0
    assert snapshot(three) == before


def test_rebuild_refuses_a_broken_log(three: Path) -> None:
    sql(three, "UPDATE audit_log SET record = CAST('{}' AS BLOB) WHERE seq = 2")
    code, _, err = cli(three, "rebuild")
    assert code == 3 and "chain is broken" in err
    assert not list(three.glob("index.sqlite.before-rebuild-*"))


# -- trust changes are events in the log ------------------------------------------------


@pytest.fixture
def keyfile(tmp_path: Path) -> Path:
    path = tmp_path / "mallory.pub"
    path.write_text(f"ed25519:{public_of(new_private_key()).b64}\n")
    return path


def last_event(root: Path) -> dict[str, object]:
    record = sql(root, "SELECT record FROM audit_log ORDER BY seq DESC LIMIT 1")[0][0]
    return dict(json.loads(record))


def test_key_appended_to_trust_toml_behind_the_logs_back_is_refused(
    three: Path, keyfile: Path, quickstart_bundle: Path
) -> None:
    public = keyfile.read_text().strip()
    (three / "trust.toml").write_text(
        f'[[key]]\nname = "mallory"\npublic_key = "{public}"\nallow_code = true\n'
    )
    code, _, err = cli(three, "verify", "--all")
    assert code == 3 and "[trust.unlogged]" in err and "allow_code = true" in err
    assert cli(three, "add", str(quickstart_bundle))[0] == 3
    assert "trust.unlogged" in {p.code for p in problems(three)}
    assert cli(three, "trust", "list")[0] == 3
    code, out, _ = cli(three, "trust", "restore")  # back to what the log says: no key
    assert code == 0 and "0 key(s)" in out
    assert not (three / "trust.toml").exists()
    assert cli(three, "verify", "quickstart@1.0.0")[0] == 0


def test_trust_changes_are_logged_with_each_keys_permissions(three: Path, keyfile: Path) -> None:
    code, out, _ = cli(three, "trust", "add", str(keyfile), "--name", "alice", "--allow-code")
    assert code == 0 and "logged" in out
    event = last_event(three)
    assert event["event"] == "trust"
    (key,) = event["data"]["keys"]  # type: ignore[index]
    assert key["name"] == "alice" and key["allow_code"] is True and key["revoked"] is False
    assert len(key["keyid"]) == 64
    code, out, _ = cli(three, "trust", "list")
    assert code == 0 and "alice" in out and "allow_code" in out and "matches the audit log" in out
    assert cli(three, "trust", "revoke", "alice")[0] == 0
    assert last_event(three)["data"]["keys"][0]["revoked"] is True  # type: ignore[index]
    assert cli(three, "trust", "remove", "alice")[0] == 0
    assert last_event(three)["data"]["keys"] == []  # type: ignore[index]
    assert not (three / "trust.toml").exists()
    assert problems(three) == []
    code, _, err = cli(three, "trust", "revoke", "nobody")
    assert code == 2 and "trusts no key named 'nobody'" in err


def test_allow_code_flipped_in_trust_toml_is_refused(three: Path, keyfile: Path) -> None:
    assert cli(three, "trust", "add", str(keyfile), "--name", "alice")[0] == 0
    store = three / "trust.toml"
    store.write_text(store.read_text().replace("allow_code = false", "allow_code = true"))
    code, _, err = cli(three, "verify", "--all")
    assert code == 3 and "[trust.altered]" in err and "allow_code" in err


def test_trust_given_at_init_is_logged_in_full(tmp_path: Path, keyfile: Path) -> None:
    root = tmp_path / "a"
    assert cli(root, "init", "--trust", str(keyfile))[0] == 0
    init = last_event(root)
    assert init["event"] == "init"
    assert [k["name"] for k in init["data"]["keys"]] == ["mallory.pub"]  # type: ignore[index]
    assert problems(root) == []


# -- a read-only archive can be audited ----------------------------------------------------

READ_ONLY_COMMANDS = [
    ["list"],
    ["list", "--json", "-"],
    ["show", "quickstart@1.0.0"],
    ["log", "verify"],
    ["log", "show", "--tail", "2"],
    ["trust", "list"],
]
WRITING_COMMANDS = [["verify", "--all"], ["checkpoint"]]
# What imports the same modules as each command on the writable original without running a
# worker pool there (a pool in that subprocess leaves semaphores the test run trips over).
WARM_UP = {"verify": ["verify", "no-such-bundle"]}

# Runs in a subprocess started as root: the commands once on the writable original (so
# every module is imported), then as the unprivileged user on the read-only copy.
AS_ANOTHER_USER = """
import json, os, sys
from click.testing import CliRunner
from bundler.cli import main
original, copy, uid = sys.argv[1], sys.argv[2], int(sys.argv[3])
commands, warm_up = json.loads(sys.argv[4]), json.loads(sys.argv[5])
runner = CliRunner()
for command in warm_up:
    runner.invoke(main, ["archive", "--archive", original, *command])
os.setgroups([])
os.setgid(uid)
os.setuid(uid)
results = []
for command in commands:
    r = runner.invoke(main, ["archive", "--archive", copy, *command])
    bug = r.exception if not isinstance(r.exception, (SystemExit, type(None))) else None
    results.append([r.exit_code, r.stdout, r.stderr, repr(bug) if bug else None])
print(json.dumps(results))
"""


@pytest.fixture
def read_only_copy(three: Path) -> Iterator[Path]:
    """A copy of the archive no one may write: folders 0555, files 0444, where any user can
    reach it (pytest's own folders are private to root)."""
    shared = Path(tempfile.mkdtemp(prefix="reprobundle-readonly-"))
    os.chmod(shared, 0o755)
    copy = shared / "archive"
    shutil.copytree(three, copy)
    for folder, _, files in os.walk(copy, topdown=False):
        for name in files:
            os.chmod(Path(folder) / name, 0o444)
        os.chmod(folder, 0o555)
    yield copy
    for folder, _, _ in os.walk(shared):
        os.chmod(folder, 0o755)
    shutil.rmtree(shared)


def run_read_only(three: Path, copy: Path, commands: list[list[str]]) -> list[list[object]]:
    """Each command on the copy as a user who cannot write it: ``nobody`` when the tests
    run as root (root writes anything), else this user."""
    if os.geteuid() != 0:
        return [[*cli(copy, *command), None] for command in commands]
    import pwd

    try:
        uid = pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("running as root and there is no user 'nobody' to read the archive as")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            AS_ANOTHER_USER,
            str(three),
            str(copy),
            str(uid),
            json.dumps(commands),
            json.dumps([WARM_UP.get(c[0], c) for c in commands]),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_read_only_commands_work_on_a_read_only_archive(three: Path, read_only_copy: Path) -> None:
    files_before = sorted(p.name for p in read_only_copy.rglob("*"))
    results = run_read_only(three, read_only_copy, READ_ONLY_COMMANDS)
    for command, (code, out, err, bug) in zip(READ_ONLY_COMMANDS, results, strict=True):
        assert bug is None and code == 0, (command, out, err)
    listed, as_json, shown, verified, _, trusted = (r[1] for r in results)
    assert "quickstart@1.0.0" in str(listed) and "3 bundle(s)" in str(listed)
    assert len(json.loads(str(as_json))["bundles"]) == 3
    assert "History   1 verification(s)" in str(shown)
    assert "audit log consistent" in str(verified)
    assert "the archive trusts no key" in str(trusted)
    assert sorted(p.name for p in read_only_copy.rglob("*")) == files_before  # no -wal, -shm


def test_writing_commands_on_a_read_only_archive_fail_with_a_message(
    three: Path, read_only_copy: Path
) -> None:
    results = run_read_only(three, read_only_copy, WRITING_COMMANDS)
    for command, (code, out, err, bug) in zip(WRITING_COMMANDS, results, strict=True):
        assert bug is None and code == 2, (command, out, err)
        assert "read-only" in str(err) or "writable" in str(err), err


def test_log_verify_on_a_read_only_archive_still_catches_an_edit(
    three: Path, tmp_path: Path
) -> None:
    sql(three, "UPDATE bundles SET last_result = 'supported'")
    for folder, _, files in os.walk(three, topdown=False):
        for name in files:
            os.chmod(Path(folder) / name, 0o444)
        os.chmod(folder, 0o555)
    try:
        code, _, err = cli(three, "log", "verify")
    finally:
        for folder, _, _ in os.walk(three):
            os.chmod(folder, 0o755)
    assert code == 3 and "[index.altered]" in err and "last_result" in err


# -- a bundle is found by identity or file digest --------------------------------------------


def identity_and_digest(root: Path, selector: str) -> tuple[str, str]:
    bundle = json.loads(cli(root, "show", selector, "--json", "-")[1])["bundle"]
    return str(bundle["identity"]), str(bundle["digest"])


def test_identity_a_report_prints_finds_its_bundle(three: Path) -> None:
    identity, digest = identity_and_digest(three, "quickstart@1.0.0")
    assert identity != digest
    for selector in (identity, f"sha256:{identity}", identity[:8], digest, digest[:8]):
        code, out, _ = cli(three, "show", selector)
        assert code == 0 and "quickstart@1.0.0" in out, selector
        assert f"Identity  sha256:{identity}" in out and f"Digest    sha256:{digest}" in out
    code, out, _ = cli(three, "verify", identity[:12])
    assert code == 0 and "quickstart@1.0.0" in out


def test_a_prefix_shorter_than_8_hex_digits_is_refused_saying_so(three: Path) -> None:
    identity, _ = identity_and_digest(three, "quickstart@1.0.0")
    code, _, err = cli(three, "show", identity[:7])
    assert code == 2 and "at least 8 hex digits" in err


def test_an_unknown_identity_is_named(three: Path) -> None:
    code, _, err = cli(three, "show", "sha256:" + "0" * 64)
    assert code == 2 and "no bundle in the archive has the file digest or identity" in err


def test_a_prefix_of_two_bundles_is_ambiguous(three: Path) -> None:
    identity, _ = identity_and_digest(three, "quickstart@1.0.0")
    sql(three, "UPDATE bundles SET identity = ? WHERE version = '1.1.0'", [identity[:8] + "f" * 56])
    code, _, err = cli(three, "show", identity[:8])
    assert code == 2 and "more than one bundle" in err and "more hex digits" in err


def test_list_prints_identity_and_digest(three: Path) -> None:
    identity, digest = identity_and_digest(three, "quickstart@1.0.0")
    code, out, _ = cli(three, "list")
    assert code == 0
    (line,) = [line for line in out.splitlines() if line.startswith("quickstart@1.0.0")]
    assert identity[:12] in line and digest[:12] in line
    assert "IDENTITY" in out and "DIGEST" in out
    bundles = json.loads(cli(three, "list", "--json", "-")[1])["bundles"]
    assert {(b["identity"], b["digest"]) for b in bundles} >= {(identity, digest)}


# -- a log written by the previous release (record format 1) --------------------------------


def as_previous_release_wrote_it(root: Path) -> None:
    """Rewrite every record in format 1 (without the fields format 2 added), re-chained,
    and the index's times a little apart from the records' (as that release took them)."""
    from bundler.store import auditlog

    prev = auditlog.GENESIS
    with db(root) as conn:
        for seq, record in conn.execute(
            "SELECT seq, record FROM audit_log ORDER BY seq"
        ).fetchall():
            value = json.loads(record)
            value["v"], value["prev"] = 1, prev
            added = ("title", "claims") if value["event"] == "add" else ("outcome",)
            for extra in ("keys", *added):
                value["data"].pop(extra, None)
            data = auditlog.canonical(value)
            prev = auditlog.record_hash(data)
            conn.execute(
                "UPDATE audit_log SET record = ?, hash = ? WHERE seq = ?", (data, prev, seq)
            )
        for table, column in (("bundles", "added_at"), ("verifications", "at"), ("meta", "value")):
            where = " WHERE key = 'created'" if table == "meta" else ""
            conn.execute(
                f"UPDATE {table} SET {column} = substr({column}, 1, 20) || '000000Z'{where}"
            )


def test_a_log_of_the_previous_release_still_reconciles(three: Path) -> None:
    as_previous_release_wrote_it(three)
    assert problems(three) == []
    digest = digest_of(three, "other@1.0.0")
    sql(three, "UPDATE bundles SET last_result = 'supported' WHERE digest = ?", [digest])
    caught(three, f"bundle {digest}", "index.altered", "last_result")


def test_rebuild_from_a_log_of_the_previous_release_keeps_what_the_log_lacks(three: Path) -> None:
    as_previous_release_wrote_it(three)
    whys = sql(three, "SELECT verification, claim_id, why FROM claim_results ORDER BY 1, 2")
    assert cli(three, "rebuild")[0] == 0
    assert problems(three) == []
    assert sql(three, "SELECT verification, claim_id, why FROM claim_results ORDER BY 1, 2") == whys
