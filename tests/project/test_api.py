"""The public Python API (``import bundler``), and the decisions a library user needs that
the command line used to make on its own: trusted keys, the identity pin, key files,
SOURCE_DATE_EPOCH, the bundled-code limit defaults."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
import types
from pathlib import Path

import pytest

import bundler
from tests.helpers import REPO

HEAVY = ("checkers", "cryptography", "click", "rich", "zstandard", "tomli", "ruamel", "yaml")


def modules_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def heavy(modules: list[str]) -> list[str]:
    """The modules of the library (but its one-line ``bundler.version``) and the heavy
    dependencies."""
    library = [m for m in modules if m.startswith("bundler.") and m != "bundler.version"]
    return library + [m for m in modules if m.split(".")[0] in HEAVY]


def test_import_bundler_loads_no_heavy_module() -> None:
    assert heavy(modules_after("import bundler")) == []


def test_using_a_public_name_imports_its_module_then() -> None:
    """The check above can fail: naming ``bundler.verify`` does load the verifier."""
    loaded = heavy(modules_after("import bundler; bundler.verify"))
    assert "bundler.run.verify" in loaded
    assert "checkers" in loaded


def test_every_public_name_resolves_and_is_not_a_module() -> None:
    for name in bundler.__all__:
        value = getattr(bundler, name)
        assert not isinstance(value, types.ModuleType), name


def test_dir_lists_every_public_name() -> None:
    assert set(bundler.__all__) <= set(dir(bundler))


def test_the_public_names_are_the_functions_and_types_not_modules() -> None:
    from bundler.run import verify as verify_module
    from bundler.signatures.signfile import sign_bundle

    assert bundler.verify is verify_module.verify
    assert bundler.check_integrity is verify_module.check_integrity
    assert bundler.sign is sign_bundle
    assert issubclass(bundler.BundleRejected, bundler.BundlerError)
    assert {bundler.UsageError, bundler.SourceError, bundler.BuildRefused} <= set(
        bundler.BundlerError.__subclasses__()
    )


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'verify_everything'"):
        bundler.verify_everything  # noqa: B018


def test_all_the_lazy_table_and_the_type_checking_imports_agree() -> None:
    """The public names are written once for the program (the table ``__getattr__`` reads,
    of which ``__all__`` is made) and once for type checkers (the imports they read, each
    an explicit re-export): the two cannot drift apart."""
    tree = ast.parse((REPO / "bundler" / "__init__.py").read_text("utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If))
    imported = {
        (alias.asname or alias.name): f"{node.module}"
        + (f":{alias.name}" if alias.asname and alias.asname != alias.name else "")
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    table = bundler._EXPORTS
    assert imported == table
    assert bundler.__all__ == ["__version__", *table]
    assert all(
        alias.asname
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ), "each re-export is explicit (name as name), as strict type checkers want"


def test_no_two_public_names_are_one_word_for_different_things() -> None:
    """``bundler.X`` and ``bundler.store.X`` are the same thing when both exist (the case
    outcome and the archive's re-verification were both called ``Outcome``)."""
    import bundler.store

    for name in set(bundler.__all__) & set(bundler.store.__all__):
        assert getattr(bundler, name) is getattr(bundler.store, name), name
    assert "Outcome" not in bundler.store.__all__


def test_api_keeps_the_library_words() -> None:
    """What the brief names is there: build, verify, check_integrity, sign, the results,
    limits and policies, the errors and the JSON report."""
    wanted = {
        "build",
        "verify",
        "check_integrity",
        "sign",
        "Verification",
        "CaseResult",
        "ClaimResult",
        "CheckedBundle",
        "Limits",
        "Policy",
        "CodePolicy",
        "CodeLimits",
        "BundlerError",
        "to_json",
    }
    assert wanted <= set(bundler.__all__)


# --- no result names a deleted folder ----------------------------------------------------


def test_a_verification_names_no_folder_unless_it_was_kept(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    gone = bundler.verify(quickstart_bundle)
    assert gone.workdir is None and gone.root is None
    assert not hasattr(gone.extracted, "root")
    kept = bundler.verify(quickstart_bundle, workdir=tmp_path / "w", keep=True)
    assert kept.root == tmp_path / "w" / "quickstart-1.0.0"
    assert kept.root is not None and (kept.root / "README.md").is_file()


def test_check_integrity_returns_facts_without_a_folder(quickstart_bundle: Path) -> None:
    checked = bundler.check_integrity(quickstart_bundle)
    assert isinstance(checked, bundler.CheckedBundle)
    assert not hasattr(checked, "root")
    assert checked.identity == bundler.verify(quickstart_bundle).extracted.identity


# --- trust: the library fails closed as verify does ------------------------------------------


@pytest.fixture(scope="module")
def signed(quickstart_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bundler.signatures.signing import new_private_key

    target = tmp_path_factory.mktemp("api-signed") / "signed.bundle.tar.gz"
    bundler.sign(quickstart_bundle, new_private_key(), out=target)
    return target


def other_key(tmp_path: Path) -> Path:
    pair = bundler.write_key_pair("bob", tmp_path / "keys", None)
    return pair.public_path


def test_naming_trusted_keys_rejects_a_bundle_they_did_not_sign(
    signed: Path, quickstart_bundle: Path, tmp_path: Path
) -> None:
    policy = bundler.load_policy([other_key(tmp_path)])
    for bundle in (signed, quickstart_bundle):  # signed by another key; unsigned
        with pytest.raises(bundler.BundleRejected) as caught:
            bundler.verify(bundle, bundler.VerifyOptions(policy=policy))
        assert [p.code for p in caught.value.problems] == ["signature.required"]


def test_allow_unsigned_makes_trusted_keys_only_name_the_signers(
    signed: Path, tmp_path: Path
) -> None:
    policy = bundler.load_policy([other_key(tmp_path)], allow_unsigned=True)
    assert (
        bundler.verify(signed, bundler.VerifyOptions(policy=policy)).signature.state
        == "unknown-key"
    )


def test_the_identity_pin_is_read_once_whatever_its_spelling(quickstart_bundle: Path) -> None:
    identity = bundler.check_integrity(quickstart_bundle).identity
    for spelling in (identity, identity.upper(), f"sha256:{identity}"):
        policy = bundler.Policy(expect_manifest_sha256=spelling)
        assert policy.expect_manifest_sha256 == identity
        assert bundler.verify(
            quickstart_bundle, bundler.VerifyOptions(policy=policy)
        ).signature.pinned
    with pytest.raises(bundler.UsageError, match="64 hex digits"):
        bundler.Policy(expect_manifest_sha256=identity[:-1])
    with pytest.raises(bundler.UsageError, match="64 hex digits"):
        bundler.load_policy(expect_manifest_sha256="sha512:" + identity)


def test_a_required_signature_with_no_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(bundler.UsageError, match="needs --trust"):
        bundler.Policy(require_signature=True)
    with pytest.raises(bundler.UsageError, match="contradict"):
        bundler.load_policy([other_key(tmp_path)], require_signature=True, allow_unsigned=True)


def test_load_policy_reads_key_files_and_a_trust_store(tmp_path: Path) -> None:
    bob = bundler.write_key_pair("bob", tmp_path, None)
    store = tmp_path / "trust.toml"
    store.write_text(f'[[key]]\nname = "carol"\npublic_key = "ed25519:{bob.public.b64}"\n')
    keys = bundler.load_trusted_keys([bob.public_path], store)
    assert [k.name for k in keys] == ["bob.pub", "carol"]
    assert bundler.load_policy([bob.public_path], store).trusted == keys


# --- key files ------------------------------------------------------------------------------


def test_write_key_pair_writes_a_private_file_only_its_owner_reads(tmp_path: Path) -> None:
    pair = bundler.write_key_pair("alice", tmp_path / "new", b"correct horse")
    assert stat.S_IMODE(pair.private_path.stat().st_mode) == 0o600
    assert pair.public_path == tmp_path / "new" / "alice.pub"
    assert pair.public.keyid in {k.key.keyid for k in bundler.load_trusted_keys([pair.public_path])}
    asked: list[bool] = []
    key = bundler.read_private_key(
        pair.private_path, lambda: asked.append(True) or b"correct horse"
    )
    assert asked == [True]
    assert key.public_key().public_bytes_raw() == pair.public.raw


def test_write_key_pair_refuses_to_overwrite_and_asks_no_passphrase_first(
    tmp_path: Path,
) -> None:
    bundler.write_key_pair("alice", tmp_path, None)
    before = (tmp_path / "alice.key").read_bytes()
    asked: list[bool] = []
    with pytest.raises(bundler.UsageError, match="refusing to overwrite"):
        bundler.write_key_pair("alice", tmp_path, lambda: asked.append(True) or None)
    assert asked == [] and (tmp_path / "alice.key").read_bytes() == before


@pytest.mark.parametrize("name", ["", "../x", ".hidden"])
def test_write_key_pair_refuses_a_name_that_is_not_a_file_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(bundler.UsageError, match="plain file name"):
        bundler.write_key_pair(name, tmp_path, None)


def test_write_key_pair_refuses_an_empty_passphrase(tmp_path: Path) -> None:
    with pytest.raises(bundler.UsageError, match="empty passphrase"):
        bundler.write_key_pair("alice", tmp_path, b"")
    assert list(tmp_path.iterdir()) == []


def test_read_private_key_asks_no_passphrase_for_a_plain_key(tmp_path: Path) -> None:
    pair = bundler.write_key_pair("alice", tmp_path, None)
    bundler.read_private_key(pair.private_path, lambda: pytest.fail("asked"))  # type: ignore[arg-type,return-value]
    with pytest.raises(bundler.UsageError, match="cannot read key"):
        bundler.read_private_key(tmp_path / "missing.key")


# --- SOURCE_DATE_EPOCH and the bundled-code limits -------------------------------------------


@pytest.mark.parametrize("text", ["-1", "1.5", "soon", str(8**11), "\u0661"])
def test_a_bad_source_date_epoch_is_a_usage_error(text: str) -> None:
    with pytest.raises(bundler.UsageError, match="SOURCE_DATE_EPOCH must be a whole number"):
        bundler.read_source_date_epoch({"SOURCE_DATE_EPOCH": text})


def test_source_date_epoch_defaults_to_zero() -> None:
    assert bundler.read_source_date_epoch({}) == 0
    assert bundler.read_source_date_epoch({"SOURCE_DATE_EPOCH": "1700000000"}) == 1700000000


def test_build_reads_source_date_epoch_when_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers import QUICKSTART

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1234567")
    built = bundler.build(QUICKSTART, tmp_path / "q.bundle.tar.gz")
    assert built.manifest.environment["source_date_epoch"] == 1234567


def test_the_cli_reads_its_bundled_code_defaults_from_the_library() -> None:
    from bundler.cli.verify import verify

    defaults = {p.name: p.default for p in verify.params}
    limits = bundler.CodeLimits()
    assert defaults["code_timeout"] == limits.timeout
    assert defaults["code_memory"] == limits.memory_bytes
    assert defaults["code_output"] == limits.output_bytes
    assert defaults["code_processes"] == limits.processes
    assert defaults["code_written_bytes"] == limits.written_bytes
    assert defaults["case_timeout"] == bundler.CASE_SECONDS
    assert defaults["case_memory"] == bundler.CASE_MEMORY
    assert defaults["time_limit"] == bundler.VERIFY_SECONDS


def test_cpu_seconds_follow_the_timeout_one_past_it() -> None:
    assert bundler.CodeLimits().cpu_seconds == 61  # what verify has always given
    assert bundler.CodeLimits(timeout=3.5).cpu_seconds == 4
    assert bundler.CodeLimits(timeout=0.1).cpu_seconds == 1


def test_the_trust_options_are_declared_once() -> None:
    sources = {p.name: p.read_text("utf-8") for p in (REPO / "bundler" / "cli").glob("*.py")}
    declaring = sorted(name for name, text in sources.items() if '"--trust-store"' in text)
    assert declaring == ["_shared.py"]
