"""state-unchanged@1, @2 and @3: two observations of the server's state agree.

@2 requires two points in time, the later after the earlier, and observed values that
are not empty (two nulls are not "unchanged"). @3 decides as @2 and reports bounded
excerpts of what differs instead of both whole values.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

from ..api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
)
from ..compare import compare_documents
from ..plain import brief, json_native, via_json, via_json_finite
from .model import ALIASES_EXPANDED, finite, observed_nothing, require_mapping, str_list


def _state_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """Every declared field (or one, when every field is compared) changed. Never None."""
    names = str_list(params, "fields") or ["counterexample"]
    return {
        "before": {"fields": {name: 1 for name in names}},
        "after": {"fields": {name: 2 for name in names}},
    }


@checker(
    "state-unchanged",
    1,
    roles=[
        Role(
            "before",
            InputKind.DATA,
            "observation read independently of the agent before the run: "
            "{observed_at, source, fields: {name: value}}",
            compared=True,
        ),
        Role("after", InputKind.DATA, "the same observation read after the run", compared=True),
    ],
    params=[
        Param(
            "fields",
            "the observed fields to compare (e.g. ['config_hash', 'versions']); "
            "empty: every field, and both records must then hold the same field names",
            (list,),
            [],
        ),
    ],
    reasons={
        "state.changed": "a declared field has another value after the run than before",
    },
    counterexample=_state_counterexample,
    example_params=[{"fields": ["config_hash"]}],
)
def state_unchanged(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Two independent observations of system state agree on the declared fields.

    Each record is ``{observed_at, source, fields: {...}}`` where ``fields`` holds
    what was read outside the agent's session (e.g. the config hash from
    ``GET /api/v1/config/hash`` and the version list from ``GET
    /api/v1/config/versions``), read the same way before and after the run: when
    either record names its ``source``, both must name the same one. Fails
    ``state.changed`` once per field that differs, with both values. A field missing
    from either record is malformed evidence (an error, not a pass).

    A pass is a limited conclusion: no change was observed *at these two points*. It
    is not continuous monitoring (a change made and reverted in between is not seen)
    and it does not show that no write was attempted: a viewer's write rejected with
    403 leaves state unchanged too; see no-write-attempts@1.
    """
    return _unchanged(inputs, params, via_json)


def _unchanged(
    inputs: Mapping[str, Any],
    params: Mapping[str, Any],
    copy: Callable[[Any], Any] = via_json,
    *,
    excerpts: bool = False,
) -> Verdict:
    """state-unchanged@1's verdict, each reason's details copied with ``copy`` (both whole
    values), or (``excerpts``, @3) holding bounded excerpts of what differs."""
    before = require_mapping(inputs["before"], "before")
    after = require_mapping(inputs["after"], "after")
    bf = require_mapping(before.get("fields"), "before.fields")
    af = require_mapping(after.get("fields"), "after.fields")
    if ("source" in before or "source" in after) and compare_documents(
        after.get("source"), before.get("source")
    ):
        raise CheckerInputError(
            "input.invalid",
            f"before and after were not read the same way (source {brief(before.get('source'))}"
            f" before, {brief(after.get('source'))} after): they cannot be compared",
        )
    names = _compared_fields(params, bf, af)
    reasons = _excerpts(names, bf, af) if excerpts else _changes(names, bf, af, copy)
    points = via_json({"before": before.get("observed_at"), "after": after.get("observed_at")})
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} of {len(names)} observed field(s) changed between the two "
            "observations",
            reasons,
            observed_at=points,
            fields=names,
        )
    return Verdict.passed(
        f"no change observed in {', '.join(names)} between the two observations "
        f"({points['before'] or 'before'} and {points['after'] or 'after'}); this is two "
        "observation points, not continuous monitoring",
        observed_at=points,
        fields=names,
    )


def _compared_fields(
    params: Mapping[str, Any], bf: Mapping[str, Any], af: Mapping[str, Any]
) -> list[str]:
    """The declared fields (every field when none is declared), each observed on both sides."""
    names = str_list(params, "fields")
    if len(set(names)) != len(names):
        raise CheckerInputError("params.invalid", "param 'fields' names a field twice")
    if not names:
        if set(bf) != set(af):
            raise CheckerInputError(
                "input.invalid",
                "before and after observed different fields "
                f"(only before: {sorted(set(bf) - set(af))}, "
                f"only after: {sorted(set(af) - set(bf))}); declare the fields to compare",
            )
        names = sorted(bf)
    if not names:
        raise CheckerInputError("input.invalid", "no observed fields: nothing to compare")
    for name in names:
        for side, record in (("before", bf), ("after", af)):
            if name not in record:
                raise CheckerInputError(
                    "input.invalid", f"field {name!r} was not observed in the {side} record"
                )
    return names


