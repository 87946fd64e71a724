"""Property tests: whatever names, member lists or bytes an archive holds, in a gzip or a
zstd container, the reader either accepts a bundle that matches its manifest or rejects
it with codes; it never raises anything else and never writes outside its work directory.

Derandomized and without an example database, so every run tries the same examples."""

from __future__ import annotations

import random
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bundler.container.extract import extract
from bundler.errors import BundleRejected
from bundler.format.paths import fold, folders_of, path_problem
from tests.helpers import Entry, read_entries, write_entries
from tests.hostile import SUFFIXES

TOP = "quickstart-1.0.0"
FIXED = settings(derandomize=True, database=None)
SETTINGS = settings(
    FIXED,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

name_parts = st.one_of(
    st.sampled_from(["..", ".", "", "CON", "a", "A", "inputs", "\u202e", "e\u0301", "\ufb01"]),
    st.text(min_size=1, max_size=12),
)
names = st.lists(name_parts, min_size=1, max_size=5).map("/".join)


def _contained_extract(bundle: Path) -> tuple[Path, bool]:
    """Extract into a fresh folder beside a canary; returns (root, accepted)."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        canary = base / "canary.txt"
        canary.write_text("untouched")
        work = base / "work"
        work.mkdir()
        try:
            extract(bundle, work)
            accepted = True
        except BundleRejected as exc:
            assert exc.exit_code == 3 and exc.problems
            assert all(p.code for p in exc.problems)
            accepted = False
        assert canary.read_text() == "untouched"
        assert {p.name for p in base.iterdir()} == {"canary.txt", "work"}
        return work, accepted


@FIXED
@given(names)
def test_path_rules_never_raise_and_accepted_paths_are_plain(path: str) -> None:
    why = path_problem(path)
    if why is None:
        parts = path.split("/")
        assert not path.startswith("/") and "\\" not in path
        assert all(p not in ("", ".", "..") for p in parts)
        assert fold(path) == fold(fold(path))


@SETTINGS
@given(st.lists(names, min_size=1, max_size=4), st.sampled_from(SUFFIXES))
def test_any_extra_member_names_are_rejected_and_contained(
    quickstart_bundle: Path, extra: list[str], suffix: str
) -> None:
    entries = [*read_entries(quickstart_bundle), *(Entry(n, b"x") for n in extra)]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            bundle = write_entries(entries, Path(tmp) / f"b{suffix}")
        except (ValueError, UnicodeEncodeError):
            return  # tarfile itself cannot write this name
        _, accepted = _contained_extract(bundle)
    assert not accepted  # every extra member is unlisted or bad


member_types = st.sampled_from(
    [tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE]
)


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    f"{TOP}/manifest.toml",
                    f"{TOP}/README.md",
                    f"{TOP}/inputs",
                    f"{TOP}/inputs/expected.yaml",
                    f"{TOP}/signatures/x.json",
                    "../escape",
                    f"{TOP}/inputs/../../escape",
                ]
            ),
            member_types,
            st.sampled_from(["", "..", "/tmp", f"{TOP}/README.md"]),
            st.binary(max_size=64),
        ),
        max_size=8,
    ),
    st.sampled_from(SUFFIXES),
)
def test_generated_archives_are_rejected_with_codes_or_contained(
    quickstart_bundle: Path, members: list[tuple[str, bytes, str, bytes]], suffix: str
) -> None:
    original = read_entries(quickstart_bundle)
    entries = [original[0], *(Entry(n, d, t, link) for n, t, link, d in members)]
    with tempfile.TemporaryDirectory() as tmp:
        bundle = write_entries(entries, Path(tmp) / f"b{suffix}")
        _contained_extract(bundle)


@pytest.mark.parametrize("suffix", SUFFIXES)
@SETTINGS
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=8))
def test_random_byte_flips_never_crash(
    request: pytest.FixtureRequest, suffix: str, seed: int, flips: int
) -> None:
    built = "quickstart_zst_bundle" if suffix == ".tar.zst" else "quickstart_bundle"
    data = bytearray(request.getfixturevalue(built).read_bytes())
    rng = random.Random(seed)
    for _ in range(flips):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / f"b{suffix}"
        bundle.write_bytes(bytes(data))
        _contained_extract(bundle)


@FIXED
@given(st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=4).map("/".join)))
def test_folders_of_is_every_proper_prefix_of_every_path(paths: list[str]) -> None:
    naive = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
    assert folders_of(paths) == naive
