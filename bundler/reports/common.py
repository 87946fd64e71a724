"""Words every output format shares, so no format says more than another.

The functions here derive a report's facts in words from the JSON report data; only the
report view (``bundler.reports.view``) calls them, once per report, and the renderers lay
out the view. A renderer imports from here only the constant words (``WHAT_IT_SHOWS``,
the section titles): ``tests/project/test_report_view.py``."""

from __future__ import annotations

import json
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
        f"Result: {STATUS_WORDS[report['result']]} ({supported} of {len(claims)} claims supported"
        f"{findings_count(report, '; ')})"
    )
    counted = preregistration_counts(report)
    if counted:
        line += f"; {counted}"
    withheld = not_accepted(claims)
    if withheld:  # why a bundle is inconclusive, even in a CI log of one line
        line += f"; advisory {', '.join(withheld)} not accepted"
    held = report.get("withheld")
    if held:
        files = len(held["files"])
        line += (
            f"; {files} withheld file(s) disclosed and checked"
            if held["disclosed"]
            else f"; {files} file(s) withheld"
        )
    summary = (report.get("signature") or {}).get("summary")
    return one_line(f"{line}; {summary}" if summary else line)


def not_accepted(claims: Iterable[Mapping[str, Any]]) -> list[str]:
    """The advisories on the claims' checks that the verifier did not accept, each once,
    sorted: why a claim resting on them is inconclusive."""
    return sorted({a["id"] for c in claims for a in c.get("advisories", []) if not a["accepted"]})


# how a claim's pre-registration status reads beside its status, most telling first
_PREREGISTRATION_ORDER = (
    "changed after pre-registration",
    "not pre-registered",
    "matches a pre-registration no trusted key signed",
    "as pre-registered",
)


def preregistration_of(report: Mapping[str, Any], claim_id: str) -> str | None:
    """A claim's pre-registration status (as pre-registered, changed after
    pre-registration, ...) when the bundle holds a pre-registration, else None: every
    format shows it beside the claim's status, so that a "supported" claim changed after
    pre-registration never reads as one that was not."""
    pre = report.get("preregistration")
    if not isinstance(pre, Mapping):
        return None
    item = pre.get("claims", {}).get(claim_id)
    return str(item["status"]) if isinstance(item, Mapping) else None


def preregistration_counts(report: Mapping[str, Any]) -> str | None:
    """The claims changed after pre-registration or not pre-registered, counted for a
    headline ("1 of 2 claims changed after pre-registration"); None when the bundle holds
    no pre-registration, or every claim is as pre-registered."""
    claims = report["claims"]
    found = [preregistration_of(report, c["id"]) for c in claims]
    if not any(found):
        return None
    parts = [
        f"{found.count(status)} of {len(claims)} claims {status}"
        for status in _PREREGISTRATION_ORDER[:2]
        if found.count(status)
    ]
    return "; ".join(parts) or None


def findings_count(report: Mapping[str, Any], before: str = ", ") -> str:
    """``, 1 finding`` (after ``before``) when the verification holds findings, else
    nothing: a finding is a case that reproduced as failing, so a line that says only
    "supported" would hide it."""
    found = len(findings(report))
    return f"{before}{found} finding{'' if found == 1 else 's'}" if found else ""


def result_words(report: Mapping[str, Any]) -> str:
    """A verification's result in one word, its findings counted (``supported, 1
    finding``): the line ``ci`` prints per bundle."""
    return f"{report['result']}{findings_count(report)}"


def is_rejection(report: Mapping[str, Any]) -> bool:
    """A report of a verification that never ran its cases (exit 3 or 2)."""
    return report.get("result") in ("rejected", "error")


def verify_command(report: Mapping[str, Any], expect_identity: bool = False) -> str:
    """The exact command a reader runs to check the bundle themselves: the line
    ``reprobundle cite`` writes (``citation.verify_line``), for the file the report names."""
    from bundler.reports.citation import verify_line  # only the renderers show the command

    bundle = report.get("bundle", {})
    identity = str(bundle["identity"]) if expect_identity and bundle.get("identity") else None
    file = str(bundle.get("file") or "BUNDLE")
    return verify_line(
        file,
        identity=identity,
        allow_code=bool(report.get("bundled_code")),
        accept_advisories=[str(a) for a in report.get("accepted_advisories") or ()],
    )


def expected_text(case: Mapping[str, Any]) -> str:
    """``fail [a, b]``: the expected verdict, reason codes sorted like ``observed_text``'s."""
    reasons = sorted(case.get("expect_reasons") or [])
    return f"{case['expect']} [{', '.join(reasons)}]" if reasons else str(case["expect"])


