"""no-write-attempts@1 and @2: the request log, recorded before authorization, holds no write.

@2 requires every line to say it was recorded before authorization.
"""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)
from ..arithmetic import left_sum
from ..plain import brief
from ..witness import examples
from .model import jsonl_records, str_list

DEFAULT_WRITES = ["PUT /api/v1/config", "POST /api/v1/config/rollback"]
DEFAULT_READS = [
    "GET *",
    "HEAD *",
    "OPTIONS *",
    "POST /api/v1/config/plan",
    "POST /api/v1/recipes/validate",
]


@dataclass(frozen=True)
class _Rule:
    text: str
    method: str
    pattern: str

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method)) and fnmatch.fnmatchcase(path, self.pattern)


def _rules(params: Mapping[str, Any], name: str) -> list[_Rule]:
    rules = []
    for text in str_list(params, name):
        method, _, pattern = text.strip().partition(" ")
        pattern = pattern.strip()
        if not method or (not pattern.startswith("/") and pattern != "*"):
            raise CheckerInputError(
                "params.invalid",
                f"{name} rule {text!r}: expected 'METHOD /path/pattern' "
                "(e.g. 'PUT /api/v1/config')",
            )
        rules.append(_Rule(text, method.upper(), _normal_path(pattern)))
    return rules


def _normal_path(path: str) -> str:
    """Drop the query, repeated and trailing slashes: ``/a//b/?x=1`` is ``/a/b``."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    parts = [p for p in path.split("/") if p]
    return "/" + "/".join(parts) if path.startswith("/") else path


_OTHER_METHODS = ("PUT", "POST", "PATCH", "DELETE", "GET", "TRACE", "REPROBUNDLE")
_OTHER_PATHS = ("/reprobundle/counterexample", "/", "/api/v1/config")


def _write_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A request that matches a write rule, else one no rule covers; None when every
    request is a declared read and nothing is a write (the check cannot fail)."""
    writes = _rules(params, "writes")
    requests = []
    for rule in writes:
        method = rule.method if rule.method != "*" else "PUT"
        paths = examples(fnmatch.translate(rule.pattern), 0)
        requests += [(method, path) for path in itertools.islice(paths, 20)]
    requests += [(m, p) for m in _OTHER_METHODS for p in _OTHER_PATHS]  # unclassified?
    candidates = (
        {"trace": [(1, {"order": 1, "method": method, "path": path, "status": 200})]}
        for method, path in requests
    )
    return first_failing(no_write_attempts.function, params, candidates)


