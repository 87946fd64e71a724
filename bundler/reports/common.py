"""Words every output format shares, so no format says more than another."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bundler.errors import one_line

STATUS_WORDS = {
    "supported": "every claim supported",
    "contradicted": "a claim is contradicted",
    "inconclusive": "inconclusive: nothing contradicted, but something could not be checked here",
    "rejected": "the bundle was rejected: nothing ran",
    "error": "the verification could not start",
}

# What re-running a checker shows, and what it does not: printed by every format.
WHAT_IT_SHOWS = (
    "Verifying re-runs each checker on the inputs stored in the bundle. A supported claim "
    "means the checker behaves as stated on those stored inputs; it does not mean the "
    "system or model that produced the inputs would produce them again."
)


def verdict_line(report: Mapping[str, Any]) -> str:
    """The last line of the text, also all that ``verify -q`` prints: the verdict, how
    many claims, and whether (and by whom) the bundle was signed, so that no output
    leaves the signer out."""
    claims = report["claims"]
    supported = sum(1 for c in claims if c["status"] == "supported")
    line = (
        f"Result: {STATUS_WORDS[report['result']]} ({supported} of {len(claims)} claims supported)"
    )
    summary = (report.get("signature") or {}).get("summary")
    return one_line(f"{line}; {summary}" if summary else line)


def is_rejection(report: Mapping[str, Any]) -> bool:
    """A report of a verification that never ran its cases (exit 3 or 2)."""
    return report.get("result") in ("rejected", "error")


def denominators(claim: Mapping[str, Any]) -> str:
    """``2 of 3 cases reproduced, 1 inconclusive``: every denominator, always."""
    text = f"{claim['reproduced']} of {claim['total']} cases reproduced"
    if claim["diverged"]:
        text += f", {claim['diverged']} diverged"
    if claim["inconclusive"]:
        text += f", {claim['inconclusive']} inconclusive"
    return text


def case_counts(report: Mapping[str, Any]) -> dict[str, int]:
    counts = {"reproduced": 0, "diverged": 0, "inconclusive": 0}
    for case in report.get("cases", []):
        counts[case["outcome"]] = counts.get(case["outcome"], 0) + 1
    return counts


def verify_command(report: Mapping[str, Any], expect_identity: bool = False) -> str:
    """The exact command a reader runs to check the bundle themselves."""
    bundle = report.get("bundle", {})
    words = ["reprobundle", "verify", str(bundle.get("file") or "BUNDLE")]
    if expect_identity and bundle.get("identity"):
        words += ["--expect-manifest-sha256", str(bundle["identity"])]
    return shlex.join(words)


def expected_text(case: Mapping[str, Any]) -> str:
    """``fail [a, b]``: the expected verdict, reason codes sorted like ``observed_text``'s."""
    reasons = sorted(case.get("expect_reasons") or [])
    return f"{case['expect']} [{', '.join(reasons)}]" if reasons else str(case["expect"])


def observed_text(case: Mapping[str, Any]) -> str:
    """``fail [a, b]``: the verdict the checker gave here, each reason code once, sorted."""
    unique = sorted({r["code"] for r in case.get("reasons", [])})
    return f"{case['verdict']} [{', '.join(unique)}]" if unique else str(case["verdict"])


def case_kind(case: Mapping[str, Any]) -> str | None:
    """``control`` or ``finding`` for a case expected to fail, None for one expected to
    pass. Reports before format 1.2 knew only controls."""
    if case.get("expect") != "fail":
        return None
    return "finding" if case.get("kind") == "finding" else "control"


KIND_WORDS = {
    "control": "negative control: planted by the author to show the check can fail",
    "finding": "finding: a real output the author judges wrong",
}


def reasons_beyond_outcome(case: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The case's reasons, less those whose message ``outcome_text`` already says (an
    inconclusive case's explanation often holds its one reason's message): each sentence
    is shown once; the reason's code stays in ``observed_text``."""
    if case.get("outcome") != "inconclusive":
        return list(case.get("reasons", []))
    said = str(case.get("explanation", ""))
    return [r for r in case.get("reasons", []) if str(r.get("message")) not in said]


