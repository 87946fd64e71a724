"""lm-eval-hashes@1 writes each doc as ``json.dumps(doc, indent=2, ensure_ascii=False)``
does, from the C encoder's text (issue 33, item 3).

With ``indent`` Python writes JSON with its own encoder, a generator a value: the doc was
most of the checker's time. ``run.doc_text`` puts the same text together from the C
encoder's (a container of scalars in one call, with its level's separators), and gives
None for a value of another type, which is then written by ``json.dumps`` as before.
``json.dumps`` itself is the reference.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.lm_eval import run

_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, 1e16, 1.5e-7, math.nan, -math.inf])
    | st.text(st.characters(codec=None, exclude_categories=()), max_size=8)
)
_VALUES = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=800, deadline=None)
@given(_VALUES)
def test_a_doc_is_written_as_json_dumps_with_an_indent_writes_it(value: Any) -> None:
    assert run.doc_text(value) == json.dumps(value, indent=2, ensure_ascii=False)


class _Number(int):
    def __repr__(self) -> str:
        return "a number"


def test_a_value_of_another_type_is_left_to_json_dumps() -> None:
    others = ({"a": (1, 2)}, [OrderedDict(a=1)], {1: "a"}, {"a": _Number(3)}, [{"x": {1.5: 2}}])
    for value in others:
        assert run.doc_text(value) is None


def test_a_value_nested_past_the_bound_is_left_to_json_dumps() -> None:
    deep: Any = [1]
    for _ in range(run._DEEPEST):
        deep = [deep, 2]
    assert run.doc_text(deep) is None
    assert run.doc_text(deep[0]) == json.dumps(deep[0], indent=2, ensure_ascii=False)
