"""The README's archive walkthrough runs as written, on the example bundles."""

from __future__ import annotations

import glob
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from bundler.cli import main
from tests.helpers import put, raw_tar

REPO = Path(__file__).resolve().parents[2]


def walkthrough() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Archive for audit", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    commands = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words[:2] == ["reprobundle", "archive"]:
            commands.append(words[1:])
    return commands


def test_readme_archive_walkthrough_runs_on_the_example_bundles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_bundles: dict[str, Path]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    sources = sorted(p.name for p in (REPO / "bundles").iterdir() if (p / "bundle.yaml").is_file())
    assert sorted(example_bundles) == sources
    for name, bundle in example_bundles.items():  # the built bundles (gzip) as zstd: same tar
        put(out / f"{name}.bundle.tar.zst", raw_tar(bundle))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={"REPROBUNDLE_ARCHIVE": str(tmp_path / "bundle-archive")})
    commands = walkthrough()
    assert [c[1] for c in commands] == [
        "init",
        "add",
        "verify",
        "list",
        "show",
        "checkpoint",
        "log",
        "export",
    ]
    outputs = []
    for words in commands:
        expanded = [m for w in words for m in (sorted(glob.glob(w)) if "*" in w else [w])]
        result = runner.invoke(main, expanded)
        assert result.exit_code == 0, (words, result.output)
        outputs.append(result.stdout)
    assert f"{len(sources)} bundle(s) verified: {len(sources)} supported" in outputs[2]
    assert "History   1 verification(s)" in outputs[4]
    assert "audit log consistent" in outputs[6]
    assert (tmp_path / "elsewhere" / "checkpoint.json").is_file()
    assert (tmp_path / "copy.bundle.tar.zst").read_bytes() == (
        out / "quickstart.bundle.tar.zst"
    ).read_bytes()