def observed_text(case: Mapping[str, Any]) -> str:
    """``fail [a, b]``: the verdict the checker gave here, each reason code once, sorted
    (``not run (withheld)`` for a case that reads a withheld file: no checker ran)."""
    if case.get("outcome") == "withheld":
        return "not run (withheld)"
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
    if case.get("outcome") not in ("inconclusive", "withheld"):
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
    if outcome == "withheld":
        return f"withheld: {case['explanation']}"
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
    for outcome in ("diverged", "inconclusive", "withheld"):
        if n.get(outcome):
            text += f", {n[outcome]} {outcome}"
    return text


WITHHELD_TITLE = "Withheld evidence"


def integrity_words(report: Mapping[str, Any]) -> str:
    """All files match; or, in a redacted bundle, how many are here and how many withheld
    (bound by the manifest's digests), or that the withheld ones were disclosed."""
    bundle, held = report["bundle"], report.get("withheld")
    if not held or held["disclosed"]:
        disclosed = f", {len(held['files'])} of them withheld and disclosed" if held else ""
        return (
            f"all {bundle['files']} files ({bundle['bytes']} bytes{disclosed}) match the "
            "manifest's SHA-256 and sizes"
        )
    withheld = len(held["files"])
    return (
        f"{bundle['files'] - withheld} of {bundle['files']} files ({bundle['bytes']} bytes) "
        f"match the manifest's SHA-256 and sizes; {withheld} withheld, bound by the "
        f"manifest's SHA-256 and sizes (see {WITHHELD_TITLE})"
    )


