"""Pre-registration: claims and checks fixed before the evidence exists, and what moved.

`preregister` reads a source without its inputs; `build --preregistration` packs it;
`verify` says per claim: as pre-registered (only against one a trusted key signed),
changed after pre-registration (each change named), or not pre-registered. A
pre-registration for another bundle, an unreadable one or one no trusted key signed is
never shown as "as pre-registered".
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bundler.cli import main
from bundler.format import preregistration as model
from tests.helpers import QUICKSTART, edit_manifest, key_files

RUN = CliRunner()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return key_files(tmp_path_factory.mktemp("prereg-keys"), "author", "stranger")


def _source(tmp: Path) -> Path:
    target = tmp / "src"
    shutil.copytree(QUICKSTART, target)
    return target


def _preregister(source: Path, out: Path, key: Path | None = None) -> Path:
    args = ["preregister", str(source), "-o", str(out), "-q"]
    done = RUN.invoke(main, [*args, *(["--sign", f"{key}.key"] if key else [])])
    assert done.exit_code == 0, done.output
    return out


def _payload(file: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(base64.b64decode(json.loads(file.read_text())["payload"]))
    return loaded


def _build_and_verify(source: Path, prereg: Path, tmp: Path, *trust: str) -> dict[str, Any]:
    bundle = tmp / "b.bundle.tar.gz"
    done = RUN.invoke(
        main, ["build", str(source), "-o", str(bundle), "-q", "--preregistration", str(prereg)]
    )
    assert done.exit_code == 0, done.output
    return _verify(bundle, *trust)


def _verify(bundle: Path, *trust: str) -> dict[str, Any]:
    options = [a for t in trust for a in ("--trust", t)] + (["--allow-unsigned"] if trust else [])
    done = RUN.invoke(main, ["verify", str(bundle), "--json", "-", "-q", *options])
    assert done.exit_code in (0, 1, 4), done.output
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_preregister_needs_no_input_and_holds_no_content(tmp_path: Path) -> None:
    source = _source(tmp_path)
    contents = [p.read_bytes() for p in (source / "inputs").iterdir()]
    shutil.rmtree(source / "inputs")  # the evidence does not exist yet
    doc = _payload(_preregister(source, tmp_path / "p.json"))
    assert doc["format"] == model.PREREGISTRATION_FORMAT
    assert doc["written"].endswith("Z") and doc["written"][:4].isdigit()  # stated, not attested
    assert doc["bundle"]["name"] == "quickstart"
    assert {c["id"] for c in doc["cases"]} and {c["id"] for c in doc["claims"]}
    assert all(name.startswith("inputs/") for name in doc["inputs"])
    text = json.dumps(doc).encode()
    assert not any(content.strip() and content.strip() in text for content in contents)


def test_identity_is_the_sha256_of_the_canonical_bytes(tmp_path: Path) -> None:
    import hashlib

    file = _preregister(_source(tmp_path), tmp_path / "p.json")
    payload = base64.b64decode(json.loads(file.read_text())["payload"])
    assert model.identity(json.loads(payload)) == hashlib.sha256(payload).hexdigest()
    assert model.parse(payload)[0]["bundle"]["name"] == "quickstart"


def test_unchanged_claims_signed_by_a_trusted_key_are_as_preregistered(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    report = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    pre = report["preregistration"]
    assert pre["trusted"] is True
    assert {c["status"] for c in pre["claims"].values()} == {"as pre-registered"}
    assert report["result"] == "supported", "a pre-registration never changes a status"


def test_untrusted_or_unsigned_preregistration_is_never_shown_as_preregistered(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    source = _source(tmp_path)
    signed = _preregister(source, tmp_path / "signed.json", keys["stranger"])
    for file, trust in (
        (signed, [f"{keys['author']}.pub"]),
        (signed, []),
        (
            _preregister(source, tmp_path / "unsigned.json"),
            [f"{keys['author']}.pub"],
        ),
    ):
        pre = _build_and_verify(source, file, tmp_path, *trust)["preregistration"]
        assert pre["trusted"] is False
        statuses = {c["status"] for c in pre["claims"].values()}
        assert "as pre-registered" not in statuses
        assert statuses == {"matches a pre-registration no trusted key signed"}


def _edit(source: Path, old: str, new: str) -> None:
    text = (source / "bundle.yaml").read_text()
    assert old in text, old
    (source / "bundle.yaml").write_text(text.replace(old, new, 1))


def test_each_change_after_preregistration_is_named(tmp_path: Path, keys: dict[str, Path]) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    doc = _payload(prereg)
    claim = doc["claims"][0]
    # a claim's statement edited, and a control of another claim re-labelled a finding
    _edit(source, claim["statement"][:40], "Changed: " + claim["statement"][:31])
    report = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    found = report["preregistration"]["claims"][claim["id"]]
    assert found["status"] == "changed after pre-registration"
    assert [(c["what"], c["path"]) for c in found["changes"]] == [("claim", "statement")]
    others = [c for c in report["preregistration"]["claims"] if c != claim["id"]]
    assert all(
        report["preregistration"]["claims"][c]["status"] == "as pre-registered" for c in others
    )


def test_a_moved_expectation_and_a_new_claim_are_reported(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    text = (source / "bundle.yaml").read_text()
    text = text.replace("expect_reasons: [content.changed]", "expect_reasons: [content.removed]")
    text = text.replace(
        "scope:\n",
        "  - id: late-claim\n    statement: Added after the results were seen.\n"
        "    cases: [reformatted-candidate-passes, dropped-rule-is-caught]\n"
        "scope:\n",
    )
    (source / "bundle.yaml").write_text(text)
    pre = _build_and_verify_lenient(source, prereg, tmp_path, keys)
    assert pre["claims"]["late-claim"]["status"] == "not pre-registered"
    moved = [
        c
        for item in pre["claims"].values()
        for c in item["changes"]
        if c["what"] == "case reordered-rules-are-caught"
    ]
    assert moved and moved[0]["path"].startswith("expect_reasons")


def _build_and_verify_lenient(
    source: Path, prereg: Path, tmp: Path, keys: dict[str, Path]
) -> dict[str, Any]:
    """Build (the edited expectation may not hold at home: then pack by hand)."""
    from bundler.authoring.build import make_manifest, members_of
    from bundler.authoring.source import read_source
    from bundler.container.pack import write_tar

    data = prereg.read_bytes()
    plan = read_source(source)
    manifest, readme = make_manifest(plan, 0, {model.FILE_NAME: data})
    bundle = tmp / "lenient.bundle.tar.gz"
    with bundle.open("wb") as out:
        extra = {model.FILE_NAME: data}
        write_tar(out, members_of(manifest, manifest.to_bytes(), readme, plan.root, extra), 0)
    pre: dict[str, Any] = _verify(bundle, f"{keys['author']}.pub")["preregistration"]
    return pre


def test_a_preregistration_for_another_bundle_is_refused_at_build(tmp_path: Path) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json")
    _edit(source, "name: quickstart", "name: other")
    done = RUN.invoke(
        main,
        [
            "build",
            str(source),
            "-o",
            str(tmp_path / "o.bundle.tar.gz"),
            "--preregistration",
            str(prereg),
        ],
    )
    assert done.exit_code == 2
    assert "preregistration.other_bundle" in done.output


@pytest.mark.parametrize(
    "bad",
    [
        b"not json",
        b"[" * 10_000 + b"]" * 10_000,
        json.dumps(
            {"payloadType": model.PAYLOAD_TYPE, "payload": "e30=", "signatures": []}
        ).encode(),
        json.dumps({"payloadType": "text/plain", "payload": "", "signatures": []}).encode(),
    ],
    ids=["not-json", "deep", "empty-object-payload", "wrong-type"],
)
def test_a_hostile_preregistration_in_a_bundle_counts_for_no_claim(
    tmp_path: Path, quickstart_bundle: Path, bad: bytes
) -> None:
    bundle = edit_manifest(
        quickstart_bundle, tmp_path / "h.bundle.tar.gz", lambda doc: None, {model.FILE_NAME: bad}
    )
    report = _verify(bundle)
    pre = report["preregistration"]
    assert pre["refused"]["code"].startswith("preregistration.")
    assert {c["status"] for c in pre["claims"].values()} == {"not pre-registered"}
    assert report["result"] == "supported"


def test_every_report_format_shows_the_preregistration(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    bundle = tmp_path / "b.bundle.tar.gz"
    RUN.invoke(
        main, ["build", str(source), "-o", str(bundle), "-q", "--preregistration", str(prereg)]
    )
    trust = ["--trust", f"{keys['author']}.pub", "--allow-unsigned"]
    for fmt in ("--markdown", "--html", "--junit"):
        done = RUN.invoke(main, ["verify", str(bundle), "-q", fmt, "-", *trust])
        assert "as pre-registered" in done.stdout, fmt
    done = RUN.invoke(main, ["verify", str(bundle), *trust])
    assert "Pre-registration" in done.output and "as pre-registered" in done.output
    assert "by its author's clock (stated, not attested)" in done.output


def test_a_source_file_named_like_the_preregistration_is_refused(tmp_path: Path) -> None:
    source = _source(tmp_path)
    (source / model.FILE_NAME).write_text("{}")
    _edit(source, "files:", f"files:\n  - {model.FILE_NAME}")
    done = RUN.invoke(main, ["build", str(source), "-o", str(tmp_path / "x.bundle.tar.gz")])
    assert done.exit_code == 2
    assert "path.reserved" in done.output


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("missing.json", "is not a regular file"),
        ("../outside.json", "component"),
        ("inputs/expected.yaml", "is also one of the files"),
    ],
)
def test_a_source_preregistration_that_is_not_a_file_of_its_own_is_refused(
    tmp_path: Path, value: str, why: str
) -> None:
    source = _source(tmp_path)
    text = (source / "bundle.yaml").read_text()
    (source / "bundle.yaml").write_text(f"preregistration: {value}\n{text}")
    done = RUN.invoke(main, ["build", str(source), "-o", str(tmp_path / "x.bundle.tar.gz")])
    assert done.exit_code == 2, done.output
    assert "source.preregistration" in done.output and why in done.output


def test_the_example_shows_one_claim_as_preregistered_and_one_changed(
    example_bundle: Any,
) -> None:
    from tests.helpers import REPO

    demo = REPO / "bundles" / "demo-key" / "DEMO-ONLY-not-secret.pub"
    pre = _verify(example_bundle("preregistered"), str(demo))["preregistration"]
    assert pre["claims"]["grader-precision"]["status"] == "as pre-registered"
    recall = pre["claims"]["grader-recall"]
    assert recall["status"] == "changed after pre-registration"
    assert {c["path"] for c in recall["changes"]} >= {"statement", "params.claimed.grader.recall"}


def test_a_written_time_that_is_not_rfc3339_is_refused(tmp_path: Path) -> None:
    file = _preregister(_source(tmp_path), tmp_path / "p.json")
    doc = _payload(file)
    doc["written"] = "yesterday"
    with pytest.raises(ValueError, match="RFC 3339"):
        model.parse(model.canonical(doc))


def _tampered(file: Path, target: Path, what: str) -> Path:
    """``file`` with its signature (``sig``) or its payload changed, the rest kept."""
    doc = json.loads(file.read_text())
    if what == "sig":
        raw = bytearray(base64.b64decode(doc["signatures"][0]["sig"]))
        raw[0] ^= 1
        doc["signatures"][0]["sig"] = base64.b64encode(bytes(raw)).decode()
    else:
        payload = json.loads(base64.b64decode(doc["payload"]))
        payload["claims"][0]["statement"] += " (edited)"
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        doc["payload"] = base64.b64encode(text.encode()).decode()
    target.write_text(json.dumps(doc))
    return target


@pytest.mark.parametrize("what", ["sig", "payload"])
def test_a_tampered_preregistration_signature_is_reported_as_a_bad_signature(
    tmp_path: Path, keys: dict[str, Path], what: str
) -> None:
    source = _source(tmp_path)
    signed = _preregister(source, tmp_path / "p.json", keys["author"])
    tampered = _tampered(signed, tmp_path / "t.json", what)
    report = _build_and_verify(source, tampered, tmp_path, f"{keys['author']}.pub")
    pre = report["preregistration"]
    assert pre["refused"]["code"] == "preregistration.bad_signature"
    assert "altered" in pre["refused"]["message"]
    assert "no key you trust" not in json.dumps(pre)
    assert {c["status"] for c in pre["claims"].values()} == {"not pre-registered"}
