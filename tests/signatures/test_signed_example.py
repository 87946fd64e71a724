"""The signed example: the quickstart bundle signed with the committed DEMO key verifies
with --require-signature against the demo's published public key, and not without it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

DEMO = REPO / "bundles" / "demo-key"
KEY = DEMO / "DEMO-ONLY-not-secret.key"
PUB = DEMO / "DEMO-ONLY-not-secret.pub"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bundler", *args], cwd=cwd, capture_output=True, text=True
    )


def test_demo_signed_quickstart_verifies_with_require_signature(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    signed = tmp_path / "quickstart-signed.bundle.tar.gz"
    done = cli("sign", str(quickstart_bundle), "--key", str(KEY), "-o", str(signed), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = cli("verify", str(signed), "--require-signature", "--trust", str(PUB), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Signature: signed by a trusted key (DEMO-ONLY-not-secret.pub)" in done.stdout
    store = DEMO / "demo-trust.toml"
    done = cli(
        "verify", str(signed), "--require-signature", "--trust-store", str(store), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr


def test_demo_signed_quickstart_is_refused_against_another_key(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    signed = tmp_path / "quickstart-signed.bundle.tar.gz"
    cli("sign", str(quickstart_bundle), "--key", str(KEY), "-o", str(signed), cwd=tmp_path)
    assert cli("keygen", "other", "--no-passphrase", cwd=tmp_path).returncode == 0
    done = cli("verify", str(signed), "--require-signature", "--trust", "other.pub", cwd=tmp_path)
    assert done.returncode == 3
    assert "signature.required" in done.stderr


def test_demo_key_is_labelled_and_its_published_key_matches() -> None:
    readme = (DEMO / "README.md").read_text()
    assert "NOT SECRET" in readme
    from bundler.signatures.signing import PublicKey

    public = PublicKey.from_text(PUB.read_text())
    assert public.b64 in readme and public.keyid in readme
    assert public.b64 in (DEMO / "demo-trust.toml").read_text()
