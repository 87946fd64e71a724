"""Generate the benchmark data sets as bundle sources (deterministic, seeded)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20

BUNDLE_YAML = """\
name: bench-{name}
version: 1.0.0
title: Benchmark data set {name}
files:
  - data/**
  - checks/**
cases:
  - id: same
    checker: structured-equal@1
    inputs: {{actual: checks/a-copy.yaml, expected: checks/a.yaml}}
    expect: pass
  - id: different
    checker: structured-equal@1
    inputs: {{actual: checks/b.yaml, expected: checks/a.yaml}}
    expect: fail
    expect_reasons: [content.changed]
claims:
  - id: bench
    statement: The benchmark bundle verifies.
    cases: [same, different]
"""


@dataclass(frozen=True)
class Dataset:
    name: str
    files: int
    min_bytes: int
    max_bytes: int


def datasets(full: bool) -> Iterator[tuple[str, Dataset]]:
    """(kind, data set) pairs, each kind at two sizes (claims: three); for "cases" and
    "claims", ``files`` is the number of cases. With ``full``, the larger size of "big",
    "files" and "tiny" is the data set of issue 33's targets (1 GiB; 5,000 files of
    4-64 KiB; 20,000 files of 64-1,024 B); without, a quarter of each."""
    scale = 1 if full else 4
    for size in (256, 1024):
        yield (
            "big",
            Dataset(f"one-{size // scale}MiB-file", 1, size * MIB // scale, size * MIB // scale),
        )
    for count in (2_500, 5_000):
        yield "files", Dataset(f"{count // scale}-files-4-64KiB", count // scale, 4096, 65536)
    for count in (10_000, 20_000):
        yield "tiny", Dataset(f"{count // scale}-tiny-files-64-1024B", count // scale, 64, 1024)
    for count in (5_000, 10_000):
        yield (
            "cases",
            Dataset(f"{count // (1 if full else 2)}-cases", count // (1 if full else 2), 0, 0),
        )
    # each cited by 1 and by 10 claims, at three sizes (time per case should stay flat);
    # 40,000 cases cited by 10 claims make a manifest past the default 16 MiB limit
    for count in (10_000, 20_000, 40_000):
        size = count // (1 if full else 10)
        yield "claims", Dataset(f"{size}-cases-x-claims", size, 0, 0)


def make(ds: Dataset, root: Path) -> Path:
    """Write the data set under root/data with a bundle.yaml; returns the source folder."""
    rng = random.Random(ds.name)
    data = root / "data"
    checks = root / "checks"
    root.mkdir(parents=True, exist_ok=True)
    for folder in (data, checks):
        folder.mkdir(parents=True, exist_ok=True)
    for i in range(ds.files):
        size = rng.randint(ds.min_bytes, ds.max_bytes)
        sub = data / f"{i // 1000:03d}"
        sub.mkdir(exist_ok=True)
        with open(sub / f"f{i:06d}.bin", "wb") as out:
            left = size
            while left:
                n = min(left, 16 * MIB)
                out.write(rng.randbytes(n))  # incompressible
                left -= n
    (checks / "a.yaml").write_text("a: 1\nb: [1, 2]\n")
    (checks / "a-copy.yaml").write_text("a: 1\nb: [1, 2]\n")  # no case compares a file with itself
    (checks / "b.yaml").write_text("a: 1\nb: [2, 1]\n")
    (root / "bundle.yaml").write_text(BUNDLE_YAML.format(name=ds.name.lower()))
    return root


def make_cases(root: Path, cases: int, claims: int = 1) -> Path:
    """A bundle source with ``cases`` structured-equal@1 cases, each on its own pair of
    small YAML documents (every 10th one a negative control), cited by ``claims`` claims
    that each name every case."""
    rng = random.Random(cases)
    inputs = root / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    lines = [
        f"name: bench-cases-{cases}",
        "version: 1.0.0",
        "title: Case throughput",
        "files:",
        "  - inputs/**",
        "cases:",
    ]
    ids = []
    for i in range(cases):
        doc: dict[str, object] = {f"k{j}": rng.randint(0, 1000) for j in range(8)}
        doc["items"] = [rng.randint(0, 9) for _ in range(6)]
        expected = "\n".join(f"{k}: {v}" for k, v in doc.items()) + "\n"
        negative = i % 10 == 0
        actual = expected.replace("k0:", "k0x:") if negative else expected
        sub = inputs / f"{i // 1000:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"e{i}.yaml").write_text(expected)
        (sub / f"a{i}.yaml").write_text(actual)
        rel = f"inputs/{i // 1000:03d}"
        lines += [
            f"  - id: c{i}",
            "    checker: structured-equal@1",
            f"    inputs: {{actual: {rel}/a{i}.yaml, expected: {rel}/e{i}.yaml}}",
            f"    expect: {'fail' if negative else 'pass'}",
            *(["    expect_reasons: [content.added, content.removed]"] if negative else []),
        ]
        ids.append(f"c{i}")
    lines.append("claims:")
    for k in range(claims):
        lines += [
            f"  - id: throughput{'' if k == 0 else f'-{k}'}",
            "    statement: Every case reproduces.",
            f"    cases: [{', '.join(ids)}]",
        ]
    (root / "bundle.yaml").write_text("\n".join(lines) + "\n")
    return root
