"""Property tests of the whole of ``verify``: generated bundles (gzip and zstd) with
hostile case inputs, verified in every output format, and hostile JSON reports rendered
again, end in a verdict or a refusal; never exit 5, never a traceback."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import with_input
from tests.hostile import (
    HOSTILE_KINDS,
    INPUTS,
    SUFFIXES,
    VERDICTS,
    hostile_report,
    hostile_text,
    run,
    verify_every_way,
    zstd_mutant,
)

# derandomized and without an example database: every run tries the same examples
SETTINGS = settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("kind", range(HOSTILE_KINDS))
def test_verify_of_a_bundle_with_each_kind_of_hostile_input_never_fails_internally(
    quickstart_bundle: Path, tmp_path: Path, kind: int, suffix: str
) -> None:
    rng = random.Random(kind)
    data = hostile_text(rng, kind, depth=100_000)
    target = tmp_path / f"h.bundle{suffix}"
    bundle = with_input(quickstart_bundle, target, INPUTS[kind % 2], data)
    assert verify_every_way(bundle) <= VERDICTS


@SETTINGS
@given(st.randoms(use_true_random=False), st.sampled_from(INPUTS), st.sampled_from(SUFFIXES))
def test_verify_of_a_bundle_with_hostile_inputs_never_fails_internally(
    quickstart_bundle: Path, rng: random.Random, path: str, suffix: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / f"h.bundle{suffix}"
        bundle = with_input(quickstart_bundle, target, path, hostile_text(rng))
        assert verify_every_way(bundle) <= VERDICTS


@SETTINGS
@given(st.randoms(use_true_random=False))
def test_verify_of_a_mutated_zstd_bundle_never_fails_internally(
    quickstart_zst_bundle: Path, rng: random.Random
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "m.bundle.tar.zst"
        bundle.write_bytes(zstd_mutant(quickstart_zst_bundle.read_bytes(), rng))
        assert verify_every_way(bundle) <= VERDICTS


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["markdown", "html", "junit", "json"]))
def test_rendering_a_hostile_json_report_never_fails_internally(
    quickstart_report: dict[str, Any], rng: random.Random, fmt: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        report.write_bytes(hostile_report(rng, quickstart_report))
        code, text = run("report", report, "-f", fmt, "-o", Path(tmp) / "out")
        assert code in VERDICTS, text
        assert "internal error" not in text and "Traceback" not in text, text


@pytest.fixture(scope="module")
def quickstart_report(quickstart_zst_bundle: Path) -> dict[str, Any]:
    from bundler.reports.document import to_json
    from bundler.run.verify import verify

    return to_json(verify(quickstart_zst_bundle))
