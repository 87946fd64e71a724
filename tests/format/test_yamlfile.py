"""Evidence is read the way its author wrote it: no silent duplicate keys, no aliases."""

from __future__ import annotations

import pytest

from checkers import yamlfile


def problem(text: str) -> yamlfile.YamlProblem:
    with pytest.raises(yamlfile.YamlProblem) as caught:
        yamlfile.load(text)
    return caught.value


def test_plain_document_with_lines() -> None:
    data, marks = yamlfile.load("a: 1\nb:\n  - x\n")
    assert data == {"a": 1, "b": ["x"]}
    assert marks[("b", 0)] == 3


def test_duplicate_key_is_refused_with_both_lines() -> None:
    error = problem("a: 1\nb: 2\na: 3\n")
    assert (error.line, error.message) == (3, "duplicate key 'a' (first on line 1)")


@pytest.mark.parametrize("text", ["a: &x 1\nb: *x\n", "a: &x [1, 2]\nb: *x\n"])
def test_alias_is_refused(text: str) -> None:
    assert "aliases" in problem(text).message


def test_billion_laughs_is_refused_before_expansion() -> None:
    text = "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n"
    assert "aliases" in problem(text).message


def test_merge_key_is_refused() -> None:
    assert "merge keys" in problem("base: {x: 1}\nmine:\n  <<: {x: 1}\n").message


def test_invalid_yaml_names_the_line() -> None:
    error = problem("a: [1,\nb: 2\n")
    assert error.message.startswith("not valid YAML")
    assert error.line is not None


def test_empty_document_is_none() -> None:
    assert yamlfile.load("") == (None, {})


@pytest.mark.parametrize("loader", ["libyaml", "python"])
@pytest.mark.parametrize("depth", [990, 5000])
def test_absurd_nesting_is_refused_with_one_message_whatever_stops_it(
    monkeypatch: pytest.MonkeyPatch, loader: str, depth: int
) -> None:
    """libyaml 0.2.6+ (PyYAML 6.0.4+) stops deep nesting itself; older ones and the
    pure-Python parser hit the recursion limit. The message must not depend on which."""
    import yaml

    if loader == "python":
        monkeypatch.setattr(yamlfile, "_Loader", yaml.SafeLoader)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML was built without libyaml")
    error = problem("x: " + "[" * depth + "]" * depth + "\n")
    assert error.message == yamlfile.TOO_DEEP
