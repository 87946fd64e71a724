"""The archive judges bundle signatures as `verify` does, records the signer, and filters by it.

Uses the committed demo key (bundles/demo-key/): public on purpose, trusted here only
inside test archives.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from bundler.signatures.signfile import sign_bundle
from bundler.signatures.signing import load_private_key, new_private_key, public_of
from bundler.store import Archive
from tests.archive_support import cli, db, rebadge
from tests.helpers import read_entries, write_entries

DEMO = Path(__file__).resolve().parents[2] / "bundles" / "demo-key"
DEMO_KEY = DEMO / "DEMO-ONLY-not-secret.key"
DEMO_PUB = DEMO / "DEMO-ONLY-not-secret.pub"
DEMO_STORE = DEMO / "demo-trust.toml"
DEMO_NAME = "DEMO-ONLY-not-secret"
DEMO_KEYID = "59fd200ad838dd919afb7402e0c0653b5f08330e04f3810fe0a6cfd70c17b436"


def events(root: Path) -> list[dict[str, object]]:
    with Archive.open(root) as archive:
        return [json.loads(r) for r in archive.log_records()]


def signer(root: Path, selector: str) -> str:
    code, out, _ = cli(root, "show", selector, "--json", "-")
    assert code == 0
    return str(json.loads(out)["bundle"]["signer"])


def names(root: Path, *filters: str) -> list[str]:
    code, out, _ = cli(root, "list", "--json", "-", *filters)
    assert code == 0
    return [f"{b['name']}@{b['version']}" for b in json.loads(out)["bundles"]]


def demo_signed(bundle: Path, target: Path) -> Path:
    sign_bundle(bundle, load_private_key(DEMO_KEY.read_bytes(), None), out=target)
    return target


@pytest.fixture
def signed(quickstart_bundle: Path, tmp_path: Path) -> Path:
    return demo_signed(quickstart_bundle, tmp_path / "signed.bundle.tar.gz")


@pytest.fixture
def trusting(tmp_path: Path) -> Path:
    """An archive that trusts the demo key (its trust store given at init)."""
    root = tmp_path / "trusting"
    code, out, _ = cli(root, "init", "--trust-store", str(DEMO_STORE))
    assert code == 0 and f"trusted keys: {DEMO_NAME}" in out
    return root


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """An archive that trusts no key."""
    root = tmp_path / "plain"
    Archive.init(root).close()
    return root


def test_signed_bundle_shows_its_trusted_signer(trusting: Path, signed: Path) -> None:
    code, out, _ = cli(trusting, "add", str(signed))
    assert code == 0
    assert f"signed by trusted key {DEMO_NAME}" in out
    assert signer(trusting, "quickstart@1.0.0") == f"signed by trusted key {DEMO_NAME}"
    code, text, _ = cli(trusting, "show", "quickstart@1.0.0")
    assert f"Signer    signed by trusted key {DEMO_NAME}" in text
    added = events(trusting)[-1]
    assert added["event"] == "add"
    assert added["data"]["signer"] == f"signed by trusted key {DEMO_NAME}"  # type: ignore[index]
    assert added["data"]["trust"] == [DEMO_KEYID[:16]]  # type: ignore[index]


def test_signed_bundle_without_trust_shows_the_unknown_key(plain: Path, signed: Path) -> None:
    assert cli(plain, "add", str(signed))[0] == 0
    assert signer(plain, "quickstart@1.0.0") == f"signed by unknown key {DEMO_KEYID}"


def test_unsigned_bundle_is_recorded_as_unsigned(trusting: Path, quickstart_bundle: Path) -> None:
    assert cli(trusting, "add", str(quickstart_bundle))[0] == 0
    assert signer(trusting, "quickstart@1.0.0") == "unsigned"


def test_key_given_to_one_add_is_trusted_for_that_add(plain: Path, signed: Path) -> None:
    assert cli(plain, "add", str(signed), "--trust", str(DEMO_PUB))[0] == 0
    assert signer(plain, "quickstart@1.0.0") == f"signed by trusted key {DEMO_PUB.name}"


def test_bundle_with_a_flipped_signature_byte_is_refused_and_the_refusal_logged(
    trusting: Path, signed: Path, tmp_path: Path
) -> None:
    entries = read_entries(signed)
    entry = next(e for e in entries if "/signatures/" in e.name)
    doc = json.loads(entry.data)
    raw = bytearray(base64.b64decode(doc["sig"]))
    raw[0] ^= 0x01
    doc["sig"] = base64.b64encode(bytes(raw)).decode()
    entry.data = json.dumps(doc, indent=2).encode() + b"\n"
    bad = write_entries(entries, tmp_path / "flipped.bundle.tar.gz")

    code, _, err = cli(trusting, "add", str(bad))
    assert code == 3
    assert "signature.bad" in err and "refusals are in the audit log" in err
    assert names(trusting) == []
    assert [p for p in (trusting / "objects").rglob("*") if p.is_file()] == []
    refusal = events(trusting)[-1]
    assert refusal["event"] == "refuse"
    assert refusal["data"]["action"] == "add"  # type: ignore[index]
    assert refusal["data"]["codes"] == ["signature.bad"]  # type: ignore[index]
    assert refusal["data"]["file"] == str(bad)  # type: ignore[index]


def test_bundle_signed_by_a_key_the_archive_revoked_is_refused_even_if_trusted_per_command(
    tmp_path: Path, signed: Path
) -> None:
    store = tmp_path / "revoked.toml"
    store.write_text(DEMO_STORE.read_text().replace("allow_code = false", "revoked = true"))
    root = tmp_path / "archive"
    assert cli(root, "init", "--trust-store", str(store))[0] == 0
    code, _, err = cli(root, "add", str(signed), "--trust", str(DEMO_PUB))
    assert code == 3 and "signature.revoked" in err
    assert events(root)[-1]["data"]["codes"] == ["signature.revoked"]  # type: ignore[index]


def test_list_filters_by_signer(quickstart_bundle: Path, tmp_path: Path, trusting: Path) -> None:
    other = demo_signed(
        rebadge(quickstart_bundle, tmp_path / "o.tar.gz", name="other"), tmp_path / "o-s.tar.gz"
    )
    stranger = new_private_key()
    later = tmp_path / "later-s.tar.gz"
    sign_bundle(
        rebadge(quickstart_bundle, tmp_path / "l.tar.gz", name="other", version="1.1.0"),
        stranger,
        out=later,
    )
    stranger_id = public_of(stranger).keyid
    files = [str(quickstart_bundle), str(other), str(later)]
    assert cli(trusting, "add", *files)[0] == 0

    assert names(trusting, "--signer", "unsigned") == ["quickstart@1.0.0"]
    assert names(trusting, "--signer", DEMO_NAME) == ["other@1.0.0"]
    assert names(trusting, "--signer", DEMO_KEYID) == ["other@1.0.0"]  # trusted: by key id too
    assert names(trusting, "--signer", stranger_id[:12]) == ["other@1.1.0"]
    assert names(trusting, "--signer", stranger_id.upper()) == ["other@1.1.0"]
    assert names(trusting, "--signer", "nobody") == []
    assert names(trusting, "--signer", "unknown") == []
    code, table, _ = cli(trusting, "list", "--signer", DEMO_NAME)
    assert code == 0 and f"signed by trusted key {DEMO_NAME}" in table
    assert "1 bundle(s)" in table


def test_reverification_records_the_signer_and_follows_new_trust(plain: Path, signed: Path) -> None:
    assert cli(plain, "add", str(signed))[0] == 0
    code, out, _ = cli(plain, "verify", "quickstart")
    assert code == 0 and f"signed by unknown key {DEMO_KEYID}" in out
    code, out, _ = cli(plain, "verify", "quickstart", "--trust-store", str(DEMO_STORE))
    assert code == 0 and f"signed by trusted key {DEMO_NAME}" in out
    assert signer(plain, "quickstart@1.0.0") == f"signed by trusted key {DEMO_NAME}"
    assert names(plain, "--signer", DEMO_NAME) == ["quickstart@1.0.0"]

    code, out, _ = cli(plain, "show", "quickstart@1.0.0", "--json", "-")
    history = json.loads(out)["history"]
    assert [h["detail"]["signature"]["text"] for h in history] == [
        f"signed by unknown key {DEMO_KEYID}",
        f"signed by trusted key {DEMO_NAME}",
    ]
    assert history[1]["detail"]["trust"] == [DEMO_KEYID[:16]]
    verified = events(plain)[-1]
    assert verified["event"] == "verify"
    assert verified["data"]["signer"] == f"signed by trusted key {DEMO_NAME}"  # type: ignore[index]
    code, out, _ = cli(plain, "log", "verify")
    assert code == 0, out


def test_log_verify_detects_a_signer_edited_in_the_index(plain: Path, signed: Path) -> None:
    assert cli(plain, "add", str(signed))[0] == 0
    with db(plain) as conn:
        conn.execute("UPDATE bundles SET signer = 'signed by trusted key alice'")
    code, _, err = cli(plain, "log", "verify")
    assert code == 3
    assert "index.altered" in err and "signed by trusted key alice" in err


def test_damaged_archive_trust_store_fails_closed(plain: Path, signed: Path) -> None:
    (plain / "trust.toml").write_text("[[key]]\nname = 'x'\n")
    code, _, err = cli(plain, "add", str(signed))
    assert code == 2 and "trust store" in err
    assert names(plain) == []


def test_init_refuses_two_trusted_keys_with_one_name(tmp_path: Path) -> None:
    other = tmp_path / "other" / DEMO_PUB.name
    other.parent.mkdir()
    other.write_text(f"ed25519:{public_of(new_private_key()).b64}\n")
    code, _, err = cli(tmp_path / "a", "init", "--trust", str(DEMO_PUB), "--trust", str(other))
    assert code == 2 and "name a key twice" in err


def test_reverification_after_the_archive_revoked_the_key_is_rejected(
    trusting: Path, signed: Path
) -> None:
    assert cli(trusting, "add", str(signed))[0] == 0
    assert cli(trusting, "trust", "revoke", DEMO_NAME)[0] == 0
    code, out, _ = cli(trusting, "verify", "quickstart")
    assert code == 3 and "rejected" in out
    shown = json.loads(cli(trusting, "show", "quickstart@1.0.0", "--json", "-")[1])
    assert shown["bundle"]["last_result"] == "rejected"
    assert shown["bundle"]["signer"] == f"signed by trusted key {DEMO_NAME}"  # as it was
    problems = shown["history"][-1]["detail"]["problems"]
    assert [p["code"] for p in problems] == ["signature.revoked"]
