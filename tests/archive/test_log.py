"""The audit log: each attack on the hash chain or a checkpoint is detected by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bundler.store import Archive, auditlog, checkpoint
from tests.archive_support import cli, db, rebadge, sql


@pytest.fixture(scope="module")
def made_once(tmp_path_factory: pytest.TempPathFactory, quickstart_bundle: Path) -> Path:
    """An archive with a few events: init, two adds, a verify, an export (made once: the
    verify runs in a worker process; each test gets its own copy)."""
    work = tmp_path_factory.mktemp("archive-log")
    path = work / "archive"
    second = rebadge(quickstart_bundle, work / "second.tar.gz", version="1.1.0")
    with Archive.init(path) as archive:
        archive.add([quickstart_bundle, second])
        archive.verify(["quickstart@1.0.0"])
        archive.export("quickstart@1.1.0", work / "exported.tar.gz")
    return path


@pytest.fixture
def root(tmp_path: Path, made_once: Path) -> Path:
    """A copy of that archive, for this test alone to change."""
    return Path(shutil.copytree(made_once, tmp_path / "archive", symlinks=True))


@pytest.fixture
def kept(root: Path, tmp_path: Path) -> Path:
    """A checkpoint of the log as it is now, kept outside the archive."""
    target = tmp_path / "elsewhere" / "checkpoint.json"
    code, out, _ = cli(root, "checkpoint", "-o", str(target))
    assert code == 0
    assert json.loads(out) == json.loads(target.read_text())
    return target


def codes(root: Path, *checkpoints: Path) -> set[str]:
    with Archive.open(root, check_checkpoint=False) as archive:
        return {p.code for p in archive.verify_log(checkpoints).problems}


def rows(root: Path) -> list[tuple[int, bytes, str]]:
    return [
        (s, bytes(r), h)
        for s, r, h in sql(root, "SELECT seq, record, hash FROM audit_log ORDER BY seq")
    ]


def rewrite_from(root: Path, start: int, change: dict[str, object]) -> None:
    """Rewrite record ``start`` and re-chain everything after it with fresh hashes: the
    attack a hash chain alone cannot stop."""
    all_rows = rows(root)
    prev = all_rows[start - 2][2] if start > 1 else auditlog.GENESIS
    with db(root) as conn:
        for seq, record, _ in all_rows[start - 1 :]:
            value = json.loads(record)
            if seq == start:
                value["data"].update(change)
            value["prev"] = prev
            data = auditlog.canonical(value)
            prev = auditlog.record_hash(data)
            conn.execute(
                "UPDATE audit_log SET record = ?, hash = ? WHERE seq = ?", (data, prev, seq)
            )


def test_untouched_log_verifies_against_its_checkpoints(root: Path, kept: Path) -> None:
    code, out, _ = cli(root, "log", "verify", "--checkpoint", str(kept))
    assert code == 0
    assert (
        "audit log consistent" in out and "1 checkpoint(s)" in out
    )  # the copy of the one kept counts once
    issued = json.loads(kept.read_text())["checkpoint"]
    last = json.loads(rows(root)[-1][1])
    assert last["event"] == "checkpoint"
    assert last["data"] == {"size": issued["size"], "head": issued["head"]}
    assert last["seq"] == issued["size"] + 1


def test_every_event_is_logged_in_order(root: Path) -> None:
    events = [json.loads(r)["event"] for _, r, _ in rows(root)]
    assert events == ["init", "add", "add", "verify", "export"]


def test_in_place_edit_is_detected(root: Path) -> None:
    seq, record, _ = rows(root)[1]
    edited = record.replace(b'"version":"1.0.0"', b'"version":"9.9.9"')
    sql(root, "UPDATE audit_log SET record = ? WHERE seq = ?", (edited, seq))
    code, _, err = cli(root, "log", "verify")
    assert code == 3
    assert "[log.edited]" in err and "NOT consistent" in err


def test_edit_with_a_recomputed_hash_breaks_the_next_link(root: Path) -> None:
    seq, record, _ = rows(root)[1]
    edited = record.replace(b'"version":"1.0.0"', b'"version":"9.9.9"')
    sql(
        root,
        "UPDATE audit_log SET record = ?, hash = ? WHERE seq = ?",
        (edited, auditlog.record_hash(edited), seq),
    )
    assert "log.chain" in codes(root)


def test_reordering_records_is_detected(root: Path) -> None:
    (s2, r2, h2), (s3, r3, h3) = rows(root)[1:3]
    with db(root) as conn:
        conn.execute("UPDATE audit_log SET record = ?, hash = ? WHERE seq = ?", (r3, h3, s2))
        conn.execute("UPDATE audit_log SET record = ?, hash = ? WHERE seq = ?", (r2, h2, s3))
    assert {"log.reordered", "log.chain"} <= codes(root)


def test_removing_a_record_in_the_middle_is_detected(root: Path) -> None:
    sql(root, "DELETE FROM audit_log WHERE seq = 3")
    assert {"log.gap", "log.chain"} <= codes(root)


def test_truncation_is_detected_against_a_kept_checkpoint(root: Path, kept: Path) -> None:
    last = rows(root)[-1][0]
    sql(root, "DELETE FROM audit_log WHERE seq >= ?", (last - 1,))
    found = codes(root, kept)
    assert "log.truncated" in found


def test_a_rewritten_log_with_fresh_hashes_is_caught_only_by_a_checkpoint(
    root: Path, kept: Path
) -> None:
    rewrite_from(root, 4, {"result": "contradicted"})
    with db(root) as conn:
        conn.execute("UPDATE verifications SET result = 'contradicted', exit_code = 1")
        conn.execute("UPDATE bundles SET last_result = 'contradicted' WHERE last_verification")
        conn.execute("DELETE FROM meta WHERE key = 'last_checkpoint'")
        # and the record of issuing the checkpoint (the index remembers what the log says),
        # with its row of the log's lookup table
        conn.execute("DELETE FROM log_keys WHERE seq = (SELECT max(seq) FROM audit_log)")
        conn.execute("DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)")
    for stored in (root / "checkpoints").iterdir():
        stored.unlink()
    assert codes(root) == set()  # the chain itself is consistent again...
    code, _, err = cli(root, "log", "verify", "--checkpoint", str(kept))
    assert code == 3  # ...but not with the checkpoint kept elsewhere
    assert "[log.rewritten]" in err


def test_the_tool_fails_loudly_when_the_log_no_longer_matches_its_last_checkpoint(
    root: Path, kept: Path
) -> None:
    rewrite_from(root, 2, {"name": "renamed"})
    code, _, err = cli(root, "list")
    assert code == 3
    assert "no longer matches the last checkpoint this archive issued" in err
    assert cli(root, "add", str(kept))[0] == 3  # nothing is appended to a broken log


def test_edited_head_record_is_not_extended(root: Path, quickstart_bundle: Path) -> None:
    seq, record, _ = rows(root)[-1]
    sql(
        root,
        "UPDATE audit_log SET record = ? WHERE seq = ?",
        (record.replace(b"export", b"exporT"), seq),
    )
    code, _, err = cli(root, "add", str(quickstart_bundle))
    assert code == 3
    assert "last record was edited" in err


def test_an_altered_checkpoint_signature_is_detected(root: Path, kept: Path) -> None:
    document = json.loads(kept.read_text())
    document["checkpoint"]["size"] -= 1
    kept.write_text(json.dumps(document))
    assert "checkpoint.signature" in codes(root, kept)


def test_a_checkpoint_of_another_archive_is_detected(
    root: Path, kept: Path, tmp_path: Path
) -> None:
    with Archive.init(tmp_path / "other") as other:
        foreign = tmp_path / "foreign.json"
        foreign.write_text(other.checkpoint().to_json())
    assert {"checkpoint.archive", "checkpoint.key"} <= codes(root, foreign)


def test_a_malformed_checkpoint_file_is_reported(root: Path, tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"checkpoint": {}, "signature": "x"}')
    assert "checkpoint.format" in codes(root, junk)


def test_index_rows_changed_behind_the_logs_back_are_detected(root: Path) -> None:
    with db(root) as conn:
        conn.execute("UPDATE verifications SET result = 'contradicted'")
        conn.execute("UPDATE bundles SET version = '7.0.0' WHERE version = '1.1.0'")
    assert {"index.altered"} <= codes(root)
    sql(
        root,
        "INSERT INTO verifications (digest, at, tool, result, exit_code, environment, detail) "
        "SELECT digest, 'now', 'x', 'supported', 0, '{}', '{}' FROM bundles LIMIT 1",
    )
    assert "index.unlogged" in codes(root)


def test_checkpoint_signature_is_domain_separated_ed25519(tmp_path: Path) -> None:
    key_path = tmp_path / "k.key"
    public = checkpoint.generate_key(key_path)
    key = checkpoint.load_private(key_path)
    issued = checkpoint.issue(key, "a", 3, "h" * 64, "t")
    assert checkpoint.verify_signature(public, issued.body(), issued.signature)
    assert not checkpoint.verify_signature(public, {**issued.body(), "size": 4}, issued.signature)
    # a plain signature over the same JSON (without the domain prefix) is not accepted
    plain = key.sign(auditlog.canonical(issued.body()))
    assert not checkpoint.verify_signature(public, issued.body(), plain)


def test_record_bytes_must_be_canonical() -> None:
    record = auditlog.make_record(1, auditlog.GENESIS, "t", "init", "a", "tool", {"k": 1})
    spaced = json.dumps(json.loads(record)).encode()
    state = auditlog.walk([auditlog.Row(1, spaced, auditlog.record_hash(spaced))])
    assert [p.code for p in state.problems] == ["log.record"]


def test_a_damaged_record_of_the_last_checkpoint_is_reported(root: Path, kept: Path) -> None:
    sql(root, "UPDATE meta SET value = 'garbage' WHERE key = 'last_checkpoint'")
    code, _, err = cli(root, "list")
    assert code == 3 and "[log.checkpoint_record]" in err
    assert "log.checkpoint_record" in codes(root, kept)