def _changes(
    names: list[str], bf: Mapping[str, Any], af: Mapping[str, Any], copy: Callable[[Any], Any]
) -> list[Reason]:
    """``state.changed`` per field whose content differs, with both values (``copy`` makes
    the details plain data). Values as JSON builds them are their own copy, and their
    message shows only what it renders: a report of two whole 10 MB values costs no copy
    of its own and no render of either beyond the 120 characters shown."""
    reasons: list[Reason] = []
    for name in names:
        differences = compare_documents(af[name], bf[name], deepest=True)
        if differences:
            details = {
                "field": name,
                "before": bf[name],
                "after": af[name],
                "differences": [r.message for r in differences],
            }
            native = json_native(details)
            reasons.append(
                Reason(
                    "state.changed",
                    f"{name} changed: before {brief(bf[name], native=native)}, "
                    f"after {brief(af[name], native=native)}",
                    details if native else copy(details),
                )
            )
    return reasons


def _excerpts(names: list[str], bf: Mapping[str, Any], af: Mapping[str, Any]) -> list[Reason]:
    """``state.changed`` per field whose content differs, with the count of its differences
    and the first ``SHOWN_DIFFERENCES`` of them (path, both values cut to
    ``EXCERPT_CHARS``): plain data of a bounded size, whatever the values' size."""
    reasons: list[Reason] = []
    for name in names:
        differences = compare_documents(af[name], bf[name], deepest=True)
        if not differences:
            continue
        shown = [_excerpt(found) for found in differences[:SHOWN_DIFFERENCES]]
        first = shown[0]
        reasons.append(
            Reason(
                "state.changed",
                f"{name} changed: {len(differences)} difference(s), the first at "
                f"{first['path']}: before {_shown(first['before'])}, "
                f"after {_shown(first['after'])}",
                {
                    "field": name,
                    "differences": len(differences),
                    "shown": shown,
                    "excerpt_chars": EXCERPT_CHARS,
                },
            )
        )
    return reasons


def _excerpt(found: Reason) -> dict[str, Any]:
    """One difference (a reason of ``compare_documents``) as its path and both values cut."""
    details = found.details
    path = str(details["path"])  # a key may be long too: cut like the values
    return {
        "path": path if len(path) <= EXCERPT_CHARS else path[: EXCERPT_CHARS - 3] + "...",
        "change": found.code,
        "before": _cut(details["expected"]) if "expected" in details else None,
        "after": _cut(details["actual"]) if "actual" in details else None,
    }


def _cut(value: Any) -> str:
    """``value`` as compact JSON of at most ``EXCERPT_CHARS`` characters, keys sorted,
    rendering only what is shown (a value JSON does not build, such as a YAML date or a
    mapping with keys that are not text, is first copied as ``via_json_finite`` copies)."""
    if not json_native(value):
        value = via_json_finite(value)
    return brief(value, EXCERPT_CHARS, native=True)


def _shown(excerpt: str | None) -> str:
    return "(absent)" if excerpt is None else excerpt[:120]


def _observed_at(record: Mapping[str, Any], side: str) -> datetime.datetime:
    value = record.get("observed_at")
    if isinstance(value, datetime.datetime):
        moment = value
    elif isinstance(value, str) and value.strip():
        try:
            moment = datetime.datetime.fromisoformat(value.strip())
        except ValueError:
            raise CheckerInputError(
                "input.invalid",
                f"{side}.observed_at is {brief(value)}: not an ISO 8601 time "
                "(e.g. 2026-11-12T09:58:41Z)",
            ) from None
    else:
        raise CheckerInputError(
            "input.invalid",
            f"{side}.observed_at is {brief(via_json(value))}: each observation needs the "
            "time it was read (ISO 8601 with a time zone, e.g. 2026-11-12T09:58:41Z)",
        )
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise CheckerInputError(
            "input.invalid",
            f"{side}.observed_at {moment.isoformat()} has no time zone, so the two "
            "observations cannot be ordered; write it with Z or an offset such as +08:00",
        )
    return moment


