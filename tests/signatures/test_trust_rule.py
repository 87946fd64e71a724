"""One trust rule for every signature (issue 42 item 2): a trusted key counts unless it is
revoked, not yet valid or expired, and that is decided by ``trust.standing`` alone.

Each kind of signature (a bundle's own, a detached one, an attestation, a pre-registration,
the statements an archive keeps) is driven here with an expired, a future and a revoked key
of a trust store, and none of them counts anywhere."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from click.testing import CliRunner

from bundler.cli import main
from bundler.signatures.signing import PublicKey
from bundler.signatures.trust import TrustedKey, counting, signed_by, standing
from bundler.store import Archive
from tests.archive_support import cli
from tests.helpers import QUICKSTART, key_files

RUN = CliRunner()
PAST = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
FUTURE = dt.datetime(2999, 1, 1, tzinfo=dt.UTC)
# the three ways a trusted key does not count, and the words each is reported with
WAYS = {
    "expired": ({"valid_until": PAST}, "expired: it was valid until 2020-01-01"),
    "future": ({"valid_from": FUTURE}, "not yet valid: valid only from 2999-01-01"),
    "revoked": ({"revoked": True}, "is revoked"),
}
# a key limited to the other kinds of statement (may_sign), by the kind it signs here
LIMITED = {
    "bundle": ({"may_sign": ["attestation", "preregistration"]}, "may not sign a bundle"),
    "attestation": ({"may_sign": ["bundle"]}, "may not sign an attestation"),
    "preregistration": ({"may_sign": ["bundle"]}, "may not sign a pre-registration"),
}


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return key_files(tmp_path_factory.mktemp("rule-keys"), "author")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Path]) -> dict[str, Path]:
    """A trust store per way (expired, future, revoked) listing the author's key, and
    one where it counts (``ok``)."""
    folder = tmp_path_factory.mktemp("rule-stores")
    public = PublicKey.from_text(Path(f"{keys['author']}.pub").read_text())
    out = {}
    limited = {f"not-{kind}": way for kind, way in LIMITED.items()}
    for way, (entry, _) in {**WAYS, **limited, "ok": ({}, "")}.items():
        path = folder / f"{way}.toml"
        key = {"name": "author", "public_key": f"ed25519:{public.b64}", **entry}
        path.write_text(tomli_w.dumps({"key": [key]}))
        out[way] = path
    return out


@pytest.fixture(scope="module")
def signed(
    quickstart_bundle: Path, keys: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    target = tmp_path_factory.mktemp("rule-signed") / quickstart_bundle.name
    shutil.copy(quickstart_bundle, target)
    done = RUN.invoke(main, ["sign", str(target), "--key", f"{keys['author']}.key"])
    assert done.exit_code == 0, done.output
    return target


@pytest.fixture(scope="module")
def detached(
    quickstart_bundle: Path, keys: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    target = tmp_path_factory.mktemp("rule-detached") / quickstart_bundle.name
    shutil.copy(quickstart_bundle, target)
    args = ["sign", str(target), "--key", f"{keys['author']}.key", "--detached"]
    done = RUN.invoke(main, args)
    assert done.exit_code == 0, done.output
    assert Path(f"{target}.sig.json").is_file()
    return target


@pytest.fixture(scope="module")
def attestation(
    quickstart_bundle: Path, keys: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("rule-attested") / "q.intoto.json"
    args = ["verify", str(quickstart_bundle), "-q", "--attest", str(out)]
    done = RUN.invoke(main, [*args, "--attest-key", f"{keys['author']}.key"])
    assert done.exit_code == 0, done.output
    return out


@pytest.fixture(scope="module")
def preregistered(keys: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quickstart bundle holding a pre-registration the author signed."""
    folder = tmp_path_factory.mktemp("rule-prereg")
    shutil.copytree(QUICKSTART, folder / "src")
    prereg = folder / "q.prereg.json"
    args = ["preregister", str(folder / "src"), "-o", str(prereg), "-q"]
    done = RUN.invoke(main, [*args, "--sign", f"{keys['author']}.key"])
    assert done.exit_code == 0, done.output
    bundle = folder / "q.bundle.tar.gz"
    args = ["build", str(folder / "src"), "-o", str(bundle), "-q", "--preregistration"]
    done = RUN.invoke(main, [*args, str(prereg)])
    assert done.exit_code == 0, done.output
    return bundle


