"""Attestations of a verification: an in-toto Statement in a DSSE envelope, signed.

A verification ends on the reviewer's machine; an attestation lets them hand it on. It
says "the holder of key K verified the bundle file with SHA-256 F (identity M) with
reprobundle V under these options, and found each claim supported, inconclusive or
contradicted", in the supply chain's standard shapes, so that in-toto and
securesystemslib tools read it as well as ``reprobundle attestation verify``:

- the envelope is DSSE (``payloadType`` ``application/vnd.in-toto+json``, the Statement as
  base64 ``payload``, Ed25519 signatures over DSSE's pre-authentication encoding, as the
  bundle signatures in ``signing`` are);
- the Statement is in-toto v1; its subjects are the bundle file and its manifest;
- the predicate is in-toto's Test Result (claims and cases as passed, warned and failed
  tests, the options that decided trust and what ran as configuration) or SLSA's
  Verification Summary (PASSED only when every claim is supported).

Only signed attestations are written: an unsigned one would say nothing about who checked.
Reading is strict like every other input (size, depth, duplicate keys, canonical base64,
the Statement's field rules); this module is pure: bytes and values in, values or
``AttestationProblem`` out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bundler.signatures.envelope import (
    EnvelopeProblem,
    load_json,
    open_envelope,
    require,
    seal,
)
from bundler.signatures.trust import TrustedKey

ENVELOPE_PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"
VSA = "https://slsa.dev/verification_summary/v1"
PREDICATES = {"test-result": TEST_RESULT, "vsa": VSA}
# package URLs (purl): the tool, and the rules of a claim's status in its own documents
VERIFIER_ID = "pkg:pypi/reprobundle"
POLICY_URI = "pkg:pypi/reprobundle#manifests/FORMAT.md"

# claim status / case outcome -> the Test Result predicate's words
RESULT_OF_STATUS = {"supported": "PASSED", "inconclusive": "WARNED", "contradicted": "FAILED"}
TEST_OF_STATUS = {"supported": "passed", "inconclusive": "warned", "contradicted": "failed"}
TEST_OF_OUTCOME = {
    "reproduced": "passed",
    "inconclusive": "warned",
    "withheld": "warned",  # not run: its evidence is withheld from this bundle
    "diverged": "failed",
}
RESULTS = ("PASSED", "WARNED", "FAILED")
_HEX64 = re.compile(r"[0-9a-f]{64}")


AttestationProblem = EnvelopeProblem  # one thing wrong with an attestation: code, message


@dataclass(frozen=True)
class Subject:
    """What was verified: the bundle file and, beside it, its identity (the manifest)."""

    file_name: str
    file_sha256: str
    manifest_name: str
    identity: str

    def to_list(self) -> list[dict[str, Any]]:
        return [
            {"name": self.file_name, "digest": {"sha256": self.file_sha256}},
            {"name": self.manifest_name, "digest": {"sha256": self.identity}},
        ]


def subject_of(report: Mapping[str, Any], file_name: str, file_sha256: str) -> Subject:
    """The subjects of a verification's JSON report (``reports.document.to_json``)."""
    bundle = report["bundle"]
    top = f"{bundle['name']}-{bundle['version']}"
    return Subject(file_name, file_sha256, f"{top}/manifest.toml", bundle["identity"])


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _descriptor(name: str, annotations: Mapping[str, Any]) -> dict[str, Any]:
    """A ResourceDescriptor holding plain values (its digest is of their canonical JSON,
    which the field rules require: a descriptor names a uri, a digest or content)."""
    return {
        "name": name,
        "digest": {"sha256": hashlib.sha256(_canonical(annotations)).hexdigest()},
        "mediaType": "application/json",
        "annotations": dict(annotations),
    }


TOOL_DESCRIPTOR = "reprobundle"  # the Test Result's configuration entry naming the tool


