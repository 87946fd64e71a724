"""Golden CLI files: for each kind of result ``reprobundle verify`` ends in (every exit
class, and the main kinds of rejection), ``tests/golden/cli/NAME.json`` holds the
arguments, the exit code, stdout and stderr of running the command a user runs.

``tests/cli/test_golden_cli.py`` runs each again and compares. After an intended change (a
message worded differently, a new line in the report), regenerate and review the diff:

    python tests/golden/regenerate_cli.py             # every golden file
    python tests/golden/regenerate_cli.py 3-hash      # just these

Each golden runs in a new empty folder (its working directory) holding only the files
its recipe made from the quickstart bundle (built in zstd, the default), named in the
arguments relative to it. The command runs in-process through click's runner with the
program name ``reprobundle``, which is what the ``reprobundle`` script runs
(``tests/cli/test_golden_cli.py`` checks a real process gives the same).

Volatile text, each replaced by exact value, nothing by pattern: the folder's path
(``<folder>``), the identity of each bundle in it (``<identity>``: the manifest records
the machine that built it, so its hash differs from machine to machine), and this
machine's Python version, platform and the tool's version as the manifest and the
verifier record them (``<python>``, ``<platform>``, ``<version>``). Everything else is
compared exactly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CLI = Path(__file__).resolve().parent / "cli"
SEED = "quickstart.bundle.tar.zst"
DEMO_KEY = REPO / "bundles" / "demo-key" / "DEMO-ONLY-not-secret.key"
# a reviewer's key made from a fixed seed, so its key id is the same on every machine;
# test data only, never trust it
REVIEWER_SEED = bytes(range(32))

Make = Callable[[Path, Path], None]


def _copy(seed: Path, folder: Path) -> None:
    shutil.copy(seed, folder / SEED)


def _flip_control(seed: Path, folder: Path) -> None:
    from tests.helpers import edit_manifest

    def flip(doc: dict[str, Any]) -> None:
        case = next(c for c in doc["cases"] if c["id"] == "dropped-rule-is-caught")
        case["expect"] = "pass"
        case.pop("expect_reasons", None)

    edit_manifest(seed, folder / "flipped.bundle.tar.zst", flip)


def _deep_input(seed: Path, folder: Path) -> None:
    from tests.helpers import with_input

    deep = b"[" * 300 + b"]" * 300
    with_input(seed, folder / "deep.bundle.tar.zst", "inputs/candidate-reformatted.json", deep)


def _zip(seed: Path, folder: Path) -> None:
    import zipfile

    with zipfile.ZipFile(folder / "zip.bundle.tar.zst", "w") as archive:
        archive.writestr("quickstart-1.0.0/manifest.toml", "format = 'reprobundle/1'\n")


def _entries(change: Callable[[list[Any]], list[Any]], name: str) -> Make:
    """A recipe: the seed's members changed by ``change``, written as ``name``."""

    def make(seed: Path, folder: Path) -> None:
        from tests.helpers import read_entries, write_entries

        write_entries(change(read_entries(seed)), folder / name)

    return make


def _evil_name(entries: list[Any]) -> list[Any]:
    from tests.helpers import Entry

    return [*entries, Entry("../evil.txt", b"owned")]


def _flip_byte(entries: list[Any]) -> list[Any]:
    target = next(e for e in entries if e.name.endswith("inputs/expected.yaml"))
    target.data = bytes([target.data[0] ^ 1]) + target.data[1:]
    return entries


def _drop_member(entries: list[Any]) -> list[Any]:
    return [e for e in entries if not e.name.endswith("candidate-reordered.yaml")]


def _extra_member(entries: list[Any]) -> list[Any]:
    from tests.helpers import Entry

    return [*entries, Entry("quickstart-1.0.0/inputs/extra.yaml", b"a: 1\n")]


def _unknown_major(entries: list[Any]) -> list[Any]:
    entries[0].data = entries[0].data.replace(b"reprobundle/1", b"reprobundle/2", 1)
    return entries


