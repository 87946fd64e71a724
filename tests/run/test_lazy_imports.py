"""A verification imports what its run needs, when it needs it (issue 33, fixed cost).

Each test verifies a golden bundle in a fresh interpreter (in this one, other tests have
imported everything) and reads what it imported and what it started: no timing, only
which modules and programs a run of that bundle needed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from bundler.run import libraries

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "manifests" / "golden" / "0.2.0.dev2"

# verifies sys.argv[1] as `reprobundle verify` does (the library, then the JSON report),
# recording every program started, then prints the modules loaded and the programs run
VERIFY_AND_LIST = """
import json, subprocess, sys

started = []
popen = subprocess.Popen.__init__

def spy(self, args, *more, **options):
    started.append([str(a) for a in (args if isinstance(args, (list, tuple)) else [args])])
    popen(self, args, *more, **options)

subprocess.Popen.__init__ = spy
import bundler

verification = bundler.verify(sys.argv[1])
report = bundler.to_json(verification)
print(json.dumps({"status": verification.status, "modules": sorted(sys.modules),
                  "started": started,
                  "libraries": sorted(report["verify_environment"]["libraries"]),
                  "signed": report["signature"]["state"] != "unsigned"
                  or "preregistration" in report}))
"""


def verify_in_fresh_interpreter(bundle: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", VERIFY_AND_LIST, str(bundle)],
        capture_output=True,
        text=True,
        env=env,
        cwd=bundle.parent,
        check=True,
        timeout=300,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
def quickstart_run() -> dict[str, Any]:
    return verify_in_fresh_interpreter(GOLDEN / "quickstart.bundle.tar.zst")


def test_verifying_the_quickstart_imports_no_numpy_pydantic_nor_importlib_metadata(
    quickstart_run: dict[str, Any],
) -> None:
    # the quickstart's controls differ, and their differences are described by our own
    # walk (checkers/compare.py): deepdiff, which would load numpy and pydantic (installed
    # here, not by reprobundle), is only for values JSON cannot hold; nor are the library
    # versions read through importlib.metadata
    assert quickstart_run["status"] == "supported"
    loaded = set(quickstart_run["modules"])
    assert not {"deepdiff", "numpy", "pydantic", "asyncio", "importlib.metadata"} & loaded


def test_verifying_a_bundle_without_code_starts_no_isolation_probe_nor_worker(
    quickstart_run: dict[str, Any],
) -> None:
    loaded = set(quickstart_run["modules"])
    assert not {"bundler.run.sandbox", "bundler.run.worker"} & loaded
    assert not [c for c in quickstart_run["started"] if any("unshare" in a for a in c)]


def test_verifying_reads_the_schema_without_importlib_resources_and_loads_no_writer(
    quickstart_run: dict[str, Any],
) -> None:
    # the manifest schema is read beside its package (importlib.resources loads zipfile);
    # TOML and gzip writers are for building, not verifying
    loaded = set(quickstart_run["modules"])
    assert not {"importlib.resources", "zipfile", "tomli_w", "gzip"} & loaded


# runs `reprobundle verify -q BUNDLE` as the command line does, then lists the modules loaded
CLI_AND_LIST = """
import json, runpy, sys

