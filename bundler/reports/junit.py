"""JUnit XML for CI (``verify --junit FILE``): one test suite per claim, and each case
counted once, as a test case of the first claim that names it (a later claim names it in
a ``claim.case_counted_in`` property; cases no claim names are a suite of their own).

A diverged case is a ``failure`` with its reasons; a reproduced finding or control passes,
with a ``case.kind`` property and a ``system-out`` that say so (the suite's ``result``
property counts the findings); an inconclusive one is an ``error``
(the checker could not decide), or ``skipped`` when the verifier was not allowed to run
it (bundled code without ``--allow-code``). Properties carry the bundle's identity so
a CI page names exactly which bundle was checked. A rejected bundle is one suite with
one errored case per problem. Times are not measured (``time="0"``): the report is the
same on every run of the same bundle.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

from bundler.reports.common import (
    KIND_WORDS,
    STATUS_WORDS,
    WHAT_IT_SHOWS,
    case_kind,
    claim_cases,
    controls_text,
    expected_text,
    findings_count,
    is_rejection,
    observed_text,
    one_line_all,
    outcome_text,
    preregistration_text,
    verdicts_text,
    withheld_text,
)

# Reason codes meaning "this verifier was not allowed to run the case": skipped, not errored.
SKIP_CODES = frozenset({"code.not_allowed"})

# XML 1.0 cannot carry most control characters, nor lone surrogates: show them instead.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean(text: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def _element(parent: ET.Element, tag: str, **attributes: object) -> ET.Element:
    return ET.SubElement(parent, tag, {k: clean(v) for k, v in attributes.items()})


def _properties(parent: ET.Element, values: Iterable[tuple[str, object]]) -> None:
    properties = _element(parent, "properties")
    for name, value in values:
        _element(properties, "property", name=name, value=value)


def _reasons_text(case: Mapping[str, Any]) -> str:
    kind = case_kind(case)
    lines = [
        f"expected: {expected_text(case)}" + (f" ({kind})" if kind else ""),
        f"verdict: {observed_text(case)}",
        f"checker: {case['checker']}",
        f"outcome: {outcome_text(case)}",
    ]
    if case.get("message"):
        lines.append(f"message: {case['message']}")
    lines += [f"  {r['code']}: {r['message']}" for r in case.get("reasons", [])]
    return clean("\n".join(lines))


def _testcase(suite: ET.Element, claim_id: str, case: Mapping[str, Any]) -> str:
    element = _element(suite, "testcase", name=case["id"], classname=f"claim.{claim_id}", time="0")
    outcome = case["outcome"]
    if outcome == "diverged":
        failure = _element(
            element, "failure", message=case["explanation"], type="reprobundle.diverged"
        )
        failure.text = _reasons_text(case)
        return "failure"
    if outcome == "withheld":  # not run: its evidence is withheld, not an error here
        skipped = _element(element, "skipped", message=case["explanation"])
        skipped.text = _reasons_text(case)
        return "skipped"
    if outcome == "inconclusive":
        codes = {r["code"] for r in case.get("reasons", [])}
        if codes & SKIP_CODES:
            skipped = _element(element, "skipped", message=case["explanation"])
            skipped.text = _reasons_text(case)
            return "skipped"
        error = _element(
            element, "error", message=case["explanation"], type="reprobundle.inconclusive"
        )
        error.text = _reasons_text(case)
        return "error"
    kind = case_kind(case)
    if kind:  # a passing test that is a finding must say so where CI tools look
        _properties(element, [("case.kind", kind), ("case.verdict", observed_text(case))])
    out = _element(element, "system-out")
    out.text = clean(
        f"{outcome_text(case)}; verdict {observed_text(case)}"
        + (f"\n{KIND_WORDS[kind]}" if kind else "")
    )
    return "passed"


def _suite(parent: ET.Element, name: str, identity: Iterable[tuple[str, object]]) -> ET.Element:
    suite = _element(parent, "testsuite", name=name)
    _properties(suite, identity)
    return suite


def _count(element: ET.Element, counted: list[str]) -> None:
    element.set("tests", str(len(counted)))
    for kind, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attribute, str(counted.count(kind)))
    element.set("time", "0")


def to_junit(report: Mapping[str, Any]) -> str:
    """The JUnit XML; every text passes through ``one_line`` first, as in every format."""
    report = one_line_all(report)
    root = ET.Element("testsuites", {"name": "reprobundle verify"})
    if is_rejection(report):
        _count(root, _rejection_suite(root, report))
        return _serialise(root)
    bundle = report["bundle"]
    identity = [
        ("bundle.name", bundle["name"]),
        ("bundle.version", bundle["version"]),
        ("bundle.identity", f"sha256:{bundle['identity']}"),
        ("bundle.format", bundle["format"]),
        ("bundle.file", bundle["file"]),
        (
            "result",
            f"{report['result']}{findings_count(report)}: {STATUS_WORDS[report['result']]}",
        ),
        ("verified_with", report.get("verify_environment", {}).get("tool", "")),
    ]
    pre = preregistration_text(report)
    if pre:  # what is not one claim's: who signed it, its stated time, the scope
        claims = tuple(f"{c}: " for c in report["preregistration"]["claims"])
        identity.append(("preregistration", pre[0]))
        identity += [("preregistration.note", x) for x in pre[1] if not x.startswith(claims)]
    held = withheld_text(report)
    if held:  # which files, their digests and why: where a CI tool shows the suite's facts
        identity.append(("withheld", held[0]))
        identity += [("withheld.file", line) for line in held[1]]
    _count(root, _claim_suites(root, report, identity))
    return _serialise(root)


def _rejection_suite(root: ET.Element, report: Mapping[str, Any]) -> list[str]:
    """One suite with an error per problem of a bundle that was never run."""
    suite = _suite(
        root,
        "bundle",
        [("result", report["result"]), ("message", report["message"])],
    )
    counted = []
    for i, problem in enumerate(report.get("problems", []) or [{}], start=1):
        case = _element(
            suite,
            "testcase",
            name=problem.get("where") or f"problem {i}",
            classname="bundle.integrity",
            time="0",
        )
        error = _element(
            case,
            "error",
            message=problem.get("message", report["message"]),
            type=problem.get("code", "bundle.rejected"),
        )
        error.text = clean(report["message"])
        counted.append("error")
    _count(suite, counted)
    return counted


def _claim_suites(
    root: ET.Element, report: Mapping[str, Any], identity: list[tuple[str, str]]
) -> list[str]:
    """A suite per claim (each case counted in the first claim that names it), and one
    for the cases no claim names; returns what every test case counted as."""
    bundle = report["bundle"]
    everything: list[str] = []
    cases = {c["id"]: c for c in report["cases"]}
    counted_in: dict[str, str] = {}  # case id -> the suite that counts it (each case once)
    prefix = f"{bundle['name']}-{bundle['version']}"
    pre_lines = _by_claim(report["claims"], preregistration_text(report))
    for claim in report["claims"]:
        name = f"{prefix}.{claim['id']}"
        suite = _suite(
            root,
            name,
            [
                *identity,
                ("claim.statement", claim["statement"]),
                ("claim.status", claim["status"]),
                ("claim.verdicts", verdicts_text(claim_cases(cases, claim))),
                ("claim.why", claim["why"]),
                *(("claim.controls_showed", text) for text in [controls_text(claim)] if text),
                *(("claim.preregistration", line) for line in pre_lines.get(claim["id"], [])),
                *(("claim.limit", limit) for limit in claim["limits"]),
                *(
                    ("claim.case_counted_in", f"{case_id} ({counted_in[case_id]})")
                    for case_id in claim["cases"]
                    if case_id in counted_in
                ),
                ("scope", WHAT_IT_SHOWS),
            ],
        )
        mine = [c for c in dict.fromkeys(claim["cases"]) if c not in counted_in]
        counted_in.update((case_id, name) for case_id in mine)
        counted = [_testcase(suite, claim["id"], cases[case_id]) for case_id in mine]
        _count(suite, counted)
        everything += counted
    unclaimed = [c for c in cases if c not in counted_in]
    if unclaimed:
        suite = _suite(root, f"{prefix}.no-claim", identity)
        counted = [_testcase(suite, "none", cases[case_id]) for case_id in unclaimed]
        _count(suite, counted)
        everything += counted
    return everything


def _by_claim(
    claims: list[Mapping[str, Any]], pre: tuple[str, list[str]] | None
) -> dict[str, list[str]]:
    """The pre-registration lines of each claim (those starting ``ID: ``), found in one
    pass over the lines: each line is tried at each of its ``": "``, not against every
    claim."""
    ids = {c["id"] for c in claims}
    out: dict[str, list[str]] = {}
    for line in pre[1] if pre else []:
        at = line.find(": ")
        while at >= 0:
            if line[:at] in ids:
                out.setdefault(line[:at], []).append(line)
            at = line.find(": ", at + 1)
    return out


def _serialise(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
