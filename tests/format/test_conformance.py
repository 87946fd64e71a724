"""The conformance suite of ``reprobundle/1`` (``manifests/conformance/``): every vector
through the Python verifier and through the second, independent one in JavaScript
(``manifests/js/verify.mjs``), each compared with the result the spec gives it.

Neither implementation re-runs a checker here: the suite is about integrity and
signatures, which is all the JavaScript verifier does (it says so)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from bundler.container.readrules import Limits
from bundler.errors import BundleRejected
from bundler.run.verify import check_integrity
from bundler.signatures.trust import SignatureJudge
from bundler.signatures.truststore import load_policy
from manifests.conformance import generate
from tests.helpers import REPO

SUITE = REPO / "manifests" / "conformance"
JS = REPO / "manifests" / "js"
INDEX = json.loads((SUITE / "vectors.json").read_text("utf-8"))
VECTORS = INDEX["vectors"]
IDS = [v["name"] for v in VECTORS]

pytestmark = pytest.mark.long  # a node process per vector: started first in a parallel run


def python_verdict(vector: dict[str, Any], suite: Path = SUITE) -> tuple[str, list[str]]:
    options = vector["options"]
    policy = load_policy(
        [suite / t for t in options.get("trust", [])],
        expect_manifest_sha256=options.get("identity"),
        detached=[suite / s for s in options.get("signatures", [])],
    )
    try:
        check_integrity(
            suite / vector["file"], Limits(**options.get("limits", {})), SignatureJudge(policy)
        )
    except BundleRejected as exc:
        return "reject", sorted({p.code for p in exc.problems})
    return "accept", []


def test_the_suite_has_every_kind_of_vector() -> None:
    results = [v["expected"]["result"] for v in VECTORS]
    assert len(VECTORS) >= 60
    assert results.count("accept") >= 10
    rules = {v["rule"] for v in VECTORS}
    for family in (
        "archive.",
        "tar.",
        "member.",
        "layout.",
        "integrity.",
        "manifest.",
        "signature.",
    ):
        assert any(r.startswith(family) for r in rules), family
    size = sum((SUITE / v["file"]).stat().st_size for v in VECTORS)
    assert size < 512 << 10  # small: a few hundred KiB in all


def test_the_vectors_are_what_the_script_writes(tmp_path: Path) -> None:
    """The committed vectors are generated, not edited by hand: the script writes the same
    index and the same bytes again. A gzip vector's bytes are those of the zlib that wrote
    them (Python 3.11's here; another build compresses the same tar differently), so on
    another Python its tar is compared, and the index without its digest."""
    generate.write(tmp_path)
    same_zlib = sys.version_info[:2] == (3, 11)
    index = json.loads((tmp_path / "vectors.json").read_text("utf-8"))
    assert strip_gzip_digests(index, same_zlib) == strip_gzip_digests(INDEX, same_zlib)
    for vector in VECTORS:
        made, kept = (tmp_path / vector["file"]).read_bytes(), (SUITE / vector["file"]).read_bytes()
        if not same_zlib and vector["file"].endswith(".gz") and kept[:2] == b"\x1f\x8b":
            made, kept = gunzipped(made), gunzipped(kept)
        assert made == kept, vector["file"]


def gunzipped(data: bytes) -> bytes:
    """The stream's bytes, as far as they decompress (a damaged vector stops early)."""
    reader = zlib.decompressobj(wbits=31)
    try:
        return reader.decompress(data)
    except zlib.error:
        return b"damaged"


def strip_gzip_digests(index: dict[str, Any], same_zlib: bool) -> dict[str, Any]:
    if same_zlib:
        return index
    vectors = [
        {k: v for k, v in vector.items() if k != "sha256" or not vector["file"].endswith(".gz")}
        for vector in index["vectors"]
    ]
    return {**index, "vectors": vectors}


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_python_verifier_conforms(vector: dict[str, Any]) -> None:
    expected = vector["expected"]
    assert python_verdict(vector) == (expected["result"], expected["codes"])


def node() -> str | None:
    """Node 20 or later with the verifier's packages installed, else None (CI has both)."""
    found = shutil.which("node")
    if found is None:
        return None
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    major = version.stdout.strip().lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < 20:
        return None
    return found


NODE = node()
NO_NODE = "node >= 20 is not installed (Debian: apt-get install nodejs npm; .ci/run installs it)"
NO_PACKAGES = "the JavaScript verifier's packages are not installed: run `npm ci` in manifests/js"


def unavailable(reason: str) -> None:
    """Skip, saying why; under CI (``.ci/run`` sets REPROBUNDLE_REQUIRE_NODE), fail."""
    if os.environ.get("REPROBUNDLE_REQUIRE_NODE") or os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def run_js(*args: str | Path) -> subprocess.CompletedProcess[str]:
    if NODE is None:
        unavailable(NO_NODE)
    if not (JS / "node_modules" / "fzstd").is_dir():
        unavailable(NO_PACKAGES)
    return subprocess.run(
        [NODE, str(JS / "verify.mjs"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def js_arguments(vector: dict[str, Any]) -> list[str | Path]:
    options = vector["options"]
    args: list[str | Path] = [SUITE / vector["file"], "--json"]
    for key in options.get("trust", []):
        args += ["--trust", SUITE / key]
    for signature in options.get("signatures", []):
        args += ["--signature", SUITE / signature]
    if "identity" in options:
        args += ["--identity", options["identity"]]
    for name, value in options.get("limits", {}).items():
        args += [f"--max-{name.replace('_', '-')}", str(value)]
    return args


@pytest.fixture(scope="module")
def js_results() -> dict[str, dict[str, Any]]:
    """Every vector through the JavaScript verifier in one process (its --conformance
    mode: each vector verified as its options say, by the function the command line uses)."""
    result = run_js("--conformance", SUITE / "vectors.json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {line["name"]: line for line in lines}


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_javascript_verifier_conforms(
    vector: dict[str, Any], js_results: dict[str, dict[str, Any]]
) -> None:
    got = js_results[vector["name"]]
    expected = vector["expected"]
    assert (got["result"], got["exit"], got["codes"]) == (
        expected["result"],
        expected["exit"],
        expected["codes"],
    )


# every accepted vector, and every fifth rejected one: the command line, option by option
SAMPLE = [
    v
    for i, v in enumerate(VECTORS)
    if v["expected"]["result"] == "accept" or i % 5 == 0 or v["options"].get("signatures")
]


@pytest.mark.parametrize("vector", SAMPLE, ids=[v["name"] for v in SAMPLE])
def test_javascript_command_line_conforms(vector: dict[str, Any]) -> None:
    result = run_js(*js_arguments(vector))
    expected = vector["expected"]
    assert result.returncode == expected["exit"], result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert (verdict["result"], verdict["codes"]) == (expected["result"], expected["codes"])
    assert verdict["checkers"] == "not re-run"


def test_javascript_conformance_mode_says_whether_all_conform(tmp_path: Path) -> None:
    """Its exit code is 1 when a vector gives another result than the one expected."""
    index = json.loads((SUITE / "vectors.json").read_text("utf-8"))
    index["vectors"] = index["vectors"][:2]
    index["vectors"][0]["expected"] = {"result": "reject", "exit": 3, "codes": ["file.hash"]}
    for folder in ("vectors", "keys"):
        (tmp_path / folder).symlink_to(SUITE / folder)
    (tmp_path / "vectors.json").write_text(json.dumps(index), "utf-8")
    result = run_js("--conformance", tmp_path / "vectors.json")
    assert result.returncode == 1
    assert "1 of 2 vectors as expected" in result.stderr


def test_javascript_verifier_says_it_does_not_rerun_checkers() -> None:
    intact = SUITE / "vectors" / "accept-intact-zstd.bundle.tar.zst"
    result = run_js(intact)
    assert result.returncode == 0, result.stderr
    assert "checkers were not re-run" in result.stdout
    assert "identity sha256:" in result.stdout


def test_javascript_verifier_refuses_a_usage_error_with_exit_2() -> None:
    result = run_js("--no-such-option")
    assert result.returncode == 2
    assert "usage" in result.stderr.lower()


def test_javascript_verifier_shares_no_code_with_the_python_one() -> None:
    """It imports only Node's own modules, its own files and its two pinned packages."""
    allowed = {"fzstd", "smol-toml"}
    lock = json.loads((JS / "package-lock.json").read_text("utf-8"))
    assert {p.removeprefix("node_modules/") for p in lock["packages"] if p} == allowed
    for source in [JS / "verify.mjs", *sorted((JS / "lib").glob("*.mjs"))]:
        for line in source.read_text("utf-8").splitlines():
            if line.startswith("import "):
                target = line.rsplit(" from ", 1)[-1].strip(' ";').strip('"')
                assert target.startswith("node:") or target.startswith("./") or target in allowed, (
                    f"{source.name}: {line}"
                )


GOLDEN = sorted((REPO / "manifests" / "golden").glob("*/*.bundle.tar.*"))


@pytest.mark.parametrize("bundle", GOLDEN, ids=[f"{b.parent.name}/{b.name}" for b in GOLDEN])
def test_javascript_verifier_accepts_every_golden_bundle(bundle: Path) -> None:
    """Real bundles of every release, as the tool wrote them: intact, with the identity
    the Python verifier gives."""
    result = run_js(bundle, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["identity"] == "sha256:" + check_integrity(bundle).identity


# -- the two verifiers against each other, beyond the vectors ---------------------------

MANIFEST_PIECES = [b'"', b"'", b"=", b"[", b"]", b"{", b"}", b",", b"\n", b" ", b"#", b"."]
MANIFEST_PIECES += [b"0", b"1.5", b"nan", b"inf", b"true", b"1979-05-27", b"\\", b"\\u00e9"]
MANIFEST_PIECES += [b"-", b"e5", b"0x1F", b"\t", b'"""', b"\r\n", b"1_000", b"\xc3\xa9", b"\xff"]


def mutants(seed: int, count: int) -> list[bytes]:
    """Tar streams of a signed conformance bundle, each changed a little: bytes flipped,
    cut or inserted anywhere, or the manifest edited with TOML's own characters."""
    import random

    rng = random.Random(seed)
    signed = [generate.signature(generate.ALICE)]
    base = generate.plain_bundle(signatures=signed)
    out = []
    for _ in range(count):
        if rng.random() < 0.5:
            raw = bytearray(base)
            kind = rng.choice(("flip", "cut", "insert"))
            if kind == "flip":
                for _ in range(rng.randint(1, 3)):
                    raw[rng.randrange(len(raw) - 19 * 512)] = rng.randrange(256)
            elif kind == "cut":
                del raw[rng.randrange(len(raw)) :]
            else:
                at = rng.randrange(len(raw))
                raw[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 600)))
            out.append(bytes(raw))
            continue
        manifest = bytearray(generate.MANIFEST)
        for _ in range(rng.randint(1, 3)):
            at, piece = rng.randrange(len(manifest)), rng.choice(MANIFEST_PIECES)
            choice = rng.random()
            if choice < 0.4:
                manifest[at : at + len(piece)] = piece
            elif choice < 0.8:
                manifest[at:at] = piece
            else:
                del manifest[at : at + rng.randint(1, 5)]
        out.append(generate.plain_bundle(manifest_bytes=bytes(manifest)))
    return out


def test_both_verifiers_agree_on_mutated_bundles(tmp_path: Path) -> None:
    """Differential: 400 bundles no vector names (a fixed seed), each judged by both; the
    same result and the same codes for every one."""
    index: dict[str, Any] = {"vectors": []}
    for i, raw in enumerate(mutants(46, 400)):
        name = f"mutant-{i}.bundle.tar.gz"
        (tmp_path / name).write_bytes(generate.gz(raw))
        expected = {"result": "accept", "exit": 0, "codes": []}  # (only JS's own summary)
        index["vectors"].append({"name": name, "file": name, "options": {}, "expected": expected})
    (tmp_path / "vectors.json").write_text(json.dumps(index), "utf-8")
    result = run_js("--conformance", tmp_path / "vectors.json")
    assert result.returncode in (0, 1), result.stderr
    js = {d["name"]: (d["result"], d["codes"]) for d in map(json.loads, result.stdout.splitlines())}
    differ = []
    for vector in index["vectors"]:
        python = python_verdict(vector, tmp_path)
        if python != js[vector["name"]]:
            differ.append((vector["name"], python, js[vector["name"]]))
    assert not differ
    kinds = {tuple(codes) for _, codes in js.values()}
    assert len(kinds) >= 8  # the mutants reach many rules, not one


STREAM_CODES = {"archive.corrupt", "archive.truncated", "archive.trailing_data"}


def test_both_verifiers_reject_damaged_compressed_streams_alike(tmp_path: Path) -> None:
    """Bytes of the compressed file flipped (gzip and zstd, a fixed seed): both reject, and
    with the same codes, except as FORMAT.md allows: the Python verifier reads the tar as it
    decompresses, this one decompresses first, so where the stream is damaged and the
    garbage before the damage also breaks a tar rule, one may name the stream's problem and
    the other the tar's."""
    import random

    rng = random.Random(46)
    files = {**generate.FILES, "inputs/more.txt": bytes(rng.randrange(40) for _ in range(50_000))}
    sources = [generate.zst_compressed(generate.plain_bundle(files=files))]
    sources.append(generate.gz(generate.plain_bundle(files=files)))
    index: dict[str, Any] = {"vectors": []}
    for i in range(300):
        raw = bytearray(sources[i % 2])
        for _ in range(rng.randint(1, 2)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        name = f"damaged-{i}.bundle"
        (tmp_path / name).write_bytes(bytes(raw))
        expected = {"result": "reject", "exit": 3, "codes": []}
        index["vectors"].append({"name": name, "file": name, "options": {}, "expected": expected})
    (tmp_path / "vectors.json").write_text(json.dumps(index), "utf-8")
    result = run_js("--conformance", tmp_path / "vectors.json")
    assert result.returncode in (0, 1), result.stderr
    js = {d["name"]: (d["result"], d["codes"]) for d in map(json.loads, result.stdout.splitlines())}
    exact = 0
    for vector in index["vectors"]:
        python = python_verdict(vector, tmp_path)
        theirs = js[vector["name"]]
        assert python[0] == theirs[0], (vector["name"], python, theirs)
        if python == theirs:
            exact += 1
        else:
            assert set(python[1] + theirs[1]) & STREAM_CODES, (vector["name"], python, theirs)
    assert exact >= 290  # the orders differ rarely


def test_javascript_verifier_checks_a_signature_reprobundle_made(tmp_path: Path) -> None:
    """A bundle built and signed by reprobundle (a PEM key, as keygen writes it): trusted
    when its key is given, refused when another key is required, as the Python one does."""
    from click.testing import CliRunner

    from bundler.cli import main
    from tests.helpers import build_quickstart, key_files

    keys = key_files(tmp_path, "alice", "bob")
    built = build_quickstart(tmp_path)
    signed = tmp_path / "signed.bundle.tar.gz"
    made = CliRunner().invoke(
        main, ["sign", str(built), "--key", f"{keys['alice']}.key", "-o", str(signed)]
    )
    assert made.exit_code == 0, made.output
    trusted = run_js(signed, "--trust", f"{keys['alice']}.pub", "--json")
    assert trusted.returncode == 0, trusted.stdout
    assert json.loads(trusted.stdout)["signatures"]["signers"] == ["alice.pub"]
    other = run_js(signed, "--trust", f"{keys['bob']}.pub", "--json")
    assert other.returncode == 3
    assert json.loads(other.stdout)["codes"] == ["signature.required"]
