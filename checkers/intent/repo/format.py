"""The repository's ``cases.yaml``: the case and assertion keys its grader evaluates, each
assertion value's type, and the cases parsed strictly (every problem at once)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..cases import input_invalid

# Keys a case may carry (run.py CASE_KEYS) and the assertion keys the grader evaluates
# (run.py EXPECT_KEYS, check_turn); a key outside these is refused by name, as the
# grader's validate_cases refuses it at load time.
CASE_KEYS = ("id", "prompt", "mode", "fixture", "turns", "expect", "expect_turn1", "metrics")


def _int(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"expected a whole number >= 0, observed {value!r}"
    return None


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, observed {value!r}"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else f"expected a string, observed {value!r}"


def _regex(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return f"expected a regular expression (a string), observed {value!r}"
    try:
        re.compile(value)
    except re.error as exc:
        return f"{value!r} is not a regular expression: {exc}"
    return None


def _strings(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        return f"expected a list of strings, observed {value!r}"
    if not value:
        return "an empty list checks nothing"
    return None


def _words(value: Any) -> str | None:
    # the grader compares str(w): an unquoted 420 in YAML is the word "420"
    ok = isinstance(value, list) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) and str(v) for v in value
    )
    if not ok:
        return f"expected a list of words, observed {value!r}"
    if not value:
        return "an empty list can never match (the grader passes on ANY match)"
    return None


def _lang(value: Any) -> str | None:
    # grader: only "zh" is checked; any other value would check nothing, so it is refused
    if value != "zh":
        return f"the grader checks only question_lang: zh (CJK in the question); observed {value!r}"
    return None


EXPECT_KEYS: Mapping[str, Callable[[Any], str | None]] = {
    "should_trigger": _bool,
    "state": _text,
    "state_in": _strings,
    "cause": _text,
    "asked_eq": _int,
    "max_asked": _int,
    "min_resolved_by_probe": _int,
    "resolved_by_probe_eq": _int,
    "probed_constraints_eq": _int,
    "max_inferred": _int,
    "unknown_empty": _bool,
    "has_source": _strings,
    "open_fields_min": _int,
    "evidence_must_include": _strings,
    "evidence_regex": _regex,
    "question_keywords": _words,
    "text_keywords": _words,
    "output_regex": _regex,
    "question_lang": _lang,
    "not_target": _text,
    "open_field_regex": _regex,
    "open_issue": _text,
}


@dataclass(frozen=True)
class RepoCase:
    """One item of the repository's ``cases.yaml``."""

    id: str
    fixture: str
    expect: Mapping[str, Any]
    expect_turn1: Mapping[str, Any] | None = None
    turns: tuple[str, ...] = ()
    metrics: Mapping[str, str] = field(default_factory=dict)

    @property
    def spec_expected(self) -> bool:
        """False only for a quiet case (``should_trigger: false``): silence is the pass."""
        return self.expect.get("should_trigger") is not False


def _expect_block(value: Any, where: str, problems: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append(f"{where}: must be a mapping of assertion keys")
        return {}
    block: dict[str, Any] = {}
    for key, want in value.items():
        check = EXPECT_KEYS.get(str(key))
        if check is None:
            problems.append(
                f"{where}: unknown assertion key {key!r} (neither this checker nor the "
                "grader evaluates it; a misspelt key would otherwise check nothing)"
            )
            continue
        why = check(want)
        if why:
            problems.append(f"{where}.{key}: {why}")
        block[str(key)] = want
    if block.get("should_trigger") is False and len(block) > 1:
        others = sorted(k for k in block if k != "should_trigger")
        problems.append(
            f"{where}: should_trigger: false ends the judgement (silence is the pass), so "
            f"{others} would never be checked; remove them or make it a case that expects a spec"
        )
    return block


def parse_repo_cases(doc: Any) -> list[RepoCase]:
    """The repository's ``cases.yaml`` (a list of cases) as cases; every problem at once.

    Refused, naming each one: a case without an id or with an id used twice, an unknown
    case key or assertion key, an assertion value of the wrong type, a regex that does
    not compile, ``expect_turn1`` on a case without ``turns``, keys beside
    ``should_trigger: false``, and a fixture or metric that is not a string.
    """
    if not isinstance(doc, list):
        raise input_invalid("cases: expected the list of cases of cases.yaml")
    if not doc:
        raise input_invalid("cases: no case: nothing to judge is not a pass")
    problems: list[str] = []
    cases: list[RepoCase] = []
    seen: set[str] = set()
    for index, raw in enumerate(doc):
        if not isinstance(raw, Mapping):
            problems.append(f"case #{index + 1}: expected a mapping")
            continue
        cid = raw.get("id")
        if not isinstance(cid, str) or not cid:
            problems.append(f"case #{index + 1}: case has no id (a non-empty string)")
            continue
        if cid in seen:
            problems.append(f"{cid}: id used twice")
        seen.add(cid)
        problems += [f"{cid}: unknown case key {k!r}" for k in raw if k not in CASE_KEYS]
        fixture = raw.get("fixture", "empty")
        if not isinstance(fixture, str) or not fixture:
            problems.append(f"{cid}.fixture: expected a fixture name, observed {fixture!r}")
            fixture = "empty"
        turns = raw.get("turns") or []
        if not isinstance(turns, list) or not all(
            isinstance(t, str | int | float) and not isinstance(t, bool) for t in turns
        ):
            problems.append(f"{cid}.turns: expected a list of follow-up answers")
            turns = []
        metrics = raw.get("metrics") or {}
        if not isinstance(metrics, Mapping) or not all(
            isinstance(v, str) for v in metrics.values()
        ):
            problems.append(f"{cid}.metrics: expected a mapping of name -> evidence prefix")
            metrics = {}
        expect = _expect_block(raw.get("expect"), f"{cid}.expect", problems)
        first = None
        if "expect_turn1" in raw:
            first = _expect_block(raw["expect_turn1"], f"{cid}.expect_turn1", problems)
            if not turns:
                problems.append(
                    f"{cid}.expect_turn1: applies to the first turn of a multi-turn case; "
                    "without turns the grader never checks it"
                )
        cases.append(
            RepoCase(
                cid,
                fixture,
                expect,
                first or None,
                tuple(str(t) for t in turns),
                {str(k): v for k, v in metrics.items()},
            )
        )
    if problems:
        raise input_invalid("cases.yaml: " + "; ".join(problems))
    return cases


def as_mapping(value: Any) -> Mapping[str, Any]:
    """A field of a spec read as the grader's ``.get`` chains read it: not a mapping, empty."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """A field of a spec that is not a list reads as an empty one, as in the grader."""
    return value if isinstance(value, list) else []
