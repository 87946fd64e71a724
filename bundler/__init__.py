"""reprobundle: build and verify reproducibility bundles.

The public API is what this module names in ``__all__`` (the table ``_EXPORTS``: each
public name and the module it lives in)::

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

from bundler.version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (6 ms of a cold start)

# public name -> "module" (the same name there) or "module:name"
_EXPORTS: dict[str, str] = {
    # building, verifying, signing
    "build": "bundler.authoring.build",
    "BuildResult": "bundler.authoring.build",
    "read_source_date_epoch": "bundler.authoring.build",
    "verify": "bundler.run.verify",
    "check_integrity": "bundler.run.verify",
    "sign": "bundler.signatures.signfile:sign_bundle",
    "redact": "bundler.authoring.redact",
    "Redacted": "bundler.authoring.redact",
    "write_key_pair": "bundler.signatures.keyfiles",
    "read_private_key": "bundler.signatures.keyfiles",
    "KeyPair": "bundler.signatures.keyfiles",
    # results
    "Verification": "bundler.run.verify",
    "VerifyOptions": "bundler.run.verify",
    "CaseBudget": "bundler.run.limits",
    "CheckedBundle": "bundler.container.extract",
    "CaseResult": "bundler.format.results",
    "ClaimResult": "bundler.format.claims",
    # limits, budgets and policies
    "Limits": "bundler.container.extract",
    "CASE_SECONDS": "bundler.run.limits",
    "CASE_MEMORY": "bundler.run.limits",
    "VERIFY_SECONDS": "bundler.run.limits",
    "CodeLimits": "bundler.run.isolation",
    "CodePolicy": "bundler.run.isolation",
    "Policy": "bundler.signatures.trust",
    "TrustedKey": "bundler.signatures.trust",
    "load_policy": "bundler.signatures.truststore",
    "load_trusted_keys": "bundler.signatures.truststore",
    # the JSON report
    "to_json": "bundler.reports.document",
    "rejection_json": "bundler.reports.document",
    # errors
    "BundlerError": "bundler.errors",
    "UsageError": "bundler.errors",
    "SourceError": "bundler.errors",
    "BundleRejected": "bundler.errors",
    "BuildRefused": "bundler.errors",
}

__all__ = ["__version__", *_EXPORTS]  # the one list of public names: the table above


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


if TYPE_CHECKING:  # the same names for type checkers, which cannot follow __getattr__
    from bundler.authoring.build import BuildResult as BuildResult
    from bundler.authoring.build import build as build
    from bundler.authoring.build import read_source_date_epoch as read_source_date_epoch
    from bundler.authoring.redact import Redacted as Redacted
    from bundler.authoring.redact import redact as redact
    from bundler.container.extract import CheckedBundle as CheckedBundle
    from bundler.container.extract import Limits as Limits
    from bundler.errors import BuildRefused as BuildRefused
    from bundler.errors import BundleRejected as BundleRejected
    from bundler.errors import BundlerError as BundlerError
    from bundler.errors import SourceError as SourceError
    from bundler.errors import UsageError as UsageError
    from bundler.format.claims import ClaimResult as ClaimResult
    from bundler.format.results import CaseResult as CaseResult
    from bundler.reports.document import rejection_json as rejection_json
    from bundler.reports.document import to_json as to_json
    from bundler.run.isolation import CodeLimits as CodeLimits
    from bundler.run.isolation import CodePolicy as CodePolicy
    from bundler.run.limits import CASE_MEMORY as CASE_MEMORY
    from bundler.run.limits import CASE_SECONDS as CASE_SECONDS
    from bundler.run.limits import VERIFY_SECONDS as VERIFY_SECONDS
    from bundler.run.limits import CaseBudget as CaseBudget
    from bundler.run.verify import Verification as Verification
    from bundler.run.verify import VerifyOptions as VerifyOptions
    from bundler.run.verify import check_integrity as check_integrity
    from bundler.run.verify import verify as verify
    from bundler.signatures.keyfiles import KeyPair as KeyPair
    from bundler.signatures.keyfiles import read_private_key as read_private_key
    from bundler.signatures.keyfiles import write_key_pair as write_key_pair
    from bundler.signatures.signfile import sign_bundle as sign  # noqa: F401 (in __all__)
    from bundler.signatures.trust import Policy as Policy
    from bundler.signatures.trust import TrustedKey as TrustedKey
    from bundler.signatures.truststore import load_policy as load_policy
    from bundler.signatures.truststore import load_trusted_keys as load_trusted_keys