sys.argv = ["reprobundle", "verify", "-q", sys.argv[1]]
try:
    runpy.run_module("bundler", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    print(json.dumps({"exit": exc.code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_verify_quiet_imports_no_report_renderer_nor_traceback() -> None:
    # -q prints the result line only: the file formats' module is for --json and the
    # like, traceback for an internal error
    bundle = GOLDEN / "quickstart.bundle.tar.zst"
    done = subprocess.run(
        [sys.executable, "-c", CLI_AND_LIST, str(bundle)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=bundle.parent,
        timeout=300,
    )
    found = json.loads(done.stderr.splitlines()[-1])
    assert found["exit"] == 0
    assert "every claim supported" in done.stdout
    assert not {"bundler.reports.formats", "traceback", "gzip", "tomli_w"} & set(found["modules"])


def test_verifying_a_bundle_without_yaml_inputs_imports_no_yaml_library() -> None:
    run = verify_in_fresh_interpreter(GOLDEN / "inventory-faults.bundle.tar.zst")
    assert run["status"] == "inconclusive"  # advisory RB-2026-0007 (fault-report@2); all ran
    assert not {"yaml", "checkers.yamlfile"} & set(run["modules"])


def test_verifying_a_bundle_that_compares_no_documents_imports_no_diff_library() -> None:
    run = verify_in_fresh_interpreter(GOLDEN / "inventory-faults.bundle.tar.zst")
    assert run["status"] == "inconclusive"  # advisory RB-2026-0007 (fault-report@2); all ran
    assert not {"deepdiff", "numpy", "pydantic"} & set(run["modules"])


def test_verifying_a_trajectory_bundle_imports_no_networkx() -> None:
    # the graph steps of learning and matching are written out (skeleton/graphs.py, held
    # to networkx's results by tests): importing networkx alone took 0.12 s of CPU
    run = verify_in_fresh_interpreter(GOLDEN / "trajectory-skeleton.bundle.tar.zst")
    # advisory RB-2026-0047 (classification-metrics@2); every case ran
    assert run["status"] == "inconclusive"
    assert "networkx" not in set(run["modules"])


# what a verification may read with: the manifest's TOML reader, zstd's bounded reader
# (backports.zstd), and python-zstandard for the zstd members of an Inspect log
READERS = {"tomli", "backports", "zstandard"}


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(distribution: str) -> set[str]:
    """The distributions ``distribution`` may load: its requirements (with its optional
    ones, which a library such as jsonschema imports when they are installed), and theirs
    (without their optional ones), by their normalised names."""
    needed: set[str] = set()
    todo = [(distribution, True)]
    while todo:
        name, top = todo.pop()
        name = _normalised(name)
        if name in needed:
            continue
        needed.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            if top or "extra ==" not in line:
                todo.append((re.split(r"[^A-Za-z0-9._-]", line, maxsplit=1)[0], False))
    return needed


def _third_party(modules: list[str]) -> set[str]:
    """The top-level packages of ``modules`` that are neither the standard library's nor
    ours (nor the runtime helpers compiled modules load)."""
    tops = {m.split(".")[0] for m in modules}
    return {
        top
        for top in tops
        if top not in sys.stdlib_module_names
        and not top.startswith("_")
        and top not in {"bundler", "checkers", "manifests", "cython_runtime"}
        and not top.endswith("__mypyc")
    }


@pytest.mark.parametrize(
    "bundle", sorted(GOLDEN.glob("*.bundle.tar.*")), ids=lambda p: p.name.split(".")[0]
)
def test_a_verification_imports_only_the_libraries_its_checkers_declare(bundle: Path) -> None:
    # issue 47: nothing is imported at verify that the bundle does not need. What it may
    # load beyond our code and the standard library: the readers, the libraries its
    # checkers declare (its report's environment names them) with what they require,
    # PyYAML, and cryptography for a signed bundle or pre-registration. networkx is
    # declared by no checker now, and no longer a dependency at all
    run = verify_in_fresh_interpreter(bundle)
    allowed_distributions = (
        {"pyyaml"}
        | ({"cryptography"} if run["signed"] else set())
        | {needed for library in run["libraries"] for needed in _requirements(library)}
    )
    by_package = metadata.packages_distributions()
    allowed = READERS | {
        top
        for top, distributions in by_package.items()
        if {_normalised(d) for d in distributions} & allowed_distributions
    }
    if {"checkers.linear", "checkers.promptfoo.jsregex"} & set(run["modules"]):
        # a checker ran a pattern from the bundle: on RE2, in linear time (issue 42 item 4)
        allowed |= {"re2"}
    loaded = _third_party(run["modules"])
    assert loaded <= allowed, (sorted(loaded - allowed), run["libraries"])
    assert "networkx" not in run["libraries"]


def test_networkx_is_not_a_runtime_dependency() -> None:
    # kept in the test extra as the oracle the graph code is held to
    runtime = [r for r in metadata.requires("reprobundle") or [] if "extra ==" not in r]
    assert not [r for r in runtime if r.lower().startswith("networkx")]
    test_extra = [r for r in metadata.requires("reprobundle") or [] if 'extra == "test"' in r]
    assert [r for r in test_extra if r.startswith("networkx")]


def test_library_versions_are_those_importlib_metadata_gives() -> None:
    names = {d.metadata["Name"] for d in metadata.distributions()} | {"PyYAML", "py_yaml"}
    for name in sorted(names):
        try:
            expected = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = libraries.UNKNOWN
        assert libraries.version(name) == expected, name
    assert libraries.version("no-such-distribution-here") == libraries.UNKNOWN


# in a fresh interpreter: a test process has other finders of distributions, and then
# this reading leaves every name to importlib
READ_TOGETHER = """
import json
from importlib import metadata
from bundler.run import libraries
names = [d.metadata["Name"] for d in metadata.distributions()]
names += ["PyYAML", "py_yaml", "pyyaml", "no-such-distribution-here"]
def alone(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return libraries.UNKNOWN
print(json.dumps([names, libraries._read_all(names), libraries.versions(names),
                  {name: alone(name) for name in names}]))
"""


def test_versions_read_together_are_those_importlib_metadata_gives_each() -> None:
    # one listing of sys.path serves every name (a verification records several); names
    # that normalise alike, and one not installed, get the answer they get alone
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", READ_TOGETHER], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    names, read, together, alone = json.loads(done.stdout)
    assert read["PyYAML"] == read["pyyaml"] == alone["PyYAML"]  # read here, not by importlib
    assert list(together) == list(dict.fromkeys(names))
    assert together == alone


READ_BOTH = """
import json, sys
from importlib import metadata
from bundler.run import libraries
print(json.dumps([libraries._read("lib"), libraries.version("lib"), metadata.version("lib")]))
"""


@pytest.mark.parametrize(
    ("files", "version"),
    [
        ({"lib-1.0.dist-info/METADATA": "Name: lib\nVersion: 1.0\n"}, "1.0"),
        ({"Lib-2.0.dist-info/METADATA": "Name: Lib\nversion:2.0\r\n\r\nVersion: 9\n"}, "2.0"),
        ({"lib-3.0.dist-info/PKG-INFO": "Name: lib\nVersion: 3.0\n"}, "3.0"),
        ({"lib-4.0.dist-info/METADATA": "", "lib-4.0.dist-info/PKG-INFO": "Version: 4\n"}, "4"),
        ({"lib-5.0.dist-info/METADATA": "Name: lib\nVersion: 5.0\n  folded\n"}, None),
        ({"lib-6.0.dist-info/METADATA": "Name: lib\n\nVersion: 6.0\n"}, None),
        ({"lib-7.0.egg-info": "Name: lib\nVersion: 7.0\n"}, None),
    ],
    ids=["plain", "header-case", "pkg-info", "empty-metadata", "folded", "in-body", "egg-file"],
)
def test_a_library_version_read_as_importlib_metadata_reads_it(
    tmp_path: Path, files: dict[str, str], version: str | None
) -> None:
    # what this reading takes gives importlib.metadata's answer; the rest is left to it.
    # In a fresh interpreter with the folder first on its path: a test process has other
    # finders of distributions, and then this reading leaves every name to importlib
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-c", READ_BOTH], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    read, through_version, by_importlib = json.loads(done.stdout)
    assert read == version
    assert through_version == by_importlib
