"""Strict JSON is read by one reader, ``checkers/strictjson.py``: no other module of
bundler/ or checkers/ builds its own (an ``object_pairs_hook`` refusing duplicate keys,
a ``JSONDecoder``). What a checker version read before keeps being read alike: its old
behaviour is an option of the one reader.

Read from the code (an AST scan)."""

from __future__ import annotations

import ast
from collections.abc import Mapping

import pytest

from checkers import strictjson
from checkers.inspect_log.log import LogError, read_log
from checkers.promptfoo.results import read_rows
from tests.project.test_layers import sources

READER = "checkers.strictjson"


def own_readers(known: Mapping[str, str]) -> list[str]:
    """Each place outside the reader that builds a JSON reader of its own."""
    found = []
    for name, source in sorted(known.items()):
        if name == READER:
            continue
        for node in ast.walk(ast.parse(source)):
            hook = isinstance(node, ast.keyword) and node.arg == "object_pairs_hook"
            decoder = isinstance(node, ast.Attribute) and node.attr == "JSONDecoder"
            if hook or decoder:
                found.append(f"{name}:{getattr(node, 'lineno', '?')} {ast.unparse(node)[:50]}")
    return found


def test_strict_json_is_read_by_one_reader() -> None:
    assert own_readers(sources()) == []


def test_a_planted_reader_of_its_own_is_found() -> None:
    known = dict(sources())
    known["checkers.promptfoo.results"] += "json.loads(b'{}', object_pairs_hook=dict)\n"
    known["bundler.store.audit"] += "decoder = json.JSONDecoder()\n"
    found = own_readers(known)
    assert [f.split(":")[0] for f in found] == ["bundler.store.audit", "checkers.promptfoo.results"]


# what the Inspect AI and promptfoo readers said before they used the one reader
# (json.loads with a duplicate-key hook: NaN, infinities and any depth Python reads)
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"version": 2, "version": 2}', "log: key 'version' appears twice in one object"),
        (b'{"version": ', "log: not valid JSON (Expecting value: line 1 column 13 (char 12))"),
        (DEEP, "log: nested too deeply"),
    ],
)
def test_an_inspect_log_is_refused_with_the_words_it_always_had(data: bytes, message: str) -> None:
    with pytest.raises(LogError) as caught:
        read_log(data)
    assert str(caught.value).endswith(message), str(caught.value)


def test_an_inspect_log_still_reads_nan_and_huge_numbers() -> None:
    from checkers.inspect_log.log import _loads

    assert repr(_loads(b'{"a": NaN, "b": 1e999}', "log")) == "{'a': nan, 'b': inf}"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"results": {"a": 1, "a": 2}}', "key 'a' appears twice in one object"),
        (b'{"results": ', "not a JSON document (Expecting value: line 1 column 13 (char 12))"),
        (DEEP, "not a JSON document ("),  # then Python's own words, which vary by version
    ],
)
def test_promptfoo_results_are_refused_with_the_words_they_always_had(
    data: bytes, message: str
) -> None:
    from checkers.api import CheckerInputError

    with pytest.raises(CheckerInputError) as caught:
        read_rows(data)
    assert caught.value.code == "input.invalid"
    assert caught.value.message.startswith(message), caught.value.message


def test_the_reader_without_a_depth_of_its_own_raises_what_python_raises() -> None:
    with pytest.raises(RecursionError):
        strictjson.loads(DEEP, None)
    with pytest.raises(ValueError, match="nested deeper than 200 levels"):
        strictjson.loads(DEEP)
    with pytest.raises(strictjson.DuplicateKey) as caught:
        strictjson.loads('{"k": 1, "k": 2}')
    assert caught.value.key == "k" and str(caught.value) == "duplicate key 'k'"
