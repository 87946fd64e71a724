"""Freeze a release's example bundles as golden files: what an archivist keeps.

    python manifests/golden/freeze.py RELEASE

Builds every example source in ``bundles/`` with the checkers of this checkout (fixed
SOURCE_DATE_EPOCH), and the sources ``reprobundle import`` writes from the kept eval logs
(``IMPORTED``: a real Inspect AI log, a real promptfoo file, a real lm-eval run), signs
the quickstart with the committed demo key, verifies each file from an empty folder and
writes, under ``manifests/golden/RELEASE/``:

- ``NAME.bundle.tar.zst``: the built bundle, never to be rebuilt or changed;
- ``NAME.expected.json``: how every later release must judge it: the exit code, the
  arguments verify is given, and the JSON report with only the verifier's own machine
  facts (``verify_environment``, the work folder, the file name) left out.

A release folder that exists is never overwritten: golden files are written once.
``tests/test_golden_bundles.py`` verifies every frozen bundle with today's code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent
EPOCH = "1700000000"
DEMO = REPO / "bundles" / "demo-key"
# golden name -> (importer, kept log): their checkers' meanings are held like the examples'
IMPORTED = {
    "inspect-import": ("inspect", REPO / "tests" / "data" / "inspect" / "mixed.eval"),
    "promptfoo-import": ("promptfoo", REPO / "tests" / "data" / "promptfoo" / "results.json"),
    "lm-eval-import": ("lm-eval", REPO / "tests" / "data" / "lm_eval" / "full"),
}


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what depends on the verifying machine, not on the bundle."""
    out = {k: v for k, v in report.items() if k not in ("verify_environment", "workdir")}
    if isinstance(out.get("bundle"), dict):
        out["bundle"] = {k: v for k, v in out["bundle"].items() if k != "file"}
    return out


def verify_args(name: str) -> list[str]:
    """The verify arguments a golden bundle is judged with (relative to the repository)."""
    if name == "quickstart-signed":
        pub = (DEMO / "DEMO-ONLY-not-secret.pub").relative_to(REPO)
        return ["--require-signature", "--trust", str(pub)]
    return []


def run_verify(bundle: Path, args: list[str]) -> tuple[int, dict[str, Any]]:
    """Verify ``bundle`` with the CLI from an empty folder; the exit code and JSON report."""
    with tempfile.TemporaryDirectory(prefix="reprobundle-golden-") as fresh:
        report = Path(fresh) / "report.json"
        absolute = [str(REPO / a) if a.startswith("bundles/") else a for a in args]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "bundler",
                "verify",
                str(bundle),
                "-q",
                "--json",
                str(report),
                *absolute,
            ],
            cwd=fresh,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
        )
        if not report.is_file():
            raise SystemExit(f"verify of {bundle} wrote no report: {done.stderr}")
        return done.returncode, json.loads(report.read_text(encoding="utf-8"))


def main(release: str) -> int:
    target = GOLDEN / release
    if target.exists():
        print(f"{target} exists: golden files are written once", file=sys.stderr)
        return 2
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "PYTHONPATH": str(REPO)}
    target.mkdir(parents=True)
    sources = {p.parent.name: p.parent for p in (REPO / "bundles").glob("*/bundle.yaml")}
    with tempfile.TemporaryDirectory(prefix="reprobundle-golden-import-") as imports:
        for name, (tool, log) in IMPORTED.items():
            sources[name] = Path(imports) / name
            cmd = [sys.executable, "-m", "bundler", "import", tool, str(log)]
            subprocess.run([*cmd, "-o", str(sources[name])], env=env, check=True)
        for name, source in sorted(sources.items()):
            out = target / f"{name}.bundle.tar.zst"
            cmd = [sys.executable, "-m", "bundler", "build", str(source), "-o", str(out), "-q"]
            subprocess.run(cmd, env=env, check=True)
    signed = target / "quickstart-signed.bundle.tar.zst"
    key = DEMO / "DEMO-ONLY-not-secret.key"
    cmd = [
        sys.executable,
        "-m",
        "bundler",
        "sign",
        str(target / "quickstart.bundle.tar.zst"),
        "--key",
        str(key),
        "-o",
        str(signed),
    ]
    subprocess.run(cmd, env=env, check=True)
    for bundle in sorted(target.glob("*.bundle.tar.zst")):
        name = bundle.name.removesuffix(".bundle.tar.zst")
        args = verify_args(name)
        code, report = run_verify(bundle, args)
        expected = {"exit_code": code, "verify_args": args, "report": comparable(report)}
        text = json.dumps(expected, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        (target / f"{name}.expected.json").write_text(text, encoding="utf-8")
        print(f"froze {bundle.relative_to(REPO)}: exit {code}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