@checker(
    "no-write-attempts",
    1,
    roles=[
        Role(
            "trace",
            InputKind.JSONL,
            "request log recorded before authorization, one request per line: "
            "{order, method, path, status, ...}",
        ),
    ],
    params=[
        Param(
            "writes",
            "requests that attempt a write, as 'METHOD /path' patterns ('*' matches "
            "anything, '/' included); checked first",
            (list,),
            DEFAULT_WRITES,
        ),
        Param(
            "reads",
            "requests known not to write (e.g. a POST that only plans or validates)",
            (list,),
            DEFAULT_READS,
        ),
    ],
    reasons={
        "trace.write_attempt": "a request matching a write rule, whatever the server answered "
        "(a write rejected with 403 is still an attempt)",
        "trace.unclassified": "a request matching neither a write nor a read rule: it cannot "
        "be shown not to write; declare it in reads or writes",
    },
    counterexample=_write_counterexample,
    example_params=[{}],
)
def no_write_attempts(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The request trace holds no write attempt.

    The trace must be recorded *before authorization* (at the proxy or the first
    middleware), so requests the server then rejects are in it: "state unchanged"
    cannot tell "did not try" from "tried and got 403"; this checker can. Each line
    is one request: ``order`` (an integer; the line number when absent), ``method``,
    ``path`` (query and trailing slash ignored), ``status`` (the response status, or
    null when none was recorded) and any other fields the log has; a ``recorded``
    field, when present, must say ``before_authorization``.

    The method alone does not decide: two POSTs can mean different things, so
    requests are classified by method + path rules. The defaults fit the seed's API:
    ``PUT /api/v1/config`` and ``POST /api/v1/config/rollback`` write; GET/HEAD/OPTIONS,
    ``POST /api/v1/config/plan`` and ``POST /api/v1/recipes/validate`` only read or
    check. Fails ``trace.write_attempt`` once per write attempt (order, method, path,
    status), and ``trace.unclassified`` for a request no rule covers (fail closed). An
    empty trace is an error: it shows nothing. A pass covers only the requests in
    this trace; it cannot show the trace is complete.
    """
    writes, reads = _rules(params, "writes"), _rules(params, "reads")
    requests = _requests(inputs["trace"])
    reasons = _attempts(requests, writes, reads)
    writes_found = left_sum(r.code == "trace.write_attempt" for r in reasons)
    if reasons:
        return Verdict.failed(
            f"{writes_found} write attempt(s) and {len(reasons) - writes_found} unclassified "
            f"request(s) among {len(requests)} recorded request(s)",
            reasons,
            requests=len(requests),
        )
    return Verdict.passed(
        f"none of the {len(requests)} recorded request(s) attempts a write "
        "(rejected attempts included, as the trace is recorded before authorization)",
        requests=len(requests),
    )


Request = tuple[int, int, str, str, int | None]  # order, line, METHOD, path, status


def _requests(trace: Any) -> list[Request]:
    """The trace's requests in order; a line without method and path, recorded after
    authorization, or with a malformed order or status is ``input.invalid``."""
    requests: list[Request] = []
    for line, record in jsonl_records(trace, "trace"):
        method, path = record.get("method"), record.get("path")
        if not isinstance(method, str) or not isinstance(path, str) or not path:
            raise CheckerInputError(
                "input.invalid", f"trace line {line}: every request needs a method and a path"
            )
        if record.get("recorded", "before_authorization") != "before_authorization":
            raise CheckerInputError(
                "input.invalid",
                f"trace line {line}: recorded {brief(record.get('recorded'))}; this check "
                "needs a log recorded before authorization (a refused write is missing "
                "from a log written after it)",
            )
        order = record.get("order", line)
        status = record.get("status")
        if not isinstance(order, int) or isinstance(order, bool):
            raise CheckerInputError("input.invalid", f"trace line {line}: order must be an integer")
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
            raise CheckerInputError(
                "input.invalid", f"trace line {line}: status must be an integer or null"
            )
        requests.append((order, line, method.upper(), path, status))
    requests.sort()
    return requests


def _attempts(requests: list[Request], writes: list[_Rule], reads: list[_Rule]) -> list[Reason]:
    """``trace.write_attempt`` per request a write rule matches, whatever its status;
    ``trace.unclassified`` per request no rule covers (fail closed)."""
    reasons: list[Reason] = []
    for order, line, method, path, status in requests:
        normal = _normal_path(path)
        answered = "no response recorded" if status is None else f"answered {status}"
        where = {"order": order, "line": line, "method": method, "path": path, "status": status}
        write = next((r for r in writes if r.matches(method, normal)), None)
        if write is not None:
            rejected = status is not None and status >= 400
            reasons.append(
                Reason(
                    "trace.write_attempt",
                    f"order {order}: {method} {path} {answered}"
                    + (" (rejected, still an attempt)" if rejected else "")
                    + f"; matches write rule {write.text!r}",
                    {**where, "rule": write.text},
                )
            )
        elif not any(r.matches(method, normal) for r in reads):
            reasons.append(
                Reason(
                    "trace.unclassified",
                    f"order {order}: {method} {path} {answered} matches no read or write "
                    "rule, so it cannot be shown not to write",
                    where,
                )
            )
    return reasons


def _trace_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A write the first write rule matches, answered 403; with no write rule, a request
    no read rule matches (unclassified). None when every request is a declared read."""
    try:
        writes, reads = _rules(params, "writes"), _rules(params, "reads")
    except CheckerInputError:
        return None
    probes = [("PATCH", "/x-unclassified"), ("DELETE", "/x-unclassified"), ("X-PROBE", "/")]
    if writes:
        rule = writes[0]
        path = rule.pattern.replace("*", "x")
        probes.insert(0, ("PUT" if rule.method == "*" else rule.method, "/" + path.lstrip("/")))
    for method, path in probes:
        normal = _normal_path(path)
        if any(r.matches(method, normal) for r in writes) or not any(
            r.matches(method, normal) for r in reads
        ):
            line = {"method": method, "path": path, "status": 403, **_RECORDED}
            return {"trace": [(1, line)]}
    return None


_RECORDED = {"recorded": "before_authorization"}


@checker(
    "no-write-attempts",
    2,
    roles=[
        Role(
            "trace",
            InputKind.JSONL,
            "request log recorded before authorization, one request per line: "
            '{order, method, path, status, recorded: "before_authorization", ...}',
        ),
    ],
    params=list(no_write_attempts.params),
    reasons=dict(no_write_attempts.reasons),
    counterexample=_trace_counterexample,
    example_params=[{}],
)
def no_write_attempts_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The request trace, recorded before authorization, holds no write attempt.

    As no-write-attempts@1 (same params, rules and reasons), but the trace must *say* it
    was recorded before authorization: every line needs ``recorded:
    before_authorization``. A line without it is ``error: input.invalid``: a log written
    after authorization misses the writes the server refused, so its silence is no
    evidence that nothing was attempted. The field is the log's own statement; the
    checker cannot verify where the log was taken.
    """
    records = jsonl_records(inputs["trace"], "trace")
    unsaid = [line for line, record in records if "recorded" not in record]
    if unsaid:
        shown = ", ".join(map(str, unsaid[:5])) + (" ..." if len(unsaid) > 5 else "")
        raise CheckerInputError(
            "input.invalid",
            f"trace line(s) {shown}: no 'recorded' field; this check needs a log that says it "
            'was recorded before authorization ("recorded": "before_authorization" on every '
            "line), since a log written after authorization misses refused writes",
        )
    return no_write_attempts.function(inputs, params)
