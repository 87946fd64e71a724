"""The README blocks ``test_readme.py`` cannot run as written, run here as written but for
what only exists here: "Verify a bundle from its link" against a local server serving the
bundle at the example link's file name, and "The format and its second implementation"
from the repository with node."""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bundle_server import serving
from tests.format.test_conformance import NODE, run_js
from tests.helpers import REPO
from tests.project.test_readme import README, matches, readme_env

pytestmark = pytest.mark.long


def section_block(title: str) -> list[tuple[str, list[str]]]:
    """The commands of the section's not-run ``sh`` block, each with its expected lines."""
    text = README.read_text("utf-8")
    body = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(
        r"<!-- not run by tests/project/test_readme.py:[^\n]*\n```sh\n(.*?)```", body, re.S
    )
    assert len(blocks) == 1, title
    found: list[tuple[str, list[str]]] = []
    for line in blocks[0].splitlines():
        if line.startswith("# "):
            found[-1][1].append(line[2:])
        elif line.strip():
            found.append((line, []))
    return found


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mybundle-0.1.0.bundle.tar.zst`` as the README's walkthrough makes it."""
    folder = tmp_path_factory.mktemp("walkthrough")
    env = readme_env()
    for command in ("reprobundle init mybundle", "reprobundle build mybundle"):
        subprocess.run(shlex.split(command), cwd=folder, env=env, check=True, capture_output=True)
    return folder / "mybundle-0.1.0.bundle.tar.zst"


def test_verify_a_bundle_from_its_link(starter: Path, tmp_path: Path) -> None:
    commands = section_block("Verify a bundle from its link")
    assert len(commands) == 2 and all(
        c.startswith("reprobundle verify https://") for c, _ in commands
    )
    example = shlex.split(commands[0][0])[2]
    env = {**readme_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    pin = hashlib.sha256(starter.read_bytes()).hexdigest()
    outputs = []
    with serving(starter.read_bytes(), example.rpartition("/")[2]) as served:
        for i, (command, _) in enumerate(commands):
            line = command.replace(example, served.url()).replace("HEX", pin)
            if i == 1:  # were the server asked again, it would serve another file
                served.bundle = b""
            done = subprocess.run(
                shlex.split(line), env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, done.stdout + done.stderr
            outputs.append(done.stdout + done.stderr)
        assert len(served.hits) == 1  # the second verification never reached the network
    for (_, expected), output in zip(commands, outputs, strict=True):
        for line in expected:
            assert matches(line, output), (line, output)


def test_the_format_and_its_second_implementation(starter: Path, tmp_path: Path) -> None:
    commands = section_block("The format and its second implementation")
    assert [c.split()[0] for c, _ in commands] == ["(cd", "node", "python"]
    node_command, expected = commands[1]
    words = shlex.split(node_command)
    assert words[1] == "manifests/js/verify.mjs" and words[2] == starter.name
    result = run_js(starter)  # npm ci is .ci/run's (no network in the tests)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in expected:
        assert matches(line, result.stdout), (line, result.stdout)
    assert NODE is not None
    generate = shlex.split(commands[2][0].split("#")[0])
    assert generate == ["python", "manifests/conformance/generate.py"]
    copy = tmp_path / "manifests" / "conformance"
    shutil.copytree(
        REPO / "manifests" / "conformance", copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    done = subprocess.run(
        [sys.executable, str(copy / "generate.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for vector in (REPO / "manifests" / "conformance" / "vectors").iterdir():
        if sys.version_info[:2] != (3, 11) and vector.name.endswith(".gz"):
            continue  # the bytes of 3.11's zlib (tests/format/test_conformance.py compares the tar)
        assert (copy / "vectors" / vector.name).read_bytes() == vector.read_bytes()