def test_result_predicate(
    report: Mapping[str, Any], options: Mapping[str, Any], when: dt.datetime
) -> dict[str, Any]:
    """in-toto's Test Result: PASSED only when every claim is supported, WARNED when
    some are inconclusive and none contradicted, FAILED when any is contradicted; each
    claim and each case a test; the options and the tool as configuration. The
    predicate has no field for a time, so the tool's configuration entry records when
    the verification ran (``timeVerified``, as SLSA's Verification Summary names it)."""
    tests: dict[str, list[str]] = {"passed": [], "warned": [], "failed": []}
    for claim in report["claims"]:
        tests[TEST_OF_STATUS[claim["status"]]].append(f"claim:{claim['id']}")
    for case in report["cases"]:
        tests[TEST_OF_OUTCOME[case["outcome"]]].append(f"case:{case['id']}")
    environment = report.get("verify_environment") or {}
    result = RESULT_OF_STATUS[report["result"]]
    if result == "PASSED" and withheld_here(report):
        result = "WARNED"  # not all of the bundle was checked here
    return {
        "result": result,
        "configuration": [
            _descriptor("reprobundle verify options", options),
            *_withheld_descriptors(report),
            _descriptor(
                TOOL_DESCRIPTOR,
                {
                    "tool": environment.get("tool"),
                    "python": environment.get("python"),
                    "implementation": environment.get("implementation"),
                    "checkers": environment.get("checkers", {}),
                    "timeVerified": rfc3339(when),
                },
            ),
        ],
        "passedTests": tests["passed"],
        "warnedTests": tests["warned"],
        "failedTests": tests["failed"],
    }


WITHHELD_DESCRIPTOR = "reprobundle withheld evidence"


def withheld_here(report: Mapping[str, Any]) -> bool:
    """Whether the verification judged a redacted bundle without its withheld files."""
    held = report.get("withheld") or {}
    return bool(held) and not held["disclosed"]


