"""Every README example runs as written: the ``sh`` blocks of README.md, in order, in one
empty folder beside the repository's ``bundles/``, with ``set -e``; a ``# `` line right
after a command is what that command must print (``…`` stands for any text). The
``python`` blocks run the same way, in order, as one program (their asserts are the check).

A block is left out only when the line before its fence says why
(``<!-- not run by tests/project/test_readme.py: ... -->``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.long

README = REPO / "README.md"
NOT_RUN = "<!-- not run by tests/project/test_readme.py:"


@dataclass
class Command:
    text: str
    line: int
    expected: list[str] = field(default_factory=list)


def commands(markdown: str) -> list[Command]:
    """The commands of every runnable ``sh`` block, each with the output lines it must print."""
    found: list[Command] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```sh":
            i += 1
            continue
        before = next((line for line in reversed(lines[:i]) if line.strip()), "")
        runnable = not before.startswith(NOT_RUN)
        i += 1
        pending = ""
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            if runnable:
                if line.startswith("#") and not pending:
                    if found and line.startswith("# "):
                        found[-1].expected.append(line[2:])
                elif line.endswith("\\"):
                    pending += line[:-1] + " "
                elif line.strip():
                    found.append(Command(pending + line, i + 1))
                    pending = ""
            i += 1
        i += 1
    return found


def python_blocks(markdown: str) -> list[tuple[int, str]]:
    """The runnable ``python`` blocks: (line of the fence, code)."""
    found: list[tuple[int, str]] = []
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != "```python":
            continue
        before = next((b for b in reversed(lines[:i]) if b.strip()), "")
        if before.startswith(NOT_RUN):
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        found.append((i + 1, "\n".join(lines[i + 1 : end])))
    return found


def readme_env() -> dict[str, str]:
    """The environment the examples run in: this Python first on PATH, no REPROBUNDLE_*."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("REPROBUNDLE_") and k not in ("NO_COLOR", "COLUMNS")
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        COLUMNS="100",
        NO_COLOR="1",
        PYTHONPATH=str(REPO),
    )
    return env


def matches(expected: str, output: str) -> bool:
    """Whether a line of ``output`` holds ``expected`` (any run of spaces alike, ``…`` any text)."""
    pattern = ".*?".join(re.escape(" ".join(part.split())) for part in expected.split("…"))
    return any(re.search(pattern, " ".join(line.split())) for line in output.splitlines())


def test_readme_blocks_are_found_and_the_skipped_say_why() -> None:
    found = commands(README.read_text("utf-8"))
    texts = [c.text for c in found]
    assert any(t.startswith("reprobundle init mybundle") for t in texts)
    assert any(t.startswith("reprobundle diff mybundle-0.1.0") for t in texts)
    assert not any("docker" in t for t in texts)  # that block says why it is not run
    assert sum(len(c.expected) for c in found) >= 10


def test_matches_reads_the_ellipsis_as_any_text() -> None:
    assert matches(
        "SHA-256 is 68df…, the manifest says 295e… [file.hash]",
        "  - x: SHA-256 is 68dfab, the manifest says 295e01 [file.hash]",
    )
    assert not matches("exit 3", "exit 1")


def test_every_readme_example_runs_as_written(tmp_path: Path) -> None:
    found = commands(README.read_text("utf-8"))
    script = ["set -e -o pipefail", "exec 2>&1"]
    for n, command in enumerate(found):
        script += [f"printf '\\n@@command {n}@@\\n'", command.text]
    (tmp_path / "bundles").symlink_to(REPO / "bundles")
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=readme_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = done.stdout + done.stderr
    parts = re.split(r"\n@@command (\d+)@@\n", "\n" + done.stdout)
    by_command = {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    if done.returncode != 0:
        last = max(by_command, default=0)
        pytest.fail(
            f"README.md:{found[last].line}: `{found[last].text}` exited {done.returncode}:\n"
            f"{output[-3000:]}"
        )
    for n, command in enumerate(found):
        for expected in command.expected:
            assert matches(expected, by_command.get(n, "")), (
                f"README.md:{command.line}: `{command.text}` should print {expected!r}; it "
                f"printed:\n{by_command.get(n, '')[-2000:]}"
            )


def test_readme_python_blocks_are_found() -> None:
    code = "\n".join(text for _, text in python_blocks(README.read_text("utf-8")))
    for call in ("bundler.build(", "bundler.verify(", "bundler.to_json(", "bundler.sign("):
        assert call in code


def test_every_readme_python_example_runs_saved_as_a_file(tmp_path: Path) -> None:
    """The Python examples cannot drift from the API: each block, saved as a file of its
    own and run with ``python FILE`` in order (as a user would, not with ``python -c``:
    worker processes import the file again), in an empty folder beside ``bundles/``."""
    blocks = python_blocks(README.read_text("utf-8"))
    (tmp_path / "bundles").symlink_to(REPO / "bundles")
    printed = []
    for n, (line, text) in enumerate(blocks):
        example = tmp_path / f"example_{n}.py"
        example.write_text(f"# README.md:{line}\n{text}\n", encoding="utf-8")
        done = subprocess.run(
            [sys.executable, example.name],
            cwd=tmp_path,
            env={**readme_env(), "SOURCE_DATE_EPOCH": "1700000000"},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, f"README.md:{line} failed as a file:\n{done.stderr[-3000:]}"
        printed.append(done.stdout)
    output = "\n".join(printed)
    assert "1 bundle(s) verified: 1 supported 0" in output  # the archive's batch, exit 0
    assert re.search(r"^supported +\S+: \d+ of \d+ cases reproduced", output, re.M), output
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["result"] == "supported"
    assert (tmp_path / "signed.bundle.tar.zst").is_file()
