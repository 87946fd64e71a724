"""The JavaScript verifier's options as FORMAT.md names them: limits enforced before it
allocates (it holds a bundle in memory; a verifier's own limits may be lower than the
defaults), and the reviewer's trust (``--allow-unsigned``, ``--require-signature``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.format.test_conformance import SUITE, run_js

pytestmark = pytest.mark.long
BOMB = SUITE / "vectors" / "reject-compression-bomb.bundle.tar.zst"


def test_a_file_larger_than_a_buffer_is_refused_by_its_size_unread(tmp_path: Path) -> None:
    """A 5 GiB file (sparse: no disk used) is more than one Node Buffer holds: refused by
    the archive limit from its size, never read into memory."""
    huge = tmp_path / "huge.bundle.tar.zst"
    with huge.open("wb") as out:
        out.write(BOMB.read_bytes())
        out.truncate(5 << 30)
    result = run_js(huge, "--json")
    assert result.returncode == 3, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["codes"] == ["limit.archive_size"]
    assert "holds at most" in verdict["problems"][0]["message"]


def test_a_file_over_the_archive_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    result = run_js(BOMB, "--max-archive-bytes", "100", "--json")
    assert result.returncode == 3
    assert json.loads(result.stdout)["codes"] == ["limit.archive_size"]


def test_the_ratio_limit_is_the_reviewers_to_raise() -> None:
    """``--max-ratio`` (FORMAT.md's table names it): the bomb vector of 100 MiB of zeros
    is refused at 200:1 and read when the reviewer allows more."""
    refused = run_js(BOMB, "--json")
    assert json.loads(refused.stdout)["codes"] == ["limit.ratio"]
    allowed = run_js(BOMB, "--max-ratio", "1000000", "--json")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert json.loads(allowed.stdout)["result"] == "accept"


INTACT = SUITE / "vectors" / "accept-intact-gzip.bundle.tar.gz"
ALICE = SUITE / "keys" / "alice.pub"


def test_allow_unsigned_makes_trusted_keys_name_the_signers_only() -> None:
    """FORMAT.md, "Signatures", trust: naming trusted keys requires one of them to sign,
    unless the reviewer allows unsigned bundles (as the Python verifier's option does)."""
    required = run_js(INTACT, "--trust", ALICE, "--json")
    assert required.returncode == 3
    assert json.loads(required.stdout)["codes"] == ["signature.required"]
    allowed = run_js(INTACT, "--trust", ALICE, "--allow-unsigned", "--json")
    assert allowed.returncode == 0, allowed.stdout
    assert json.loads(allowed.stdout)["signatures"]["state"] == "unsigned"


def test_require_signature_needs_a_trusted_key() -> None:
    result = run_js(INTACT, "--require-signature")
    assert result.returncode == 2
    assert "needs --trust" in result.stderr


def test_gzip_is_checked_on_a_node_20_without_zlib_crc32(tmp_path: Path) -> None:
    """Node 20 before 20.15 has no ``zlib.crc32``: the verifier's own CRC-32 checks the
    gzip stream then (FORMAT.md says Node 20 or later), a wrong one still refused."""
    import subprocess

    from tests.format.test_conformance import JS, NODE

    run_js(INTACT)  # (skips, or fails under CI, without node)
    assert NODE is not None
    preload = tmp_path / "no-crc32.mjs"
    preload.write_text('import zlib from "node:zlib";\ndelete zlib.crc32;\n', "utf-8")
    damaged = bytearray(INTACT.read_bytes())
    damaged[-8] ^= 1  # the CRC-32 in the trailer
    (tmp_path / "damaged.bundle.tar.gz").write_bytes(bytes(damaged))
    verdicts = []
    for bundle in (INTACT, tmp_path / "damaged.bundle.tar.gz"):
        done = subprocess.run(
            [NODE, "--import", preload.as_uri(), str(JS / "verify.mjs"), str(bundle), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        verdicts.append((done.returncode, json.loads(done.stdout)["codes"]))
    assert verdicts == [(0, []), (3, ["archive.corrupt"])]
