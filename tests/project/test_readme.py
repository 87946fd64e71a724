"""Every README example runs as written: the ``sh`` blocks of README.md, in order, in one
empty folder holding a link to the repository's ``bundles/``, with ``set -e -o pipefail``;
a ``# `` line right after a command is what that command must print (``…`` stands for any
text). Every command of an ``&&`` chain must succeed: ``set -e`` ignores a failure on the
left of ``&&``, so a chain runs as one command per part (a line mixing ``&&`` with ``||``
is refused: write it as separate commands). The
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
from typing import Any

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


def and_chain(text: str) -> list[str]:
    """The parts of a command joined by ``&&`` outside quotes (one part when there is none).

    A line that also holds ``||`` outside quotes is refused: in ``a && b || c`` a failure of
    ``a`` or ``b`` is meant, and splitting it would change what it does."""
    parts, current, quote, i, either = [], "", "", 0, False
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(text):
                current += text[i : i + 2]
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "\\" and i + 1 < len(text):
            current += text[i : i + 2]
            i += 2
            continue
        elif text.startswith("&&", i) or text.startswith("||", i):
            either = either or text[i] == "|"
            if text[i] == "&":
                parts.append(current.strip())
                current, i = "", i + 2
                continue
        elif ch == "#" and (not current or current[-1].isspace()):
            break  # a comment: the rest of the line is not run
        current += ch
        i += 1
    if parts and either:
        raise ValueError(f"`{text}` mixes && and ||: write it as separate commands")
    return [*parts, current.strip()] if parts else [text]


def shell_script(found: list[Command]) -> str:
    """The bash program that runs ``found`` in order and stops at the first failing command,
    each command's output preceded by a ``@@command N@@`` line."""
    script = ["set -e -o pipefail", "exec 2>&1"]
    for n, command in enumerate(found):
        script += [f"printf '\\n@@command {n}@@\\n'", *and_chain(command.text)]
    return "\n".join(script)


def test_a_failure_on_the_left_of_and_and_fails_the_readme_run() -> None:
    """Defect 2 of issue 43: ``false && true`` under ``set -e`` went on, so a README command
    that failed on the left of ``&&`` passed the README test."""
    chained = [Command("false && echo after", 1), Command("echo next", 2)]
    done = subprocess.run(["bash", "-c", shell_script(chained)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "after" not in done.stdout and "next" not in done.stdout
    assert and_chain("a 'x && y' && b \"c&&\" # d && e") == ["a 'x && y'", 'b "c&&"']
    assert and_chain('verify x || echo "exit $?"') == ['verify x || echo "exit $?"']
    with pytest.raises(ValueError, match=r"mixes && and \|\|"):
        and_chain("a && b || c")


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The ``sh`` blocks run once, in order, in a new folder holding a ``bundles`` link (as
    the README tells a reader to make): (the folder, the finished bash)."""
    folder = tmp_path_factory.mktemp("walkthrough")
    (folder / "bundles").symlink_to(REPO / "bundles")
    done = subprocess.run(
        ["bash", "-c", shell_script(commands(README.read_text("utf-8")))],
        cwd=folder,
        env=readme_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    return folder, done


def test_every_readme_example_runs_as_written(walkthrough: tuple[Path, Any]) -> None:
    found = commands(README.read_text("utf-8"))
    done = walkthrough[1]
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


def test_every_readme_python_example_runs_saved_as_a_file(walkthrough: tuple[Path, Any]) -> None:
    """The Python examples cannot drift from the API: each block, saved as a file of its
    own and run with ``python FILE`` in order (as a user would, not with ``python -c``:
    worker processes import the file again), in the folder where the ``sh`` blocks ran
    (issue 43, friction 1: the first block raised a traceback there, the shell walkthrough
    having made its archive already)."""
    blocks = python_blocks(README.read_text("utf-8"))
    tmp_path = walkthrough[0]
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
    report = json.loads((tmp_path / "py-report.json").read_text("utf-8"))
    assert report["result"] == "supported"
    assert (tmp_path / "py-signed.bundle.tar.zst").is_file()


def sample_output(markdown: str, after: str) -> list[str]:
    """The lines of the first unlabelled fenced block after the paragraph holding ``after``."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    fence = next(i for i in range(start, len(lines)) if lines[i].strip() == "```")
    end = next(j for j in range(fence + 1, len(lines)) if lines[j].strip() == "```")
    return lines[fence + 1 : end]


def test_readme_sample_verify_output_is_what_verify_prints(tmp_path: Path) -> None:
    """Defect 9 of issue 43: the sample lacked the ``controls showed:`` line and the scope
    sentence verify prints: it is what verify prints from ``Cases:`` on, word for word."""
    sample = sample_output(README.read_text("utf-8"), "**verdict** beside its **outcome**")
    script = shell_script(commands("```sh\n" + "\n".join(WALKTHROUGH) + "\n```\n"))
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=readme_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-2000:]
    printed = done.stdout[done.stdout.index("Cases:") :]
    # the same words, wrapped at another width than the sample's
    assert " ".join("\n".join(sample).split()) == " ".join(printed.split()), printed


WALKTHROUGH = [
    "reprobundle init mybundle",
    "reprobundle build mybundle -q",
    "reprobundle verify mybundle-0.1.0.bundle.tar.zst",
]