def _withheld_descriptors(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """For a redacted bundle: which files were withheld (path, size, SHA-256 as the
    manifest binds them, reason) and whether they were disclosed and checked."""
    held = report.get("withheld")
    if not held:
        return []
    words = (
        "the withheld files were disclosed to this verifier and checked against their "
        "SHA-256 before use; every case ran"
        if held["disclosed"]
        else "the withheld files were not available to this verifier; the cases that read "
        "them were not run"
    )
    return [
        _descriptor(
            WITHHELD_DESCRIPTOR,
            {
                "disclosed": held["disclosed"],
                "summary": words,
                "files": held["files"],
                "casesNotRun": held["cases"],
                "claimsNotChecked": held["claims"],
            },
        )
    ]


def vsa_predicate(
    report: Mapping[str, Any], options: Mapping[str, Any], subject: Subject, when: dt.datetime
) -> dict[str, Any]:
    """SLSA's Verification Summary: PASSED only when every claim is supported."""
    environment = report.get("verify_environment") or {}
    passed = report["result"] == "supported" and not withheld_here(report)
    return {
        "verifier": {
            "id": VERIFIER_ID,
            "version": {
                "reprobundle": str(environment.get("tool", "")).removeprefix("reprobundle ")
            },
        },
        "timeVerified": rfc3339(when),
        "resourceUri": f"file:{subject.file_name}",
        "policy": {
            "uri": POLICY_URI,
            "digest": {"sha256": hashlib.sha256(_canonical(options)).hexdigest()},
            "annotations": dict(options),
        },
        "verificationResult": "PASSED" if passed else "FAILED",
        "verifiedLevels": [f"REPROBUNDLE_{str(report['result']).upper()}" if passed else "FAILED"],
    }


def rfc3339(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def statement(
    report: Mapping[str, Any],
    subject: Subject,
    options: Mapping[str, Any],
    predicate: str = "test-result",
    when: dt.datetime | None = None,
) -> dict[str, Any]:
    """The in-toto Statement v1 of one verification (``predicate``: test-result or vsa),
    which ran at ``when`` (default: now)."""
    if predicate not in PREDICATES:
        raise ValueError(f"unknown predicate {predicate!r}, expected one of {sorted(PREDICATES)}")
    when = when or dt.datetime.now(dt.UTC)
    body = (
        test_result_predicate(report, options, when)
        if predicate == "test-result"
        else vsa_predicate(report, options, subject, when)
    )
    return {
        "_type": STATEMENT_TYPE,
        "subject": subject.to_list(),
        "predicateType": PREDICATES[predicate],
        "predicate": body,
    }


def envelope(statement_doc: Mapping[str, Any], key: Ed25519PrivateKey) -> bytes:
    """The DSSE envelope of ``statement_doc`` signed with ``key``, as JSON bytes."""
    return seal(_canonical(statement_doc), ENVELOPE_PAYLOAD_TYPE, [key])


# -- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attestation:
    """A checked attestation: who signed it, and the Statement they signed."""

    signers: tuple[str, ...]  # key ids of trusted keys whose signature verified and count
    statement: dict[str, Any]
    names: tuple[str, ...] = ()  # those keys' names, as the reviewer's trust calls them

    @property
    def predicate_type(self) -> str:
        return str(self.statement["predicateType"])

    @property
    def result(self) -> str:
        predicate = self.statement["predicate"]
        if self.predicate_type == TEST_RESULT:
            return str(predicate["result"])
        return str(predicate["verificationResult"])

    @property
    def time_verified(self) -> dt.datetime | None:
        """When the attested verification ran, or None for an attestation that does not
        say (a Test Result written before reprobundle recorded it)."""
        predicate = self.statement["predicate"]
        text = predicate["timeVerified"] if self.predicate_type == VSA else _tool_time(predicate)
        return None if text is None else _parse_time(text)

    def age_problem(self, max_age: dt.timedelta, now: dt.datetime) -> str | None:
        """Why this attestation is too old to accept at ``now`` (or says no time, or a time
        after ``now``), or None: the pure rule behind ``--max-age``."""
        when = self.time_verified
        if when is None:
            return (
                "it does not say when the verification ran (written by an older "
                "reprobundle), so it cannot be shown to be younger than the maximum age"
            )
        if when - now > CLOCK_SKEW:
            return (
                f"it says the verification ran at {rfc3339(when)}, after now "
                f"({rfc3339(now)}): a time in the future cannot be checked"
            )
        if now - when > max_age:
            return (
                f"the verification ran at {rfc3339(when)}, {_words(now - when)} ago; the "
                f"maximum age accepted is {_words(max_age)}: verify the bundle again"
            )
        return None

    @property
    def sha256s(self) -> list[str]:
        """The SHA-256 of each subject that has one (the bundle file, its manifest)."""
        found = (item["digest"].get("sha256") for item in self.statement["subject"])
        return [d for d in found if isinstance(d, str)]


def read(data: bytes, trusted: Sequence[TrustedKey], at: dt.datetime) -> Attestation:
    """Check a DSSE envelope against ``trusted`` keys at time ``at`` (the trust rule,
    ``trust.standing``) and its Statement's field rules.

    A signature by a key not in ``trusted``, or by one that does not count at ``at``
    (revoked, not yet valid, expired), is not counted; at least one counting key must have
    signed. A signature naming a trusted key that does not verify is a bad signature.
    Raises ``AttestationProblem`` naming the first thing wrong.
    """
    opened = open_envelope(data, ENVELOPE_PAYLOAD_TYPE, trusted, "attestation", at)
    require(opened.signatures > 0, "attestation.unsigned", "the envelope holds no signature")
    notes = "; ".join(opened.judged.notes)
    require(
        bool(opened.signers),
        "attestation.untrusted",
        "no signature by a trusted key verifies"
        + (f" that counts now ({notes})" if notes else "")
        + ("" if trusted else " (no key is trusted: give --trust)"),
    )
    statement = load_json(opened.payload, "the Statement", "attestation")
    return Attestation(opened.signers, check_statement(statement), opened.judged.names)


def check_statement(doc: Any) -> dict[str, Any]:
    """The in-toto Statement v1 field rules we rely on, and the predicate's required
    fields. Unknown fields are allowed (the parsing rules say consumers ignore them)."""
    require(isinstance(doc, dict), "attestation.statement", "the Statement is not an object")
    require(
        doc.get("_type") == STATEMENT_TYPE,
        "attestation.statement",
        f"_type is {str(doc.get('_type'))[:80]!r}, expected {STATEMENT_TYPE!r}",
    )
    subjects = doc.get("subject")
    require(
        isinstance(subjects, list) and bool(subjects),
        "attestation.statement",
        "subject must be a non-empty list",
    )
    for item in subjects:
        require(
            isinstance(item, dict)
            and isinstance(item.get("name", ""), str)
            and isinstance(item.get("digest"), dict)
            and bool(item["digest"])
            and all(isinstance(v, str) for v in item["digest"].values()),
            "attestation.statement",
            "each subject has a name and a non-empty digest of strings",
        )
        sha = item["digest"].get("sha256")
        require(
            sha is None or bool(_HEX64.fullmatch(sha)),
            "attestation.statement",
            "a sha256 digest is 64 lower-case hex digits",
        )
    kind = doc.get("predicateType")
    require(
        kind in PREDICATES.values(),
        "attestation.predicate_type",
        f"predicateType is {str(kind)[:80]!r}, expected one of {sorted(PREDICATES.values())}",
    )
    predicate = doc.get("predicate")
    require(isinstance(predicate, dict), "attestation.statement", "predicate is not an object")
    if kind == TEST_RESULT:
        require(
            predicate.get("result") in RESULTS,
            "attestation.statement",
            f"result must be one of {list(RESULTS)}",
        )
        require(
            isinstance(predicate.get("configuration"), list),
            "attestation.statement",
            "configuration must be a list",
        )
        when = _tool_time(predicate)
        require(
            when is None or _is_rfc3339(when),
            "attestation.statement",
            "the tool's timeVerified must be an RFC 3339 time stamp",
        )
        for name in ("passedTests", "warnedTests", "failedTests"):
            tests = predicate.get(name, [])
            require(
                isinstance(tests, list) and all(isinstance(t, str) for t in tests),
                "attestation.statement",
                f"{name} must be a list of strings",
            )
    else:
        require(
            predicate.get("verificationResult") in ("PASSED", "FAILED"),
            "attestation.statement",
            "verificationResult must be PASSED or FAILED",
        )
        when = predicate.get("timeVerified")
        require(
            isinstance(when, str) and _is_rfc3339(when),
            "attestation.statement",
            "timeVerified must be an RFC 3339 time stamp",
        )
    checked: dict[str, Any] = doc
    return checked


CLOCK_SKEW = dt.timedelta(minutes=5)  # how far ahead of this clock a signer's clock may be


def _tool_time(predicate: Mapping[str, Any]) -> str | None:
    """The Test Result's ``timeVerified``, in its tool entry's annotations (or None)."""
    for entry in predicate.get("configuration", []):
        if isinstance(entry, dict) and entry.get("name") == TOOL_DESCRIPTOR:
            annotations = entry.get("annotations")
            if isinstance(annotations, dict) and "timeVerified" in annotations:
                return str(annotations["timeVerified"])
    return None


def _parse_time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.UTC)


def _words(span: dt.timedelta) -> str:
    """A length of time in the largest whole unit that fits (``3 days``, ``5 hours``)."""
    seconds = int(span.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _is_rfc3339(text: str) -> bool:
    if not _RFC3339.fullmatch(text):
        return False
    try:
        dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
