"""Signed in-toto attestations of a verification: written by `verify --attest`, checked by
`attestation verify` and by securesystemslib; hostile attestations refused (exit 3)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from securesystemslib.dsse import Envelope
from securesystemslib.signer import CryptoSigner, SSlibKey

from bundler.cli import main
from bundler.signatures import attestation as att
from tests.helpers import key_files

RUN = CliRunner()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return key_files(tmp_path_factory.mktemp("attest-keys"), "reviewer", "stranger")


@pytest.fixture(scope="module")
def attested(
    quickstart_bundle: Path, keys: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    target = tmp_path_factory.mktemp("attested") / "quickstart.intoto.json"
    done = RUN.invoke(
        main,
        [
            "verify",
            str(quickstart_bundle),
            "-q",
            "--attest",
            str(target),
            "--attest-key",
            f"{keys['reviewer']}.key",
        ],
    )
    assert done.exit_code == 0, done.output
    return target


def _statement(envelope_file: Path) -> dict[str, Any]:
    doc = json.loads(envelope_file.read_text())
    return json.loads(base64.b64decode(doc["payload"]))


def _check(attestation: Path, keys: dict[str, Path], *extra: str, who: str = "reviewer") -> Any:
    return RUN.invoke(
        main, ["attestation", "verify", str(attestation), "--trust", f"{keys[who]}.pub", *extra]
    )


def test_verify_attest_writes_a_signed_statement_about_the_bundle(
    attested: Path, quickstart_bundle: Path
) -> None:
    envelope = json.loads(attested.read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    statement = _statement(attested)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://in-toto.io/attestation/test-result/v0.1"
    file_digest = hashlib.sha256(quickstart_bundle.read_bytes()).hexdigest()
    names = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    assert names[quickstart_bundle.name] == file_digest
    manifest = next(n for n in names if n.endswith("/manifest.toml"))
    report = RUN.invoke(main, ["verify", str(quickstart_bundle), "--json", "-", "-q"])
    assert names[manifest] == json.loads(report.stdout)["bundle"]["identity"]
    predicate = statement["predicate"]
    assert predicate["result"] == "PASSED"
    assert predicate["failedTests"] == [] and predicate["warnedTests"] == []
    assert any(t.startswith("claim:") for t in predicate["passedTests"])
    assert any(t.startswith("case:") for t in predicate["passedTests"])
    options = predicate["configuration"][0]["annotations"]
    assert options["allowCode"] is False and options["trustedKeyIds"] == []
    assert "reprobundle" in predicate["configuration"][1]["annotations"]["tool"]


def test_attestation_verify_accepts_it_and_names_each_claim(
    attested: Path, keys: dict[str, Path], quickstart_bundle: Path
) -> None:
    done = _check(attested, keys, "--bundle", str(quickstart_bundle), "--expect-result", "PASSED")
    assert done.exit_code == 0, done.output
    assert "result PASSED" in done.output
    assert ": supported" in done.output


def test_expected_result_not_attested_exits_1(attested: Path, keys: dict[str, Path]) -> None:
    done = _check(attested, keys, "--expect-result", "FAILED")
    assert done.exit_code == 1
    assert "expected FAILED" in done.output


def test_attestation_about_another_bundle_is_rejected(
    attested: Path, keys: dict[str, Path], tmp_path: Path, quickstart_bundle: Path
) -> None:
    other = tmp_path / quickstart_bundle.name
    data = quickstart_bundle.read_bytes()
    other.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    done = _check(attested, keys, "--bundle", str(other))
    assert done.exit_code == 3
    assert "attestation.subject" in done.output


def test_attestation_signed_by_an_untrusted_key_is_rejected(
    attested: Path, keys: dict[str, Path]
) -> None:
    done = _check(attested, keys, who="stranger")
    assert done.exit_code == 3
    assert "attestation.untrusted" in done.output


def test_attest_without_a_key_writes_nothing(quickstart_bundle: Path, tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    done = RUN.invoke(main, ["verify", str(quickstart_bundle), "-q", "--attest", str(target)])
    assert done.exit_code == 2
    assert "always signed" in done.output
    assert not target.exists()


def _envelope(payload: bytes, key: Any, payload_type: str = att.ENVELOPE_PAYLOAD_TYPE) -> bytes:
    from bundler.signatures.signing import pae

    sig = key.sign(pae(payload_type, payload))
    doc = {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": "x", "sig": base64.b64encode(sig).decode()}],
    }
    return json.dumps(doc).encode()


def _key(keys: dict[str, Path]) -> Any:
    return serialization.load_pem_private_key(
        Path(f"{keys['reviewer']}.key").read_bytes(), password=None
    )


HOSTILE = {
    "bad_base64": lambda good, key: good.replace(b'"payload": "', b'"payload": "!!'),
    "wrong_payload_type": lambda good, key: _envelope(
        base64.b64decode(json.loads(good)["payload"]), key, "application/json"
    ),
    "tampered_statement": lambda good, key: json.dumps(
        {
            **json.loads(good),
            "payload": base64.b64encode(
                base64.b64decode(json.loads(good)["payload"]).replace(b"PASSED", b"FAILED")
            ).decode(),
        }
    ).encode(),
    "duplicate_keys": lambda good, key: good.replace(
        b'"payloadType"', b'"payload": "", "payloadType"', 1
    ),
    "deep_json": lambda good, key: _envelope(b"[" * 100_000 + b"]" * 100_000, key),
    "huge_json": lambda good, key: b'{"payload": "' + b"A" * (9 << 20) + b'"}',
    "not_a_statement": lambda good, key: _envelope(b'{"_type": "x"}', key),
    "bad_subject_digest": lambda good, key: _envelope(
        json.dumps(
            {
                "_type": att.STATEMENT_TYPE,
                "subject": [{"name": "b", "digest": {"sha256": "XYZ"}}],
                "predicateType": att.TEST_RESULT,
                "predicate": {"result": "PASSED", "configuration": []},
            }
        ).encode(),
        key,
    ),
    "unknown_predicate": lambda good, key: _envelope(
        json.dumps(
            {
                "_type": att.STATEMENT_TYPE,
                "subject": [{"name": "b", "digest": {"sha256": "a" * 64}}],
                "predicateType": "https://example.org/anything",
                "predicate": {},
            }
        ).encode(),
        key,
    ),
    "no_signature": lambda good, key: json.dumps({**json.loads(good), "signatures": []}).encode(),
    "not_utf8": lambda good, key: b"\xff\xfe" + good,
}


@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_hostile_attestation_is_refused_with_a_code(
    attack: str, attested: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(HOSTILE[attack](attested.read_bytes(), _key(keys)))
    done = _check(bad, keys)
    assert done.exit_code == 3, done.output
    assert "[attestation." in done.output
    assert "Traceback" not in done.output


def _sslib_key(pub_file: Path) -> SSlibKey:
    raw = serialization.load_pem_public_key(pub_file.read_bytes()).public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    keyid = hashlib.sha256(raw).hexdigest()
    return SSlibKey(keyid, "ed25519", "ed25519", {"public": raw.hex()})


def test_securesystemslib_verifies_our_envelope(attested: Path, keys: dict[str, Path]) -> None:
    envelope = Envelope.from_dict(json.loads(attested.read_text()))
    accepted = envelope.verify([_sslib_key(Path(f"{keys['reviewer']}.pub"))], 1)
    assert len(accepted) == 1
    assert json.loads(envelope.payload)["_type"] == att.STATEMENT_TYPE


def test_securesystemslib_refuses_our_envelope_under_another_key(
    attested: Path, keys: dict[str, Path]
) -> None:
    from securesystemslib.exceptions import VerificationError

    envelope = Envelope.from_dict(json.loads(attested.read_text()))
    stranger = _sslib_key(Path(f"{keys['stranger']}.pub"))
    forged = SSlibKey(
        next(iter(envelope.signatures.values())).keyid, "ed25519", "ed25519", dict(stranger.keyval)
    )
    with pytest.raises(VerificationError):
        envelope.verify([forged], 1)


def test_we_verify_an_envelope_securesystemslib_signed(
    attested: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    statement = _statement(attested)
    public = _sslib_key(Path(f"{keys['reviewer']}.pub"))
    signer = CryptoSigner(_key(keys), public)
    envelope = Envelope(json.dumps(statement).encode(), att.ENVELOPE_PAYLOAD_TYPE, {})
    envelope.sign(signer)
    theirs = tmp_path / "theirs.json"
    theirs.write_text(json.dumps(envelope.to_dict()))
    done = _check(theirs, keys, "--expect-result", "PASSED")
    assert done.exit_code == 0, done.output


REPORT = {
    "bundle": {"name": "b", "version": "1", "identity": "c" * 64},
    "verify_environment": {"tool": "reprobundle 9", "python": "3.11", "checkers": {}},
}


@pytest.mark.parametrize(
    ("statuses", "outcomes", "result"),
    [
        (["supported", "supported"], ["reproduced"], "PASSED"),
        (["supported", "inconclusive"], ["inconclusive"], "WARNED"),
        (["inconclusive", "contradicted"], ["diverged"], "FAILED"),
    ],
)
def test_test_result_maps_claim_statuses(
    statuses: list[str], outcomes: list[str], result: str
) -> None:
    overall = (
        "contradicted"
        if "contradicted" in statuses
        else "inconclusive"
        if "inconclusive" in statuses
        else "supported"
    )
    report = {
        **REPORT,
        "result": overall,
        "claims": [{"id": f"c{i}", "status": s} for i, s in enumerate(statuses)],
        "cases": [{"id": f"k{i}", "outcome": o} for i, o in enumerate(outcomes)],
    }
    subject = att.subject_of(report, "b.bundle.tar.zst", "d" * 64)
    doc = att.check_statement(att.statement(report, subject, {}))
    assert doc["predicate"]["result"] == result
    failed = [c for c in doc["predicate"]["failedTests"] if c.startswith("claim:")]
    assert len(failed) == statuses.count("contradicted")


def test_vsa_passes_only_when_every_claim_is_supported() -> None:
    when = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
    for status, expected in [("supported", "PASSED"), ("inconclusive", "FAILED")]:
        report = {**REPORT, "result": status, "claims": [], "cases": []}
        subject = att.subject_of(report, "b.bundle.tar.zst", "d" * 64)
        doc = att.check_statement(att.statement(report, subject, {"x": 1}, "vsa", when))
        assert doc["predicateType"] == att.VSA
        assert doc["predicate"]["verificationResult"] == expected
        assert doc["predicate"]["timeVerified"] == "2026-12-01T12:00:00Z"


def test_vsa_with_a_time_stamp_that_is_not_rfc3339_is_refused() -> None:
    report = {**REPORT, "result": "supported", "claims": [], "cases": []}
    subject = att.subject_of(report, "b", "d" * 64)
    doc = att.statement(report, subject, {}, "vsa")
    doc["predicate"]["timeVerified"] = "yesterday"
    with pytest.raises(att.AttestationProblem) as raised:
        att.check_statement(doc)
    assert raised.value.code == "attestation.statement"


def test_vsa_from_the_command_line(
    quickstart_bundle: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "vsa.json"
    args = ["verify", str(quickstart_bundle), "-q", "--attest", str(target)]
    args += ["--attest-key", f"{keys['reviewer']}.key", "--attest-predicate", "vsa"]
    assert RUN.invoke(main, args).exit_code == 0
    statement = _statement(target)
    assert statement["predicateType"] == att.VSA
    assert statement["predicate"]["verificationResult"] == "PASSED"
    done = _check(target, keys, "--bundle", str(quickstart_bundle))
    assert done.exit_code == 0, done.output


def test_an_attestation_written_over_the_bundle_it_attests_is_refused(
    quickstart_bundle: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    bundle = tmp_path / "b.bundle.tar.gz"
    bundle.write_bytes(quickstart_bundle.read_bytes())
    args = ["verify", str(bundle), "-q", "--attest", str(bundle)]
    done = RUN.invoke(main, [*args, "--attest-key", f"{keys['reviewer']}.key"])
    assert done.exit_code == 2
    assert bundle.read_bytes() == quickstart_bundle.read_bytes()


# --- when the verification ran, and --max-age (issue 42, item 6) ------------------------


def test_test_result_attestation_records_when_the_verification_ran(
    attested: Path, keys: dict[str, Path]
) -> None:
    predicate = _statement(attested)["predicate"]
    tool = next(c for c in predicate["configuration"] if c["name"] == att.TOOL_DESCRIPTOR)
    when = dt.datetime.fromisoformat(tool["annotations"]["timeVerified"].replace("Z", "+00:00"))
    assert abs(dt.datetime.now(dt.UTC) - when) < dt.timedelta(hours=1)
    done = _check(attested, keys)
    assert done.exit_code == 0, done.output
    assert f"verified at {att.rfc3339(when)}" in done.output


def _signed_at(
    keys: dict[str, Path], tmp_path: Path, when: dt.datetime | None, predicate: str
) -> Path:
    """An attestation signed by the reviewer of a verification that ran at ``when``
    (None: one that records no time, as a Test Result written before it was recorded)."""
    report = {**REPORT, "result": "supported", "claims": [], "cases": []}
    subject = att.subject_of(report, "b.bundle.tar.zst", "d" * 64)
    doc = att.statement(report, subject, {}, predicate, when)
    if when is None:
        tool = next(c for c in doc["predicate"]["configuration"] if c["name"] == "reprobundle")
        del tool["annotations"]["timeVerified"]
    target = tmp_path / f"{predicate}-{when}.intoto.json"
    target.write_bytes(att.envelope(doc, _key(keys)))
    return target


@pytest.mark.parametrize("predicate", ["test-result", "vsa"])
def test_attestation_older_than_max_age_is_refused(
    keys: dict[str, Path], tmp_path: Path, predicate: str
) -> None:
    now = dt.datetime.now(dt.UTC)
    old = _signed_at(keys, tmp_path, now - dt.timedelta(days=40), predicate)
    assert _check(old, keys).exit_code == 0, "without --max-age any age is accepted"
    done = _check(old, keys, "--max-age", "30d")
    assert done.exit_code == 3, done.output
    assert "attestation.too_old" in done.output and "40 days ago" in done.output
    assert _check(old, keys, "--max-age", "6w").exit_code == 0
    recent = _signed_at(keys, tmp_path, now - dt.timedelta(hours=2), predicate)
    assert _check(recent, keys, "--max-age", "12h").exit_code == 0
    assert _check(recent, keys, "--max-age", "90m").exit_code == 3


def test_attestation_from_the_future_or_without_a_time_is_refused_under_max_age(
    keys: dict[str, Path], tmp_path: Path
) -> None:
    future = _signed_at(keys, tmp_path, dt.datetime(2099, 1, 1, tzinfo=dt.UTC), "test-result")
    done = _check(future, keys, "--max-age", "30d")
    assert done.exit_code == 3 and "future" in done.output, done.output
    undated = _signed_at(keys, tmp_path, None, "test-result")
    assert _check(undated, keys).exit_code == 0
    done = _check(undated, keys, "--max-age", "30d")
    assert done.exit_code == 3 and "does not say when" in done.output, done.output


@pytest.mark.parametrize("age", ["30", "30 days", "-1d", "0d", "1y"])
def test_max_age_needs_a_number_and_a_unit(attested: Path, keys: dict[str, Path], age: str) -> None:
    done = _check(attested, keys, "--max-age", age)
    assert done.exit_code == 2, done.output
    assert "--max-age" in done.output


def test_attestation_verify_bundle_that_is_a_fifo_says_what_it_is(
    attested: Path, keys: dict[str, Path], tmp_path: Path
) -> None:
    import os

    fifo = tmp_path / "b.bundle.tar.zst"
    os.mkfifo(fifo)
    done = _check(attested, keys, "--bundle", str(fifo))
    assert done.exit_code == 2, done.output
    assert "FIFO" in done.output and "does not exist" not in done.output


def test_the_attestation_records_the_options_that_judged_not_the_files_read_again(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    """Issue 44, item 1: the attestation's options come from the Verification (the keys
    that counted when it was judged), not from the trust files read a second time."""
    import shutil

    from bundler.cli._verifying import attest_options
    from bundler.container.extract import Limits
    from bundler.reports.document import to_json
    from bundler.run.limits import CaseBudget
    from bundler.run.verify import VerifyOptions, verify
    from bundler.signatures.truststore import load_policy

    (tmp_path / "keys").mkdir()
    folder = key_files(tmp_path / "keys", "reviewer")
    public = tmp_path / "reviewer.pub"
    shutil.copy(f"{folder['reviewer']}.pub", public)
    policy = load_policy([public], allow_unsigned=True)
    options = VerifyOptions(
        policy, limits=Limits(members=12345), budget=CaseBudget(seconds=7.5, time_limit=600)
    )
    verification = verify(quickstart_bundle, options)
    assert verification.options is options
    public.unlink()  # gone: nothing may read it again
    recorded = attest_options(verification.options, to_json(verification))
    assert recorded["trustedKeyIds"] == [policy.trusted[0].key.keyid]
    assert recorded["allowUnsigned"] is True and recorded["requireSignature"] is False
    assert recorded["limits"]["max_members"] == 12345
    assert recorded["caseTimeoutSeconds"] == 7.5 and recorded["timeLimitSeconds"] == 600