def withheld_text(report: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """A redacted bundle's withheld evidence in words: the headline, then one line per
    withheld file (path, size, SHA-256, reason) and one per claim it kept from being
    checked here; None for a bundle that withholds nothing."""
    held = report.get("withheld")
    if not held:
        return None
    files = held["files"]
    signed = "signed " if (report.get("signature") or {}).get("signers") else ""
    if held["disclosed"]:
        head = (
            f"{len(files)} file(s) withheld from this bundle were disclosed (--disclose) and "
            f"checked against the SHA-256 and size the {signed}manifest binds; every case ran "
            "on them, so the verdicts are those of the full bundle."
        )
    else:
        head = (
            f"{len(files)} file(s) are withheld from this bundle. Their SHA-256 and sizes are "
            f"bound by the {signed}manifest, so nothing else is missing; the "
            f"{len(held['cases'])} case(s) that read them were not run here, and the claims "
            "resting on them are inconclusive here."
        )
    lines = [f"{f['path']} ({f['size']} bytes, sha256 {f['sha256']}): {f['reason']}" for f in files]
    cases = {c["id"]: c for c in report["cases"]}
    for claim in report["claims"]:
        if claim["id"] in held["claims"]:
            mine = [i for i in claim["cases"] if cases[i]["outcome"] == "withheld"]
            lines.append(f"not checked here: claim {claim['id']} (case(s) {', '.join(mine)})")
    return head, lines


def _count(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")


def controls_text(claim: Mapping[str, Any]) -> str:
    """``controls showed: CODES for CHECK; ...``: the reasons the claim's counted controls
    failed with, per check of its passing cases (empty for a report before 1.3)."""
    shown = claim.get("controls_showed")
    if shown is None:
        return ""
    if not shown:
        return "controls showed: nothing (no counted control)"
    parts = [f"{', '.join(s['reasons'])} for {s['check']}" for s in shown]
    return "controls showed: " + "; ".join(parts)


def controls_words(claim: Mapping[str, Any]) -> list[str]:
    """What the claim's counted controls showed, a sentence per check, in words: "The
    controls show that structured-equal@1 can fail: content.removed (dropped-rule-is-caught)."
    A check's params are named only where they tell two checks of one checker apart (then
    only the params that differ); empty for a report before 1.3."""
    shown = claim.get("controls_showed")
    if shown is None:
        return []
    if not shown:
        return ["No control of this claim counts: nothing shows its checks can fail."]
    checks = [_check_parts(str(s["check"])) for s in shown]
    sentences = []
    for (name, params), item in zip(checks, shown, strict=True):
        twins = [p for n, p in checks if n == name]
        differing = sorted(
            {k for p in twins for k in set(p) | set(params) if p.get(k) != params.get(k)}
        )
        told = ", ".join(f"{k} {json.dumps(params.get(k), ensure_ascii=False)}" for k in differing)
        check = f"{name} (with {told})" if told else name
        reasons = ", ".join(item["reasons"])
        cases = ", ".join(item["cases"])
        sentences.append(f"The controls show that {check} can fail: {reasons} ({cases}).")
    return sentences


def _check_parts(check: str) -> tuple[str, dict[str, Any]]:
    """``("name@N", params)`` from a ``controls_showed`` check, ``name@N {params JSON}``."""
    name, _, rest = check.partition(" ")
    try:
        params = json.loads(rest) if rest else {}
    except ValueError:
        params = {"params": rest}
    return name, params if isinstance(params, dict) else {"params": params}


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


def one_line_all(value: Any) -> Any:
    """``value`` (a report, or any part of one) with ``one_line`` applied to every string."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, Mapping):
        return {one_line(k) if isinstance(k, str) else k: one_line_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [one_line_all(v) for v in value]
    return value


PREREGISTRATION_TITLE = "Pre-registration"
NOT_CHECKED = "as the stored JSON report states; not checked again: `report` reads no signature"


def as_stated(report: Mapping[str, Any]) -> dict[str, Any]:
    """A stored JSON report whose words about signatures (the bundle's, the
    pre-registration's) say that they are the report's, not checked by whoever renders it:
    a report is a file anyone can write, and only a verification checks a signature."""
    out = dict(report)
    signature = report.get("signature")
    if isinstance(signature, Mapping) and signature.get("state") != "unsigned":
        out["signature"] = {**signature, "summary": f"{signature['summary']} ({NOT_CHECKED})"}
    pre = report.get("preregistration")
    if isinstance(pre, Mapping) and str(pre.get("trust", "")).startswith("signed"):
        out["preregistration"] = {**pre, "trust": f"{pre['trust']} ({NOT_CHECKED})"}
    return out


def preregistration_text(report: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """The pre-registration section in the same words for every format: a headline (what
    it is, who signed it) and a line per claim with what changed; None when the bundle
    holds no pre-registration."""
    pre = report.get("preregistration")
    if not pre:
        return None
    if pre.get("refused"):
        refused = pre["refused"]
        head = (
            f"{pre['file']} was refused ({refused['code']}: {refused['message']}); "
            "no claim counts as pre-registered"
        )
    else:
        when = (
            f"written {pre['written']} by its author's clock (stated, not attested)"
            if pre.get("written")
            else "its time is not stated"
        )
        head = (
            f"{pre['file']}, identity sha256:{pre['identity']}, for {pre['name']} "
            f"{pre['version']}: {pre['trust']}; {when}: an archive entry or an RFC 3161 "
            "time-stamp attests when it existed"
        )
    lines = [f"warning: {w}" for w in pre.get("warnings", [])]
    for claim_id, item in pre["claims"].items():
        line = f"{claim_id}: {item['status']}"
        if item["changes"]:
            line += " (" + "; ".join(_change_text(c) for c in item["changes"]) + ")"
        lines.append(line)
    lines += [f"{c}: pre-registered, but no longer claimed" for c in pre.get("dropped", [])]
    scope = pre.get("scope") or {"added": [], "removed": []}
    lines += [
        f"scope: {_short(s)} was pre-registered as not supported, and is no longer declared"
        for s in scope["removed"]
    ]
    lines += [f"scope: {_short(s)} added after pre-registration" for s in scope["added"]]
    for item in pre.get("fixed", []):
        lines.append(f"file {item['path']} (its digest fixed in advance): {item['status']}")
    return head, lines


def _change_text(change: Mapping[str, Any]) -> str:
    where = change["what"] if change["path"] == "(all)" else f"{change['what']} {change['path']}"
    if change["change"] == "changed":
        old, new = difference(change.get("old"), change.get("new"))
        return f"{where}: {old} -> {new}"
    return f"{where} {change['change']}"


def difference(old: Any, new: Any, most: int = 60) -> tuple[str, str]:
    """Two values as short texts that show where they differ: two texts that share a
    beginning (or an end) longer than the room left are shown from a little before the
    first character that differs, each cut with "…", never both to the same prefix."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return _short(old, most), _short(new, most)
    if len(repr(old)) <= most and len(repr(new)) <= most:
        return repr(old), repr(new)
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0  # characters shared at the end, not overlapping the shared beginning
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    lead = max(0, start - 12)
    if end > 0 and start == 0:  # only the ends are shared: show the beginnings
        lead = 0
    return _window(old, lead, most), _window(new, lead, most)


def _window(text: str, lead: int, most: int) -> str:
    """``text`` from ``lead``, at most ``most`` characters, with "…" where it is cut."""
    room = most - 4  # the quotes and two "…"
    piece = text[lead : lead + room]
    shown = repr(piece)
    before = "…" if lead > 0 else ""
    after = "…" if lead + room < len(text) else ""
    return f"{shown[0]}{before}{shown[1:-1]}{after}{shown[-1]}"


def _short(value: Any, most: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= most else text[: most - 1] + "…"
