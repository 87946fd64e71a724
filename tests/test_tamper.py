"""A built bundle altered after the fact is rejected (exit 3), the member is named, and
nothing is written outside the work directory."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from bundler.errors import BundleRejected
from bundler.run.verify import verify
from tests.helpers import Entry, read_entries, write_entries

TOP = "quickstart-1.0.0"


def rejected(bundle: Path, workdir: Path) -> BundleRejected:
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, workdir=workdir)
    assert caught.value.exit_code == 3
    return caught.value


def assert_contained(tmp_path: Path, canary: Path, workdir: Path) -> None:
    """Nothing appeared outside the work directory, and the work directory is empty again."""
    assert canary.read_text() == "untouched"
    allowed = {canary.name, "bad.bundle.tar.gz", "work"}
    assert {p.name for p in tmp_path.iterdir()} <= allowed
    assert list(workdir.iterdir()) == []


def attack(tmp_path: Path, entries: list[Entry]) -> tuple[Path, Path]:
    workdir = tmp_path / "work"
    workdir.mkdir()
    return write_entries(entries, tmp_path / "bad.bundle.tar.gz"), workdir


def test_flipped_payload_byte_is_named(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    target = next(e for e in entries if e.name.endswith("inputs/expected.yaml"))
    target.data = bytes([target.data[0] ^ 1]) + target.data[1:]
    bundle, workdir = attack(tmp_path, entries)
    error = rejected(bundle, workdir)
    assert [(p.where, p.code) for p in error.problems] == [
        (f"{TOP}/inputs/expected.yaml", "file.hash")
    ]
    assert_contained(tmp_path, canary, workdir)


def test_every_mismatch_is_listed_not_just_the_first(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    for entry in entries[1:]:
        entry.data = entry.data.replace(b"e", b"E")
    bundle, workdir = attack(tmp_path, entries)
    error = rejected(bundle, workdir)
    assert len(error.problems) == len(entries) - 1


def test_removed_file(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    entries = [
        e
        for e in read_entries(quickstart_bundle)
        if not e.name.endswith("candidate-reordered.yaml")
    ]
    bundle, workdir = attack(tmp_path, entries)
    error = rejected(bundle, workdir)
    assert [(p.where, p.code) for p in error.problems] == [
        (f"{TOP}/inputs/candidate-reordered.yaml", "file.missing")
    ]
    assert_contained(tmp_path, canary, workdir)


def test_unlisted_file(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    entries = [*read_entries(quickstart_bundle), Entry(f"{TOP}/inputs/extra.yaml", b"a: 1\n")]
    bundle, workdir = attack(tmp_path, entries)
    error = rejected(bundle, workdir)
    assert [(p.where, p.code) for p in error.problems] == [
        (f"{TOP}/inputs/extra.yaml", "member.unlisted")
    ]
    assert_contained(tmp_path, canary, workdir)


def test_duplicate_member(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    entries = read_entries(quickstart_bundle)
    entries.append(Entry(entries[2].name, b"second copy"))
    bundle, workdir = attack(tmp_path, entries)
    error = rejected(bundle, workdir)
    assert [p.code for p in error.problems] == ["member.duplicate"]
    assert_contained(tmp_path, canary, workdir)


def test_member_names_differing_only_in_case_collide(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    entries.append(Entry(entries[2].name.upper().replace(TOP.upper(), TOP), b"x"))
    bundle, workdir = attack(tmp_path, entries)
    assert [p.code for p in rejected(bundle, workdir).problems] == ["member.duplicate"]


@pytest.mark.parametrize(
    "name",
    [
        "/tmp/evil.txt",
        "//tmp/evil.txt",
        f"{TOP}/../evil.txt",
        "../evil.txt",
        f"{TOP}/inputs/..\\evil",
        f"{TOP}/C:evil",
        f"{TOP}/in\x01puts",
        f"{TOP}/./inputs/x",
        f"{TOP}/cafe\u0301",
        f"{TOP}/aux.txt",
    ],
)
def test_hostile_member_names(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, name: str
) -> None:
    entries = [*read_entries(quickstart_bundle), Entry(name, b"owned")]
    bundle, workdir = attack(tmp_path, entries)
    error = rejected(bundle, workdir)
    assert [p.code for p in error.problems] == ["member.name"]
    assert error.problems[0].where == name
    assert_contained(tmp_path, canary, workdir)
    assert not Path("/tmp/evil.txt").exists()


@pytest.mark.parametrize(
    ("kind", "linkname"),
    [
        (tarfile.SYMTYPE, "/etc/passwd"),
        (tarfile.SYMTYPE, "../../canary.txt"),
        (tarfile.LNKTYPE, f"{TOP}/README.md"),
        (tarfile.CHRTYPE, ""),
        (tarfile.FIFOTYPE, ""),
    ],
)
def test_links_devices_and_fifos(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, kind: bytes, linkname: str
) -> None:
    entries = [
        *read_entries(quickstart_bundle),
        Entry(f"{TOP}/inputs/link", type=kind, linkname=linkname),
    ]
    bundle, workdir = attack(tmp_path, entries)
    assert [p.code for p in rejected(bundle, workdir).problems] == ["member.type"]
    assert_contained(tmp_path, canary, workdir)


def test_symlink_then_file_through_it(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """The classic chain: a link to outside, then a file written 'inside' the link."""
    entries = [
        *read_entries(quickstart_bundle),
        Entry(f"{TOP}/inputs/escape", type=tarfile.SYMTYPE, linkname=str(tmp_path)),
        Entry(f"{TOP}/inputs/escape/canary.txt", b"overwritten"),
    ]
    bundle, workdir = attack(tmp_path, entries)
    error = rejected(bundle, workdir)
    assert "member.type" in [p.code for p in error.problems]
    assert_contained(tmp_path, canary, workdir)


def test_not_gzip(tmp_path: Path) -> None:
    bundle = tmp_path / "bad.bundle.tar.gz"
    bundle.write_bytes(b"PK\x03\x04 a zip file")
    workdir = tmp_path / "work"
    assert [p.code for p in rejected(bundle, workdir).problems] == ["archive.not_compressed_tar"]


def test_truncated_archive(quickstart_bundle: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bad.bundle.tar.gz"
    bundle.write_bytes(quickstart_bundle.read_bytes()[:-40])
    workdir = tmp_path / "work"
    assert rejected(bundle, workdir).problems[0].code in ("archive.truncated", "archive.corrupt")
    assert not workdir.exists() or list(workdir.iterdir()) == []


def test_bytes_after_the_gzip_stream(quickstart_bundle: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bad.bundle.tar.gz"
    bundle.write_bytes(quickstart_bundle.read_bytes() + b"PK\x05\x06 zip trailer")
    assert [p.code for p in rejected(bundle, tmp_path / "work").problems] == [
        "archive.trailing_data"
    ]


def test_gzip_that_is_not_tar(tmp_path: Path) -> None:
    bundle = tmp_path / "bad.bundle.tar.gz"
    bundle.write_bytes(gzip.compress(b"hello, not a tar" * 100))
    assert rejected(bundle, tmp_path / "work").problems[0].code in (
        "archive.not_tar",
        "archive.corrupt",
    )


def test_manifest_must_come_first(quickstart_bundle: Path, tmp_path: Path) -> None:
    entries = read_entries(quickstart_bundle)
    entries = entries[1:] + entries[:1]
    bundle, workdir = attack(tmp_path, entries)
    assert [p.code for p in rejected(bundle, workdir).problems] == ["archive.layout"]


def test_gzip_bomb_is_stopped_by_ratio(quickstart_bundle: Path, tmp_path: Path) -> None:
    from bundler.container.extract import Limits

    entries = [*read_entries(quickstart_bundle), Entry(f"{TOP}/inputs/zeros", bytes(8 << 20))]
    bundle, workdir = attack(tmp_path, entries)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, workdir=workdir, limits=Limits(ratio=10, ratio_floor=1 << 20))
    assert [p.code for p in caught.value.problems] == ["limit.ratio"]


def test_member_count_limit(quickstart_bundle: Path, tmp_path: Path) -> None:
    from bundler.container.extract import Limits

    bundle, workdir = attack(tmp_path, read_entries(quickstart_bundle))
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, workdir=workdir, limits=Limits(members=3))
    assert [p.code for p in caught.value.problems] == ["limit.members"]


def test_archive_ending_inside_a_member(quickstart_bundle: Path, tmp_path: Path) -> None:
    """The last header promises more bytes than the archive holds."""
    raw = gzip.decompress(quickstart_bundle.read_bytes())
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        last = tar.getmembers()[-1]
    bundle = tmp_path / "bad.bundle.tar.gz"
    bundle.write_bytes(gzip.compress(raw[: last.offset_data + last.size // 2]))
    assert rejected(bundle, tmp_path / "work").problems[0].code in (
        "archive.truncated",
        "archive.corrupt",
    )
