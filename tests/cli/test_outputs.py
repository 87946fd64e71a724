"""Every file a command writes: atomically when regular, in place for a device or FIFO,
through a link to its target, and any problem is exit 2 naming the path, after the
verdict was printed. build never packs a bundle file."""

from __future__ import annotations

import json
import os
import stat
import tarfile
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from tests.helpers import copy_source


def cli(*args: object, **kwargs: Any) -> Any:
    return CliRunner(**kwargs).invoke(main, [str(a) for a in args], catch_exceptions=False)


FLAGS = ["--json", "--markdown", "--junit", "--html"]


@pytest.mark.parametrize("flag", FLAGS)
def test_output_under_a_file_is_exit_2_naming_the_path_not_an_internal_error(
    quickstart_bundle: Path, tmp_path: Path, flag: str
) -> None:
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "report"
    result = cli("verify", quickstart_bundle, flag, target)
    assert result.exit_code == 2, result.output
    assert str(target) in result.output
    assert "not a folder" in result.output
    assert "internal error" not in result.output


@pytest.mark.parametrize("flag", FLAGS)
def test_output_that_is_a_folder_is_exit_2(
    quickstart_bundle: Path, tmp_path: Path, flag: str
) -> None:
    result = cli("verify", quickstart_bundle, flag, tmp_path)
    assert result.exit_code == 2, result.output
    assert "it is a folder" in result.output


def _char_device(path: Path, minor: int) -> Path:
    """A copy of /dev/null (minor 3) or /dev/full (minor 7) in the test's folder."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def test_output_to_a_device_is_written_in_place_not_replaced(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    null = _char_device(tmp_path / "null", 3)
    result = cli("verify", quickstart_bundle, "--junit", null, "-q")
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert os.listdir(tmp_path) == ["null"]  # no temporary file left beside it


def test_output_to_a_full_device_is_exit_2_and_the_verdict_was_printed_first(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    full = _char_device(tmp_path / "full", 7)
    result = cli("verify", quickstart_bundle, "--junit", full)
    assert result.exit_code == 2
    assert "every claim supported" in result.output
    assert f"cannot write the JUnit report to {full}" in result.output
    assert result.output.index("every claim supported") < result.output.index("cannot write")
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_output_to_a_fifo_reaches_its_reader(quickstart_bundle: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = cli("verify", quickstart_bundle, "--json", fifo, "-q")
    reader.join(timeout=60)
    if reader.is_alive() and stat.S_ISFIFO(os.lstat(fifo).st_mode):  # never left blocked
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert result.exit_code == 0, result.output
    assert json.loads(received[0])["result"] == "supported"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_output_to_a_link_is_followed_and_the_link_stays(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real.json"
    real.write_text('{"report_format": "reprobundle-report/1.3"}')  # an older report
    link = tmp_path / "link.json"
    link.symlink_to(real)
    result = cli("verify", quickstart_bundle, "--json", link, "-q")
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert json.loads(real.read_text())["result"] == "supported"


def test_a_dangling_link_is_followed_to_a_new_file(quickstart_bundle: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.md"
    link.symlink_to(tmp_path / "new.md")
    assert cli("verify", quickstart_bundle, "--markdown", link, "-q").exit_code == 0
    assert link.is_symlink()
    assert "quickstart" in (tmp_path / "new.md").read_text()


def test_a_rejection_is_written_to_the_json_report_too(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bundle.tar.gz"
    bad.write_bytes(b"\x1f\x8b" + b"\0" * 100)
    (tmp_path / "file").write_text("x")
    result = cli("verify", bad, "--json", tmp_path / "out.json")
    assert result.exit_code == 3, result.output
    assert json.loads((tmp_path / "out.json").read_text())["result"] == "rejected"


def test_report_output_under_a_file_is_exit_2(quickstart_bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = cli("report", quickstart_bundle, "-o", tmp_path / "file" / "a.md")
    assert result.exit_code == 2, result.output
    assert "not a folder" in result.output


def test_diff_json_under_a_file_is_exit_2(quickstart_bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = cli("diff", quickstart_bundle, quickstart_bundle, "--json", tmp_path / "file" / "d")
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output


def test_build_output_under_a_file_is_exit_2(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    (tmp_path / "file").write_text("x")
    result = cli("build", source, "-o", tmp_path / "file" / "x.bundle.tar.gz")
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output


def test_workdir_under_a_file_is_exit_2(quickstart_bundle: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = cli("verify", quickstart_bundle, "--workdir", tmp_path / "file" / "w")
    assert result.exit_code == 2, result.output
    assert "not a folder" in result.output


def test_archive_export_and_checkpoint_under_a_file_are_exit_2(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    root = tmp_path / "archive"
    assert cli("archive", "--archive", root, "init").exit_code == 0
    assert cli("archive", "--archive", root, "add", quickstart_bundle).exit_code == 0
    (tmp_path / "file").write_text("x")
    under = tmp_path / "file" / "x"
    exported = cli("archive", "--archive", root, "export", "quickstart@1.0.0", "-o", under)
    assert exported.exit_code == 2, exported.output
    assert "internal error" not in exported.output
    checkpoint = cli("archive", "--archive", root, "checkpoint", "-o", under)
    assert checkpoint.exit_code == 2, checkpoint.output
    assert "the checkpoint was issued" in checkpoint.output


# -- build never packs a bundle file -------------------------------------------------------


def test_build_in_place_never_packs_its_own_earlier_output(tmp_path: Path) -> None:
    source = copy_source(tmp_path)
    text = (source / "bundle.yaml").read_text().replace("  - inputs/**", '  - "**"')
    (source / "bundle.yaml").write_text(text)
    (source / "old.bundle.tar.gz").write_bytes(b"an earlier bundle")
    first = cli("build", source, "-o", source / "qs.bundle.tar.zst", env={"SOURCE_DATE_EPOCH": "1"})
    assert first.exit_code == 0, first.output
    assert "skipped 1 bundle file(s)" in first.output
    assert "old.bundle.tar.gz" in first.output
    again = cli("build", source, "-o", source / "qs.bundle.tar.zst", env={"SOURCE_DATE_EPOCH": "1"})
    assert again.exit_code == 0, again.output
    assert "qs.bundle.tar.zst" in again.output.split("skipped")[1]
    import io

    import zstandard

    plain = zstandard.ZstdDecompressor().stream_reader(
        io.BytesIO((source / "qs.bundle.tar.zst").read_bytes())
    )
    with tarfile.open(fileobj=plain, mode="r|") as tar:
        names = [m.name for m in tar]
    assert not [n for n in names if ".bundle.tar." in n]
