"""One test per attack on the archive reader, named after it.

Each asserts the exit code (3), the stable error code, that the canary outside the work
directory is unchanged, and that nothing is left behind: not in the work directory,
not beside it.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from bundler.cli import main
from bundler.container.extract import Limits
from bundler.errors import BundleRejected
from bundler.run.verify import verify
from tests.helpers import Entry, edit_manifest, read_entries, write_entries

TOP = "quickstart-1.0.0"


def check(
    bundle: Path, tmp_path: Path, canary: Path, code: str, limits: Limits | None = None
) -> BundleRejected:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, workdir=workdir, limits=limits)
    assert caught.value.exit_code == 3
    assert code in [p.code for p in caught.value.problems], caught.value.diagnostics()
    assert canary.read_text() == "untouched"
    assert list(workdir.iterdir()) == []
    assert {p.name for p in tmp_path.iterdir()} <= {canary.name, bundle.name, "work"}
    return caught.value


def with_extra(quickstart_bundle: Path, tmp_path: Path, *extra: Entry) -> Path:
    return write_entries([*read_entries(quickstart_bundle), *extra], tmp_path / "bad.bundle.tar.gz")


def raw_tar(quickstart_bundle: Path) -> bytes:
    return gzip.decompress(quickstart_bundle.read_bytes())


def last_member(raw: bytes) -> tarfile.TarInfo:
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        return tar.getmembers()[-1]


def put(tmp_path: Path, data: bytes) -> Path:
    target = tmp_path / "bad.bundle.tar.gz"
    target.write_bytes(data)
    return target


# -- the container ------------------------------------------------------------------------


def test_plain_tar_not_gzip(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    check(put(tmp_path, raw_tar(quickstart_bundle)), tmp_path, canary, "archive.not_compressed_tar")


def test_zip_file(tmp_path: Path, canary: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{TOP}/manifest.toml", "format = 'reprobundle/1'\n")
    check(put(tmp_path, buffer.getvalue()), tmp_path, canary, "archive.not_compressed_tar")


def test_tar_and_zip_polyglot(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    """A valid bundle with a zip appended: zip readers look at the end, tar at the start."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("other.txt", "what a zip reader sees")
    data = quickstart_bundle.read_bytes() + buffer.getvalue()
    check(put(tmp_path, data), tmp_path, canary, "archive.trailing_data")


