"""reprobundle's three import packages (``bundler``, ``checkers``, ``manifests``) beside
other distributions of those names (decision record 0007).

PyPI's ``bundler`` 0.1.0 is one empty ``bundler/__init__.py``; its ``manifests`` 0.1.0 is
a ``manifests/__init__.py`` stating ``__version__ = "0.1.0"``. Copies of both (and a
``checkers`` like them) stand on the import path after ours, each with its
``.dist-info``, as another environment's site-packages would: every reprobundle module
must still come from our files, and a bundle must verify. The reverse order is the limit
the record states: whichever folder comes first provides the name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

GOLDEN = REPO / "manifests" / "golden" / "0.1.0" / "quickstart.bundle.tar.zst"

# (distribution, its __init__.py), as the PyPI wheels of bundler and manifests hold them
OTHERS = {
    "bundler": "",
    "manifests": '"""manifests package."""\n\n__all__ = ["__version__"]\n__version__ = "0.1.0"\n',
    "checkers": "",
}

PROBE = f"""
import importlib.resources, json, pathlib, subprocess, sys
import bundler, checkers, manifests
import bundler.run.verify, checkers.structured
mods = (bundler, checkers, manifests, bundler.run.verify, checkers.structured)
files = [m.__file__ for m in mods]
schema = importlib.resources.files("manifests").joinpath("manifest-v1.schema.json")
run = subprocess.run([sys.executable, "-m", "bundler", "verify", "-q", {str(GOLDEN)!r}],
                     capture_output=True, text=True)
print(json.dumps({{"files": files, "schema": schema.is_file(),
                  "verify": [run.returncode, run.stdout + run.stderr]}}))
"""


def others(folder: Path) -> Path:
    """A site-packages holding the other distributions of reprobundle's import names."""
    for name, init in OTHERS.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(init, encoding="utf-8")
        info = folder / f"{name}-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n", encoding="utf-8"
        )
    return folder


def probe(path: list[Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    env.pop("PYTHONSAFEPATH", None)
    return subprocess.run(
        [sys.executable, "-P", "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_reprobundle_imports_and_verifies_with_other_bundler_and_manifests_after_it(
    tmp_path: Path,
) -> None:
    done = probe([REPO, others(tmp_path / "site")], tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    for file in found["files"]:
        assert Path(file).resolve().is_relative_to(REPO.resolve()), file
    assert found["schema"]  # the package data comes from our manifests, not theirs
    code, text = found["verify"]
    assert code == 0, text
    assert "every claim supported" in text


def test_the_folder_first_on_the_path_provides_the_name(tmp_path: Path) -> None:
    """The limit decision record 0007 states: an empty ``bundler`` found first hides ours
    (the same as installing it over ours in one site-packages). The check above can fail."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(others(tmp_path / "site")), str(REPO)])}
    env.pop("PYTHONSAFEPATH", None)
    done = subprocess.run(
        [sys.executable, "-P", "-c", "import bundler; print(bundler.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "site" / "bundler" / "__init__.py")  # theirs
