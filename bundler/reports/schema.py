"""Read a stored JSON report strictly, against ``manifests/report-v1.schema.json``.

A stored report is untrusted input like a bundle: it is parsed without duplicate keys
or non-finite numbers and checked against the schema before any renderer sees it, so
a renderer can rely on every field it reads.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from bundler.errors import BundleRejected, Problem
from bundler.format.manifest import dotted
from checkers import strictjson

SCHEMA_NAME = "report-v1.schema.json"


@cache
def report_validator() -> Draft202012Validator:
    text = resources.files("manifests").joinpath(SCHEMA_NAME).read_text("utf-8")
    return Draft202012Validator(json.loads(text))


def schema_problems(report: Any) -> list[Problem]:
    """Every way ``report`` departs from the report format (empty when it follows it):
    the schema, then what a schema cannot say (claims name cases the report holds)."""
    errors = sorted(report_validator().iter_errors(report), key=lambda e: list(e.absolute_path))
    problems = [
        Problem(dotted(list(error.absolute_path)), "report.schema", error.message)
        for error in errors
    ]
    problems = list(dict.fromkeys(problems))
    if problems or report.get("result") in ("rejected", "error"):
        return problems
    case_ids = {case["id"] for case in report["cases"]}
    for i, claim in enumerate(report["claims"]):
        for j, case_id in enumerate(claim["cases"]):
            if case_id not in case_ids:
                problems.append(
                    Problem(
                        dotted(["claims", i, "cases", j]),
                        "report.unknown_case",
                        f"no case has id {case_id!r}",
                    )
                )
    return problems or contradictions(report)


_COUNTS = ("reproduced", "diverged", "inconclusive")


def contradictions(report: dict[str, Any]) -> list[Problem]:
    """Where a report's headline or counts say other than its claims and cases (every
    format prints the headline from ``result`` and the counts from the claims, so a report
    edited in one place would contradict itself on the page): ``result`` and
    ``exit_code`` against the claims' statuses, each claim's counts against its cases'
    outcomes, and each claim's status against its counts."""
    from bundler.codes import EXIT_CODES

    problems: list[Problem] = []

    def add(where: list[str | int], message: str) -> None:
        problems.append(Problem(dotted(where), "report.inconsistent", message))

    outcome = {case["id"]: case["outcome"] for case in report["cases"]}
    for i, claim in enumerate(report["claims"]):
        counted = {n: sum(1 for c in claim["cases"] if outcome[c] == n) for n in _COUNTS}
        if claim["total"] != len(claim["cases"]):
            add(
                ["claims", i, "total"],
                f"says {claim['total']}; the claim names {len(claim['cases'])} case(s)",
            )
        for name in _COUNTS:
            if claim[name] != counted[name]:
                add(
                    ["claims", i, name],
                    f"says {claim[name]}; {counted[name]} of the claim's "
                    f"cases have the outcome {name}",
                )
        status = claim["status"]
        if (counted["diverged"] > 0) != (status == "contradicted"):
            add(
                ["claims", i, "status"],
                f"says {status} with {counted['diverged']} case(s) "
                "diverged; a claim is contradicted exactly when one of its cases diverged",
            )
        elif status == "supported" and counted["reproduced"] != len(claim["cases"]):
            add(
                ["claims", i, "status"],
                f"says supported with {counted['reproduced']} of "
                f"{len(claim['cases'])} cases reproduced",
            )
    statuses = {claim["status"] for claim in report["claims"]}
    verdict = next(
        (s for s in ("contradicted", "inconclusive") if s in statuses),
        "supported" if statuses else "inconclusive",
    )
    if report["result"] != verdict:
        supported = sum(1 for claim in report["claims"] if claim["status"] == "supported")
        add(
            ["result"],
            f"says {report['result']}, but {supported} of "
            f"{len(report['claims'])} claims are supported: the claims make it {verdict}",
        )
    if report["exit_code"] != EXIT_CODES[report["result"]]:
        add(
            ["exit_code"],
            f"says {report['exit_code']}; a result of {report['result']} "
            f"exits {EXIT_CODES[report['result']]}",
        )
    return problems


