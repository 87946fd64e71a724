"""One test per attack on a bundle, named after it: on the container, member names,
types and sizes, the manifest, and a built bundle altered after the fact.

Each asserts the exit code (3), the stable error code (``rejected``), that the canary
outside the work directory is unchanged, and that nothing is left behind: not in the
work directory, not beside it. The hostile bundles are made with ``tests.helpers``.
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
from bundler.run.verify import VerifyOptions, verify
from tests.helpers import (
    Entry,
    edit_manifest,
    put,
    raw_tar,
    read_entries,
    tar_end,
    with_entries,
    with_raw_member,
    write_entries,
)

TOP = "quickstart-1.0.0"
BAD = "bad.bundle.tar.gz"


def rejected(
    bundle: Path,
    tmp_path: Path,
    canary: Path,
    *codes: str,
    exact: bool = False,
    limits: Limits | None = None,
    make_workdir: bool = True,
) -> BundleRejected:
    """Verify ``bundle`` in ``tmp_path/work``: it must be rejected (exit 3) with each of
    ``codes`` (with ``exact``: with these codes only, in this order), and leave the canary,
    the work directory and its folder as they were."""
    workdir = tmp_path / "work"
    if make_workdir:
        workdir.mkdir(exist_ok=True)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, VerifyOptions(limits=limits), workdir=workdir)
    error = caught.value
    assert error.exit_code == 3
    seen = [p.code for p in error.problems]
    if exact:
        assert seen == list(codes), error.diagnostics()
    else:
        assert set(codes) <= set(seen), error.diagnostics()
    assert canary.read_text() == "untouched"
    assert not workdir.exists() or list(workdir.iterdir()) == []
    if make_workdir:
        assert workdir.is_dir()
    assert {p.name for p in tmp_path.iterdir()} <= {canary.name, bundle.name, "work"}
    return error


def bad(tmp_path: Path, data: bytes) -> Path:
    """A file of exactly these bytes, where a bundle is expected."""
    target = tmp_path / BAD
    target.write_bytes(data)
    return target


# -- the container ------------------------------------------------------------------------


def _zip(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


NOT_COMPRESSED_TAR = {
    "plain_tar": lambda bundle: raw_tar(bundle),
    "zip_file": lambda bundle: _zip(f"{TOP}/manifest.toml", "format = 'reprobundle/1'\n"),
    "zip_magic_only": lambda bundle: b"PK\x03\x04 a zip file",
    "empty_file": lambda bundle: b"",
}


@pytest.mark.parametrize("make", NOT_COMPRESSED_TAR.values(), ids=NOT_COMPRESSED_TAR.keys())
def test_not_a_compressed_tar(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, make: object
) -> None:
    data = make(quickstart_bundle)  # type: ignore[operator]
    rejected(bad(tmp_path, data), tmp_path, canary, "archive.not_compressed_tar", exact=True)


def test_tar_and_zip_polyglot(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    """A valid bundle with a zip appended: zip readers look at the end, tar at the start."""
    data = quickstart_bundle.read_bytes() + _zip("other.txt", "what a zip reader sees")
    rejected(bad(tmp_path, data), tmp_path, canary, "archive.trailing_data", exact=True)


@pytest.mark.parametrize(
    "after",
    [gzip.compress(b"more"), b"PK\x05\x06 zip trailer"],
    ids=["second_gzip_stream", "zip_end_record"],
)
def test_data_after_the_compressed_stream(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, after: bytes
) -> None:
    data = quickstart_bundle.read_bytes() + after
    rejected(bad(tmp_path, data), tmp_path, canary, "archive.trailing_data", exact=True)


HIDDEN = b"PK\x03\x04 a zip hides here"


def test_bytes_after_the_tar_end_marker_inside_the_stream(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """Everything after the first zero block must be zero, to the end of the stream."""
    raw = raw_tar(quickstart_bundle)
    end = tar_end(raw) + 1024  # past the two zero blocks
    assert len(raw) > end + 100, "needs record padding to hide in"
    data = raw[:end] + HIDDEN + raw[end + len(HIDDEN) :]
    rejected(put(tmp_path / BAD, data), tmp_path, canary, "archive.trailing_data")


def test_bytes_in_place_of_the_tar_end_marker(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    raw = raw_tar(quickstart_bundle)
    end = tar_end(raw)
    data = raw[:end] + HIDDEN + raw[end + len(HIDDEN) :]
    rejected(put(tmp_path / BAD, data), tmp_path, canary, "archive.corrupt")


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
    rejected(put(tmp_path / BAD, data), tmp_path, canary, "archive.hidden_data")


@pytest.mark.parametrize(
    ("keep", "first_codes", "make_workdir"),
    [
        (lambda n: n // 2, {"archive.truncated"}, True),
        # into a work directory that does not exist yet: none is left behind either
        (lambda n: n - 40, {"archive.truncated", "archive.corrupt"}, False),
    ],
    ids=["cut_in_half", "last_40_bytes_cut"],
)
def test_truncated_archive(
    quickstart_bundle: Path,
    tmp_path: Path,
    canary: Path,
    keep: object,
    first_codes: set[str],
    make_workdir: bool,
) -> None:
    data = quickstart_bundle.read_bytes()
    cut = bad(tmp_path, data[: keep(len(data))])  # type: ignore[operator]
    error = rejected(cut, tmp_path, canary, make_workdir=make_workdir)
    assert error.problems[0].code in first_codes


def test_archive_ending_inside_a_member(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """The last header promises more bytes than the archive holds."""
    raw = raw_tar(quickstart_bundle)
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        last = tar.getmembers()[-1]
    cut = put(tmp_path / BAD, raw[: last.offset_data + last.size // 2])
    error = rejected(cut, tmp_path, canary, make_workdir=False)
    assert error.problems[0].code in ("archive.truncated", "archive.corrupt")


def test_corrupt_gzip_checksum(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    data = bytearray(quickstart_bundle.read_bytes())
    data[-6] ^= 0xFF  # inside the CRC-32 of the gzip trailer
    rejected(bad(tmp_path, bytes(data)), tmp_path, canary, "archive.corrupt")


@pytest.mark.parametrize(
    "data", [b"\x01not a tar" * 200, b"hello, not a tar" * 100], ids=["binary", "text"]
)
def test_gzip_of_something_that_is_not_tar(tmp_path: Path, canary: Path, data: bytes) -> None:
    bundle = bad(tmp_path, gzip.compress(data))
    rejected(bundle, tmp_path, canary, "archive.not_tar", exact=True)


def test_manifest_must_come_first(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    entries = read_entries(quickstart_bundle)
    bundle = write_entries(entries[1:] + entries[:1], tmp_path / BAD)
    rejected(bundle, tmp_path, canary, "archive.layout", exact=True)


# -- member names -------------------------------------------------------------------------

NAMES = {
    "absolute": "/tmp/evil.txt",
    "double_slash_absolute": "//tmp/evil.txt",
    "dotdot_leading": "../evil.txt",
    "dotdot_after_top": f"{TOP}/../evil.txt",
    "dotdot_inside": f"{TOP}/inputs/../../evil.txt",
    "dotdot_last": f"{TOP}/inputs/..",
    "backslash": f"{TOP}/inputs\\..\\evil.txt",
    "backslash_after_dotdot": f"{TOP}/inputs/..\\evil",
    "drive_letter": "C:/evil.txt",
    "drive_letter_inside": f"{TOP}/C:evil",
    "empty_component": f"{TOP}/inputs//x.yaml",
    "dot_component": f"{TOP}/./inputs/x.yaml",
    "dot_component_before_a_folder": f"{TOP}/./inputs/x",
    "control_character": f"{TOP}/inputs/x\x1b[2J.yaml",
    "control_character_in_a_folder": f"{TOP}/in\x01puts",
    "bidi_override": f"{TOP}/inputs/x\u202egpj.yaml",
    "not_nfc": f"{TOP}/inputs/cafe\u0301.yaml",
    "not_nfc_at_the_top": f"{TOP}/cafe\u0301",
    "windows_reserved": f"{TOP}/inputs/CON.yaml",
    "windows_reserved_com": f"{TOP}/inputs/com1",
    "windows_reserved_aux": f"{TOP}/aux.txt",
    "component_over_255_bytes": f"{TOP}/inputs/{'é' * 128}",
    "trailing_dot": f"{TOP}/inputs/x.",
}


@pytest.mark.parametrize("name", list(NAMES.values()), ids=list(NAMES))
def test_hostile_member_name(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, name: str
) -> None:
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, Entry(name, b"owned"))
    error = rejected(bundle, tmp_path, canary, "member.name", exact=True)
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


def test_member_name_not_utf8(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    member = _raw_header_name(f"{TOP}/inputs/\xff\xfe.yaml".encode("latin-1"), b"x")
    bundle = with_raw_member(quickstart_bundle, tmp_path / BAD, member)
    rejected(bundle, tmp_path, canary, "member.name")


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
    bundle = with_raw_member(quickstart_bundle, tmp_path / BAD, member)
    error = rejected(bundle, tmp_path, canary, "member.name")
    assert "NUL" in error.diagnostics() or "'..'" in error.diagnostics()


# -- collisions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "data"),
    [("README.md", b"again"), ("inputs/candidate-dropped-rule.yaml", b"second copy")],
    ids=["generated_readme", "input"],
)
def test_duplicate_member(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, path: str, data: bytes
) -> None:
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, Entry(f"{TOP}/{path}", data))
    rejected(bundle, tmp_path, canary, "member.duplicate", exact=True)


@pytest.mark.parametrize(
    "path", ["readme.MD", "INPUTS/CANDIDATE-DROPPED-RULE.YAML"], ids=["readme", "input"]
)
def test_names_equal_after_case_folding(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, path: str
) -> None:
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, Entry(f"{TOP}/{path}", b"x"))
    rejected(bundle, tmp_path, canary, "member.duplicate", exact=True)


def test_names_equal_after_unicode_normalisation(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """U+FB01 (the 'fi' ligature) is NFC, yet names the same file as 'fi' on some systems."""
    bundle = with_entries(
        quickstart_bundle,
        tmp_path / BAD,
        Entry(f"{TOP}/inputs/\ufb01le.yaml", b"a"),
        Entry(f"{TOP}/inputs/file.yaml", b"b"),
    )
    rejected(bundle, tmp_path, canary, "member.duplicate")


def test_file_and_folder_of_the_same_name(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    bundle = with_entries(
        quickstart_bundle, tmp_path / BAD, Entry(f"{TOP}/README.md/inside.txt", b"under a file")
    )
    rejected(bundle, tmp_path, canary, "member.file_and_folder")


def test_folder_entry_named_like_a_file(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    entries.insert(1, Entry(f"{TOP}/README.md", type=tarfile.DIRTYPE))
    bundle = write_entries(entries, tmp_path / BAD)
    error = rejected(bundle, tmp_path, canary, "member.duplicate")
    assert {p.code for p in error.problems} <= {"member.duplicate", "member.unlisted"}


def test_file_and_folder_differing_only_in_case(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, Entry(f"{TOP}/Readme.md/x", b"x"))
    rejected(bundle, tmp_path, canary, "member.file_and_folder")


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
    """Links of every kind, devices and FIFOs."""
    odd = Entry(f"{TOP}/inputs/odd", type=kind, linkname=linkname)
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, odd)
    rejected(bundle, tmp_path, canary, "member.type", exact=True)


def test_symlink_chain_escape(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    """The traversal-archive chain: a/b -> ., a/b/c -> .., ..., then a file through it."""
    chain = [
        Entry(f"{TOP}/inputs/a", type=tarfile.SYMTYPE, linkname="."),
        Entry(f"{TOP}/inputs/b", type=tarfile.SYMTYPE, linkname="a/../.."),
        Entry(f"{TOP}/inputs/c", type=tarfile.SYMTYPE, linkname="b/../../.."),
        Entry(f"{TOP}/inputs/c/canary.txt", b"overwritten"),
    ]
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, *chain)
    error = rejected(bundle, tmp_path, canary, "member.type")
    assert [p.code for p in error.problems].count("member.type") == 3


def test_symlink_then_file_through_it(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """The classic chain: a link to outside, then a file written 'inside' the link."""
    chain = [
        Entry(f"{TOP}/inputs/escape", type=tarfile.SYMTYPE, linkname=str(tmp_path)),
        Entry(f"{TOP}/inputs/escape/canary.txt", b"overwritten"),
    ]
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, *chain)
    rejected(bundle, tmp_path, canary, "member.type")


def test_hardlink_then_write_through_it(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    chain = [
        Entry(f"{TOP}/inputs/h", type=tarfile.LNKTYPE, linkname=str(canary)),
        Entry(f"{TOP}/inputs/h", b"overwritten"),
    ]
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, *chain)
    rejected(bundle, tmp_path, canary, "member.type")


def test_gnu_sparse_member(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    info = tarfile.TarInfo(f"{TOP}/inputs/sparse")
    info.type = tarfile.GNUTYPE_SPARSE
    info.size = 0
    member = info.tobuf(format=tarfile.GNU_FORMAT)
    bundle = with_raw_member(quickstart_bundle, tmp_path / BAD, member)
    error = rejected(bundle, tmp_path, canary, "member.type")
    assert "sparse" in error.diagnostics()


def test_pax_sparse_member(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    info = tarfile.TarInfo(f"{TOP}/inputs/sparse")
    info.size = 0
    info.pax_headers = {"GNU.sparse.map": "0,0", "GNU.sparse.size": "0"}
    member = info.tobuf(format=tarfile.PAX_FORMAT)
    bundle = with_raw_member(quickstart_bundle, tmp_path / BAD, member)
    rejected(bundle, tmp_path, canary, "member.type")


def test_malformed_pax_sparse_header_is_corrupt_not_a_traceback(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """Sparse files come in pax fields too: refused as a member type, like any unknown field."""
    info = tarfile.TarInfo(f"{TOP}/inputs/sparse")
    info.size = 0
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0"}
    member = info.tobuf(format=tarfile.PAX_FORMAT)
    bundle = with_raw_member(quickstart_bundle, tmp_path / BAD, member)
    rejected(bundle, tmp_path, canary, "member.type")


def test_unknown_pax_field(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    info = tarfile.TarInfo(f"{TOP}/inputs/x")
    info.size = 0
    info.pax_headers = {"SCHILY.xattr.security.capability": "x"}
    member = info.tobuf(format=tarfile.PAX_FORMAT)
    bundle = with_raw_member(quickstart_bundle, tmp_path / BAD, member)
    rejected(bundle, tmp_path, canary, "member.type")


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
    bundle = put(tmp_path / BAD, raw.getvalue())
    rejected(bundle, tmp_path, canary, "archive.global_header")


# -- limits -------------------------------------------------------------------------------


def test_archive_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = bad(tmp_path, quickstart_bundle.read_bytes())
    rejected(bundle, tmp_path, canary, "limit.archive_size", limits=Limits(archive_bytes=100))


@pytest.mark.parametrize("members", [2, 3])
def test_member_count_limit(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, members: int
) -> None:
    bundle = bad(tmp_path, quickstart_bundle.read_bytes())
    limits = Limits(members=members)
    rejected(bundle, tmp_path, canary, "limit.members", exact=True, limits=limits)


def test_file_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = bad(tmp_path, quickstart_bundle.read_bytes())
    rejected(bundle, tmp_path, canary, "limit.file_size", limits=Limits(file_bytes=100))


def test_total_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = bad(tmp_path, quickstart_bundle.read_bytes())
    rejected(bundle, tmp_path, canary, "limit.total_size", limits=Limits(total_bytes=1000))


def test_manifest_size_limit(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    bundle = bad(tmp_path, quickstart_bundle.read_bytes())
    rejected(bundle, tmp_path, canary, "limit.manifest_size", limits=Limits(manifest_bytes=100))


@pytest.mark.parametrize(("mib", "ratio"), [(4, 20), (8, 10)])
def test_gzip_bomb_of_zeros(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, mib: int, ratio: int
) -> None:
    """Counted on the bytes decompressed, not on any header: the bomb is unlisted."""
    zeros = Entry(f"{TOP}/inputs/zeros", bytes(mib << 20))
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, zeros)
    limits = Limits(ratio=ratio, ratio_floor=1 << 20)
    rejected(bundle, tmp_path, canary, "limit.ratio", exact=True, limits=limits)


def test_header_size_lies_low(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    """A header that under-states its data: the rest is read as a header and refused."""
    entries = read_entries(quickstart_bundle)
    entries[-1].size = 10
    entries[-1].data = entries[-1].data + b"A" * 2000
    rejected(write_entries(entries, tmp_path / BAD), tmp_path, canary)


@pytest.mark.parametrize(
    "fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT], ids=["gnu-longname", "pax"]
)
def test_huge_extended_header_is_refused_before_it_is_read(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, fmt: int
) -> None:
    """tarfile reads long-name and pax headers into memory whole: refuse them first."""
    info = tarfile.TarInfo(f"{TOP}/" + "a/" * 600_000 + "x")
    bundle = with_raw_member(quickstart_bundle, tmp_path / BAD, info.tobuf(format=fmt))
    rejected(bundle, tmp_path, canary, "limit.header_size")


# -- the manifest, inside a real archive ---------------------------------------------------


def with_manifest(quickstart_bundle: Path, tmp_path: Path, manifest: bytes) -> Path:
    entries = read_entries(quickstart_bundle)
    entries[0].data = manifest
    return write_entries(entries, tmp_path / BAD)


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
    rejected(with_manifest(quickstart_bundle, tmp_path, manifest), tmp_path, canary, code)


def test_unknown_major_version_message_names_both(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    manifest = manifest_of(quickstart_bundle).replace(b"reprobundle/1", b"reprobundle/7", 1)
    error = rejected(
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


def test_a_listed_name_too_long_once_inside_the_top_folder(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    """The manifest's path fits in 1,024 bytes, the member's name with its top folder
    does not: the member is refused like any other name, though the manifest lists it."""
    long = "/".join(["d" * 250] * 4) + "/x.txt"
    assert len(long) <= 1024 < len(f"{TOP}/{long}")
    bundle = edit_manifest(quickstart_bundle, tmp_path / BAD, lambda doc: None, {long: b"x"})
    error = rejected(bundle, tmp_path, canary, "member.name")
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

    bundle = edit_manifest(quickstart_bundle, tmp_path / BAD, add_absent)
    error = rejected(bundle, tmp_path, canary, "file.missing")
    assert "10000 problem(s)" in str(error)


# -- a built bundle altered after the fact: the member is named ---------------------------


def test_flipped_payload_byte_is_named(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    target = next(e for e in entries if e.name.endswith("inputs/expected.yaml"))
    target.data = bytes([target.data[0] ^ 1]) + target.data[1:]
    error = rejected(write_entries(entries, tmp_path / BAD), tmp_path, canary)
    assert [(p.where, p.code) for p in error.problems] == [
        (f"{TOP}/inputs/expected.yaml", "file.hash")
    ]


def test_every_mismatch_is_listed_not_just_the_first(
    quickstart_bundle: Path, tmp_path: Path, canary: Path
) -> None:
    entries = read_entries(quickstart_bundle)
    for entry in entries[1:]:
        entry.data = entry.data.replace(b"e", b"E")
    error = rejected(write_entries(entries, tmp_path / BAD), tmp_path, canary)
    assert len(error.problems) == len(entries) - 1


def test_removed_file(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    entries = [
        e
        for e in read_entries(quickstart_bundle)
        if not e.name.endswith("candidate-reordered.yaml")
    ]
    error = rejected(write_entries(entries, tmp_path / BAD), tmp_path, canary)
    assert [(p.where, p.code) for p in error.problems] == [
        (f"{TOP}/inputs/candidate-reordered.yaml", "file.missing")
    ]


def test_unlisted_file(quickstart_bundle: Path, tmp_path: Path, canary: Path) -> None:
    unlisted = Entry(f"{TOP}/inputs/extra.yaml", b"a: 1\n")
    error = rejected(with_entries(quickstart_bundle, tmp_path / BAD, unlisted), tmp_path, canary)
    assert [(p.where, p.code) for p in error.problems] == [
        (f"{TOP}/inputs/extra.yaml", "member.unlisted")
    ]


# -- through the command line: exit 3, a code, no traceback --------------------------------


@pytest.mark.parametrize("name", ["/tmp/evil.txt", f"{TOP}/../x", f"{TOP}/in\x01"])
def test_cli_rejects_without_traceback(
    quickstart_bundle: Path, tmp_path: Path, canary: Path, name: str
) -> None:
    bundle = with_entries(quickstart_bundle, tmp_path / BAD, Entry(name, b"owned"))
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
