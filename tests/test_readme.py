"""Every README example runs as written: the ``sh`` blocks of README.md, in order, in one
empty folder beside the repository's ``bundles/``, with ``set -e``; a ``# `` line right
after a command is what that command must print (``…`` stands for any text).

A block is left out only when the line before its fence says why
(``<!-- not run by tests/test_readme.py: ... -->``).
"""

from __future__ import annotations

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
NOT_RUN = "<!-- not run by tests/test_readme.py:"


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


def matches(expected: str, output: str) -> bool:
    """Whether a line of ``output`` holds ``expected`` (any run of spaces alike, ``…`` any text)."""
    pattern = ".*?".join(re.escape(" ".join(part.split())) for part in expected.split("…"))
    return any(re.search(pattern, " ".join(line.split())) for line in output.splitlines())


def test_readme_blocks_are_found_and_the_skipped_say_why() -> None:
    found = commands(README.read_text("utf-8"))
    texts = [c.text for c in found]
    assert any(t.startswith("reprobundle init mybundle") for t in texts)
    assert any(t.startswith("reprobundle diff starter-0.1.0") for t in texts)
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
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=env,
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
