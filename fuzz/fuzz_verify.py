"""Fuzz the whole of ``verify`` and of ``report``, by hand: zstd bundles (the default
format), case inputs and report rendering. ``fuzz_extract.py`` covers the gzip reader.

Every input must end in a verdict or a refusal (exit 0-4) in every output format; an
exit 5, a traceback, or an output file that is not UTF-8 stops the run.

    python fuzz/fuzz_verify.py --plain 2000 zstd      # mutated zstd bundles
    python fuzz/fuzz_verify.py --plain 2000 inputs    # hostile case inputs, honest hashes
    python fuzz/fuzz_verify.py --plain 2000 report    # edited JSON reports, rendered again

With atheris (``pip install atheris``), coverage-guided, one target at a time:

    python fuzz/fuzz_verify.py --atheris inputs fuzz/corpus-inputs -atheris_runs=20000
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.hostile import (  # noqa: E402
    INPUTS,
    VERDICTS,
    hostile_report,
    hostile_text,
    run,
    verify_every_way,
    with_input,
    zstd_mutant,
)

TARGETS = ("zstd", "inputs", "report")


class Seeds:
    """A quickstart bundle (gzip and zstd) and its JSON report, made once."""

    def __init__(self, folder: Path) -> None:
        from bundler.authoring.build import build
        from bundler.reports.document import to_json
        from bundler.run.verify import verify

        source = REPO / "bundles" / "quickstart"
        self.gzip = build(source, folder / "q.bundle.tar.gz", 1700000000).path
        self.zstd = build(source, folder / "q.bundle.tar.zst", 1700000000).path.read_bytes()
        self.report = to_json(verify(self.gzip))


def one(target: str, data: bytes, seeds: Seeds, rng: random.Random) -> None:
    """Run one input of ``target`` (``data`` as the fuzzer's bytes, or drawn from rng)."""
    with tempfile.TemporaryDirectory(prefix="reprobundle-fuzz-") as tmp:
        folder = Path(tmp)
        if target == "zstd":
            bundle = folder / "f.bundle.tar.zst"
            bundle.write_bytes(data or zstd_mutant(seeds.zstd, rng))
            verify_every_way(bundle)
        elif target == "inputs":
            path = rng.choice(INPUTS)
            bundle = with_input(
                seeds.gzip, folder / "f.bundle.tar.gz", path, data or hostile_text(rng)
            )
            verify_every_way(bundle)
        else:
            report = folder / "r.json"
            report.write_bytes(data or hostile_report(rng, seeds.report))
            for fmt in ("markdown", "html", "junit", "json"):
                code, text = run("report", report, "-f", fmt, "-o", folder / "out")
                assert code in VERDICTS and "internal error" not in text, text[-2000:]


def plain(runs: int, target: str) -> None:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        seeds = Seeds(Path(tmp))
        for i in range(runs):
            one(target, b"", seeds, rng)
            if i % 100 == 0:
                print(f"{target}: {i} inputs, no internal error", flush=True)
    print(f"{target}: {runs} inputs, no internal error")


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--plain" and sys.argv[3] in TARGETS:
        plain(int(sys.argv[2]), sys.argv[3])
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--atheris" and sys.argv[2] in TARGETS:
        import atheris  # type: ignore[import-not-found]

        target = sys.argv[2]
        seeds = Seeds(Path(tempfile.mkdtemp()))
        atheris.instrument_all()
        atheris.Setup(
            [sys.argv[0], *sys.argv[3:]],
            lambda data: one(target, data, seeds, random.Random(data)),
        )
        atheris.Fuzz()
        return
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
