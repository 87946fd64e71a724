"""`reprobundle diff` in bounded memory and linear work (issue 47, item 3): a list of
changes holds the first ``LISTED`` by path and counts the rest, and the pairs still to
compare are generated, never listed. Each test counts work or measures memory
(tracemalloc) at two sizes; none times anything."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.cli import main
from bundler.reports import diff
from tests.helpers import edit_manifest


def reversed_lists(count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    items = [f"key-{i:08d}" for i in range(count)]
    return {"params": {"ignore": items}}, {"params": {"ignore": items[::-1]}}


def peak_of_changes(count: int) -> int:
    old, new = reversed_lists(count)
    tracemalloc.start()
    try:
        listed, total = diff.counted_changes(old, new)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(listed) == diff.LISTED and total == count - count % 2
    return peak


def test_the_memory_of_a_diff_does_not_grow_with_its_changes() -> None:
    # before: every change was held (a dict and its path each), and every pair still to
    # compare listed first: 2 MiB manifests took 151 MiB, 16 MiB over 1 GiB
    small, large = peak_of_changes(20_000), peak_of_changes(80_000)
    assert large < small * 1.3, (small, large)


def test_the_work_of_a_diff_grows_with_its_size_not_its_square(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = [0]
    same = diff._same

    def counted(a: Any, b: Any) -> bool:
        calls[0] += 1
        return same(a, b)

    monkeypatch.setattr(diff, "_same", counted)
    work = []
    for count in (5_000, 20_000):
        calls[0] = 0
        old, new = reversed_lists(count)
        new["params"]["ignore"][count // 2] = "moved"
        diff.counted_changes(old, new)
        work.append(calls[0])
    assert work[1] <= 4 * work[0] + 10, work


def test_the_listed_changes_are_the_first_by_path_of_all_of_them() -> None:
    old, new = reversed_lists(3_000)
    listed, total = diff.counted_changes(old, new)
    everything, same_total = diff.counted_changes(old, new, limit=10**9)
    assert total == same_total == len(everything) == 3_000
    assert listed == everything[: diff.LISTED]
    assert diff.changes(old, new) == listed


def test_a_diff_with_more_changes_than_it_lists_says_how_many_it_left_out(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    items = [f"key-{i:05d}" for i in range(3_000)]

    def params(values: list[str]) -> Any:
        return lambda doc: doc["cases"][0]["params"].__setitem__("ignore", values)

    old = edit_manifest(quickstart_bundle, tmp_path / "old.bundle.tar.gz", params(items))
    new = edit_manifest(quickstart_bundle, tmp_path / "new.bundle.tar.gz", params(items[::-1]))
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--json", "-"])
    found = json.loads(result.stdout)
    case = found["cases"]["changed"][0]
    assert len(case["changes"]) == diff.LISTED
    assert case["changes_omitted"] == 3_000 - diff.LISTED
    text = CliRunner().invoke(main, ["diff", str(old), str(new)]).stdout
    assert f"… and {3_000 - diff.LISTED} more change(s), not listed" in text


def changes_before_issue_47(old: Any, new: Any) -> list[dict[str, Any]]:
    """``diff.changes`` as it was (every change held, sorted by path): the reference."""
    from bundler.format.manifest import dotted

    def change(path: list[Any], kind: str, a: Any, b: Any) -> dict[str, Any]:
        return {"path": dotted(path, root="(all)"), "change": kind, "old": a, "new": b}

    def same(a: Any, b: Any) -> bool:
        return type(a) is type(b) and a == b

    found: list[dict[str, Any]] = []
    todo: list[tuple[list[Any], Any, Any]] = [([], old, new)]
    while todo:
        path, before, after = todo.pop()
        if type(before) is type(after) and before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            for key in before:
                if key not in after:
                    found.append(change([*path, key], "removed", before[key], None))
                else:
                    todo.append(([*path, key], before[key], after[key]))
            found += [
                change([*path, k], "added", None, v) for k, v in after.items() if k not in before
            ]
        elif isinstance(before, list | tuple) and isinstance(after, list | tuple):
            start, shorter = 0, min(len(before), len(after))
            while start < shorter and same(before[start], after[start]):
                start += 1
            end = 0
            while end < shorter - start and same(before[-1 - end], after[-1 - end]):
                end += 1
            old_middle = range(start, len(before) - end)
            new_middle = range(start, len(after) - end)
            pairs = min(len(old_middle), len(new_middle))
            found += [change([*path, i], "removed", before[i], None) for i in old_middle[pairs:]]
            found += [change([*path, i], "added", None, after[i]) for i in new_middle[pairs:]]
            todo += [([*path, i], before[i], after[i]) for i in old_middle[:pairs]]
        else:
            found.append(change(path, "changed", before, after))
    return sorted(found, key=lambda c: c["path"])


PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.text("ab", max_size=2),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("abc", max_size=2), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(PLAIN, PLAIN)
def test_the_changes_are_those_the_diff_gave_before(old: Any, new: Any) -> None:
    everything, total = diff.counted_changes(old, new, limit=10**9)
    assert everything == changes_before_issue_47(old, new)
    assert total == len(everything)
    listed, _ = diff.counted_changes(old, new, limit=3)
    assert listed == everything[:3]
