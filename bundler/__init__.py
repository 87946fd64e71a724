"""reprobundle: build and verify reproducibility bundles.

The public API is what this module names in ``__all__``::

    import bundler

    built = bundler.build(source_folder, out_file)           # a BuildResult
    verification = bundler.verify(built.path)                # a Verification
    report = bundler.to_json(verification)                   # the JSON report (a dict)

Everything else lives in subpackages whose layout may change: authoring (bundle.yaml ->
bundle), container (the tar read and written), format (manifest, claims), signatures,
run (cases, bundled code), reports, store (the audit archive; ``bundler.store.Archive``
is its API) and cli (a thin shell over all of them). Nothing in this package prints.

``import bundler`` stays cheap (the command line imports it on every run): a name is
imported from its module the first time it is used (PEP 562).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (6 ms of a cold start)

__version__ = "0.1.0"

# public name -> "module" (the same name there) or "module:name"
_EXPORTS: dict[str, str] = {
    # building, verifying, signing
    "build": "bundler.authoring.build",
    "BuildResult": "bundler.authoring.build",
    "read_source_date_epoch": "bundler.authoring.build",
    "verify": "bundler.run.verify",
    "check_integrity": "bundler.run.verify",
    "sign": "bundler.signatures.signfile:sign_bundle",
    "write_key_pair": "bundler.signatures.keyfiles",
    "read_private_key": "bundler.signatures.keyfiles",
    "KeyPair": "bundler.signatures.keyfiles",
    # results
    "Verification": "bundler.run.verify",
    "CodeRun": "bundler.run.verify",
    "CheckedBundle": "bundler.container.extract",
    "Manifest": "bundler.format.manifest",
    "CaseResult": "bundler.format.results",
    "Outcome": "bundler.format.results",
    "ClaimResult": "bundler.format.claims",
    "ClaimStatus": "bundler.format.claims",
    "SignatureCheck": "bundler.signatures.trust",
    # limits, budgets and policies
    "Limits": "bundler.container.extract",
    "CASE_SECONDS": "bundler.run.runner",
    "CASE_MEMORY": "bundler.run.runner",
    "VERIFY_SECONDS": "bundler.run.runner",
    "CodeLimits": "bundler.run.sandbox",
    "CodePolicy": "bundler.run.sandbox",
    "Policy": "bundler.signatures.trust",
    "TrustedKey": "bundler.signatures.trust",
    "load_policy": "bundler.signatures.trust",
    "load_trusted_keys": "bundler.signatures.trust",
    # the JSON report
    "to_json": "bundler.reports.document",
    "rejection_json": "bundler.reports.document",
    "REPORT_FORMAT": "bundler.reports.document",
    # errors
    "BundlerError": "bundler.errors",
    "Problem": "bundler.errors",
    "UsageError": "bundler.errors",
    "SourceError": "bundler.errors",
    "BundleRejected": "bundler.errors",
    "BuildRefused": "bundler.errors",
}

__all__ = [
    "CASE_MEMORY",
    "CASE_SECONDS",
    "REPORT_FORMAT",
    "VERIFY_SECONDS",
    "BuildRefused",
    "BuildResult",
    "BundleRejected",
    "BundlerError",
    "CaseResult",
    "CheckedBundle",
    "ClaimResult",
    "ClaimStatus",
    "CodeLimits",
    "CodePolicy",
    "CodeRun",
    "KeyPair",
    "Limits",
    "Manifest",
    "Outcome",
    "Policy",
    "Problem",
    "SignatureCheck",
    "SourceError",
    "TrustedKey",
    "UsageError",
    "Verification",
    "__version__",
    "build",
    "check_integrity",
    "load_policy",
    "load_trusted_keys",
    "read_private_key",
    "read_source_date_epoch",
    "rejection_json",
    "sign",
    "to_json",
    "verify",
    "write_key_pair",
]


def __getattr__(name: str) -> object:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # the same names, for type checkers and editors (a test keeps them alike)
    from bundler.authoring.build import BuildResult, build, read_source_date_epoch
    from bundler.container.extract import CheckedBundle, Limits
    from bundler.errors import (
        BuildRefused,
        BundleRejected,
        BundlerError,
        Problem,
        SourceError,
        UsageError,
    )
    from bundler.format.claims import ClaimResult, ClaimStatus
    from bundler.format.manifest import Manifest
    from bundler.format.results import CaseResult, Outcome
    from bundler.reports.document import REPORT_FORMAT, rejection_json, to_json
    from bundler.run.runner import CASE_MEMORY, CASE_SECONDS, VERIFY_SECONDS
    from bundler.run.sandbox import CodeLimits, CodePolicy
    from bundler.run.verify import CodeRun, Verification, check_integrity, verify
    from bundler.signatures.keyfiles import KeyPair, read_private_key, write_key_pair
    from bundler.signatures.signfile import sign_bundle as sign
    from bundler.signatures.trust import (
        Policy,
        SignatureCheck,
        TrustedKey,
        load_policy,
        load_trusted_keys,
    )
