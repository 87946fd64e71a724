"""Golden reports of the example bundles: what ``verify`` writes for each, in JSON,
Markdown and JUnit, with the volatile fields normalised.

The test ``tests/reports/test_golden_reports.py`` compares fresh output with the files in
``tests/golden/<bundle>/``. After an intended change (a new example bundle, a checker
that words a reason differently, a new report field), regenerate and review the diff:

    python tests/golden/regenerate.py                 # every bundle in bundles/
    python tests/golden/regenerate.py quickstart      # just these

Volatile fields: the machine's tool, Python and platform (build and verify side), the
library versions, the bundle identity (the manifest records the build environment, so
its hash differs from machine to machine) and the work directory. Everything else,
including every case's verdict, reasons and details, is compared exactly.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BUNDLES = REPO / "bundles"
GOLDEN = Path(__file__).resolve().parent
EPOCH = 1700000000
FILES = ("report.json", "report.md", "junit.xml")


def example_sources() -> list[Path]:
    return sorted(p.parent for p in BUNDLES.glob("*/bundle.yaml"))


def normalise(report: dict[str, Any]) -> dict[str, Any]:
    """The report with every machine-dependent value replaced by a placeholder."""
    out = copy.deepcopy(report)
    if "bundle" in out:
        out["bundle"]["identity"] = "0" * 64
        out["bundle"]["file"] = f"{out['bundle']['name']}.bundle.tar.gz"
    for side in ("build_environment", "verify_environment"):
        env = out.get(side, {})
        for key in ("tool", "python", "implementation", "platform"):
            if key in env:
                env[key] = f"<{key}>"
        if isinstance(env.get("libraries"), dict):
            env["libraries"] = {name: "<version>" for name in env["libraries"]}
    if "workdir" in out:
        out["workdir"] = None
    return out


def render(report: dict[str, Any]) -> dict[str, str]:
    """The golden files' contents for one (normalised) report."""
    from bundler.reports.junit import to_junit
    from bundler.reports.markdown import to_markdown

    return {
        "report.json": json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
        "report.md": to_markdown(report),
        "junit.xml": to_junit(report),
    }


def build_source(source: Path, work: Path) -> Path:
    """Build ``source`` into ``work`` with a fixed SOURCE_DATE_EPOCH."""
    from bundler.authoring.build import build

    return build(source, work / f"{source.name}.bundle.tar.gz", EPOCH).path


def verify_source(source: Path, work: Path) -> dict[str, Any]:
    """Build ``source``, verify the file, return the JSON report."""
    from bundler.reports.document import to_json
    from bundler.run.verify import verify

    return to_json(verify(build_source(source, work)))


def main(names: list[str]) -> int:
    sources = [s for s in example_sources() if not names or s.name in names]
    unknown = sorted(set(names) - {s.name for s in sources})
    if unknown:
        print(f"no bundle source in bundles/ named {', '.join(unknown)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="reprobundle-golden-") as tmp:
        for source in sources:
            files = render(normalise(verify_source(source, Path(tmp))))
            target = GOLDEN / source.name
            target.mkdir(exist_ok=True)
            for name, text in files.items():
                (target / name).write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(REPO)}/{{{','.join(files)}}}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main(sys.argv[1:]))
