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


def _resealed(file: Path, target: Path, key: Path, **changes: Any) -> Path:
    """``file``'s pre-registration with ``changes`` made, signed again with ``key``."""
    from bundler.signatures.preregistration import seal_preregistration
    from bundler.signatures.signing import load_private_key

    doc = _payload(file) | changes
    private = load_private_key(Path(f"{key}.key").read_bytes(), None)
    target.write_bytes(seal_preregistration(doc, [private]))
    return target


def _all_formats(bundle: Path, *trust: str) -> dict[str, str]:
    """Every rendering ``verify`` writes of ``bundle``, by format."""
    options = [a for t in trust for a in ("--trust", t)] + ["--allow-unsigned"]
    out = {}
    for fmt in ("--json", "--markdown", "--html", "--junit"):
        out[fmt] = RUN.invoke(main, ["verify", str(bundle), "-q", fmt, "-", *options]).stdout
    out["text"] = RUN.invoke(main, ["verify", str(bundle), *options]).output
    return out


def test_a_deleted_scope_item_shows_as_changed_after_preregistration(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    dropped = "That the expected config itself is the right change; it was prepared by hand."
    _edit(source, f"    - {dropped}\n", "")
    _edit(source, "cannot_support:\n", "cannot_support:\n    - Added later.\n")
    report = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    assert report["preregistration"]["scope"] == {"added": ["Added later."], "removed": [dropped]}
    bundle = tmp_path / "b.bundle.tar.gz"
    for fmt, text in _all_formats(bundle, f"{keys['author']}.pub").items():
        if fmt == "--json":
            continue  # (the JSON holds the lists, above)
        assert "no longer declared" in text, fmt
        assert "added after pre-registration" in text, fmt


@pytest.mark.parametrize(
    ("written", "words"),
    [
        ("2099-01-01T00:00:00Z", "after this verification"),
        ("2001-01-01T00:00:00Z", "days before the bundle"),
    ],
    ids=["after-the-verification", "long-before-the-build"],
)
def test_a_written_time_after_the_verification_or_long_before_the_build_is_flagged(
    tmp_path: Path,
    keys: dict[str, Path],
    written: str,
    words: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14
    source = _source(tmp_path)
    signed = _preregister(source, tmp_path / "p.json", keys["author"])
    prereg = _resealed(signed, tmp_path / "w.json", keys["author"], written=written)
    report = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    assert any(words in w for w in report["preregistration"]["warnings"])
    for fmt, text in _all_formats(tmp_path / "b.bundle.tar.gz").items():
        assert fmt == "--json" or words in text, fmt


def test_a_timely_written_time_is_not_flagged(tmp_path: Path, keys: dict[str, Path]) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    report = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    assert report["preregistration"]["warnings"] == []


def test_preregister_of_a_source_with_a_finding_builds(tmp_path: Path) -> None:
    from tests.helpers import REPO

    source = tmp_path / "src"
    shutil.copytree(REPO / "bundles" / "config-edits", source)
    assert "kind: finding" in (source / "bundle.yaml").read_text()
    prereg = _preregister(source, tmp_path / "p.json")
    assert model.parse(base64.b64decode(json.loads(prereg.read_text())["payload"]))
    report = _build_and_verify(source, prereg, tmp_path)
    assert report["preregistration"]["refused"] is None


def test_a_changed_claim_shows_where_the_two_statements_differ(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    source = _source(tmp_path)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    old = "silently drops an\n      unrelated rule is rejected."
    _edit(source, old, "drops a rule is refused.")
    _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    texts = _all_formats(tmp_path / "b.bundle.tar.gz", f"{keys['author']}.pub")
    for fmt in ("text", "--markdown"):
        line = next(x for x in texts[fmt].splitlines() if "claim statement" in x)
        old, _, new = line.replace("-\\>", "->").partition(" -> ")
        assert "unrelated rule is rejected" in old, fmt
        assert "drops a rule is refused" in new, fmt


def test_a_claim_changed_after_preregistration_says_so_beside_its_status_in_every_format(
    example_bundle: Any,
) -> None:
    import re

    from tests.helpers import REPO

    bundle = example_bundle("preregistered")
    trust = ["--trust", str(REPO / "bundles" / "demo-key" / "DEMO-ONLY-not-secret.pub")]
    texts = _all_formats(bundle, trust[1])
    counted = "1 of 2 claims changed after pre-registration"
    html = texts["--html"]
    row = re.search(r'<tr class="claim[^"]*" id="claim-grader-recall".*?</td>', html, re.S)
    assert row and "changed after pre-registration" in row.group(0)  # beside the badge
    banner = html[html.index('<header class="') : html.index("</header>")]
    assert counted in banner
    assert "grader-recall [changed after pre-registration]" in texts["text"]
    assert "**supported** (changed after pre-registration)" in texts["--markdown"]
    assert counted in texts["--markdown"].split("**Claims**")[0]  # in the headline
    quiet = RUN.invoke(main, ["verify", str(bundle), "-q", "--allow-unsigned", *trust])
    assert counted in quiet.output


def test_a_fixed_reference_input_edited_after_preregistration_is_a_change(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    source = _source(tmp_path)
    args = ["--fix", "inputs/expected.yaml", "--sign", f"{keys['author']}.key"]
    done = RUN.invoke(main, ["preregister", str(source), "-o", str(tmp_path / "p.json"), *args])
    assert done.exit_code == 0, done.output
    assert "1 file digest(s) fixed" in done.output
    prereg = tmp_path / "p.json"
    assert [f["path"] for f in _payload(prereg)["files"]] == ["inputs/expected.yaml"]
    report = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    pre = report["preregistration"]
    assert pre["fixed"] == [{"path": "inputs/expected.yaml", "status": "as pre-registered"}]
    assert {c["status"] for c in pre["claims"].values()} == {"as pre-registered"}
    # edited after the results, in a way that keeps every claim supported
    with (source / "inputs" / "expected.yaml").open("a") as expected:
        expected.write("# reviewed again after the results\n")
    report = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")
    assert report["result"] == "supported"
    pre = report["preregistration"]
    assert pre["fixed"] == [
        {"path": "inputs/expected.yaml", "status": "changed after pre-registration"}
    ]
    for item in pre["claims"].values():
        assert item["status"] == "changed after pre-registration"
        assert any(c["path"] == "content of inputs/expected.yaml" for c in item["changes"])
    text = RUN.invoke(main, ["verify", str(tmp_path / "b.bundle.tar.gz")]).output
    assert "content of inputs/expected.yaml" in text


def test_fixing_a_file_no_case_reads_is_refused(tmp_path: Path) -> None:
    source = _source(tmp_path)
    for path in ("inputs/nothing.yaml", "bundle.yaml"):
        args = ["preregister", str(source), "-o", str(tmp_path / "p.json"), "--fix", path]
        done = RUN.invoke(main, args)
        assert done.exit_code == 2, done.output
        assert "preregistration.fix" in done.output and path in done.output
    assert not (tmp_path / "p.json").exists()


def test_a_source_with_bundled_code_can_be_preregistered_with_its_code_fixed(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    from tests.helpers import REPO

    source = tmp_path / "src"
    shutil.copytree(REPO / "tests" / "sources" / "own-code", source)
    prereg = _preregister(source, tmp_path / "p.json", keys["author"])
    doc = _payload(prereg)
    assert doc["format"] == model.PREREGISTRATION_FORMAT_FIXED
    assert [f["path"] for f in doc["files"]] == ["code/rows.py"]
    assert [c["name"] for c in doc["code"]] == ["row-count"]
    pre = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")["preregistration"]
    assert pre["refused"] is None
    assert {c["status"] for c in pre["claims"].values()} == {"as pre-registered"}
    with (source / "code" / "rows.py").open("a") as code:
        code.write("\n# changed after the results\n")
    pre = _build_and_verify(source, prereg, tmp_path, f"{keys['author']}.pub")["preregistration"]
    assert pre["fixed"] == [{"path": "code/rows.py", "status": "changed after pre-registration"}]
    (claim,) = pre["claims"].values()
    assert claim["status"] == "changed after pre-registration"
    assert any(c["path"].startswith("code.files") for c in claim["changes"])


def test_a_preregistration_fixing_a_file_no_case_reads_is_refused(tmp_path: Path) -> None:
    doc = _payload(_preregister(_source(tmp_path), tmp_path / "p.json"))
    stray = {"path": "inputs/other.yaml", "sha256": "0" * 64, "size": 1}
    doc |= {"format": model.PREREGISTRATION_FORMAT_FIXED, "files": [stray], "code": []}
    with pytest.raises(ValueError, match="neither a file a case names"):
        model.parse(model.canonical(doc))
    doc["format"] = model.PREREGISTRATION_FORMAT  # 1 has no files
    with pytest.raises(ValueError, match="has keys"):
        model.parse(model.canonical(doc))


def test_bundled_code_must_exist_to_be_preregistered(tmp_path: Path) -> None:
    from tests.helpers import REPO

    source = tmp_path / "src"
    shutil.copytree(REPO / "tests" / "sources" / "own-code", source)
    (source / "code" / "rows.py").unlink()
    done = RUN.invoke(main, ["preregister", str(source), "-o", str(tmp_path / "p.json")])
    assert done.exit_code == 2
    assert "preregistration.fix" in done.output and "'code/rows.py' does not exist" in done.output
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(
    "name",
    sorted(p.parent.name for p in (Path(__file__).parents[2] / "bundles").glob("*/bundle.yaml")),
)
def test_every_example_source_preregisters_into_what_build_reads(name: str, tmp_path: Path) -> None:
    from bundler.signatures.preregistration import open_preregistration
    from tests.helpers import REPO

    prereg = _preregister(REPO / "bundles" / name, tmp_path / "p.json")
    found = open_preregistration(prereg.read_bytes(), name=_payload(prereg)["bundle"]["name"])
    assert found.view.claims  # read as build --preregistration and verify read it