def _signed(seed: Path, folder: Path) -> Path:
    from bundler.signatures.signfile import sign_bundle
    from bundler.signatures.signing import load_private_key

    key = load_private_key(DEMO_KEY.read_bytes(), None)
    return sign_bundle(seed, key, folder / "signed.bundle.tar.zst")[0]


def _signed_then_edited(seed: Path, folder: Path) -> None:
    """Signed, then the manifest changed (hashes kept honest): the signature is bad."""
    from tests.helpers import edit_manifest

    signed = _signed(seed, folder)
    edit_manifest(
        signed, folder / "edited.bundle.tar.zst", lambda doc: doc["bundle"].update(title="Changed")
    )
    signed.unlink()


def _signed_and_another_key(seed: Path, folder: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from bundler.signatures.signing import public_of

    _signed(seed, folder)
    reviewer = Ed25519PrivateKey.from_private_bytes(REVIEWER_SEED)
    (folder / "reviewer.pub").write_text(public_of(reviewer).pem(), encoding="utf-8")


@dataclass(frozen=True)
class Golden:
    """One golden: what it shows, the problem code it must name, how its files are made."""

    what: str
    args: tuple[str, ...]
    code: str | None = None  # the stable code the output names as [code]
    make: Make = field(default=_copy)


GOLDENS = {
    "0-supported": Golden("every claim supported", ("verify", SEED)),
    "1-contradicted": Golden(
        "a control's expected verdict flipped: its claim is contradicted",
        ("verify", "flipped.bundle.tar.zst"),
        make=_flip_control,
    ),
    "2-bundle-not-a-file": Golden(
        "usage: the bundle named does not exist", ("verify", "absent.bundle.tar.zst")
    ),
    "2-unknown-option": Golden(
        "usage: an option verify does not have", ("verify", SEED, "--no-such-option")
    ),
    "3-container": Golden(
        "rejected: a zip file, not a compressed tar",
        ("verify", "zip.bundle.tar.zst"),
        "archive.not_compressed_tar",
        _zip,
    ),
    "3-member-name": Golden(
        "rejected: a member named ../evil.txt",
        ("verify", "evil.bundle.tar.zst"),
        "member.name",
        _entries(_evil_name, "evil.bundle.tar.zst"),
    ),
    "3-hash-mismatch": Golden(
        "rejected: one byte of an input changed after the build",
        ("verify", "changed.bundle.tar.zst"),
        "file.hash",
        _entries(_flip_byte, "changed.bundle.tar.zst"),
    ),
    "3-missing-member": Golden(
        "rejected: a listed file removed",
        ("verify", "missing.bundle.tar.zst"),
        "file.missing",
        _entries(_drop_member, "missing.bundle.tar.zst"),
    ),
    "3-extra-member": Golden(
        "rejected: a file the manifest does not list",
        ("verify", "extra.bundle.tar.zst"),
        "member.unlisted",
        _entries(_extra_member, "extra.bundle.tar.zst"),
    ),
    "3-bad-signature": Golden(
        "rejected: the manifest changed after it was signed",
        ("verify", "edited.bundle.tar.zst"),
        "signature.bad",
        _signed_then_edited,
    ),
    "3-untrusted-key": Golden(
        "rejected: signed, but not by the key the reviewer trusts",
        ("verify", "signed.bundle.tar.zst", "--trust", "reviewer.pub"),
        "signature.required",
        _signed_and_another_key,
    ),
    "3-manifest": Golden(
        "rejected: a manifest of an unknown major format version",
        ("verify", "future.bundle.tar.zst"),
        "manifest.unsupported_major",
        _entries(_unknown_major, "future.bundle.tar.zst"),
    ),
    "3-limit": Golden(
        "rejected: a manifest over the limit the reviewer set",
        ("verify", SEED, "--max-manifest-bytes", "100"),
        "limit.manifest_size",
    ),
    "4-inconclusive": Golden(
        "a case input nested 300 deep: that case, so its claims, inconclusive",
        ("verify", "deep.bundle.tar.zst"),
        "input.unreadable",
        _deep_input,
    ),
}


def run_cli(args: tuple[str, ...], folder: Path) -> tuple[int, str, str]:
    """Run ``reprobundle ARGS`` in ``folder``: (exit code, stdout, stderr)."""
    from click.testing import CliRunner

    from bundler.cli import main

    with contextlib.chdir(folder):
        result = CliRunner().invoke(main, list(args), prog_name="reprobundle")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"reprobundle {' '.join(args)} raised") from result.exception
    return result.exit_code, result.stdout, result.stderr


