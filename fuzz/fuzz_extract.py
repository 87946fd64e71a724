"""Fuzz the untrusted-archive reader (``bundler.container.extract``), by hand.

Every input must end in an accepted bundle or a ``BundleRejected``; any other exception,
or a write beside the work directory, is a bug and stops the run.

With atheris (``pip install atheris``; coverage-guided, libFuzzer options pass through):

    python fuzz/fuzz_extract.py fuzz/corpus -atheris_runs=200000

Without it, a plain mutation loop over a seed bundle (built from bundles/quickstart when
none is given):

    python fuzz/fuzz_extract.py --plain 20000 [SEED.bundle.tar.gz ...]
"""

from __future__ import annotations

import gzip
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bundler.container.extract import Limits, extract  # noqa: E402
from bundler.errors import BundleRejected  # noqa: E402

LIMITS = Limits(archive_bytes=4 << 20, total_bytes=16 << 20, ratio_floor=1 << 20)


def one_input(data: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="reprobundle-fuzz-") as tmp:
        base = Path(tmp)
        bundle, work, canary = base / "b.tar.gz", base / "work", base / "canary"
        bundle.write_bytes(data)
        canary.write_bytes(b"untouched")
        work.mkdir()
        try:
            extract(bundle, work, LIMITS)
        except BundleRejected as exc:
            assert exc.exit_code == 3 and exc.problems, exc
        assert canary.read_bytes() == b"untouched"
        assert sorted(p.name for p in base.iterdir()) == ["b.tar.gz", "canary", "work"]


def _seed() -> bytes:
    from bundler.authoring.build import build

    with tempfile.TemporaryDirectory() as tmp:
        return build(
            REPO / "bundles" / "quickstart", Path(tmp) / "q.bundle.tar.gz"
        ).path.read_bytes()


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    choice = rng.randrange(5)
    if choice == 0:  # flip bits in the compressed file
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        return bytes(out)
    raw = bytearray(gzip.decompress(data))
    if choice == 1:  # flip bits in the tar stream (headers, names, padding)
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    elif choice == 2:  # splice a block elsewhere
        a, b = rng.randrange(0, len(raw), 512), rng.randrange(0, len(raw), 512)
        raw[a : a + 512] = raw[b : b + 512]
    elif choice == 3:  # truncate or extend
        raw = raw[: rng.randrange(len(raw))] + bytes(rng.randrange(2048))
    else:  # change a header's fields and fix its checksum, so the change is read
        headers = [i for i in range(0, len(raw), 512) if raw[i + 257 : i + 262] == b"ustar"]
        at = rng.choice(headers)
        for _ in range(rng.randint(1, 4)):
            where = rng.choice([rng.randrange(100), 124 + rng.randrange(12), 156, 345])
            raw[at + where] = rng.choice(
                [0, 0x20, 0x2F, 0x30, 0x37, 0x78, 0xFF, rng.randrange(256)]
            )
        raw[at + 148 : at + 156] = b" " * 8
        raw[at + 148 : at + 156] = b"%06o\0 " % sum(raw[at : at + 512])
    return gzip.compress(bytes(raw), mtime=0)


def plain(runs: int, seeds: list[bytes]) -> None:
    rng = random.Random(0)
    for i in range(runs):
        one_input(_mutate(rng.choice(seeds), rng))
        if i % 1000 == 0:
            print(f"{i} inputs, no crash", flush=True)
    print(f"{runs} inputs, no crash")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--plain":
        runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
        seeds = [Path(p).read_bytes() for p in sys.argv[3:]] or [_seed()]
        plain(runs, seeds)
        return
    import atheris  # type: ignore[import-not-found]

    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        """Mutate the tar stream inside the gzip, so mutations reach the tar parser."""
        try:
            raw = gzip.decompress(data)
        except Exception:
            raw = b""
        raw = atheris.Mutate(raw, len(raw) + 4096)
        return gzip.compress(raw, mtime=0)

    atheris.instrument_all()
    args = (
        sys.argv
        if any(a.startswith("-max_len") for a in sys.argv)
        else [
            *sys.argv,
            "-max_len=262144",
        ]
    )
    atheris.Setup(args, one_input, custom_mutator=mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