def outcome_text(case: Mapping[str, Any]) -> str:
    """The outcome in words that cannot be read as "correct": reproduced means the
    checker's verdict matched the author's expectation, nothing more."""
    outcome, kind = case["outcome"], case_kind(case)
    if outcome == "reproduced":
        if kind == "finding":
            return "reproduced: the checker fails it, as the author's finding says"
        if kind == "control":
            return "reproduced: the checker fails it, as the planted control expects"
        return "reproduced: the checker passes it, as the author expects"
    if outcome == "diverged":
        expected, observed = expected_text(case), observed_text(case)
        return f"diverged: the author expects {expected}, the checker gave {observed}"
    return f"inconclusive: {case['explanation']}"


def verdict_counts(cases: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many cases reproduced with each expected verdict, and how many did not."""
    counts = {"pass": 0, "control": 0, "finding": 0, "diverged": 0, "inconclusive": 0}
    for case in cases:
        if case["outcome"] == "reproduced":
            counts[case_kind(case) or "pass"] += 1
        else:
            counts[case["outcome"]] = counts.get(case["outcome"], 0) + 1
    return counts


def verdicts_text(cases: Sequence[Mapping[str, Any]]) -> str:
    """``6 of 6 verdicts reproduced (5 pass, 1 fail as expected: 1 finding)``: every
    denominator, and what the reproduced verdicts were."""
    n = verdict_counts(cases)
    fails = n["control"] + n["finding"]
    parts = [f"{n['pass']} pass"] if n["pass"] else []
    if fails:
        kinds = [_count(n[k], k) for k in ("finding", "control") if n[k]]
        parts.append(f"{fails} fail as expected: {', '.join(kinds)}")
    text = f"{n['pass'] + fails} of {len(cases)} verdicts reproduced"
    if parts:
        text += f" ({', '.join(parts)})"
    for outcome in ("diverged", "inconclusive"):
        if n[outcome]:
            text += f", {n[outcome]} {outcome}"
    return text


def _count(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")


def claim_cases(report: Mapping[str, Any], claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    by_id = {c["id"]: c for c in report.get("cases", [])}
    return [by_id[i] for i in claim["cases"] if i in by_id]


# Up to this many cases, every format lists every case; past it, those that need a look.
LIST_ALL_UP_TO = 50


def shown_cases(report: Mapping[str, Any], verbose: bool = False) -> list[Mapping[str, Any]]:
    """Every case when there are few (or ``verbose``); else the ones that need a look:
    not reproduced, or a finding."""
    cases = report["cases"]
    if verbose or len(cases) <= LIST_ALL_UP_TO:
        return list(cases)
    return [c for c in cases if c["outcome"] != "reproduced" or case_kind(c) == "finding"]


def findings(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The cases that are findings: real outputs the author judges wrong."""
    return [c for c in report.get("cases", []) if case_kind(c) == "finding"]


def signature_text(report: Mapping[str, Any]) -> str:
    """The signer status, from the report's ``signature`` field (report format 1.1)."""
    signature = report.get("signature")
    if isinstance(signature, Mapping) and signature.get("summary"):
        return str(signature["summary"])
    signatures = report.get("signatures")
    if not signatures:
        return "not signed, or signatures not checked by this verifier"
    if isinstance(signatures, Mapping):
        status = signatures.get("status") or signatures.get("result") or "present"
        signers = signatures.get("signers") or signatures.get("keys") or []
        names = ", ".join(
            str(s.get("name") or s.get("key_id") or s) if isinstance(s, Mapping) else str(s)
            for s in signers
        )
        return f"{status}" + (f" ({names})" if names else "")
    return str(signatures)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def one_line_all(value: Any) -> Any:
    """``value`` (a report, or any part of one) with ``one_line`` applied to every string."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, Mapping):
        return {k: one_line_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [one_line_all(v) for v in value]
    return value


def printable(text: object) -> str:
    """Text from a bundle made safe for a terminal: control characters (escape sequences
    that could move the cursor, clear the screen or retitle the window) are shown as
    ``\\xNN`` instead of being obeyed. Newlines and tabs stay."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