def volatile(folder: Path) -> dict[str, str]:
    """Each volatile value of a run in ``folder`` and its placeholder."""
    import bundler

    out = {str(folder.resolve()): "<folder>", str(folder): "<folder>"}
    for bundle in sorted(folder.glob("*.bundle.tar.*")):
        with contextlib.suppress(Exception):  # a recipe's broken bundle has none
            manifest = _manifest_bytes(bundle)
            out[hashlib.sha256(manifest).hexdigest()] = "<identity>"
            env = tomllib.loads(manifest.decode())["environment"]
            out[f"Python {env['python']} ({env['platform']})"] = "Python <python> (<platform>)"
    env_here = f"Python {platform.python_version()} ({platform.platform()})"
    out[env_here] = "Python <python> (<platform>)"
    out[f"reprobundle {bundler.__version__}"] = "reprobundle <version>"
    return out


def _manifest_bytes(bundle: Path) -> bytes:
    from tests.helpers import read_entries

    return read_entries(bundle)[0].data


def normalise(text: str, folder: Path) -> str:
    # longest first, so a path is replaced before any value inside it
    for value, placeholder in sorted(volatile(folder).items(), key=lambda kv: -len(kv[0])):
        text = text.replace(value, placeholder)
    return text


def record(name: str, seed: Path, work: Path) -> dict[str, Any]:
    """Make golden ``name``'s files in a new folder under ``work``, run it, return the
    golden file's content."""
    golden = GOLDENS[name]
    folder = work / name
    folder.mkdir()
    golden.make(seed, folder)
    code, stdout, stderr = run_cli(golden.args, folder)
    return {
        "what": golden.what,
        "args": list(golden.args),
        "exit_code": code,
        "stdout": normalise(stdout, folder).split("\n"),
        "stderr": normalise(stderr, folder).split("\n"),
    }


def differences(expected: dict[str, Any], observed: dict[str, Any]) -> list[str]:
    """How ``observed`` differs from the golden file ``expected`` (empty: not at all)."""
    out = []
    for key in ("args", "exit_code"):
        if expected.get(key) != observed[key]:
            out.append(f"{key}: expected {expected.get(key)!r}, observed {observed[key]!r}")
    for stream in ("stdout", "stderr"):
        want, got = expected.get(stream, []), observed[stream]
        for i in range(max(len(want), len(got))):
            a = want[i] if i < len(want) else "<no line>"
            b = got[i] if i < len(got) else "<no line>"
            if a != b:
                out.append(f"{stream} line {i + 1}: expected {a!r}, observed {b!r}")
    return out


def to_text(content: dict[str, Any]) -> str:
    return json.dumps(content, indent=2, ensure_ascii=False) + "\n"


def build_seed(work: Path) -> Path:
    from tests.helpers import build_quickstart

    return build_quickstart(work, suffix=".tar.zst")


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(GOLDENS))
    if unknown:
        print(f"no golden named {', '.join(unknown)}; known: {', '.join(GOLDENS)}", file=sys.stderr)
        return 2
    CLI.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reprobundle-golden-cli-") as tmp:
        work = Path(tmp)
        seed = build_seed(work)
        for name in names or list(GOLDENS):
            (CLI / f"{name}.json").write_text(to_text(record(name, seed, work)), encoding="utf-8")
            print(f"wrote {(CLI / name).relative_to(REPO)}.json")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main(sys.argv[1:]))
