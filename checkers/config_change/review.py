"""review-matches-submission@1 and @2: what the user approved is what was sent.

@2 also requires the check results the user saw to be the server's answer, and the diff
the user saw to list exactly the paths the submission changes.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from ..plain import brief, via_json
from .model import (
    ALIASES_EXPANDED,
    as_document,
    ident,
    json_type,
    lookup,
    plain_verdict,
    require_mapping,
)


def _review_counterexample(_params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A submission the server refused: submission.failed, whatever the param paths."""
    return {
        "review": {"candidate": {"counterexample": 1}},
        "submission": {"response": {"status": 500}},
    }


@checker(
    "review-matches-submission",
    1,
    roles=[
        Role(
            "review",
            InputKind.DATA,
            "what the user reviewed and approved: {candidate, candidate_etag, "
            "diff: {base_etag, text}}",
            compared=True,
        ),
        Role(
            "submission",
            InputKind.DATA,
            "what was actually sent and answered: {request: {method, path, body}, "
            "response: {status, body}}",
            compared=True,
        ),
    ],
    params=[
        Param(
            "candidate_at",
            "dotted path of the submitted candidate in the submission record (YAML text or data)",
            (str,),
            "request.body.yaml",
        ),
        Param(
            "current_etag_at",
            "dotted path of the server's current version identifier in the submission",
            (str,),
            "response.body.current_etag",
        ),
        Param(
            "candidate_etag_at",
            "dotted path of the candidate identifier the server returned",
            (str,),
            "response.body.candidate_etag",
        ),
    ],
    reasons={
        "review.mismatch": "the candidate submitted differs from the candidate the user "
        "reviewed (one reason per difference)",
        "diff.stale": "the reviewed diff was computed against another version than the "
        "server's current one",
        "etag.mismatch": "the candidate identifier (ETag) the server returned is not the one "
        "the user reviewed",
        "submission.failed": "the server did not accept the submission (status not 2xx): "
        "there is no server-checked candidate to match the review",
    },
    libraries=("deepdiff", "pyyaml"),
    counterexample=_review_counterexample,
    example_params=[{}],
)
def review_matches_submission(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """What the user approved is what was submitted, checked and identified.

    Three independent checks between the review record (what the user was shown)
    and the submission record (the request the runner sent and the server's answer):

    - the submitted candidate has the same full content as the reviewed one
      (``review.mismatch``; rules of structured-equal@1; a candidate given as YAML
      text is parsed first, so formatting does not matter);
    - the reviewed diff's ``base_etag`` equals the server's current version
      identifier (``diff.stale``: a diff against an older version can hide changes
      made since);
    - the candidate identifier the server returned equals the reviewed
      ``candidate_etag`` (``etag.mismatch``).

    A non-2xx response fails ``submission.failed``; the ETag checks are then skipped
    (the server identified nothing), and the content is compared only if the request
    body has the documented shape. An identifier that is null or empty is malformed
    evidence (an error): null equal to null identifies no version. A pass says the
    three records agree; it does not say the candidate is correct
    (merge-reconstruct@1) or that nothing was saved.
    """
    review = require_mapping(inputs["review"], "review")
    submission = require_mapping(inputs["submission"], "submission")
    reviewed = as_document(lookup(review, "candidate", "review"), "review.candidate")
    status = lookup(submission, "response.status", "submission")
    if not isinstance(status, int) or isinstance(status, bool):
        raise CheckerInputError("input.invalid", "submission: response.status must be an integer")
    if not 200 <= status < 300:
        return _submission_failed(submission, status, reviewed, params["candidate_at"])
    submitted = as_document(
        lookup(submission, params["candidate_at"], "submission"), params["candidate_at"]
    )
    reasons = _review_differences(submitted, reviewed)
    current = _identifier(submission, params["current_etag_at"], "submission")
    base = _identifier(review, "diff.base_etag", "review")
    if base != current:
        reasons.append(
            Reason(
                "diff.stale",
                f"the reviewed diff was computed against {ident(base)}, "
                f"but the server's current version is {ident(current)}",
                via_json({"reviewed_base": base, "current": current}),
            )
        )
    returned = _identifier(submission, params["candidate_etag_at"], "submission")
    shown = _identifier(review, "candidate_etag", "review")
    if returned != shown:
        reasons.append(
            Reason(
                "etag.mismatch",
                f"the server identified the submitted candidate as {ident(returned)}, "
                f"the user reviewed {ident(shown)}",
                via_json({"reviewed": shown, "returned": returned}),
            )
        )
    if reasons:
        return Verdict.failed(
            f"the review does not match the submission ({len(reasons)} problem(s))", reasons
        )
    return Verdict.passed(
        "the submitted candidate is the reviewed one, the diff was against the current "
        "version and the server returned the reviewed candidate identifier"
    )


def _identifier(record: Mapping[str, Any], dotted: str, what: str) -> Any:
    """A version or candidate identifier: a non-empty string or an integer. A null or
    empty one identifies nothing, and two of them must not compare as a match."""
    value = lookup(record, dotted, what)
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise CheckerInputError(
        "input.invalid",
        f"{what}: {dotted} is {brief(value)}; expected an identifier (a non-empty "
        "string such as an ETag, or an integer version)",
    )


def _review_differences(submitted: Any, reviewed: Any) -> list[Reason]:
    reasons = []
    for diff in compare_documents(submitted, reviewed, deepest=True):
        path = diff.details["path"]
        was, sent = diff.details.get("expected"), diff.details.get("actual")
        if diff.code == "content.removed":
            text = f"{path}: in the review ({brief(was)}) but not in the submission"
        elif diff.code == "content.added":
            text = f"{path}: submitted ({brief(sent)}) but never reviewed"
        else:
            text = f"{path}: reviewed {brief(was)}, submitted {brief(sent)}"
        reasons.append(
            Reason(
                "review.mismatch",
                f"the submitted candidate is not the reviewed one: {text}",
                via_json({**diff.details, "kind": diff.code}),
            )
        )
    return reasons


def _submission_failed(
    submission: Mapping[str, Any], status: int, reviewed: Any, candidate_at: str
) -> Verdict:
    """A rejected submission: say so first; compare the content only if it is there
    (a request whose body never had the documented shape has no candidate to compare)."""
    request = submission.get("request")
    method, path = (
        (request.get("method", "?"), request.get("path", "?"))
        if isinstance(request, Mapping)
        else ("?", "?")
    )
    response = submission.get("response")
    answer = response.get("body") if isinstance(response, Mapping) else None
    reasons = [
        Reason(
            "submission.failed",
            f"the server answered {status} to {method} {path}: there is no server-checked "
            "candidate to match the review",
            via_json({"status": status, "response": answer}),
        )
    ]
    try:
        submitted = as_document(lookup(submission, candidate_at, "submission"), candidate_at)
    except CheckerInputError as exc:
        compared = f"submitted candidate not compared: {exc.message}"
    else:
        reasons += _review_differences(submitted, reviewed)
        compared = "submitted candidate compared with the review"
    return Verdict.failed(
        f"the submission was rejected ({status}); {compared}", reasons, status=status
    )


_REVIEW_PARAMS = [
    *review_matches_submission.params,
    Param(
        "valid_at",
        "dotted path of the server's overall verdict (true/false) in the submission",
        (str,),
        "response.body.valid",
    ),
    Param(
        "checks_at",
        "dotted path of the server's check results, a list of {name, status, ...}",
        (str,),
        "response.body.checks",
    ),
]


def _check_statuses(value: Any, what: str) -> dict[str, str]:
    """A list of ``{name, status, ...}`` as name -> status (other fields not compared)."""
    if not isinstance(value, list):
        raise CheckerInputError(
            "input.invalid",
            f"{what}: expected a list of {{name, status}} check results, got {json_type(value)}",
        )
    out: dict[str, str] = {}
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise CheckerInputError("input.invalid", f"{what}[{index}]: expected a mapping")
        name, status = item.get("name"), item.get("status")
        if not isinstance(name, str) or not name or not isinstance(status, str) or not status:
            raise CheckerInputError(
                "input.invalid", f"{what}[{index}]: each check needs a name and a status (text)"
            )
        if name in out:
            raise CheckerInputError("input.invalid", f"{what}: check {name!r} is listed twice")
        out[name] = status
    return out


def _valid(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise CheckerInputError(
            "input.invalid", f"{what} is {brief(via_json(value))}; expected true or false"
        )
    return value


def _checks_reasons(
    review: Mapping[str, Any], submission: Any, params: Mapping[str, Any]
) -> list[Reason]:
    shown = require_mapping(lookup(review, "checks", "review"), "review.checks")
    shown_valid = _valid(shown.get("valid"), "review.checks.valid")
    answered_valid = _valid(
        lookup(submission, params["valid_at"], "submission"), params["valid_at"]
    )
    shown_checks = _check_statuses(shown.get("checks"), "review.checks.checks")
    answered = _check_statuses(
        lookup(submission, params["checks_at"], "submission"), params["checks_at"]
    )
    reasons = []
    if shown_valid != answered_valid:
        reasons.append(
            Reason(
                "checks.mismatch",
                f"the review shows valid = {str(shown_valid).lower()}, the server answered "
                f"valid = {str(answered_valid).lower()}",
                {"check": "valid", "reviewed": shown_valid, "answered": answered_valid},
            )
        )
    for name in sorted(set(shown_checks) | set(answered)):
        seen, said = shown_checks.get(name), answered.get(name)
        if seen == said:
            continue
        if seen is None:
            text = f"check {name!r} ({said}) was answered by the server but not shown"
        elif said is None:
            text = f"check {name!r} ({seen}) is shown but the server did not answer it"
        else:
            text = f"check {name!r}: the review shows {seen}, the server answered {said}"
        reasons.append(
            Reason("checks.mismatch", text, {"check": name, "reviewed": seen, "answered": said})
        )
    return reasons


def _diff_reasons(review: Mapping[str, Any], submitted: Any, current: Any) -> list[Reason]:
    listed = lookup(review, "diff.paths", "review")
    if not isinstance(listed, list) or not all(isinstance(p, str) and p for p in listed):
        raise CheckerInputError(
            "input.invalid",
            "review.diff.paths must list the changed paths the diff shows, e.g. "
            "['decisions[0].description'] (as structured-equal@1 writes paths)",
        )
    changed = {
        str(r.details["path"]): r for r in compare_documents(submitted, current, deepest=True)
    }
    shown = set(listed)
    reasons = []
    for path in sorted(set(changed) - shown):
        diff = changed[path]
        reasons.append(
            Reason(
                "diff.incomplete",
                f"the submission changes {path} against the current config "
                f"({diff.code.split('.')[1]}), but the diff shown to the user does not list it",
                via_json({"path": path, "kind": diff.code}),
            )
        )
    for path in sorted(shown - set(changed)):
        reasons.append(
            Reason(
                "diff.unrelated",
                f"the diff shown to the user lists {path}, which the submission does not "
                "change against the current config",
                {"path": path},
            )
        )
    return reasons


def _parsed_candidate(
    submission: Mapping[str, Any], dotted: str, required: bool
) -> tuple[Mapping[str, Any], Any]:
    """The submission with its candidate parsed (aliases expanded), so @1's checks read
    the same data; a rejected submission's unreadable candidate is left for @1 to report."""
    try:
        raw = lookup(submission, dotted, "submission")
        data = as_document(raw, dotted, aliases=True)
    except CheckerInputError:
        if required:
            raise
        return submission, None
    copy: dict[str, Any] = dict(submission)
    node = copy
    *walk, last = dotted.split(".")
    for part in walk:
        node[part] = dict(node[part])
        node = node[part]
    node[last] = data
    return copy, data


def _review_counterexample_v2(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A submission answered 200 with every param path filled, whose candidate is not the
    reviewed one (review.mismatch). None when two param paths are the same or one lies
    inside another: no submission can hold both."""
    paths = [params[p] for p in ("candidate_at", "current_etag_at", "candidate_etag_at")]
    paths += [params["valid_at"], params["checks_at"]]
    if not all(isinstance(p, str) and p for p in paths) or len(set(paths)) != len(paths):
        return None
    parts = [p.split(".") for p in paths]
    if any(a[: len(b)] == b or b[: len(a)] == a for a in parts for b in parts if a is not b):
        return None  # one path inside another: no submission can hold both
    submission: dict[str, Any] = {"response": {"status": 200}}
    values = ["a: 2\n", '"cfg-1"', '"cand-1"', True, [{"name": "schema", "status": "pass"}]]
    for dotted, value in zip(paths, values, strict=True):
        node = submission
        *walk, last = dotted.split(".")
        for part in walk:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                return None
        node[last] = value
    if (
        not isinstance(submission.get("response"), dict)
        or submission["response"].get("status") != 200
    ):
        return None
    review = {
        "candidate": {"a": 1},  # not what was submitted: review.mismatch
        "candidate_etag": '"cand-1"',
        "diff": {"base_etag": '"cfg-1"', "paths": ["a"]},
        "checks": {"valid": True, "checks": [{"name": "schema", "status": "pass"}]},
    }
    return {"review": review, "submission": submission, "current": {"a": 0}}


@checker(
    "review-matches-submission",
    2,
    roles=[
        Role(
            "review",
            InputKind.DATA,
            "what the user reviewed and approved: {candidate, candidate_etag, diff: "
            "{base_etag, paths, text}, checks: {valid, checks: [{name, status}]}}",
            reading=ALIASES_EXPANDED,
            compared=True,
        ),
        Role(
            "submission",
            InputKind.DATA,
            "what was actually sent and answered: {request: {method, path, body}, "
            "response: {status, body: {valid, checks, current_etag, candidate_etag}}}",
            reading=ALIASES_EXPANDED,
            compared=True,
        ),
        Role(
            "current",
            InputKind.DATA,
            "the config at the server's current version (the one the diff must be against), "
            "read independently",
            reading=ALIASES_EXPANDED,
        ),
    ],
    params=_REVIEW_PARAMS,
    reasons={
        **review_matches_submission.reasons,
        "checks.mismatch": "the check results shown in the review are not what the server "
        "answered (valid, or a check's status, or a check shown or answered only on one side)",
        "diff.incomplete": "the submission changes a path against the current config that the "
        "diff shown to the user does not list",
        "diff.unrelated": "the diff shown to the user lists a path the submission does not change",
    },
    libraries=("deepdiff", "pyyaml"),
    counterexample=_review_counterexample_v2,
    example_params=[{}],
)
def review_matches_submission_v2(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """What the user approved is what was submitted, checked, answered and changed.

    Everything review-matches-submission@1 checks (content ``review.mismatch``, the
    diff's base ``diff.stale``, the candidate identifier ``etag.mismatch``, a rejected
    submission ``submission.failed``), plus what the user was shown about it:

    - the check results in the review (``checks: {valid, checks: [{name, status}]}``)
      must be the server's answer (``valid_at``, ``checks_at``): the same ``valid`` and,
      check by check (by name), the same status; a check on one side only differs too
      (``checks.mismatch``; other fields such as ``detail`` are not compared);
    - the diff must cover the change: ``diff.paths`` lists the paths the diff shows,
      and must be exactly the paths where the submitted candidate differs from
      ``current`` (the config at the current version; paths as structured-equal@1
      writes them, e.g. ``decisions[0].description``): a changed path not listed is
      ``diff.incomplete``, a listed path not changed ``diff.unrelated``.

    On a rejected submission only @1's checks run (there is no server answer to
    compare). A pass says the four records agree; it does not say the candidate is
    correct (merge-reconstruct@1) or that nothing was saved.
    """
    review = require_mapping(inputs["review"], "review")
    submission = require_mapping(inputs["submission"], "submission")
    reviewed = as_document(lookup(review, "candidate", "review"), "review.candidate", aliases=True)
    status = lookup(submission, "response.status", "submission")
    if not isinstance(status, int) or isinstance(status, bool):
        raise CheckerInputError("input.invalid", "submission: response.status must be an integer")
    accepted = 200 <= status < 300
    submission, submitted = _parsed_candidate(submission, params["candidate_at"], accepted)
    base = review_matches_submission.function(
        {"review": {**review, "candidate": reviewed}, "submission": submission}, params
    )
    if not accepted:
        return plain_verdict(base)
    reasons = [
        *base.reasons,
        *_checks_reasons(review, submission, params),
        *_diff_reasons(review, submitted, inputs["current"]),
    ]
    if reasons:
        return plain_verdict(
            Verdict.failed(
                f"the review does not match the submission ({len(reasons)} problem(s))", reasons
            )
        )
    return Verdict.passed(
        "the submitted candidate is the reviewed one, the diff was against the current version "
        "and lists exactly the changed paths, the checks shown are the server's answer, and the "
        "server returned the reviewed candidate identifier"
    )
