"""Signatures over the exact manifest bytes, and trust that lives on the reviewer's machine.

Each attack is rejected with exit 3 and a stable code before any payload file is
written; nothing lands outside the work directory.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner

from bundler.cli import main
from bundler.container.extract import extract
from bundler.errors import BundleRejected, UsageError
from bundler.run.verify import VerifyOptions, verify
from bundler.signatures.signfile import sign_bundle
from bundler.signatures.signing import (
    PAYLOAD_TYPE,
    PublicKey,
    Signature,
    new_private_key,
    pae,
    private_key_pem,
    public_of,
    sign,
)
from bundler.signatures.trust import Policy, TrustedKey
from bundler.signatures.truststore import load_store
from tests.helpers import Entry, read_entries, write_entries

_L = 2**252 + 27742317777372353535851937790883648493


@pytest.fixture(scope="module")
def alice() -> object:
    return new_private_key()


@pytest.fixture(scope="module")
def signed(
    quickstart_bundle: Path, tmp_path_factory: pytest.TempPathFactory, alice: object
) -> Path:
    target = tmp_path_factory.mktemp("signed") / "signed.bundle.tar.gz"
    sign_bundle(quickstart_bundle, alice, out=target)  # type: ignore[arg-type]
    return target


def trusting(*keys: object, **kwargs: object) -> Policy:
    trusted = tuple(
        TrustedKey(name=f"key{i}", key=public_of(k), source="test")  # type: ignore[arg-type]
        for i, k in enumerate(keys)
    )
    return Policy(trusted, **kwargs)  # type: ignore[arg-type]


def rejected(bundle: Path, workdir: Path, policy: Policy) -> BundleRejected:
    with pytest.raises(BundleRejected) as caught:
        verify(bundle, VerifyOptions(policy=policy), workdir=workdir)
    assert caught.value.exit_code == 3
    assert list(workdir.iterdir()) == []
    return caught.value


def rewrite(signed: Path, target: Path, change: object) -> Path:
    entries = read_entries(signed)
    change(entries)  # type: ignore[operator]
    return write_entries(entries, target)


def sig_entry(entries: list[Entry]) -> Entry:
    return next(e for e in entries if "/signatures/" in e.name)


def test_signed_by_trusted_key_is_reported_with_its_name(
    signed: Path, tmp_path: Path, alice: object
) -> None:
    result = verify(signed, VerifyOptions(policy=trusting(alice, require_signature=True)))
    assert result.exit_code == 0
    assert result.signature.state == "trusted"
    assert result.signature.signers == ("key0",)


def test_signing_keeps_the_bundle_identity(quickstart_bundle: Path, signed: Path) -> None:
    assert verify(signed).extracted.identity == verify(quickstart_bundle).extracted.identity


def test_signature_sits_right_after_the_manifest(signed: Path) -> None:
    names = [e.name for e in read_entries(signed)]
    assert names[0].endswith("/manifest.toml") and "/signatures/" in names[1]


def test_one_flipped_manifest_byte_breaks_the_signature(
    signed: Path, tmp_path: Path, canary: Path, alice: object
) -> None:
    def flip(entries: list[Entry]) -> None:
        entries[0].data = entries[0].data.replace(b'title = "A', b'title = "B', 1)

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", flip)
    workdir = tmp_path / "work"
    workdir.mkdir()
    error = rejected(bad, workdir, Policy())  # bad signatures reject even with no trust
    assert [p.code for p in error.problems] == ["signature.bad"]
    assert canary.read_text() == "untouched"


def test_reserialised_manifest_does_not_verify(signed: Path, tmp_path: Path, alice: object) -> None:
    """The same data written again differently: a verifier never re-serialises to check."""

    def reserialise(entries: list[Entry]) -> None:
        doc = tomllib.loads(entries[0].data.decode())
        entries[0].data = tomli_w.dumps(doc, indent=2).encode() + b"\n"
        assert tomllib.loads(entries[0].data.decode()) == doc

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", reserialise)
    (tmp_path / "work").mkdir()
    error = rejected(bad, tmp_path / "work", trusting(alice))
    assert [p.code for p in error.problems] == ["signature.bad"]


def test_signature_for_another_payload_type_is_rejected(
    signed: Path, tmp_path: Path, alice: object
) -> None:
    manifest = read_entries(signed)[0].data

    def retype(entries: list[Entry]) -> None:
        other = "application/vnd.in-toto+json"
        sig = Signature(
            other, public_of(alice).keyid, public_of(alice), alice.sign(pae(other, manifest))
        )  # type: ignore[attr-defined]
        sig_entry(entries).data = sig.to_bytes()

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", retype)
    (tmp_path / "work").mkdir()
    assert [p.code for p in rejected(bad, tmp_path / "work", trusting(alice)).problems] == [
        "signature.payload_type"
    ]


def test_signature_over_another_payload_type_relabelled_is_rejected(
    signed: Path, tmp_path: Path, alice: object
) -> None:
    manifest = read_entries(signed)[0].data

    def relabel(entries: list[Entry]) -> None:
        raw = alice.sign(pae("text/plain", manifest))  # type: ignore[attr-defined]
        sig = Signature(PAYLOAD_TYPE, public_of(alice).keyid, public_of(alice), raw)  # type: ignore[arg-type]
        sig_entry(entries).data = sig.to_bytes()

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", relabel)
    (tmp_path / "work").mkdir()
    assert [p.code for p in rejected(bad, tmp_path / "work", trusting(alice)).problems] == [
        "signature.bad"
    ]


def test_malleated_signature_is_rejected(signed: Path, tmp_path: Path, alice: object) -> None:
    """S + L verifies under a lax Ed25519 check; it must not here."""

    def malleate(entries: list[Entry]) -> None:
        entry = sig_entry(entries)
        doc = json.loads(entry.data)
        raw = base64.b64decode(doc["sig"])
        s = int.from_bytes(raw[32:], "little") + _L
        doc["sig"] = base64.b64encode(raw[:32] + s.to_bytes(32, "little")).decode()
        entry.data = json.dumps(doc).encode()

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", malleate)
    (tmp_path / "work").mkdir()
    assert [p.code for p in rejected(bad, tmp_path / "work", trusting(alice)).problems] == [
        "signature.bad"
    ]


def test_duplicated_signature_is_rejected(signed: Path, tmp_path: Path, alice: object) -> None:
    def duplicate(entries: list[Entry]) -> None:
        entry = sig_entry(entries)
        entries.insert(2, Entry(entry.name.replace(".json", "-again.json"), entry.data))

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", duplicate)
    (tmp_path / "work").mkdir()
    assert [p.code for p in rejected(bad, tmp_path / "work", trusting(alice)).problems] == [
        "signature.duplicate"
    ]


def test_signature_after_the_payload_is_rejected(signed: Path, tmp_path: Path) -> None:
    def move(entries: list[Entry]) -> None:
        entry = sig_entry(entries)
        entries.remove(entry)
        entries.append(entry)

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", move)
    (tmp_path / "work").mkdir()
    assert [p.code for p in rejected(bad, tmp_path / "work", Policy()).problems] == [
        "archive.layout"
    ]


def test_signature_is_judged_before_any_payload_is_written(signed: Path, tmp_path: Path) -> None:
    seen: list[list[Path]] = []

    def look(manifest_bytes: bytes, identity: str, found: dict[str, bytes]) -> None:
        seen.append(list(tmp_path.joinpath("work").rglob("*")))
        assert list(found) == [n for n in found if n.startswith("signatures/")]

    (tmp_path / "work").mkdir()
    extract(signed, tmp_path / "work", before_payload=look)
    assert seen == [[]]


def test_unknown_key_is_reported_and_refused_when_a_signature_is_required(
    signed: Path, tmp_path: Path
) -> None:
    bob = new_private_key()
    result = verify(signed, VerifyOptions(policy=trusting(bob, allow_unsigned=True)))
    assert result.signature.state == "unknown-key"
    assert result.exit_code == 0
    (tmp_path / "work").mkdir()
    error = rejected(signed, tmp_path / "work", trusting(bob, require_signature=True))
    assert [p.code for p in error.problems] == ["signature.required"]


def test_unsigned_bundle_is_refused_when_a_signature_is_required(
    quickstart_bundle: Path, tmp_path: Path, alice: object
) -> None:
    assert verify(quickstart_bundle).signature.state == "unsigned"
    (tmp_path / "work").mkdir()
    error = rejected(quickstart_bundle, tmp_path / "work", trusting(alice, require_signature=True))
    assert [p.code for p in error.problems] == ["signature.required"]


def store(tmp_path: Path, **entry: object) -> Path:
    path = tmp_path / "trust.toml"
    path.write_text(tomli_w.dumps({"key": [{"name": "alice", **entry}]}))
    return path


def test_revoked_key_rejects(signed: Path, tmp_path: Path, alice: object) -> None:
    public = f"ed25519:{public_of(alice).b64}"  # type: ignore[arg-type]
    keys = load_store(store(tmp_path, public_key=public, revoked=True))
    (tmp_path / "work").mkdir()
    error = rejected(signed, tmp_path / "work", Policy(keys))
    assert [p.code for p in error.problems] == ["signature.revoked"]


def test_expired_key_is_not_trusted(signed: Path, tmp_path: Path, alice: object) -> None:
    public = f"ed25519:{public_of(alice).b64}"  # type: ignore[arg-type]
    until = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    keys = load_store(store(tmp_path, public_key=public, valid_until=until))
    result = verify(signed, VerifyOptions(policy=Policy(keys, allow_unsigned=True)))
    assert result.signature.state == "unknown-key"
    assert "valid until 2020-01-01" in result.signature.notes[0]
    (tmp_path / "work").mkdir()
    error = rejected(signed, tmp_path / "work", Policy(keys, require_signature=True))
    assert [p.code for p in error.problems] == ["signature.required"]


@pytest.mark.parametrize(
    "raw",
    [bytes(32), b"\x01" + bytes(31), b"\xec" + b"\xff" * 30 + b"\x7f"],
    ids=["all-zero", "identity", "order-2"],
)
def test_weak_key_in_the_trust_store_is_refused(tmp_path: Path, raw: bytes) -> None:
    with pytest.raises(UsageError) as caught:
        load_store(store(tmp_path, public_key="ed25519:" + base64.b64encode(raw).decode()))
    assert caught.value.exit_code == 2
    assert [p.code for p in caught.value.problems] == ["key.weak"]


def test_forgery_with_a_small_order_key_is_rejected(signed: Path, tmp_path: Path) -> None:
    """The all-zero key with R = identity, S = 0 'verifies' under lax implementations."""

    def forge(entries: list[Entry]) -> None:
        zero = base64.b64encode(bytes(32)).decode()
        doc = {
            "format": "reprobundle-signature/1",
            "payload_type": PAYLOAD_TYPE,
            "keyid": "0" * 64,
            "public_key": zero,
            "sig": base64.b64encode(b"\x01" + bytes(63)).decode(),
        }
        sig_entry(entries).data = json.dumps(doc).encode()

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", forge)
    (tmp_path / "work").mkdir()
    assert [p.code for p in rejected(bad, tmp_path / "work", Policy()).problems] == ["key.weak"]


def test_misspelt_trust_store_field_is_named_with_a_did_you_mean(
    tmp_path: Path, alice: object
) -> None:
    """Defect 7 of issue 43: ``revokd = true`` was refused with "needs a name and a
    public_key" although both were there; the store is still refused (a revocation
    misspelt must not load as a trusted key), naming only what is wrong."""
    public = f"ed25519:{public_of(alice).b64}"  # type: ignore[arg-type]
    with pytest.raises(UsageError) as caught:
        load_store(store(tmp_path, public_key=public, revokd=True))
    [problem] = caught.value.problems
    assert problem.where.endswith("key[0].revokd")
    assert "unknown key 'revokd' (did you mean 'revoked'?)" in problem.message
    assert "needs" not in problem.message
    with pytest.raises(UsageError) as caught:
        load_store(store(tmp_path))
    assert [p.message for p in caught.value.problems] == ["needs a public_key"]


def test_trust_store_with_no_keys_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "trust.toml"
    path.write_text("")
    with pytest.raises(UsageError):
        load_store(path)


def test_manifest_pin_accepts_the_identity_and_rejects_another(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    identity = verify(quickstart_bundle).extracted.identity
    assert verify(
        quickstart_bundle, VerifyOptions(policy=Policy(expect_manifest_sha256=identity))
    ).signature.pinned
    (tmp_path / "work").mkdir()
    error = rejected(quickstart_bundle, tmp_path / "work", Policy(expect_manifest_sha256="0" * 64))
    assert [p.code for p in error.problems] == ["identity.mismatch"]


def test_detached_signature_verifies_and_a_wrong_one_rejects(
    quickstart_bundle: Path, tmp_path: Path, alice: object
) -> None:
    target, _ = sign_bundle(quickstart_bundle, alice, out=tmp_path / "b.sig.json", detached=True)  # type: ignore[arg-type]
    policy = trusting(alice, require_signature=True, detached={"b.sig.json": target.read_bytes()})
    assert verify(quickstart_bundle, VerifyOptions(policy=policy)).signature.state == "trusted"
    wrong = sign(b"another manifest", alice).to_bytes()  # type: ignore[arg-type]
    (tmp_path / "work").mkdir()
    error = rejected(quickstart_bundle, tmp_path / "work", trusting(alice, detached={"x": wrong}))
    assert [p.code for p in error.problems] == ["signature.bad"]


def test_key_shipped_inside_the_bundle_is_never_trusted(signed: Path) -> None:
    """The signature carries its public key, and still the bundle is not trusted."""
    result = verify(signed, VerifyOptions(policy=Policy()))
    assert result.signature.state == "unknown-key"


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_cli_keygen_sign_verify_with_a_passphrase(quickstart_bundle: Path, tmp_path: Path) -> None:
    env = {"REPROBUNDLE_PASSPHRASE": "correct horse"}
    code, out, _ = run("keygen", "carol", "--out-dir", str(tmp_path), env=env)
    assert code == 0 and "key id" in out
    assert b"ENCRYPTED PRIVATE KEY" in (tmp_path / "carol.key").read_bytes()
    assert oct((tmp_path / "carol.key").stat().st_mode & 0o777) == "0o600"
    bundle = tmp_path / "q.bundle.tar.gz"
    bundle.write_bytes(quickstart_bundle.read_bytes())
    code, _, err = run(
        "sign",
        str(bundle),
        "--key",
        str(tmp_path / "carol.key"),
        env={"REPROBUNDLE_PASSPHRASE": "wrong"},
    )
    assert code == 2 and "passphrase" in err
    assert run("sign", str(bundle), "--key", str(tmp_path / "carol.key"), env=env)[0] == 0
    code, out, err = run(
        "verify", str(bundle), "--trust", str(tmp_path / "carol.pub"), "--require-signature"
    )
    assert code == 0, err
    assert "Signature: signed by a trusted key (carol.pub)" in out
    code, _, err = run("keygen", "carol", "--out-dir", str(tmp_path), "--no-passphrase")
    assert code == 2 and "refusing to overwrite" in err


def test_cli_no_passphrase_warns(tmp_path: Path) -> None:
    code, _, err = run("keygen", "dave", "--out-dir", str(tmp_path), "--no-passphrase")
    assert code == 0 and "not encrypted" in err
    assert b"BEGIN PRIVATE KEY" in (tmp_path / "dave.key").read_bytes()
    assert PublicKey.from_text((tmp_path / "dave.pub").read_text())


def test_cli_require_signature_without_keys_is_a_usage_error(quickstart_bundle: Path) -> None:
    code, _, err = run("verify", str(quickstart_bundle), "--require-signature")
    assert code == 2 and "--trust" in err


def test_cli_bad_signature_exits_3_without_traceback(signed: Path, tmp_path: Path) -> None:
    def flip(entries: list[Entry]) -> None:
        entries[0].data = entries[0].data.replace(b'title = "A', b'title = "B', 1)

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", flip)
    code, out, err = run("verify", str(bad))
    assert code == 3 and "signature.bad" in err and "Traceback" not in out + err
    assert os.listdir(tmp_path) == ["bad.bundle.tar.gz"]


def test_private_key_pem_round_trip_needs_the_passphrase() -> None:
    from bundler.signatures.signing import SignatureProblem, load_private_key

    key = new_private_key()
    data = private_key_pem(key, b"pw")
    assert public_of(load_private_key(data, b"pw")) == public_of(key)
    with pytest.raises(SignatureProblem):
        load_private_key(data, None)


def test_weak_key_file_given_with_trust_is_refused(signed: Path, tmp_path: Path) -> None:
    """An all-zero Ed25519 key in PEM form: `--trust` refuses to load it (exit 2)."""
    der = bytes.fromhex("302a300506032b6570032100") + bytes(32)
    pem = (
        "-----BEGIN PUBLIC KEY-----\n"
        + base64.b64encode(der).decode()
        + "\n-----END PUBLIC KEY-----\n"
    )
    (tmp_path / "zero.pub").write_text(pem)
    code, _, err = run("verify", str(signed), "--trust", str(tmp_path / "zero.pub"))
    assert code == 2 and "key.weak" in err


def test_non_ed25519_key_is_refused(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    (tmp_path / "ec.pub").write_bytes(pem)
    with pytest.raises(UsageError) as caught:
        from bundler.signatures.truststore import load_key_file

        load_key_file(tmp_path / "ec.pub")
    assert [p.code for p in caught.value.problems] == ["key.algorithm"]


def test_inspect_checks_signatures_too(signed: Path, tmp_path: Path) -> None:
    code, out, _ = run("inspect", str(signed))
    assert code == 0 and "Signature signed by a key you do not trust" in out

    def flip(entries: list[Entry]) -> None:
        entries[0].data = entries[0].data.replace(b'title = "A', b'title = "B', 1)

    bad = rewrite(signed, tmp_path / "bad.bundle.tar.gz", flip)
    code, _, err = run("inspect", str(bad))
    assert code == 3 and "signature.bad" in err


def _modules_after_verify(bundle: Path) -> set[str]:
    """The modules a fresh interpreter has loaded after ``reprobundle verify -q BUNDLE``."""
    script = (
        "import sys\n"
        "from bundler.cli import main\n"
        "try:\n"
        "    main(['verify', sys.argv[1], '-q'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('modules:', *sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(bundle)], capture_output=True, text=True, check=True
    )
    return set(done.stdout.rpartition("modules:")[2].split())


def test_cryptography_is_loaded_only_for_a_signature(quickstart_bundle: Path, signed: Path) -> None:
    # Importing cryptography costs about 15 ms of every verify; an unsigned bundle skips it,
    # a signed one still gets its signature checked.
    assert "cryptography" not in _modules_after_verify(quickstart_bundle)
    assert "cryptography" in _modules_after_verify(signed)
