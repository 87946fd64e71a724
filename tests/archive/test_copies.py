"""Issue 45 item 3: the archive holds a redacted copy and its full bundle under one
identity, and says which it has.

A redacted copy (``reprobundle redact``) has the full bundle's manifest, so its identity,
and a file digest of its own. Either may be added first; the other is then stored beside
it, not refused. A file of the same NAME@VERSION with another identity is refused as
before, and so is a second full copy in other bytes. ``show``, ``list``, ``verify`` and
``export`` say which copy they read; the log says which copy each add and verification
was of, so that a replay or a rebuild of the index gives the same rows; an index of
schema 4 (written by the code of commit c2648ab, ``tests/data/archive-schema4/``) is
migrated and learns from its objects which rows are redacted copies.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from bundler.format.withheld import RECORD_NAME
from bundler.store import index as archive_index
from bundler.store.archive import Archive
from tests.archive_support import cli, sql
from tests.helpers import REPO, read_entries, write_entries
from tests.run.test_withheld import SECRETS, make_redacted

SCHEMA4 = REPO / "tests" / "data" / "archive-schema4"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return make_redacted(tmp_path_factory.mktemp("copies"))


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    root = tmp_path / "archive"
    Archive.init(root).close()
    return root


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def events(root: Path) -> list[dict[str, Any]]:
    with Archive.open(root) as archive:
        return [json.loads(r) for r in archive.log_records()]


def shown(root: Path, selector: str = "two-claims@1.0.0") -> dict[str, Any]:
    code, out, err = cli(root, "show", selector, "--json", "-")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def listed(root: Path) -> list[dict[str, Any]]:
    code, out, err = cli(root, "list", "--json", "-")
    assert code == 0, err
    return json.loads(out)["bundles"]  # type: ignore[no-any-return]


def both_held(root: Path, made: dict[str, Any]) -> None:
    full, redacted = digest(made["signed"]), digest(made["redacted"])
    copies = {c["digest"]: c for c in shown(root)["copies"]}
    assert copies == {
        full: {"digest": full, "copy": "full", "withheld": None, "size": copies[full]["size"]},
        redacted: {
            "digest": redacted,
            "copy": "redacted",
            "withheld": 3,
            "size": copies[redacted]["size"],
        },
    }
    view = shown(root)
    assert view["bundle"]["digest"] == full  # NAME@VERSION stands for the full copy
    assert view["copies_held"] == "full, redacted: 3 files withheld"
    assert {(b["digest"], b["copy"], b["withheld"]) for b in listed(root)} == {
        (full, "full", None),
        (redacted, "redacted", 3),
    }
    code, out, _ = cli(root, "show", "two-claims@1.0.0")
    assert code == 0
    assert "Held      full, redacted: 3 files withheld" in out
    _, out, _ = cli(root, "list")
    assert "redacted:3" in out and " full " in out


def test_a_redacted_copy_is_added_beside_its_full_bundle(root: Path, made: dict[str, Any]) -> None:
    assert cli(root, "add", str(made["signed"]))[0] == 0
    code, out, err = cli(root, "add", str(made["redacted"]))
    assert code == 0, out + err
    both_held(root, made)
    added = [e["data"] for e in events(root) if e["event"] == "add"]
    assert [a["withheld"] for a in added] == [0, 3]


def test_a_full_bundle_is_added_beside_its_redacted_copy(root: Path, made: dict[str, Any]) -> None:
    assert cli(root, "add", str(made["redacted"]))[0] == 0
    assert shown(root)["copies_held"] == "redacted: 3 files withheld"
    code, out, err = cli(root, "add", str(made["signed"]))
    assert code == 0, out + err
    both_held(root, made)
    again = cli(root, "add", str(made["redacted"]), str(made["signed"]))
    assert again[0] == 0 and again[1].count("present  two-claims@1.0.0") == 2


def test_several_redactions_of_one_identity_are_each_kept(
    root: Path, made: dict[str, Any], tmp_path: Path
) -> None:
    from bundler.authoring.redact import redact

    other = redact(made["signed"], [SECRETS[0]], tmp_path / "one.bundle.tar.zst", "x").path
    for bundle in (made["redacted"], other):
        assert cli(root, "add", str(bundle))[0] == 0
    assert shown(root)["copies_held"] == "redacted: 3 files withheld, redacted: 1 files withheld"
    out = str(tmp_path / "x.bundle.tar.zst")
    code, _, err = cli(root, "export", "two-claims@1.0.0", "--copy", "redacted", "-o", out)
    assert code != 0 and "2 redacted copies" in err and "file digest" in err


def test_the_same_name_and_version_with_another_identity_is_still_refused(
    root: Path, made: dict[str, Any], tmp_path: Path
) -> None:
    """A "redacted" copy whose manifest differs from the stored bundle's is not a copy."""
    entries = [e for e in read_entries(made["redacted"]) if "/signatures/" not in e.name]
    doc = tomllib.loads(entries[0].data.decode())
    doc["bundle"]["title"] = "Another bundle under the same NAME@VERSION"
    entries[0].data = tomli_w.dumps(doc).encode()
    forged = write_entries(entries, tmp_path / "forged.bundle.tar.zst")
    assert cli(root, "add", str(made["signed"]))[0] == 0
    code, _, err = cli(root, "add", str(forged))
    assert code == 3
    assert "[add.version_reused]" in err and "another manifest" in err
    assert len(listed(root)) == 1
    refused = [e["data"] for e in events(root) if e["event"] == "refuse"]
    assert refused[-1]["codes"] == ["add.version_reused"]


