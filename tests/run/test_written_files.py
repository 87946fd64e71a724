"""verify writes only the files some case reads; every byte is still hashed.

What a case reads is written to the work folder; every other file is hashed as it
streams and then dropped. With --keep, --workdir or bundled code that will run, every
file is written, so what a person or the code looks at is complete. The verdicts and the
rejections are the same either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bundler.run.verify as verify_module
from bundler.authoring.build import build
from bundler.errors import BundleRejected
from bundler.reports.document import to_json
from bundler.run.isolation import CodeLimits, CodePolicy
from bundler.run.verify import VerifyOptions, check_integrity, read_by_cases, verify
from tests.helpers import REPO, copy_source, read_entries, write_entries

TOP = "quickstart-1.0.0"


@pytest.fixture(scope="module")
def with_unread(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quickstart bundle plus a file no case reads (and README.md, which none does)."""
    tmp = tmp_path_factory.mktemp("unread")
    source = copy_source(tmp)
    (source / "inputs" / "notes").mkdir()
    (source / "inputs" / "notes" / "unread.txt").write_text("a file no case reads\n")
    return build(source, tmp / "unread.bundle.tar.gz", 1700000000).path


def files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def files_seen_by_cases(
    bundle: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: VerifyOptions | None = None,
    workdir: Path | None = None,
) -> set[str]:
    """The files in the work folder while the cases run."""
    seen: set[str] = set()
    roots: list[Path] = []
    real = verify_module.extract

    def spy(*args: object, **kwargs: object) -> object:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        roots.append(found.root)
        return found

    def progress(_done: int, _total: int, _case: str) -> None:
        seen.update(files_under(roots[-1]))

    with monkeypatch.context() as patch:
        patch.setattr(verify_module, "extract", spy)
        verify(bundle, options, workdir=workdir, progress=progress)
    return seen


def test_files_no_case_reads_are_not_written(
    with_unread: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = files_seen_by_cases(with_unread, monkeypatch)
    assert "inputs/expected.yaml" in seen
    assert "inputs/notes/unread.txt" not in seen
    assert "README.md" not in seen
    manifest = verify(with_unread).extracted.manifest
    assert seen == read_by_cases(manifest)


def test_keep_writes_every_file(with_unread: Path, tmp_path: Path) -> None:
    result = verify(with_unread, workdir=tmp_path / "work", keep=True)
    assert result.root is not None
    assert files_under(result.root) == {f.path for f in result.extracted.manifest.files}


def test_a_given_workdir_gets_every_file(
    with_unread: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = files_seen_by_cases(with_unread, monkeypatch, workdir=tmp_path / "work")
    assert {"README.md", "inputs/notes/unread.txt"} <= seen


def test_every_file_is_written_when_bundled_code_will_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = build(REPO / "tests" / "sources" / "own-code", tmp_path / "own.bundle.tar.gz", 1).path
    allow = CodePolicy(allow=True, limits=CodeLimits(timeout=20))
    allowed = files_seen_by_cases(own, monkeypatch, VerifyOptions(code=allow))
    manifest = verify(own).extracted.manifest
    assert allowed == {f.path for f in manifest.files}
    assert files_seen_by_cases(own, monkeypatch) == read_by_cases(manifest)  # not run


@pytest.mark.parametrize(
    "member", [f"{TOP}/inputs/expected.yaml", f"{TOP}/inputs/notes/unread.txt", f"{TOP}/README.md"]
)
@pytest.mark.parametrize("keep", [False, True])
def test_a_changed_byte_rejects_whether_the_file_is_written_or_only_hashed(
    with_unread: Path, tmp_path: Path, member: str, keep: bool
) -> None:
    entries = read_entries(with_unread)
    target = next(e for e in entries if e.name == member)
    target.data = bytes([target.data[0] ^ 1]) + target.data[1:]
    bad = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    with pytest.raises(BundleRejected) as caught:
        verify(bad, workdir=tmp_path / "work" if keep else None, keep=keep)
    problems = [(p.where, p.code) for p in caught.value.problems if p.code != "workdir.kept"]
    assert problems == [(member, "file.hash")]
    assert caught.value.exit_code == 3


def test_the_report_is_the_same_with_and_without_keep(with_unread: Path, tmp_path: Path) -> None:
    plain = to_json(verify(with_unread))
    kept = to_json(verify(with_unread, workdir=tmp_path / "work", keep=True))
    assert kept.pop("workdir") == str(tmp_path / "work")
    assert plain.pop("workdir") is None
    assert plain == kept


def test_inspect_checks_every_byte_and_writes_nothing(
    with_unread: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bundler.container import writer

    written: list[str] = []
    real = writer.Writer.write

    def spy(self: writer.Writer, rel: str, chunks: object) -> str:
        written.append(rel)
        return real(self, rel, chunks)  # type: ignore[arg-type]

    monkeypatch.setattr(writer.Writer, "write", spy)
    assert check_integrity(with_unread).total_bytes > 0
    assert written == []
    entries = read_entries(with_unread)
    entries[-1].data = entries[-1].data + b"x"
    bad = write_entries(entries, tmp_path / "bad.bundle.tar.gz")
    with pytest.raises(BundleRejected) as caught:
        check_integrity(bad)
    assert [p.code for p in caught.value.problems] == ["member.size"]


def test_a_folder_input_brings_every_file_under_it() -> None:
    from types import SimpleNamespace

    from bundler.format.manifest import Case, FileEntry

    listed = SimpleNamespace(
        files=[FileEntry(p, "0" * 64, 1) for p in ("t/a", "t/b/c", "tx/d", "u", "v")],
        cases=[
            Case("c1", "x@1", {"tree": "t"}, {}, "pass", ()),
            Case("c2", "x@1", {"one": "u", "many": ("v",)}, {}, "pass", ()),
        ],
    )
    assert read_by_cases(listed) == {"t/a", "t/b/c", "u", "v"}  # type: ignore[arg-type]
