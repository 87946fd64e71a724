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

from bundler.reports.common import KIND_WORDS, WHAT_IT_SHOWS
from bundler.reports.view import CaseView, ReportView, as_view

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


def _reasons_text(case: CaseView) -> str:
    kind = case.kind
    lines = [
        f"expected: {case.expected}" + (f" ({kind})" if kind else ""),
        f"verdict: {case.observed}",
        f"checker: {case.checker}",
        f"outcome: {case.outcome_text}",
    ]
    if case.message:
        lines.append(f"message: {case.message}")
    lines += [f"  {r.code}: {r.message}" for r in case.reasons]
    return clean("\n".join(lines))


def _testcase(suite: ET.Element, claim_id: str, case: CaseView) -> str:
    element = _element(suite, "testcase", name=case.id, classname=f"claim.{claim_id}", time="0")
    outcome = case.outcome
    if outcome == "diverged":
        failure = _element(
            element, "failure", message=case.explanation, type="reprobundle.diverged"
        )
        failure.text = _reasons_text(case)
        return "failure"
    if outcome == "withheld":  # not run: its evidence is withheld, not an error here
        skipped = _element(element, "skipped", message=case.explanation)
        skipped.text = _reasons_text(case)
        return "skipped"
    if outcome == "inconclusive":
        codes = {r.code for r in case.reasons}
        if codes & SKIP_CODES:
            skipped = _element(element, "skipped", message=case.explanation)
            skipped.text = _reasons_text(case)
            return "skipped"
        error = _element(
            element, "error", message=case.explanation, type="reprobundle.inconclusive"
        )
        error.text = _reasons_text(case)
        return "error"
    kind = case.kind
    if kind:  # a passing test that is a finding must say so where CI tools look
        _properties(element, [("case.kind", kind), ("case.verdict", case.observed)])
    out = _element(element, "system-out")
    out.text = clean(
        f"{case.outcome_text}; verdict {case.observed}" + (f"\n{KIND_WORDS[kind]}" if kind else "")
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


def to_junit(report: ReportView | Mapping[str, Any]) -> str:
    """The JUnit XML (a JSON report is made into its view first); every text has passed
    through ``one_line``, as in every format."""
    view = as_view(report)
    root = ET.Element("testsuites", {"name": "reprobundle verify"})
    if view.rejected:
        _count(root, _rejection_suite(root, view))
        return _serialise(root)
    bundle = view.bundle
    assert bundle is not None
    identity: list[tuple[str, object]] = [
        ("bundle.name", bundle.name),
        ("bundle.version", bundle.version),
        ("bundle.identity", f"sha256:{bundle.identity}"),
        ("bundle.format", bundle.format),
        ("bundle.file", bundle.file),
        ("result", f"{view.result_words}: {view.status_words}"),
        ("verified_with", view.verify_environment.get("tool", "")),
    ]
    if view.preregistration:  # what is not one claim's: who signed it, its stated time, the scope
        identity.append(("preregistration", view.preregistration.head))
        identity += [("preregistration.note", x) for x in view.preregistration_notes]
    if view.withheld:  # which files, their digests and why: where a CI tool shows the suite's facts
        identity.append(("withheld", view.withheld.head))
        identity += [("withheld.file", line) for line in view.withheld.lines]
    _count(root, _claim_suites(root, view, identity))
    return _serialise(root)


def _rejection_suite(root: ET.Element, view: ReportView) -> list[str]:
    """One suite with an error per problem of a bundle that was never run."""
    suite = _suite(root, "bundle", [("result", view.result), ("message", view.message)])
    counted = []
    for i, problem in enumerate(view.problems or [{}], start=1):
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
            message=problem.get("message", view.message),
            type=problem.get("code", "bundle.rejected"),
        )
        error.text = clean(view.message)
        counted.append("error")
    _count(suite, counted)
    return counted


def _claim_suites(
    root: ET.Element, view: ReportView, identity: list[tuple[str, object]]
) -> list[str]:
    """A suite per claim (each case counted in the first claim that names it), and one
    for the cases no claim names; returns what every test case counted as."""
    assert view.bundle is not None
    everything: list[str] = []
    cases = view.by_id
    counted_in: dict[str, str] = {}  # case id -> the suite that counts it (each case once)
    prefix = f"{view.bundle.name}-{view.bundle.version}"
    for claim in view.claims:
        name = f"{prefix}.{claim.id}"
        suite = _suite(
            root,
            name,
            [
                *identity,
                ("claim.statement", claim.statement),
                ("claim.status", claim.status),
                ("claim.verdicts", claim.verdicts),
                ("claim.why", claim.why),
                *(("claim.controls_showed", text) for text in [claim.controls_text] if text),
                *(("claim.preregistration", line) for line in claim.preregistration_lines),
                *(("claim.limit", limit) for limit in claim.limits),
                *(
                    ("claim.case_counted_in", f"{case_id} ({counted_in[case_id]})")
                    for case_id in claim.case_ids
                    if case_id in counted_in
                ),
                ("scope", WHAT_IT_SHOWS),
            ],
        )
        mine = [c for c in dict.fromkeys(claim.case_ids) if c not in counted_in]
        counted_in.update((case_id, name) for case_id in mine)
        counted = [_testcase(suite, claim.id, cases[case_id]) for case_id in mine]
        _count(suite, counted)
        everything += counted
    unclaimed = [c for c in cases if c not in counted_in]
    if unclaimed:
        suite = _suite(root, f"{prefix}.no-claim", identity)
        counted = [_testcase(suite, "none", cases[case_id]) for case_id in unclaimed]
        _count(suite, counted)
        everything += counted
    return everything


def _serialise(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