def test_a_second_full_copy_in_other_bytes_is_still_refused(
    root: Path, made: dict[str, Any]
) -> None:
    """The signed bundle and the unsigned one it was made from: one identity, both full."""
    unsigned = made["tmp"] / "two-claims.bundle.tar.zst"
    assert cli(root, "add", str(unsigned))[0] == 0
    code, _, err = cli(root, "add", str(made["signed"]))
    assert code == 3 and "[add.version_reused]" in err and "in full" in err


def test_a_redacted_copy_whose_record_lies_is_refused(
    root: Path, made: dict[str, Any], tmp_path: Path
) -> None:
    entries = read_entries(made["redacted"])
    record = next(e for e in entries if e.name.endswith("/" + RECORD_NAME))
    start = record.data.index(b'"sha256": "') + 11
    record.data = record.data[:start] + b"0" * 64 + record.data[start + 64 :]
    lying = write_entries(entries, tmp_path / "lie.bundle.tar.zst")
    assert cli(root, "add", str(made["signed"]))[0] == 0
    code, _, err = cli(root, "add", str(lying))
    assert code == 3 and "[withheld.digest]" in err
    assert [b["copy"] for b in listed(root)] == ["full"]


def test_verify_reads_the_full_copy_and_says_which_copy_it_verified(
    root: Path, made: dict[str, Any]
) -> None:
    for bundle in (made["redacted"], made["signed"]):
        assert cli(root, "add", str(bundle))[0] == 0
    code, out, err = cli(root, "verify", "two-claims@1.0.0")
    assert code == 0, out + err
    assert "full copy" in out
    code, out, err = cli(root, "verify", digest(made["redacted"]))  # a file digest: that copy
    assert code == 4, out + err
    assert "redacted copy" in out
    logged = [e["data"] for e in events(root) if e["event"] == "verify"]
    assert [(v["digest"], v["copy"]) for v in logged] == [
        (digest(made["signed"]), "full"),
        (digest(made["redacted"]), "redacted"),
    ]


def test_every_copy_is_held_to_its_digest_by_the_consistency_check(
    root: Path, made: dict[str, Any]
) -> None:
    """``verify --all`` verifies the copy that stands for an identity; the store check still
    covers every copy: a rotted redacted copy beside its full bundle is found."""
    for bundle in (made["signed"], made["redacted"]):
        assert cli(root, "add", str(bundle))[0] == 0
    rotted = digest(made["redacted"])
    stored = root / "objects" / "sha256" / rotted[:2] / rotted
    stored.chmod(0o644)
    stored.write_bytes(stored.read_bytes()[:-1] + b"\0")
    with Archive.open(root) as archive:
        problems = archive.consistency()
    assert [p.where for p in problems] == [f"bundle {rotted}"]
    code, out, err = cli(root, "verify", "--all")
    assert code == 0, out + err  # the full copy, intact
    assert "full copy" in out and "redacted copy" not in out


def test_export_writes_the_full_copy_unless_asked_for_the_redacted_one(
    root: Path, made: dict[str, Any], tmp_path: Path
) -> None:
    for bundle in (made["redacted"], made["signed"]):
        assert cli(root, "add", str(bundle))[0] == 0
    full, redacted = tmp_path / "full.bundle.tar.zst", tmp_path / "r.bundle.tar.zst"
    assert cli(root, "export", "two-claims@1.0.0", "-o", str(full))[0] == 0
    code, out, err = cli(
        root, "export", "two-claims@1.0.0", "--copy", "redacted", "-o", str(redacted)
    )
    assert code == 0, err
    assert "redacted: 3 files withheld" in out
    assert full.read_bytes() == made["signed"].read_bytes()
    assert redacted.read_bytes() == made["redacted"].read_bytes()


def test_export_of_a_copy_not_held_names_what_is_held(
    root: Path, made: dict[str, Any], tmp_path: Path
) -> None:
    assert cli(root, "add", str(made["redacted"]))[0] == 0
    code, _, err = cli(
        root, "export", "two-claims@1.0.0", "--copy", "full", "-o", str(tmp_path / "x.tar.zst")
    )
    assert code == 2
    assert "no full copy" in err and "redacted: 3 files withheld" in err