def test_second_gzip_stream_after_the_first(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    data = quickstart_bundle.read_bytes() + gzip.compress(b"more")
    check(put(tmp_path, data), tmp_path, canary, "archive.trailing_data")


def test_bytes_after_the_tar_end_marker_inside_the_stream(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """Everything after the first zero block must be zero, to the end of the stream."""
    raw = raw_tar(quickstart_bundle)
    last = last_member(raw)
    end = last.offset_data + -(-last.size // 512) * 512 + 1024  # past the two zero blocks
    assert len(raw) > end + 100, "needs record padding to hide in"
    hidden = b"PK\x03\x04 a zip hides here"
    data = raw[:end] + hidden + raw[end + len(hidden) :]
    check(put(tmp_path, gzip.compress(data)), tmp_path, canary, "archive.trailing_data")


def test_bytes_in_place_of_the_tar_end_marker(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    raw = raw_tar(quickstart_bundle)
    last = last_member(raw)
    end = last.offset_data + -(-last.size // 512) * 512
    hidden = b"PK\x03\x04 a zip hides here"
    data = raw[:end] + hidden + raw[end + len(hidden) :]
    check(put(tmp_path, gzip.compress(data)), tmp_path, canary, "archive.corrupt")


def test_data_hidden_in_member_padding(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """A member larger than its declared size: the excess sits in the block padding."""
    raw = raw_tar(quickstart_bundle)
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        first_payload = tar.getmembers()[1]
    at = first_payload.offset_data + first_payload.size
    assert first_payload.size % 512, "needs padding to hide in"
    data = raw[:at] + b"X" + raw[at + 1 :]
    check(put(tmp_path, gzip.compress(data)), tmp_path, canary, "archive.hidden_data")


def test_truncated_archive(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    data = quickstart_bundle.read_bytes()
    error = check(put(tmp_path, data[: len(data) // 2]), tmp_path, canary, "archive.truncated")
    assert error.problems[0].code == "archive.truncated"


def test_corrupt_gzip_checksum(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    data = bytearray(quickstart_bundle.read_bytes())
    data[-6] ^= 0xFF  # inside the CRC-32 of the gzip trailer
    check(put(tmp_path, bytes(data)), tmp_path, canary, "archive.corrupt")


def test_gzip_of_something_that_is_not_tar(tmp_path: Path, canary: Path) -> None:
    error = check(
        put(tmp_path, gzip.compress(b"\x01not a tar" * 200)), tmp_path, canary, "archive.not_tar"
    )
    assert len(error.problems) == 1


def test_empty_file(tmp_path: Path, canary: Path) -> None:
    check(put(tmp_path, b""), tmp_path, canary, "archive.not_compressed_tar")


# -- member names -------------------------------------------------------------------------

NAMES = {
    "absolute": "/tmp/evil.txt",
    "double_slash_absolute": "//tmp/evil.txt",
    "dotdot_leading": "../evil.txt",
    "dotdot_inside": f"{TOP}/inputs/../../evil.txt",
    "dotdot_last": f"{TOP}/inputs/..",
    "backslash": f"{TOP}/inputs\\..\\evil.txt",
    "drive_letter": "C:/evil.txt",
    "empty_component": f"{TOP}/inputs//x.yaml",
    "dot_component": f"{TOP}/./inputs/x.yaml",
    "control_character": f"{TOP}/inputs/x\x1b[2J.yaml",
    "bidi_override": f"{TOP}/inputs/x\u202egpj.yaml",
    "not_nfc": f"{TOP}/inputs/cafe\u0301.yaml",
    "windows_reserved": f"{TOP}/inputs/CON.yaml",
    "windows_reserved_com": f"{TOP}/inputs/com1",
    "component_over_255_bytes": f"{TOP}/inputs/{'é' * 128}",
    "trailing_dot": f"{TOP}/inputs/x.",
}


@pytest.mark.parametrize("name", list(NAMES.values()), ids=list(NAMES))
def test_hostile_member_name(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, name: str
) -> None:
    bundle = with_extra(quickstart_bundle, tmp_path, Entry(name, b"owned"))
    error = check(bundle, tmp_path, canary, "member.name")
    assert [p.where for p in error.problems] == [name]
    assert not Path("/tmp/evil.txt").exists()


def _raw_header_name(name: bytes, data: bytes) -> bytes:
    """A ustar member whose name is raw bytes (not UTF-8)."""
    info = tarfile.TarInfo("x" * len(name))
    info.size = len(data)
    header = bytearray(info.tobuf(format=tarfile.USTAR_FORMAT))
    header[: len(name)] = name
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\x00 " % sum(header)
    return bytes(header) + data + bytes(-len(data) % 512)


def _splice_before_end(quickstart_bundle: Path, member: bytes) -> bytes:
    raw = raw_tar(quickstart_bundle)
    last = last_member(raw)
    end = last.offset_data + -(-last.size // 512) * 512
    return gzip.compress(raw[:end] + member + bytes(1024))


def test_member_name_not_utf8(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    member = _raw_header_name(f"{TOP}/inputs/\xff\xfe.yaml".encode("latin-1"), b"x")
    data = _splice_before_end(quickstart_bundle, member)
    check(put(tmp_path, data), tmp_path, canary, "member.name")


def test_member_name_with_nul_in_a_pax_path(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    record = f"{TOP}/inputs/a\x00/../../evil".encode()
    body = b"path=" + record + b"\n"
    length = len(body) + 3
    length = len(str(length).encode()) + 1 + len(body)
    pax_data = str(length).encode() + b" " + body
    pax = tarfile.TarInfo("././@PaxHeader")
    pax.type = tarfile.XHDTYPE
    pax.size = len(pax_data)
    member = (
        pax.tobuf(format=tarfile.USTAR_FORMAT)
        + pax_data
        + bytes(-len(pax_data) % 512)
        + _raw_header_name(b"plain", b"owned")
    )
    data = _splice_before_end(quickstart_bundle, member)
    error = check(put(tmp_path, data), tmp_path, canary, "member.name")
    assert "NUL" in error.diagnostics() or "'..'" in error.diagnostics()


# -- collisions ---------------------------------------------------------------------------


def test_duplicate_member(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = with_extra(quickstart_bundle, tmp_path, Entry(f"{TOP}/README.md", b"again"))
    check(bundle, tmp_path, canary, "member.duplicate")


def test_names_equal_after_case_folding(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    bundle = with_extra(quickstart_bundle, tmp_path, Entry(f"{TOP}/readme.MD", b"x"))
    check(bundle, tmp_path, canary, "member.duplicate")


def test_names_equal_after_unicode_normalisation(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """U+FB01 (the 'fi' ligature) is NFC, yet names the same file as 'fi' on some systems."""
    entries = read_entries(quickstart_bundle)
    entries.append(Entry(f"{TOP}/inputs/\ufb01le.yaml", b"a"))
    entries.append(Entry(f"{TOP}/inputs/file.yaml", b"b"))
    bundle = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    check(bundle, tmp_path, canary, "member.duplicate")


def test_file_and_folder_of_the_same_name(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    bundle = with_extra(
        quickstart_bundle, tmp_path, Entry(f"{TOP}/README.md/inside.txt", b"under a file")
    )
    check(bundle, tmp_path, canary, "member.file_and_folder")


def test_folder_entry_named_like_a_file(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    entries.insert(1, Entry(f"{TOP}/README.md", type=tarfile.DIRTYPE))
    bundle = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    error = check(bundle, tmp_path, canary, "member.duplicate")
    assert {p.code for p in error.problems} <= {"member.duplicate", "member.unlisted"}


def test_file_and_folder_differing_only_in_case(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    bundle = with_extra(quickstart_bundle, tmp_path, Entry(f"{TOP}/Readme.md/x", b"x"))
    check(bundle, tmp_path, canary, "member.file_and_folder")


# -- member types -------------------------------------------------------------------------

TYPES = {
    "symlink_absolute": (tarfile.SYMTYPE, "/etc/passwd"),
    "symlink_escaping": (tarfile.SYMTYPE, "../../canary.txt"),
    "symlink_inside": (tarfile.SYMTYPE, "README.md"),
    "hardlink_inside": (tarfile.LNKTYPE, f"{TOP}/README.md"),
    "hardlink_outside": (tarfile.LNKTYPE, "/etc/passwd"),
    "char_device": (tarfile.CHRTYPE, ""),
    "block_device": (tarfile.BLKTYPE, ""),
    "fifo": (tarfile.FIFOTYPE, ""),
    "contiguous_file": (tarfile.CONTTYPE, ""),
}


@pytest.mark.parametrize(("kind", "linkname"), list(TYPES.values()), ids=list(TYPES))
def test_member_type_refused(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, kind: bytes, linkname: str
) -> None:
    bundle = with_extra(
        quickstart_bundle, tmp_path, Entry(f"{TOP}/inputs/odd", type=kind, linkname=linkname)
    )
    check(bundle, tmp_path, canary, "member.type")


def test_symlink_chain_escape(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    """The traversal-archive chain: a/b -> ., a/b/c -> .., ..., then a file through it."""
    chain = [
        Entry(f"{TOP}/inputs/a", type=tarfile.SYMTYPE, linkname="."),
        Entry(f"{TOP}/inputs/b", type=tarfile.SYMTYPE, linkname="a/../.."),
        Entry(f"{TOP}/inputs/c", type=tarfile.SYMTYPE, linkname="b/../../.."),
        Entry(f"{TOP}/inputs/c/canary.txt", b"overwritten"),
    ]
    error = check(with_extra(quickstart_bundle, tmp_path, *chain), tmp_path, canary, "member.type")
    assert [p.code for p in error.problems].count("member.type") == 3


def test_hardlink_then_write_through_it(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    chain = [
        Entry(f"{TOP}/inputs/h", type=tarfile.LNKTYPE, linkname=str(canary)),
        Entry(f"{TOP}/inputs/h", b"overwritten"),
    ]
    check(with_extra(quickstart_bundle, tmp_path, *chain), tmp_path, canary, "member.type")


def test_gnu_sparse_member(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    info = tarfile.TarInfo(f"{TOP}/inputs/sparse")
    info.type = tarfile.GNUTYPE_SPARSE
    info.size = 0
    member = info.tobuf(format=tarfile.GNU_FORMAT)
    data = _splice_before_end(quickstart_bundle, member)
    error = check(put(tmp_path, data), tmp_path, canary, "member.type")
    assert "sparse" in error.diagnostics()


def test_pax_sparse_member(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    info = tarfile.TarInfo(f"{TOP}/inputs/sparse")
    info.size = 0
    info.pax_headers = {"GNU.sparse.map": "0,0", "GNU.sparse.size": "0"}
    data = _splice_before_end(quickstart_bundle, info.tobuf(format=tarfile.PAX_FORMAT))
    check(put(tmp_path, data), tmp_path, canary, "member.type")


def test_malformed_pax_sparse_header_is_corrupt_not_a_traceback(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """Sparse files come in pax fields too: refused as a member type, like any unknown field."""
    info = tarfile.TarInfo(f"{TOP}/inputs/sparse")
    info.size = 0
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0"}
    data = _splice_before_end(quickstart_bundle, info.tobuf(format=tarfile.PAX_FORMAT))
    check(put(tmp_path, data), tmp_path, canary, "member.type")


def test_unknown_pax_field(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    info = tarfile.TarInfo(f"{TOP}/inputs/x")
    info.size = 0
    info.pax_headers = {"SCHILY.xattr.security.capability": "x"}
    data = _splice_before_end(quickstart_bundle, info.tobuf(format=tarfile.PAX_FORMAT))
    check(put(tmp_path, data), tmp_path, canary, "member.type")


def test_pax_global_header(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    raw = io.BytesIO()
    entries = read_entries(quickstart_bundle)
    with tarfile.open(
        fileobj=raw, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"comment": "global"}
    ) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.size = len(entry.data)
            tar.addfile(info, io.BytesIO(entry.data))
    data = gzip.compress(raw.getvalue())
    check(put(tmp_path, data), tmp_path, canary, "archive.global_header")


# -- limits -------------------------------------------------------------------------------


def test_archive_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = put(tmp_path, quickstart_bundle.read_bytes())
    check(bundle, tmp_path, canary, "limit.archive_size", Limits(archive_bytes=100))


def test_member_count_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = put(tmp_path, quickstart_bundle.read_bytes())
    check(bundle, tmp_path, canary, "limit.members", Limits(members=2))


def test_file_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = put(tmp_path, quickstart_bundle.read_bytes())
    check(bundle, tmp_path, canary, "limit.file_size", Limits(file_bytes=100))


def test_total_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = put(tmp_path, quickstart_bundle.read_bytes())
    check(bundle, tmp_path, canary, "limit.total_size", Limits(total_bytes=1000))


def test_manifest_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = put(tmp_path, quickstart_bundle.read_bytes())
    check(bundle, tmp_path, canary, "limit.manifest_size", Limits(manifest_bytes=100))


def test_gzip_bomb_of_zeros(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    """Counted on the bytes decompressed, not on any header: the bomb is unlisted."""
    bundle = with_extra(quickstart_bundle, tmp_path, Entry(f"{TOP}/inputs/zeros", bytes(4 << 20)))
    check(bundle, tmp_path, canary, "limit.ratio", Limits(ratio=20, ratio_floor=1 << 20))


def test_header_size_lies_low(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    """A header that under-states its data: the rest is read as a header and refused."""
    entries = read_entries(quickstart_bundle)
    entries[-1].size = 10
    entries[-1].data = entries[-1].data + b"A" * 2000
    bundle = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    workdir = tmp_path / "work"
    workdir.mkdir()
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, workdir=workdir)
    assert caught.value.exit_code == 3
    assert canary.read_text() == "untouched" and list(workdir.iterdir()) == []


# -- the manifest, inside a real archive ---------------------------------------------------


def with_manifest(quickstart_bundle: Path, tmp_path: Path, manifest: bytes) -> Path:
    entries = read_entries(quickstart_bundle)
    entries[0].data = manifest
    return write_entries(entries, tmp_path / "bad.bundle.tar.gz")


def manifest_of(quickstart_bundle: Path) -> bytes:
    return read_entries(quickstart_bundle)[0].data


MANIFESTS = {
    "duplicate_key": (
        "manifest.toml",
        lambda m: m.replace(b"[bundle]\n", b"[bundle]\nname = 'x'\n", 1),
    ),
    "not_utf8": ("manifest.encoding", lambda m: m.replace(b'title = "A', b'title = "\xff', 1)),
    "byte_order_mark": ("manifest.bom", lambda m: b"\xef\xbb\xbf" + m),
    "nan": (
        "manifest.not_finite",
        lambda m: m.replace(b"[cases.params]\n", b"[cases.params]\nx = nan\n", 1),
    ),
    "infinity": (
        "manifest.not_finite",
        lambda m: m.replace(b"[cases.params]\n", b"[cases.params]\nx = -inf\n", 1),
    ),
    "absurd_nesting": (
        "manifest.too_deep",
        lambda m: m.replace(
            b"[cases.params]\n", b"[cases.params]\nx = " + b"[" * 5000 + b"]" * 5000 + b"\n", 1
        ),
    ),
    "unknown_major": (
        "manifest.unsupported_major",
        lambda m: m.replace(b"reprobundle/1", b"reprobundle/2", 1),
    ),
    "sha512": ("manifest.schema", lambda m: m.replace(b"sha256 = ", b"sha512 = ", 1)),
}


@pytest.mark.parametrize(("code", "edit"), list(MANIFESTS.values()), ids=list(MANIFESTS))
def test_hostile_manifest(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, code: str, edit: object
) -> None:
    manifest = edit(manifest_of(quickstart_bundle))  # type: ignore[operator]
    assert manifest != manifest_of(quickstart_bundle)
    check(with_manifest(quickstart_bundle, tmp_path, manifest), tmp_path, canary, code)


def test_unknown_major_version_message_names_both(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    manifest = manifest_of(quickstart_bundle).replace(b"reprobundle/1", b"reprobundle/7", 1)
    error = check(
        with_manifest(quickstart_bundle, tmp_path, manifest),
        tmp_path,
        canary,
        "manifest.unsupported_major",
    )
    assert "reprobundle/7" in error.headline and "reprobundle/1" in error.headline


def test_newer_minor_version_verifies_with_a_warning(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    manifest = manifest_of(quickstart_bundle).replace(b"reprobundle/1", b"reprobundle/1.9", 1)
    result = verify(with_manifest(quickstart_bundle, tmp_path, manifest))
    assert result.exit_code == 0
    assert "newer" in result.extracted.manifest.warnings[0]


# -- through the command line: exit 3, a code, no traceback --------------------------------


@pytest.mark.parametrize("name", ["/tmp/evil.txt", f"{TOP}/../x", f"{TOP}/in\x01"])
def test_cli_rejects_without_traceback(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, name: str
) -> None:
    bundle = with_extra(quickstart_bundle, tmp_path, Entry(name, b"owned"))
    result = CliRunner().invoke(main, ["verify", str(bundle), "--json", "-"])
    assert result.exit_code == 3
    assert "[member.name]" in result.stderr and "Traceback" not in result.output + result.stderr
    assert canary.read_text() == "untouched"


def test_cli_manifest_size_limit_has_a_flag(quickstart_bundle: Path, canary: Path) -> None:
    result = CliRunner().invoke(
        main, ["verify", str(quickstart_bundle), "--max-manifest-bytes", "100"]
    )
    assert result.exit_code == 3 and "[limit.manifest_size]" in result.stderr
    assert canary.read_text() == "untouched"


@pytest.mark.parametrize(
    "fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT], ids=["gnu-longname", "pax"]
)
def test_huge_extended_header_is_refused_before_it_is_read(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, fmt: int
) -> None:
    """tarfile reads long-name and pax headers into memory whole: refuse them first."""
    info = tarfile.TarInfo(f"{TOP}/" + "a/" * 600_000 + "x")
    data = _splice_before_end(quickstart_bundle, info.tobuf(format=fmt))
    check(put(tmp_path, data), tmp_path, canary, "limit.header_size")


def test_a_listed_name_too_long_once_inside_the_top_folder(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """The manifest's path fits in 1,024 bytes, the member's name with its top folder
    does not: the member is refused like any other name, though the manifest lists it."""
    long = "/".join(["d" * 250] * 4) + "/x.txt"
    assert len(long) <= 1024 < len(f"{TOP}/{long}")
    bundle = edit_manifest(
        quickstart_bundle, tmp_path / "bad.bundle.tar.gz", lambda doc: None, {long: b"x"}
    )
    error = check(bundle, tmp_path, canary, "member.name")
    assert "longer than 1024 bytes" in error.diagnostics()


def test_a_manifest_listing_many_absent_files_names_each_once(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """10,000 listed files, none in the archive: each is one problem (this once took time
    quadratic in their number)."""

    def add_absent(doc: dict[str, object]) -> None:
        files = doc["files"]
        assert isinstance(files, list)
        files += [{"path": f"absent/{i}.txt", "sha256": "0" * 64, "size": 1} for i in range(10_000)]

    bundle = edit_manifest(quickstart_bundle, tmp_path / "bad.bundle.tar.gz", add_absent)
    error = check(bundle, tmp_path, canary, "file.missing")
    assert "10000 problem(s)" in str(error)
