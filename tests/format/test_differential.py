"""The two verifiers against each other on mutated bundles (``tests/format/mutants.py``):
golden, signed and redacted bundles, changed at the byte level and at the structure level
(tar headers, pax records, long names, links, sizes, checksums, padding, trailing data;
the manifest's TOML; signature files; the withheld record; gzip and zstd containers; the
reviewer's pins, keys and limits). The same result and the same problem codes for every
one, except the one difference FORMAT.md allows on a damaged compressed stream.

A fixed seed and a few hundred mutants here (a second of work); many thousands by hand:
``python -m tests.format.mutants --seed N --count 5000``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.format import mutants
from tests.format.test_conformance import NO_NODE, NO_PACKAGES, NODE, unavailable

pytestmark = pytest.mark.long


def node() -> str:
    if NODE is None:
        unavailable(NO_NODE)
    if not (mutants.JS / "node_modules" / "fzstd").is_dir():
        unavailable(NO_PACKAGES)
    assert NODE is not None
    return NODE


def test_both_verifiers_agree_on_every_mutant(tmp_path: Path) -> None:
    made = mutants.make(46, 400)
    differ, js = mutants.compare(made, tmp_path, node())
    assert not differ, "\n".join(map(str, differ))
    outcomes = Counter(tuple(codes) for _, codes in js.values())
    assert len(outcomes) >= 40  # the mutants reach many rules, not one
    assert outcomes[()] >= 20  # and some are intact
    kinds = {k.split(".")[0] for m in made for k in m.kinds}
    assert {"tar", "toml", "sig", "withheld", "options", "gzip", "zstd"} <= kinds


def test_mutants_are_deterministic() -> None:
    """Mutant i of a seed is the same bytes whatever else is made (no time, no order)."""
    bases = mutants.bases()
    alone = mutants.mutant(46, 17, bases)
    assert mutants.make(46, 20)[17].data == alone.data
    assert mutants.mutant(47, 17, bases).data != alone.data


def test_only_a_damaged_stream_may_name_another_code() -> None:
    """The one allowance: both reject, one with a stream code, and only where the mutant
    damaged the compressed bytes; any other difference is a disagreement."""
    intact, damaged = mutants.make(46, 2)
    damaged.stream_damaged, intact.stream_damaged = True, False
    stream, tar = ("reject", ["archive.corrupt"]), ("reject", ["archive.hidden_data"])
    assert mutants.allowed(damaged, stream, tar)
    assert not mutants.allowed(intact, stream, tar)
    assert not mutants.allowed(damaged, stream, ("accept", []))
    assert not mutants.allowed(damaged, ("reject", ["file.hash"]), tar)


@pytest.mark.parametrize("zeros_first", [True, False])
def test_the_ratio_is_judged_as_the_file_is_read(tmp_path: Path, zeros_first: bool) -> None:
    """FORMAT.md, "Limits": the ratio of the bytes decompressed so far to the compressed
    bytes read so far (4 bytes, then 1 MiB at a time), not to the whole file. 3 MiB of
    zeros before 6 MiB of noise pass 2:1 within the first MiB read; after it, never (the
    JavaScript verifier once compared with the whole file and accepted both)."""
    import random

    from manifests.conformance import generate as g

    noise = random.Random(46).randbytes(6 << 20)
    zeros = "inputs/0zeros.bin" if zeros_first else "inputs/zzeros.bin"
    files = {**g.FILES, zeros: bytes(3 << 20), "inputs/noise.bin": noise}
    raw = g.plain_bundle(manifest_bytes=g.manifest(files=g.files_toml(files)), files=files)
    made = [
        mutants.Mutant(
            f"ratio-{codec}", data, [codec], {"limits": {"ratio": 2, "ratio_floor": 1 << 20}}
        )
        for codec, data in (("gzip", g.gz(raw)), ("zstd", g.zst_compressed(raw)))
    ]
    differ, js = mutants.compare(made, tmp_path, node())
    assert not differ, "\n".join(map(str, differ))
    expected = ("reject", ["limit.ratio"]) if zeros_first else ("accept", [])
    assert all(verdict == expected for verdict in js.values())