def test_an_index_with_both_copies_is_what_a_replay_and_a_rebuild_give(
    root: Path, made: dict[str, Any]
) -> None:
    for bundle in (made["signed"], made["redacted"]):
        assert cli(root, "add", str(bundle))[0] == 0
    assert cli(root, "verify", "two-claims")[0] == 0
    before = sorted(sql(root, "SELECT digest, identity, withheld, last_result FROM bundles"))
    assert cli(root, "log", "verify")[0] == 0
    with Archive.open(root) as archive:
        archive.rebuild()
    after = sorted(sql(root, "SELECT digest, identity, withheld, last_result FROM bundles"))
    assert after == before
    assert {w for _, _, w, _ in after} == {None, 3}
    assert cli(root, "log", "verify")[0] == 0


def test_log_verify_finds_a_copy_changed_in_the_index(root: Path, made: dict[str, Any]) -> None:
    for bundle in (made["signed"], made["redacted"]):
        assert cli(root, "add", str(bundle))[0] == 0
    sql(root, "DROP INDEX bundles_full_copy")  # (two full copies: only by hand)
    sql(root, "UPDATE bundles SET withheld = NULL WHERE withheld = 3")  # the redacted one
    code, out, err = cli(root, "log", "verify")
    assert code == 3, out + err
    assert "withheld: the index says None, the log says 3" in out + err


# -- an archive written at schema 4 ------------------------------------------------------


@pytest.fixture()
def old(tmp_path: Path) -> Path:
    """A copy of the archive the code of commit c2648ab wrote (``make.py`` beside it): the
    redacted copy of two-claims@1.0.0 stored, its full bundle refused."""
    root = tmp_path / "old"
    shutil.copytree(SCHEMA4 / "archive", root)
    for empty in ("checkpoints", "tmp", "objects/tmp"):  # (git keeps no empty folder)
        (root / empty).mkdir(exist_ok=True)
    return root


def test_the_fixture_is_an_index_of_schema_4(old: Path) -> None:
    assert sql(old, "PRAGMA user_version") == [(4,)]
    columns = [r[1] for r in sql(old, "PRAGMA table_info(bundles)")]
    assert "withheld" not in columns


def test_an_archive_of_schema_4_is_migrated_and_learns_its_redacted_copies(old: Path) -> None:
    redacted = digest(SCHEMA4 / "two-claims-1.0.0.redacted.bundle.tar.zst")
    full = SCHEMA4 / "two-claims-1.0.0.bundle.tar.zst"
    with Archive.open(old):  # what a command that writes does first (show reads only)
        pass
    view = shown(old)
    assert sql(old, "PRAGMA user_version") == [(archive_index.SCHEMA_VERSION,)]
    assert view["copies_held"] == "redacted: 3 files withheld"
    migrated = [e["data"] for e in events(old) if e["event"] == "migrate"]
    assert migrated == [{"from": 4, "to": 5, "redacted": {redacted: 3}}]
    assert cli(old, "log", "verify")[0] == 0
    code, out, err = cli(old, "add", str(full))  # refused by the old code: stored now
    assert code == 0, out + err
    assert shown(old)["copies_held"] == "full, redacted: 3 files withheld"
    with Archive.open(old) as archive:
        archive.rebuild()  # the old add records say no copy: the migrate record does
    assert sorted(sql(old, "SELECT withheld FROM bundles"), key=str) == [(3,), (None,)]
    assert cli(old, "log", "verify")[0] == 0


def test_a_rebuild_reads_the_copy_from_the_object_when_the_log_never_said(old: Path) -> None:
    """The migration could not read the object (moved away meanwhile): the row stays a full
    copy and the log says the object was unread; a rebuild, the object back, reads it."""
    redacted = digest(SCHEMA4 / "two-claims-1.0.0.redacted.bundle.tar.zst")
    stored = old / "objects" / "sha256" / redacted[:2] / redacted
    aside = old / "aside"
    stored.rename(aside)
    with Archive.open(old):
        pass
    migrated = [e["data"] for e in events(old) if e["event"] == "migrate"]
    assert migrated == [{"from": 4, "to": 5, "unread": [redacted]}]
    assert sql(old, "SELECT withheld FROM bundles") == [(None,)]
    aside.rename(stored)
    with Archive.open(old) as archive:
        archive.rebuild()
    assert sql(old, "SELECT withheld FROM bundles") == [(3,)]
    assert cli(old, "log", "verify")[0] == 0


def test_a_redacted_copy_added_at_schema_4_keeps_its_entries(old: Path) -> None:
    """The refusal the old code logged for the full bundle replays as a refusal."""
    Archive.open(old).close()
    assert cli(old, "log", "verify")[0] == 0
    refused = [e["data"] for e in events(old) if e["event"] == "refuse"]
    assert refused and refused[0]["codes"] == ["add.version_reused"]
