"""Golden CLI files: ``reprobundle verify`` gives, for each kind of result, exactly the
exit code, stdout and stderr in ``tests/golden/cli/NAME.json`` (volatile values
normalised, see ``tests/golden/regenerate_cli.py``).

After an intended change, regenerate with `python tests/golden/regenerate_cli.py [NAME]`
and review the diff before committing it.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.golden.regenerate_cli import (
    CLI,
    GOLDENS,
    REPO,
    differences,
    normalise,
    record,
    to_text,
)

# what the ``reprobundle`` script runs, as a real process
SCRIPT = "import sys; sys.argv[0] = 'reprobundle'; from bundler.cli import main; main()"


def golden(name: str) -> dict[str, Any]:
    path = CLI / f"{name}.json"
    assert path.is_file(), (
        f"no golden file for {name}: run `python tests/golden/regenerate_cli.py {name}` "
        "and review the file it writes"
    )
    content: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return content


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("golden-cli")


def test_the_goldens_cover_every_exit_class_and_each_kind_of_rejection() -> None:
    assert sorted(p.stem for p in CLI.glob("*.json")) == sorted(GOLDENS), "stale golden files"
    assert {golden(name)["exit_code"] for name in GOLDENS} == {0, 1, 2, 3, 4}
    for name, spec in GOLDENS.items():
        assert name.startswith(f"{golden(name)['exit_code']}-"), name
        if spec.code is not None:
            output = "\n".join(golden(name)["stdout"] + golden(name)["stderr"])
            assert f"[{spec.code}]" in output, f"{name} does not name {spec.code}"


@pytest.mark.parametrize("name", list(GOLDENS))
def test_cli_output_equals_the_golden_file(
    name: str, quickstart_zst_bundle: Path, work: Path
) -> None:
    fresh = record(name, quickstart_zst_bundle, work)
    problems = differences(golden(name), fresh)
    assert not problems, (
        f"reprobundle {' '.join(fresh['args'])} differs from tests/golden/cli/{name}.json:\n  "
        + "\n  ".join(problems)
        + f"\nif the change is intended, run `python tests/golden/regenerate_cli.py {name}`"
    )
    assert to_text(fresh) == to_text(golden(name))  # and nothing else differs either


def test_the_comparison_fails_on_a_changed_exit_code_or_stderr_line(
    quickstart_zst_bundle: Path, tmp_path: Path
) -> None:
    fresh = record("3-limit", quickstart_zst_bundle, tmp_path)
    assert differences(golden("3-limit"), fresh) == []
    other_code = copy.deepcopy(golden("3-limit"))
    other_code["exit_code"] = 4
    assert differences(other_code, fresh) == ["exit_code: expected 4, observed 3"]
    other_line = copy.deepcopy(golden("3-limit"))
    other_line["stderr"][1] = other_line["stderr"][1].replace("100 bytes", "101 bytes")
    assert [p.split(":")[0] for p in differences(other_line, fresh)] == ["stderr line 2"]
    one_line_less = copy.deepcopy(golden("3-limit"))
    del one_line_less["stderr"][1]
    assert differences(one_line_less, fresh) != []


def test_normalise_replaces_only_the_volatile_values(tmp_path: Path) -> None:
    import platform

    import bundler

    text = (
        f"{tmp_path}/x.bundle.tar.zst on Python {platform.python_version()} "
        f"({platform.platform()}) by reprobundle {bundler.__version__}: 3 of 4 in 0.1 s"
    )
    assert normalise(text, tmp_path) == (
        "<folder>/x.bundle.tar.zst on Python <python> (<platform>) "
        "by reprobundle <version>: 3 of 4 in 0.1 s"
    )


@pytest.mark.parametrize("name", ["2-unknown-option", "3-member-name"])
def test_a_real_process_gives_what_the_golden_file_holds(
    name: str, quickstart_zst_bundle: Path, tmp_path: Path
) -> None:
    """The goldens run in-process; the ``reprobundle`` script, run as a process, prints
    the same bytes to the same streams and exits the same."""
    in_process = record(name, quickstart_zst_bundle, tmp_path)
    folder = tmp_path / name
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *GOLDENS[name].args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == in_process["exit_code"] == golden(name)["exit_code"]
    assert normalise(done.stdout, folder).split("\n") == in_process["stdout"]
    assert normalise(done.stderr, folder).split("\n") == in_process["stderr"]
