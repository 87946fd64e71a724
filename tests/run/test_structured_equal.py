from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from checkers import get
from checkers.compare import compare_documents, format_path

CHECK = get("structured-equal@1")
assert CHECK is not None


def run(actual: Any, expected: Any) -> Any:
    return CHECK.function({"actual": actual, "expected": expected}, {})


def test_key_order_and_yaml_formatting_are_ignored() -> None:
    expected = yaml.safe_load("a: 1\nb: [x, y]\nc: {d: 2}\n")
    actual = yaml.safe_load("# comment\nc:\n  d: 2\nb:\n  - x\n  - y\na: 1\n")
    assert run(actual, expected).status == "pass"


def test_list_order_is_kept() -> None:
    verdict = run({"l": [2, 1]}, {"l": [1, 2]})
    assert verdict.status == "fail"
    assert verdict.codes == ("content.changed",)
    assert [r.details["path"] for r in verdict.reasons] == ["l[0]", "l[1]"]


def test_removed_list_item_names_path_and_value() -> None:
    verdict = run({"decisions": [{"name": "t"}]}, {"decisions": [{"name": "t"}, {"name": "other"}]})
    assert verdict.codes == ("content.removed",)
    reason = verdict.reasons[0]
    assert reason.details["path"] == "decisions[1]"
    assert reason.details["expected"] == {"name": "other"}
    assert "decisions[1]" in reason.message and "other" in reason.message


def test_added_key_is_reported() -> None:
    verdict = run({"a": 1, "extra": True}, {"a": 1})
    assert verdict.codes == ("content.added",)
    assert verdict.reasons[0].details == {"path": "extra", "actual": True}


def test_changed_value_names_both_values() -> None:
    verdict = run({"a": {"b": "new"}}, {"a": {"b": "old"}})
    assert verdict.codes == ("content.changed",)
    assert verdict.reasons[0].details == {"path": "a.b", "expected": "old", "actual": "new"}


def test_number_written_as_string_is_a_type_change() -> None:
    verdict = run({"t": "30"}, {"t": 30})
    assert verdict.codes == ("content.type_changed",)
    assert "expected int 30, observed str" in verdict.reasons[0].message


def test_one_reason_per_difference() -> None:
    verdict = run({"a": 2, "c": 3}, {"a": 1, "b": 2})
    assert sorted(r.code for r in verdict.reasons) == [
        "content.added",
        "content.changed",
        "content.removed",
    ]


def test_format_path_quotes_keys_that_are_not_identifiers() -> None:
    assert format_path([]) == "$"
    assert format_path(["a b", 0, "c"]) == '["a b"][0].c'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_a_document_equals_itself(value: Any) -> None:
    assert compare_documents(value, value) == []


@given(st.dictionaries(st.text(min_size=1, max_size=4), st.integers(), min_size=1, max_size=6))
def test_key_order_never_matters(mapping: dict[str, int]) -> None:
    reordered = dict(reversed(list(mapping.items())))
    assert compare_documents(reordered, mapping) == []


@given(st.lists(st.integers(), min_size=2, max_size=6, unique=True))
def test_any_reordering_of_distinct_items_is_detected(items: list[int]) -> None:
    rotated = items[1:] + items[:1]
    assert compare_documents({"l": rotated}, {"l": items}) != []


@given(st.lists(st.integers(), min_size=1, max_size=6), st.data())
def test_dropping_any_item_is_detected(items: list[int], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(items) - 1))
    shorter = items[:index] + items[index + 1 :]
    assert compare_documents({"l": shorter}, {"l": items}) != []
