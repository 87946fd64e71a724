"""Issue 45: a bundle whose secret evidence is withheld, verified for what it can show.

One source with a public claim and a secret claim, signed, then redacted of the secret
files: the redacted bundle keeps the identity and the signature, supports the public claim,
leaves the secret one inconclusive naming the withheld files, and with the withheld files
disclosed gives exactly the full bundle's verdicts. Each hostile form rejects (exit 3).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.authoring.build import build
from bundler.authoring.redact import redact
from bundler.cli import main
from bundler.errors import BundleRejected, UsageError
from bundler.format.withheld import RECORD_NAME
from bundler.run.verify import VerifyOptions, verify
from bundler.signatures.signfile import sign_bundle
from bundler.signatures.signing import new_private_key, public_of
from bundler.signatures.trust import Policy, TrustedKey
from tests.helpers import Entry, read_entries, write_entries

SOURCE = """\
name: two-claims
version: 1.0.0
title: One public claim, one secret claim
description: The secret claim's evidence is a held-out set that must stay private.
files:
  - inputs/**
cases:
  - id: public-pass
    checker: structured-equal@1
    inputs: {actual: inputs/public/candidate.json, expected: inputs/public/expected.yaml}
    expect: pass
  - id: public-control
    checker: structured-equal@1
    inputs: {actual: inputs/public/dropped.yaml, expected: inputs/public/expected.yaml}
    expect: fail
    expect_reasons: [content.removed]
  - id: secret-pass
    checker: structured-equal@1
    inputs: {actual: inputs/secret/candidate.json, expected: inputs/secret/expected.yaml}
    expect: pass
  - id: secret-control
    checker: structured-equal@1
    inputs: {actual: inputs/secret/dropped.yaml, expected: inputs/secret/expected.yaml}
    expect: fail
    expect_reasons: [content.removed]
claims:
  - id: public-claim
    statement: The public candidate equals the expected config.
    cases: [public-pass, public-control]
    limits: [One config.]
  - id: secret-claim
    statement: The held-out candidate equals the held-out expected config.
    cases: [secret-pass, secret-control]
    limits: [One config.]
scope:
  cannot_support: [That the held-out set is representative.]
"""

SECRETS = (
    "inputs/secret/candidate.json",
    "inputs/secret/dropped.yaml",
    "inputs/secret/expected.yaml",
)


def write_source(folder: Path) -> Path:
    folder.mkdir()
    (folder / "bundle.yaml").write_text(SOURCE)
    for part in ("public", "secret"):
        inputs = folder / "inputs" / part
        inputs.mkdir(parents=True)
        (inputs / "expected.yaml").write_text(f"rules:\n  - {part}-a\n  - {part}-b\n")
        (inputs / "candidate.json").write_text(json.dumps({"rules": [f"{part}-a", f"{part}-b"]}))
        (inputs / "dropped.yaml").write_text(f"rules:\n  - {part}-a\n")
    return folder


def make_redacted(tmp: Path) -> dict[str, Any]:
    """The full signed bundle, its redacted copy, the withheld files, the reviewer's policy."""
    source = write_source(tmp / "src")
    full = build(source, tmp / "two-claims.bundle.tar.zst", 1700000000).path
    key = new_private_key()
    signed, _ = sign_bundle(full, key, out=tmp / "signed.bundle.tar.zst")
    redacted = redact(signed, ["inputs/secret/**"], tmp / "redacted.bundle.tar.zst", "held-out set")
    disclosed = tmp / "disclosed"
    for path in SECRETS:
        (disclosed / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / path, disclosed / path)
    trusted = Policy(trusted=(TrustedKey("author", public_of(key)),), require_signature=True)
    return {
        "tmp": tmp,
        "signed": signed,
        "redacted": redacted.path,
        "record": redacted,
        "disclosed": disclosed,
        "policy": trusted,
        "key": key,
    }


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return make_redacted(tmp_path_factory.mktemp("withheld"))


def statuses(verification: object) -> dict[str, str]:
    return {c.claim.id: c.status for c in verification.claims}  # type: ignore[attr-defined]


def test_redacting_keeps_the_identity_and_lists_each_withheld_file(made: dict) -> None:
    full = verify(made["signed"], VerifyOptions(policy=made["policy"]))
    record = made["record"]
    assert record.identity == full.extracted.identity
    assert [f.path for f in record.withheld.files] == list(SECRETS)
    listed = {f.path: f for f in full.extracted.manifest.files}
    for entry in record.withheld.files:
        assert (entry.sha256, entry.size) == (listed[entry.path].sha256, listed[entry.path].size)
        assert entry.reason == "held-out set"
    names = [e.name for e in read_entries(made["redacted"])]
    assert names[2] == f"two-claims-1.0.0/{RECORD_NAME}"  # after manifest and signature
    assert not any("secret" in n for n in names)


def test_redacted_bundle_supports_the_public_claim_and_names_what_is_withheld(made: dict) -> None:
    verification = verify(made["redacted"], VerifyOptions(policy=made["policy"]))
    assert verification.signature.state == "trusted"
    assert statuses(verification) == {"public-claim": "supported", "secret-claim": "inconclusive"}
    assert verification.exit_code == 4
    secret = next(c for c in verification.claims if c.claim.id == "secret-claim")
    assert secret.withheld == 2
    for path in SECRETS:
        assert path in secret.why
    outcomes = {r.case.id: r.outcome for r in verification.cases}
    assert outcomes == {
        "public-pass": "reproduced",
        "public-control": "reproduced",
        "secret-pass": "withheld",
        "secret-control": "withheld",
    }
    assert verification.extracted.withheld is not None


def test_disclosed_files_give_the_full_bundles_verdicts(made: dict) -> None:
    full = verify(made["signed"], VerifyOptions(policy=made["policy"]))
    disclosed = verify(
        made["redacted"], VerifyOptions(policy=made["policy"]), disclose=made["disclosed"]
    )
    assert (
        statuses(disclosed)
        == statuses(full)
        == {
            "public-claim": "supported",
            "secret-claim": "supported",
        }
    )
    assert [(r.case.id, r.outcome) for r in disclosed.cases] == [
        (r.case.id, r.outcome) for r in full.cases
    ]
    assert disclosed.exit_code == full.exit_code == 0
    assert disclosed.disclosed == SECRETS


def test_a_disclosed_file_that_differs_rejects(made: dict, tmp_path: Path) -> None:
    folder = tmp_path / "other"
    shutil.copytree(made["disclosed"], folder)
    (folder / SECRETS[0]).write_text(json.dumps({"rules": ["forged"]}))
    with pytest.raises(BundleRejected) as caught:
        verify(made["redacted"], VerifyOptions(policy=made["policy"]), disclose=folder)
    assert caught.value.exit_code == 3
    assert [p.code for p in caught.value.problems] == ["withheld.disclosed"]
    assert SECRETS[0] in caught.value.problems[0].where


def test_a_disclosed_file_that_is_missing_or_larger_rejects(made: dict, tmp_path: Path) -> None:
    folder = tmp_path / "other"
    shutil.copytree(made["disclosed"], folder)
    (folder / SECRETS[0]).unlink()
    with (folder / SECRETS[1]).open("ab") as grown:
        grown.write(b"x")
    with pytest.raises(BundleRejected) as caught:
        verify(made["redacted"], VerifyOptions(policy=made["policy"]), disclose=folder)
    assert sorted(
        p.where.split("disclosed/")[-1].split("other/")[-1] for p in caught.value.problems
    ) == [
        SECRETS[0],
        SECRETS[1],
    ]


def test_disclosing_to_a_bundle_that_withholds_nothing_is_a_usage_error(made: dict) -> None:
    with pytest.raises(UsageError, match="withholds no file"):
        verify(made["signed"], disclose=made["disclosed"])


# -- hostile redacted bundles --------------------------------------------------------------


def rewritten(made: dict, target: Path, change) -> Path:  # type: ignore[no-untyped-def]
    entries = read_entries(made["redacted"])
    return write_entries(change(entries), target)


def record_entry(entries: list[Entry]) -> Entry:
    return next(e for e in entries if e.name.endswith("/" + RECORD_NAME))


def test_a_file_dropped_without_a_record_is_tampering(made: dict, tmp_path: Path) -> None:
    def drop(entries: list[Entry]) -> list[Entry]:
        return [e for e in entries if not e.name.endswith(RECORD_NAME)]

    bundle = rewritten(made, tmp_path / "dropped.bundle.tar.zst", drop)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle)
    assert {p.code for p in caught.value.problems} == {"file.missing"}


def test_a_record_with_a_wrong_digest_rejects(made: dict, tmp_path: Path) -> None:
    def lie(entries: list[Entry]) -> list[Entry]:
        record = record_entry(entries)
        record.data = record.data.replace(
            record.data[record.data.index(b'"sha256": "') + 11 :][:64], b"0" * 64, 1
        )
        return entries

    bundle = rewritten(made, tmp_path / "lie.bundle.tar.zst", lie)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle)
    assert [p.code for p in caught.value.problems] == ["withheld.digest"]
    assert "the manifest says" in caught.value.problems[0].message


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("manifest.toml", "withheld.reserved"),
        ("signatures/x.json", "withheld.reserved"),
        (RECORD_NAME, "withheld.reserved"),
        ("inputs/not-listed.json", "withheld.unlisted"),
    ],
)
def test_a_record_withholding_what_cannot_be_withheld_rejects(
    made: dict, tmp_path: Path, path: str, code: str
) -> None:
    def add(entries: list[Entry]) -> list[Entry]:
        record = record_entry(entries)
        document = json.loads(record.data)
        document["files"].append({"path": path, "size": 1, "sha256": "0" * 64, "reason": "x"})
        record.data = json.dumps(document).encode()
        return entries

    bundle = rewritten(made, tmp_path / "bad.bundle.tar.zst", add)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle)
    assert [p.code for p in caught.value.problems] == [code]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d: {**d, "extra": 1}, id="unknown-key"),
        pytest.param(lambda d: {**d, "format": "reprobundle-withheld/2"}, id="newer-major"),
        pytest.param(lambda d: {**d, "files": d["files"] + d["files"][:1]}, id="duplicate"),
        pytest.param(lambda d: {**d, "files": []}, id="empty"),
        pytest.param(
            lambda d: {**d, "files": [{**d["files"][0], "reason": ""}, *d["files"][1:]]},
            id="no-reason",
        ),
    ],
)
def test_a_record_that_is_not_strictly_valid_rejects(made: dict, tmp_path: Path, change) -> None:  # type: ignore[no-untyped-def]
    def edit(entries: list[Entry]) -> list[Entry]:
        record = record_entry(entries)
        record.data = json.dumps(change(json.loads(record.data))).encode()
        return entries

    bundle = rewritten(made, tmp_path / "bad.bundle.tar.zst", edit)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle)
    assert caught.value.exit_code == 3
    assert all(p.code.startswith("withheld.") for p in caught.value.problems)


def test_a_withheld_file_still_in_the_archive_rejects(made: dict, tmp_path: Path) -> None:
    secret = (made["disclosed"] / SECRETS[0]).read_bytes()

    def keep(entries: list[Entry]) -> list[Entry]:
        return [*entries, Entry(f"two-claims-1.0.0/{SECRETS[0]}", secret)]

    bundle = rewritten(made, tmp_path / "both.bundle.tar.zst", keep)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle)
    assert [p.code for p in caught.value.problems] == ["withheld.present"]


def test_a_record_after_the_payload_began_rejects(made: dict, tmp_path: Path) -> None:
    def move(entries: list[Entry]) -> list[Entry]:
        record = record_entry(entries)
        return [e for e in entries if e is not record] + [record]

    bundle = rewritten(made, tmp_path / "late.bundle.tar.zst", move)
    with pytest.raises(BundleRejected) as caught:
        verify(bundle)
    assert [p.code for p in caught.value.problems] == ["archive.layout"]


# -- what redact refuses -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("manifest.toml", "never withheld"),
        ("signatures/**", "never withheld"),
        ("README.md", "no case reads"),
        ("inputs/nothing/**", "matches no file"),
    ],
)
def test_redact_refuses_what_may_not_be_withheld(
    made: dict, tmp_path: Path, pattern: str, words: str
) -> None:
    out = tmp_path / "out.bundle.tar.zst"
    with pytest.raises(UsageError) as caught:
        redact(made["signed"], [pattern], out)
    assert words in str(caught.value.problems)
    assert not out.exists()


def test_redacting_again_adds_to_the_record_and_keeps_the_compression(
    made: dict, tmp_path: Path
) -> None:
    again = redact(
        made["redacted"], ["inputs/public/dropped.yaml"], tmp_path / "again.bundle.tar.gz"
    )
    assert len(again.withheld.files) == 4
    assert again.path.read_bytes()[:4] == made["redacted"].read_bytes()[:4]  # zstd kept
    verification = verify(again.path, VerifyOptions(policy=made["policy"]))
    assert statuses(verification) == {
        "public-claim": "inconclusive",
        "secret-claim": "inconclusive",
    }


def test_signing_a_redacted_bundle_keeps_its_record(made: dict, tmp_path: Path) -> None:
    key = new_private_key()
    signed, _ = sign_bundle(made["redacted"], key, out=tmp_path / "twice.bundle.tar.zst")
    verification = verify(signed)
    assert verification.extracted.withheld == verify(made["redacted"]).extracted.withheld


def test_redact_and_verify_on_the_command_line(made: dict, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "cli.bundle.tar.zst"
    done = runner.invoke(
        main,
        [
            "redact",
            str(made["signed"]),
            "--withhold",
            "inputs/secret/**",
            "--reason",
            "private",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    assert "3 file(s) withheld" in done.output
    checked = runner.invoke(main, ["verify", str(out), "-q"])
    assert checked.exit_code == 4, checked.output
    disclosed = runner.invoke(
        main, ["verify", str(out), "--disclose", str(made["disclosed"]), "-q"]
    )
    assert disclosed.exit_code == 0, disclosed.output
    nothing = runner.invoke(
        main, ["redact", str(made["signed"]), "--withhold", "x/**", "-o", str(out)]
    )
    assert nothing.exit_code == 2
    assert "matches no file" in nothing.output


# -- item 6: diff and pre-registration treat withheld files by digest -----------------------


def test_diff_of_a_bundle_and_its_redacted_copy_lists_only_the_withheld_files(made: dict) -> None:
    runner = CliRunner()
    done = runner.invoke(main, ["diff", str(made["signed"]), str(made["redacted"])])
    assert done.exit_code == 1, done.output
    lines = done.output.splitlines()
    withheld = [line for line in lines if line.startswith("  withheld in NEW: ")]
    assert [line.split(": ")[1].split(" (")[0] for line in withheld] == list(SECRETS)
    assert "differ only in what is withheld" in done.output
    for word in ("Cases", "Claims", "Files", "EXPECTED VERDICTS"):
        assert word not in lines
    same = runner.invoke(main, ["diff", str(made["redacted"]), str(made["redacted"])])
    assert same.exit_code == 0, same.output


def test_diff_json_of_a_redacted_copy(made: dict, tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    CliRunner().invoke(
        main, ["diff", str(made["redacted"]), str(made["signed"]), "--json", str(out)]
    )
    result = json.loads(out.read_text())
    assert result["identical"] is True
    assert [f["path"] for f in result["withheld"]["withheld_in_old"]] == list(SECRETS)
    assert result["withheld"]["withheld_in_new"] == []
    assert result["files"] == {"added": [], "removed": [], "changed": []}


def test_a_redacted_bundle_matches_its_preregistration_as_the_full_one_does(
    tmp_path: Path,
) -> None:
    from bundler.reports.document import to_json
    from tests.helpers import REPO

    source = tmp_path / "src"
    shutil.copytree(REPO / "bundles" / "preregistered", source)
    full = build(source, tmp_path / "p.bundle.tar.zst", 1700000000).path
    manifest = verify(full).extracted.manifest
    target = manifest.cases[0].inputs
    first = next(iter(target.values()))
    path = first if isinstance(first, str) else first[0]
    redacted = redact(full, [path], tmp_path / "r.bundle.tar.zst").path
    before, after = to_json(verify(full)), to_json(verify(redacted))
    assert "preregistration" in before
    assert after["preregistration"] == before["preregistration"]


def test_inspect_of_a_redacted_bundle_never_says_all_files_match(made: dict) -> None:
    done = CliRunner().invoke(main, ["inspect", str(made["redacted"])])
    assert done.exit_code == 0, done.output
    assert "Integrity 4 of 7 files match the manifest" in done.output
    assert "all 7 files match" not in done.output
    assert done.output.count("(withheld: held-out set)") == 3


def test_a_bundle_that_lists_a_file_named_withheld_json_reads_as_before(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    (source / "withheld.json").write_text('{"format": "not a record"}\n')
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(
        text.replace("  - inputs/**\n", "  - inputs/**\n  - withheld.json\n")
    )
    bundle = build(source, tmp_path / "w.bundle.tar.zst", 1700000000).path
    verification = verify(bundle)
    assert verification.status == "supported"
    assert verification.extracted.withheld is None
    with pytest.raises(UsageError, match="cannot be redacted"):
        redact(bundle, ["inputs/secret/**"], tmp_path / "r.bundle.tar.zst")


def test_an_archive_stores_and_reverifies_a_redacted_bundle(made: dict, tmp_path: Path) -> None:
    from bundler.store.archive import Archive
    from tests.archive_support import cli

    root = tmp_path / "archive"
    Archive.init(root).close()
    assert cli(root, "add", str(made["redacted"]))[0] == 0
    code, out, err = cli(root, "verify", "two-claims")
    assert code == 4, out + err
    assert cli(root, "log", "verify")[0] == 0