def test_the_rule_is_one_pure_function_of_the_key_and_the_time() -> None:
    from bundler.signatures.signing import new_private_key, public_of

    key = public_of(new_private_key())
    at = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    plain = TrustedKey("k", key)
    assert standing(plain, at).counts
    assert standing(TrustedKey("k", key, valid_until=at), at).counts  # the last instant counts
    assert standing(TrustedKey("k", key, valid_from=at), at).counts
    later = at + dt.timedelta(seconds=1)
    assert not standing(TrustedKey("k", key, valid_until=at), later).counts
    assert not standing(TrustedKey("k", key, valid_from=later), at).counts
    revoked = TrustedKey("k", key, revoked=True, source="t.toml")
    assert standing(revoked, at).why == "key 'k' is revoked in t.toml"
    assert counting([plain, revoked], at) == (plain,)
    judged = signed_by([plain, revoked], at)
    assert judged.names == ("k",) and judged.notes == ("key 'k' is revoked in t.toml",)
    limited = TrustedKey("k", key, may_sign=frozenset({"bundle"}))
    assert standing(limited, at, "bundle").counts and standing(limited, at).counts
    assert not standing(limited, at, "attestation").counts


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_bundle_signature_by_a_key_that_does_not_count_is_not_trusted(
    signed: Path, stores: dict[str, Path], way: str
) -> None:
    done = RUN.invoke(main, ["verify", str(signed), "-q", "--trust-store", str(stores[way])])
    assert done.exit_code == 3, done.output
    words = WAYS[way][1]
    assert words in done.output
    assert "a key you do not trust" not in done.output  # it is trusted, and does not count
    ok = RUN.invoke(main, ["verify", str(signed), "-q", "--trust-store", str(stores["ok"])])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_detached_signature_by_a_key_that_does_not_count_is_not_trusted(
    detached: Path, stores: dict[str, Path], way: str
) -> None:
    done = RUN.invoke(main, ["verify", str(detached), "-q", "--trust-store", str(stores[way])])
    assert done.exit_code == 3, done.output
    assert WAYS[way][1] in done.output
    ok = RUN.invoke(main, ["verify", str(detached), "-q", "--trust-store", str(stores["ok"])])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("way", sorted(WAYS))
def test_attestation_verify_rejects_an_attestation_by_a_key_that_does_not_count(
    attestation: Path, stores: dict[str, Path], way: str
) -> None:
    args = ["attestation", "verify", str(attestation), "--trust-store"]
    done = RUN.invoke(main, [*args, str(stores[way])])
    assert done.exit_code == 3, done.output
    assert "attestation.untrusted" in done.output and WAYS[way][1] in done.output
    assert RUN.invoke(main, [*args, str(stores["ok"])]).exit_code == 0


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_preregistration_by_a_key_that_does_not_count_is_not_signed_by_a_trusted_key(
    preregistered: Path, stores: dict[str, Path], way: str
) -> None:
    args = ["verify", str(preregistered), "--json", "-", "-q", "--allow-unsigned"]
    done = RUN.invoke(main, [*args, "--trust-store", str(stores[way])])
    assert done.exit_code == 0, done.output
    pre = json.loads(done.stdout)["preregistration"]
    assert pre["trusted"] is False
    assert "signed by a trusted key (" not in pre["trust"]
    assert WAYS[way][1] in pre["trust"]
    assert "as pre-registered" not in {c["status"] for c in pre["claims"].values()}
    done = RUN.invoke(main, [*args, "--trust-store", str(stores["ok"])])
    assert json.loads(done.stdout)["preregistration"]["trusted"] is True


def _archive(tmp: Path, bundle: Path) -> Path:
    root = tmp / "archive"
    Archive.init(root).close()
    code, _, err = cli(root, "add", str(bundle))
    assert code == 0, err
    return root


def _records(root: Path, event: str) -> list[dict[str, Any]]:
    with Archive.open(root) as archive:
        found = [json.loads(r) for r in archive.log_records()]
    return [r for r in found if r["event"] == event]


@pytest.mark.parametrize("way", sorted(WAYS))
def test_archive_add_does_not_keep_an_attestation_by_a_key_that_does_not_count(
    tmp_path: Path,
    quickstart_bundle: Path,
    attestation: Path,
    stores: dict[str, Path],
    way: str,
) -> None:
    root = _archive(tmp_path, quickstart_bundle)
    args = ["add", str(quickstart_bundle), "--attestation", str(attestation)]
    code, out, err = cli(root, *args, "--trust-store", str(stores[way]))
    assert code == 3, out + err
    assert WAYS[way][1] in out + err
    assert _records(root, "attest") == []
    code, out, err = cli(root, *args, "--trust-store", str(stores["ok"]))
    assert code == 0, out + err
    assert len(_records(root, "attest")) == 1