def known_today(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` as the advisory rule judges it today (``bundler.format.claims``): a
    supported claim resting (a passing case or a finding) on a checker version with a
    shipped advisory that the report does not record as accepted is shown inconclusive,
    its ``why`` the advisory's sentence with what the report said, the advisory listed
    (not accepted), the result and exit code following, and a warning saying so. A report
    written before the advisory was published, and one whose acceptance was edited out,
    never render as support the rule withholds; nothing changes for any other report."""
    from bundler.codes import EXIT_CODES
    from bundler.format.advisories import of_checker
    from bundler.format.claims import AdvisoryUse, advised_why, advisory_dicts

    if report.get("result") in ("rejected", "error"):
        return report  # nothing was judged: no claim to withhold
    by_id = {case["id"]: case for case in report.get("cases") or ()}
    accepted_here = set(report.get("accepted_advisories") or ())
    changed = []
    for claim in report.get("claims") or ():  # (a rejection holds none)
        if claim["status"] != "supported":
            continue
        accepted = accepted_here & {
            a.get("id") for a in claim.get("advisories") or () if a.get("accepted") is True
        }
        found: dict[tuple[str, str], list[str]] = {}
        advisories = {}
        for case_id in claim["cases"]:
            case = by_id.get(case_id, {})
            if case.get("expect") != "pass" and case.get("kind") != "finding":
                continue  # a planted control supports nothing by itself
            for advisory in of_checker(str(case.get("checker", ""))):
                if advisory.id not in accepted:
                    found.setdefault((advisory.id, case["checker"]), []).append(case_id)
                    advisories[advisory.id] = advisory
        if not found:
            continue
        uses = [
            AdvisoryUse(advisories[ident], checker, tuple(cases), False)
            for (ident, checker), cases in sorted(found.items())
        ]
        claim["status"] = "inconclusive"
        claim["why"] = f"{advised_why(uses)} (the report said: supported, {claim['why']})"
        claim["advisories"] = [
            a for a in claim.get("advisories") or () if a.get("id") in accepted
        ] + advisory_dicts(uses)
        changed.append(f"{claim['id']} ({', '.join(sorted({u.advisory.id for u in uses}))})")
    if not changed:
        return report
    statuses = {claim["status"] for claim in report.get("claims") or ()}
    report["result"] = "contradicted" if "contradicted" in statuses else "inconclusive"
    report["exit_code"] = EXIT_CODES[report["result"]]
    report["warnings"] = [
        *report.get("warnings", []),
        f"this report says supported for claim(s) {', '.join(changed)} resting on checker "
        "versions with advisories it records no acceptance of (written before the advisory, "
        "or its record removed): shown inconclusive, as verify judges them today",
    ]
    return report


def read_report(data: bytes, where: str) -> dict[str, Any]:
    """Parse and check a JSON report, judged by today's advisories (``known_today``).
    Raises ``BundleRejected`` (exit 3, as ``verify`` rejects a file that is not a bundle)
    naming every problem."""
    try:
        report = strictjson.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleRejected(
            f"{where} is neither a bundle (zstd or gzip) nor a JSON report",
            [Problem(where, "report.json", str(exc))],
        ) from None
    problems = schema_problems(report)
    if problems and all(p.code == "report.inconsistent" for p in problems):
        raise BundleRejected(
            f"{where} is a JSON report that contradicts itself (edited by hand, or by a "
            "tool that did not keep its counts): nothing is rendered from it",
            problems[:20],
        )
    if problems:
        raise BundleRejected(
            f"{where} is neither a bundle nor a JSON report of format reprobundle-report/1",
            problems[:20],
        )
    assert isinstance(report, dict)
    return known_today(report)
