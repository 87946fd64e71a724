"""Statements an archive keeps beside its bundles: pre-registrations (`archive preregister`)
and attestations of verifications (`archive add --attestation`), stored by digest and
logged, so the log's checkpoints show they existed no later than their entry."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from bundler.store import Archive
from bundler.store.context import Context
from tests.archive_support import cli, rebadge
from tests.helpers import QUICKSTART, key_files

RUN = CliRunner()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return key_files(tmp_path_factory.mktemp("statement-keys"), "reviewer", "stranger")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "archive"
    Archive.init(path).close()
    return path


@pytest.fixture(scope="module")
def prereg(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Path]) -> Path:
    folder = tmp_path_factory.mktemp("prereg")
    shutil.copytree(QUICKSTART, folder / "src")
    out = folder / "q.prereg.json"
    args = ["preregister", str(folder / "src"), "-o", str(out), "-q"]
    done = RUN.invoke(main, [*args, "--sign", f"{keys['reviewer']}.key"])
    assert done.exit_code == 0, done.output
    return out


@pytest.fixture(scope="module")
def attestation(
    tmp_path_factory: pytest.TempPathFactory, quickstart_bundle: Path, keys: dict[str, Path]
) -> Path:
    out = tmp_path_factory.mktemp("attested") / "q.intoto.json"
    args = ["verify", str(quickstart_bundle), "-q", "--attest", str(out)]
    done = RUN.invoke(main, [*args, "--attest-key", f"{keys['reviewer']}.key"])
    assert done.exit_code == 0, done.output
    return out


def _log(root: Path) -> list[dict[str, object]]:
    with Archive.open(root) as archive:
        return [json.loads(r) for r in archive.log_records()]


def test_a_preregistration_is_stored_logged_and_covered_by_the_next_checkpoint(
    root: Path, prereg: Path, keys: dict[str, Path]
) -> None:
    code, out, err = cli(root, "preregister", str(prereg), "--trust", f"{keys['reviewer']}.pub")
    assert code == 0, err
    assert "recorded pre-registration of quickstart@1.0.0" in out
    record = _log(root)[-1]
    assert record["event"] == "preregister"
    data = record["data"]
    assert isinstance(data, dict) and data["name"] == "quickstart" and data["signers"]
    code, out, err = cli(root, "checkpoint")
    assert code == 0, err
    code, out, err = cli(root, "log", "verify")
    assert code == 0, out + err
    with Archive.open(root) as archive:
        assert archive.store.check(str(data["sha256"])) is None
        assert archive.statements(name="quickstart")[0].seq == record["seq"]


def test_a_kept_preregistration_whose_stored_copy_rots_fails_log_verify(
    root: Path, prereg: Path
) -> None:
    assert cli(root, "preregister", str(prereg))[0] == 0
    data = _log(root)[-1]["data"]
    assert isinstance(data, dict)
    with Archive.open(root) as archive:
        path = archive.store.path(str(data["sha256"]))
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes().replace(b"quickstart", b"quickstarT", 1) + b" ")
    code, out, err = cli(root, "log", "verify")
    assert code == 3
    assert "store.object" in out + err


@pytest.mark.parametrize("bad", [b"garbage", b"[" * 50_000, b'{"payload": 1}'])
def test_a_hostile_preregistration_is_refused_and_not_logged(
    root: Path, tmp_path: Path, bad: bytes
) -> None:
    file = tmp_path / "bad.json"
    file.write_bytes(bad)
    before = len(_log(root))
    code, _, err = cli(root, "preregister", str(file))
    assert code == 3
    assert "[preregistration." in err
    assert len(_log(root)) == before


def test_an_attestation_by_a_trusted_key_is_kept_beside_its_bundle(
    root: Path, quickstart_bundle: Path, attestation: Path, keys: dict[str, Path]
) -> None:
    code, out, err = cli(
        root,
        "add",
        str(quickstart_bundle),
        "--attestation",
        str(attestation),
        "--trust",
        f"{keys['reviewer']}.pub",
    )
    assert code == 0, err
    assert "attested quickstart@1.0.0  PASSED" in out
    code, out, err = cli(root, "show", "quickstart@1.0.0", "--json", "-")
    assert code == 0, err
    kept = json.loads(out)["statements"]
    assert [(k["event"], k["result"]) for k in kept] == [("attest", "PASSED")]


def test_an_attestation_no_trusted_key_signed_is_refused_but_the_bundle_is_added(
    root: Path, quickstart_bundle: Path, attestation: Path, keys: dict[str, Path]
) -> None:
    code, out, err = cli(
        root,
        "add",
        str(quickstart_bundle),
        "--attestation",
        str(attestation),
        "--trust",
        f"{keys['stranger']}.pub",
    )
    assert code == 3
    assert "added    quickstart@1.0.0" in out
    assert "attestation.untrusted" in err
    assert [r["event"] for r in _log(root)].count("attest") == 0


def test_an_attestation_about_a_bundle_the_archive_does_not_hold_is_refused(
    root: Path, attestation: Path, keys: dict[str, Path], example_bundle: object
) -> None:
    other = example_bundle("config-edits")  # type: ignore[operator]
    code, _, err = cli(
        root,
        "add",
        str(other),
        "--attestation",
        str(attestation),
        "--trust",
        f"{keys['reviewer']}.pub",
    )
    assert code == 3
    assert "attestation.subject" in err


# -- RFC 3161 time-stamps, from a local authority made with openssl ts ---------------------

TS_CONFIG = """[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
dir = .
serial = $dir/serial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.5
certs = $dir/none.pem
digests = sha256
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _openssl(folder: Path, *args: str) -> None:
    import subprocess

    done = subprocess.run(["openssl", *args], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _authority(folder: Path, name: str) -> Path:
    """A root CA and a time-stamping certificate it issued, in ``folder/name``."""
    home = folder / name
    home.mkdir()
    (home / "ts.cnf").write_text(TS_CONFIG)
    (home / "serial").write_text("01\n")
    (home / "none.pem").write_text("")
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl(
        home, "req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
        "-subj", f"/CN={name} root", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    _openssl(home, "req", *curve, "-keyout", "tsa.key", "-out", "tsa.csr", "-subj", f"/CN={name}")
    (home / "tsa.ext").write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=critical,timeStamping\n"
    )
    _openssl(
        home, "x509", "-req", "-in", "tsa.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "tsa.crt", "-days", "30", "-extfile", "tsa.ext",
    )  # fmt: skip
    return home


def _stamp(authority: Path, data: Path, out: Path) -> Path:
    _openssl(authority, "ts", "-query", "-data", str(data), "-sha256", "-cert", "-out", "q.tsq")
    _openssl(
        authority, "ts", "-reply", "-config", "ts.cnf", "-queryfile", "q.tsq",
        "-signer", "tsa.crt", "-inkey", "tsa.key", "-out", str(out),
    )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def authorities(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tsa")
    return {name: _authority(folder, name) for name in ("Test TSA", "Other TSA")}


def test_a_checked_time_stamp_is_kept_with_the_preregistration(
    root: Path, prereg: Path, authorities: dict[str, Path], tmp_path: Path
) -> None:
    tsa = authorities["Test TSA"]
    token = _stamp(tsa, prereg, tmp_path / "p.tsr")
    code, out, err = cli(
        root, "preregister", str(prereg), "--timestamp", str(token),
        "--tsa-cert", str(tsa / "ca.crt"),
    )  # fmt: skip
    assert code == 0, err
    assert "time-stamped" in out and "CN=Test TSA" in out
    stamp = _log(root)[-1]["data"]["timestamp"]  # type: ignore[index]
    assert stamp["authority"] == "CN=Test TSA" and stamp["time"][:4].isdigit()
    with Archive.open(root) as archive:
        assert archive.store.path(stamp["sha256"]).read_bytes() == token.read_bytes()


@pytest.mark.parametrize("wrong", ["other file", "other root", "not a token"])
def test_a_time_stamp_that_does_not_hold_refuses_the_record(
    root: Path, prereg: Path, authorities: dict[str, Path], tmp_path: Path, wrong: str
) -> None:
    tsa = authorities["Test TSA"]
    other = tmp_path / "other.json"
    other.write_text("something else")
    token = _stamp(tsa, other if wrong == "other file" else prereg, tmp_path / "p.tsr")
    if wrong == "not a token":
        token.write_bytes(b"\x30\x03\x02\x01\x00")
    root_cert = authorities["Other TSA" if wrong == "other root" else "Test TSA"] / "ca.crt"
    before = len(_log(root))
    code, _, err = cli(
        root, "preregister", str(prereg), "--timestamp", str(token), "--tsa-cert", str(root_cert)
    )
    assert code == 3, err
    assert "[timestamp." in err
    assert len(_log(root)) == before


def test_every_audit_record_is_appended_through_the_one_append(
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    quickstart_bundle: Path,
    prereg: Path,
    attestation: Path,
    keys: dict[str, Path],
) -> None:
    """Every event the archive logs (these statements, the rebuild's own record, a refusal,
    ...) is appended by ``Context.append``: what it appended is the whole log."""
    appended: list[str] = []
    append = Context.append

    def counted(self: Context, event: str, data: dict[str, Any], at: str | None = None) -> int:
        appended.append(event)
        return append(self, event, data, at)

    monkeypatch.setattr(Context, "append", counted)
    trust = ["--trust", f"{keys['reviewer']}.pub"]
    other = rebadge(quickstart_bundle, tmp_path / "other.tar.gz", edit=_retitled)
    for expected, *args in [
        (0, "add", str(quickstart_bundle), "--attestation", str(attestation), *trust),
        (0, "add", str(quickstart_bundle)),
        (3, "add", str(other)),
        (0, "verify", "--all"),
        (0, "export", "quickstart@1.0.0", "-o", str(tmp_path / "out.tar.gz")),
        (0, "preregister", str(prereg), *trust),
        (0, "trust", "add", f"{keys['stranger']}.pub", "--name", "stranger"),
        (0, "checkpoint"),
        (0, "rebuild"),
    ]:
        code, _, err = cli(root, *args)
        assert code == expected, (args, err)
    logged = [str(record["event"]) for record in _log(root)]
    assert logged[0] == "init"  # before the patch
    assert appended == logged[1:]
    assert set(appended) == {
        "add",
        "attest",
        "add.duplicate",
        "refuse",
        "verify",
        "export",
        "preregister",
        "trust",
        "checkpoint",
        "rebuild",
    }


def _retitled(manifest: dict[str, Any]) -> None:
    manifest["bundle"]["title"] = "other bytes under the same name and version"


def test_archive_show_of_a_bundle_only_its_preregistration_records(
    root: Path, prereg: Path
) -> None:
    assert cli(root, "preregister", str(prereg))[0] == 0
    for selector in ("quickstart@1.0.0", "quickstart"):
        code, out, err = cli(root, "show", selector)
        assert code == 0, err
        assert "not in the archive" in out and "pre-registration of quickstart@1.0.0" in out
    code, out, _ = cli(root, "show", "quickstart@1.0.0", "--json", "-")
    assert code == 0 and json.loads(out)["bundle"] is None
    code, _, err = cli(root, "show", "quickstart@9.9.9")
    assert code != 0 and "no bundle quickstart@9.9.9" in err