@pytest.mark.parametrize("way", sorted(WAYS))
def test_archive_preregister_names_no_signer_whose_key_does_not_count(
    tmp_path: Path,
    keys: dict[str, Path],
    stores: dict[str, Path],
    way: str,
) -> None:
    shutil.copytree(QUICKSTART, tmp_path / "src")
    prereg = tmp_path / "q.prereg.json"
    args = ["preregister", str(tmp_path / "src"), "-o", str(prereg), "-q"]
    assert RUN.invoke(main, [*args, "--sign", f"{keys['author']}.key"]).exit_code == 0
    root = tmp_path / "archive"
    Archive.init(root).close()
    code, _, err = cli(root, "preregister", str(prereg), "--trust-store", str(stores[way]))
    assert code == 0, err
    assert _records(root, "preregister")[-1]["data"]["signers"] == []
    code, _, err = cli(root, "preregister", str(prereg), "--trust-store", str(stores["ok"]))
    assert code == 0, err
    assert _records(root, "preregister")[-1]["data"]["signers"]


def test_a_tampered_attestation_signature_is_a_bad_signature(
    attestation: Path, stores: dict[str, Path], tmp_path: Path
) -> None:
    import base64

    doc = json.loads(attestation.read_text())
    raw = bytearray(base64.b64decode(doc["signatures"][0]["sig"]))
    raw[0] ^= 1
    doc["signatures"][0]["sig"] = base64.b64encode(bytes(raw)).decode()
    tampered = tmp_path / "t.intoto.json"
    tampered.write_text(json.dumps(doc))
    args = ["attestation", "verify", str(tampered), "--trust-store", str(stores["ok"])]
    done = RUN.invoke(main, args)
    assert done.exit_code == 3, done.output
    assert "attestation.bad_signature" in done.output and "altered" in done.output


def test_a_key_counts_only_for_what_its_may_sign_names(
    signed: Path,
    detached: Path,
    attestation: Path,
    preregistered: Path,
    stores: dict[str, Path],
) -> None:
    for bundle in (signed, detached):
        store = str(stores["not-bundle"])
        done = RUN.invoke(main, ["verify", str(bundle), "-q", "--trust-store", store])
        assert done.exit_code == 3 and LIMITED["bundle"][1] in done.output
        other = str(stores["not-attestation"])  # may sign bundles
        assert (
            RUN.invoke(main, ["verify", str(bundle), "-q", "--trust-store", other]).exit_code == 0
        )
    args = ["attestation", "verify", str(attestation), "--trust-store"]
    done = RUN.invoke(main, [*args, str(stores["not-attestation"])])
    assert done.exit_code == 3 and LIMITED["attestation"][1] in done.output
    assert RUN.invoke(main, [*args, str(stores["not-bundle"])]).exit_code == 0
    args = ["verify", str(preregistered), "--json", "-", "-q", "--allow-unsigned", "--trust-store"]
    pre = json.loads(RUN.invoke(main, [*args, str(stores["not-preregistration"])]).stdout)
    assert pre["preregistration"]["trusted"] is False
    assert LIMITED["preregistration"][1] in pre["preregistration"]["trust"]
    pre = json.loads(RUN.invoke(main, [*args, str(stores["not-bundle"])]).stdout)
    assert pre["preregistration"]["trusted"] is True


def test_may_sign_names_only_known_kinds(tmp_path: Path, stores: dict[str, Path]) -> None:
    text = stores["ok"].read_text() + 'may_sign = ["bundles"]\n'
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    done = RUN.invoke(main, ["verify", "x.bundle.tar.zst", "--trust-store", str(bad)])
    assert done.exit_code == 2 and "may_sign" in done.output


def test_an_archive_keeps_may_sign_in_its_trust_store_and_log(
    tmp_path: Path, quickstart_bundle: Path, attestation: Path, stores: dict[str, Path]
) -> None:
    root = tmp_path / "archive"
    done = RUN.invoke(
        main,
        [
            "archive",
            "--archive",
            str(root),
            "init",
            "--trust-store",
            str(stores["not-attestation"]),
        ],
    )
    assert done.exit_code == 0, done.output
    assert "may_sign" in (root / "trust.toml").read_text()
    code, out, err = cli(root, "add", str(quickstart_bundle), "--attestation", str(attestation))
    assert code == 3 and LIMITED["attestation"][1] in out + err
    assert _records(root, "attest") == []
    code, out, err = cli(root, "log", "verify")
    assert code == 0, out + err