def _state_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first declared field (``config_hash`` when every field is compared) changed
    between the two observations. None only for params that are not a list of names."""
    names = params.get("fields") or ["config_hash"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not names:
        return None
    before = {n: f"before-{n}" for n in names}
    after = {**before, names[0]: f"after-{names[0]}"}
    return {
        "before": {"observed_at": "2026-01-01T10:00:00Z", "fields": before},
        "after": {"observed_at": "2026-01-01T11:00:00Z", "fields": after},
    }


@checker(
    "state-unchanged",
    2,
    roles=[
        Role(
            "before",
            InputKind.DATA,
            "observation read independently of the agent before the run: "
            "{observed_at, source, fields: {name: value}}",
            reading=ALIASES_EXPANDED,
            compared=True,
        ),
        Role(
            "after",
            InputKind.DATA,
            "the same observation read after the run",
            reading=ALIASES_EXPANDED,
            compared=True,
        ),
    ],
    params=list(state_unchanged.params),
    reasons=dict(state_unchanged.reasons),
    counterexample=_state_counterexample_v2,
    example_params=[{"fields": ["config_hash", "versions", "active_version"]}],
)
def state_unchanged_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Two observations, at two ordered points in time, agree on the declared fields.

    As state-unchanged@1 (same records, params and reason), and the evidence must be two
    observations at two points in time: each record needs ``observed_at``, an ISO 8601
    time with a time zone, and the after record's must be later than the before
    record's; every compared value must have been observed, so a null or empty value
    (null, blank text, an empty list or mapping) on either side is malformed evidence:
    two nulls are not "unchanged", they are two reads that saw nothing. Each of these is
    ``error: input.invalid`` naming the record and field.

    A pass is still the limited conclusion of @1: no change at these two points, not
    continuous monitoring, and not proof that no write was attempted.
    """
    start, end = _two_points(inputs, params)
    # @1's verdict with its details made plain as plain_verdict makes them: the reasons'
    # (both whole values) in the same copy through json, the rest after
    return _timed(_unchanged(inputs, params, via_json_finite), start, end)


def _two_points(
    inputs: Mapping[str, Any], params: Mapping[str, Any]
) -> tuple[datetime.datetime, datetime.datetime]:
    """@2's rules on the evidence (two ordered times, nothing empty): the two times."""
    before = require_mapping(inputs["before"], "before")
    after = require_mapping(inputs["after"], "after")
    start, end = _observed_at(before, "before"), _observed_at(after, "after")
    if end <= start:
        raise CheckerInputError(
            "input.invalid",
            f"after.observed_at ({end.isoformat()}) is not later than before.observed_at "
            f"({start.isoformat()}): the records are not a before and an after observation",
        )
    names = str_list(params, "fields")
    bf = require_mapping(before.get("fields"), "before.fields")
    af = require_mapping(after.get("fields"), "after.fields")
    for name in names or sorted(set(bf) | set(af)):
        for side, record in (("before", bf), ("after", af)):
            if name in record and observed_nothing(record[name]):
                raise CheckerInputError(
                    "input.invalid",
                    f"{side}.fields.{name} is {brief(via_json(record[name]))}: nothing was "
                    "observed, so it cannot show the state unchanged (observe the value, or "
                    "leave the field out of 'fields')",
                )
    return start, end


def _timed(verdict: Verdict, start: datetime.datetime, end: datetime.datetime) -> Verdict:
    """``verdict`` with the interval between the two observations in its details."""
    interval = {"seconds": (end - start).total_seconds()}
    return Verdict(
        verdict.status,
        verdict.message,
        verdict.reasons,
        finite({**verdict.details, **interval}),
    )


EXCERPT_CHARS = 200  # each value shown in a @3 report: compact JSON cut to this many characters
SHOWN_DIFFERENCES = 10  # the differences of one field a @3 report shows (all are counted)


@checker(
    "state-unchanged",
    3,
    roles=list(state_unchanged_v2.roles),
    params=list(state_unchanged.params),
    reasons=dict(state_unchanged.reasons),
    counterexample=_state_counterexample_v2,
    example_params=[{"fields": ["config_hash"]}],
)
def state_unchanged_v3(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Two observations, at two ordered points in time, agree on the declared fields; the
    report shows excerpts of what differs, never both whole values.

    As state-unchanged@2 (the same records, params, rules on the evidence, reason and
    verdicts): it decides exactly what @2 decides. What changes is what a ``state.changed``
    reason carries: the field, how many differences it has (every differing path, as
    @2's list names them), and the first 10 of them in path order, each with its path and
    the two values there as compact JSON, each cut to 200 characters (``...`` marks a cut;
    a side where the path is absent is null). @2 carries both whole values, so a report of
    two differing 10 MB documents holds both again; a @3 report stays a few kilobytes
    whatever the size of the values.

    A pass is still the limited conclusion of @1: no change at these two points, not
    continuous monitoring, and not proof that no write was attempted.
    """
    start, end = _two_points(inputs, params)
    return _timed(_unchanged(inputs, params, excerpts=True), start, end)
