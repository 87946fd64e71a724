"""What changed between two versions of a bundle (``reprobundle diff OLD NEW``). Pure.

The result is data in its own versioned format (``DIFF_FORMAT``, documented in
``manifests/DIFF.md``). Expectations come first: a case whose expected verdict flipped
is what a reviewer most needs to see, because it can turn a contradicted claim into a
supported one without any evidence changing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deepdiff import DeepDiff
from deepdiff.helper import notpresent

from .manifest import Case, Claim, Manifest, dotted

DIFF_FORMAT = "reprobundle-diff/1"

_KINDS = {
    "values_changed": "changed",
    "type_changes": "changed",
    "dictionary_item_added": "added",
    "dictionary_item_removed": "removed",
    "iterable_item_added": "added",
    "iterable_item_removed": "removed",
    "set_item_added": "added",
    "set_item_removed": "removed",
}


def changes(old: Any, new: Any) -> list[dict[str, Any]]:
    """Every difference between two plain values, as ``{path, change, old, new}``."""
    found = []
    for report_type, levels in DeepDiff(old, new, view="tree").items():
        for level in levels:
            found.append(
                {
                    "path": dotted(level.path(output_format="list"), root="(all)"),
                    "change": _KINDS.get(report_type, "changed"),
                    "old": None if level.t1 is notpresent else level.t1,
                    "new": None if level.t2 is notpresent else level.t2,
                }
            )
    return sorted(found, key=lambda c: c["path"])


def _case_body(case: Case) -> dict[str, Any]:
    return {
        "checker": case.checker,
        "inputs": {k: v if isinstance(v, str) else list(v) for k, v in case.inputs.items()},
        "params": dict(case.params),
    }


def _expectation(case: Case) -> dict[str, Any]:
    expectation = {"expect": case.expect, "expect_reasons": sorted(case.expect_reasons)}
    return expectation | ({"kind": "finding"} if case.is_finding else {})


def _claim_body(claim: Claim) -> dict[str, Any]:
    return {
        "statement": claim.statement,
        "cases": list(claim.cases),
        "limits": list(claim.limits),
        "negative_control_waiver": claim.negative_control_waiver,
    }


def _input_paths(case: Case, hashes: Mapping[str, str]) -> dict[str, str]:
    """The files a case reads (a folder input: every file under it) with their hashes."""
    out = {}
    for ref in case.inputs.values():
        for path in [ref] if isinstance(ref, str) else ref:
            if path in hashes:
                out[path] = hashes[path]
            else:
                prefix = path.rstrip("/") + "/"
                out.update({p: h for p, h in hashes.items() if p.startswith(prefix)})
    return out


def _code_files(manifest: Manifest, key: str, hashes: Mapping[str, str]) -> dict[str, Any] | None:
    """What a bundled checker runs: its entry, its reason codes and the hash of every
    Python file it can import (the entry's folder is on its path), or None for a
    built-in checker."""
    code = manifest.bundled(key)
    if code is None:
        return None
    folder = code.path.rpartition("/")[0]
    prefix = f"{folder}/" if folder else ""
    files = {
        p: h
        for p, h in hashes.items()
        if p == code.path or (p.startswith(prefix) and p.endswith(".py"))
    }
    return {"entry": code.entry, "reasons": dict(code.reasons), "files": files}


def _code_changes(
    old: Manifest,
    new: Manifest,
    common: list[str],
    old_hashes: Mapping[str, str],
    new_hashes: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Cases in both whose bundled checker code is not the same: the same expectation can
    now be met by other code, which no changed case or claim would show."""
    out = []
    old_cases = {c.id: c for c in old.cases}
    new_cases = {c.id: c for c in new.cases}
    for case_id in common:
        before = _code_files(old, old_cases[case_id].checker, old_hashes)
        after = _code_files(new, new_cases[case_id].checker, new_hashes)
        if before is None or after is None or before == after:
            continue
        files = sorted(
            p
            for p in {*before["files"], *after["files"]}
            if before["files"].get(p) != after["files"].get(p)
        )
        out.append(
            {
                "case": case_id,
                "checker": new_cases[case_id].checker,
                "files_changed": files,
                "entry": {"old": before["entry"], "new": after["entry"]},
                "reasons_changed": before["reasons"] != after["reasons"],
                "claims": [c.id for c in new.claims if case_id in c.cases],
            }
        )
    return out


def _added_removed(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    return [k for k in new if k not in old], [k for k in old if k not in new]


def diff(
    old: Manifest,
    new: Manifest,
    old_identity: str,
    new_identity: str,
    old_file: str = "",
    new_file: str = "",
) -> dict[str, Any]:
    """Compare two manifests (already read strictly and checked against their files)."""
    old_cases = {c.id: c for c in old.cases}
    new_cases = {c.id: c for c in new.cases}
    common = [k for k in old_cases if k in new_cases]

    expectations = []
    for case_id in common:
        before, after = _expectation(old_cases[case_id]), _expectation(new_cases[case_id])
        if before != after:
            expectations.append(
                {
                    "case": case_id,
                    "flipped": before["expect"] != after["expect"],
                    "old": before,
                    "new": after,
                    "claims": [c.id for c in new.claims if case_id in c.cases],
                }
            )

    old_hashes = {f.path: f.sha256 for f in old.files}
    new_hashes = {f.path: f.sha256 for f in new.files}
    old_sizes = {f.path: f.size for f in old.files}
    new_sizes = {f.path: f.size for f in new.files}
    files_added, files_removed = _added_removed(old_hashes, new_hashes)
    files_changed = [
        {
            "path": path,
            "old_sha256": old_hashes[path],
            "new_sha256": new_hashes[path],
            "old_size": old_sizes[path],
            "new_size": new_sizes[path],
        }
        for path in old_hashes
        if path in new_hashes and old_hashes[path] != new_hashes[path]
    ]

    cases_added, cases_removed = _added_removed(old_cases, new_cases)
    cases_changed = []
    for case_id in common:
        found = changes(_case_body(old_cases[case_id]), _case_body(new_cases[case_id]))
        before = _input_paths(old_cases[case_id], old_hashes)
        after = _input_paths(new_cases[case_id], new_hashes)
        content = sorted(p for p in before if p in after and before[p] != after[p])
        if found or content:
            cases_changed.append(
                {"case": case_id, "changes": found, "input_content_changed": content}
            )

    old_claims = {c.id: c for c in old.claims}
    new_claims = {c.id: c for c in new.claims}
    claims_added, claims_removed = _added_removed(old_claims, new_claims)
    claims_changed = []
    for claim_id in old_claims:
        if claim_id in new_claims:
            found = changes(_claim_body(old_claims[claim_id]), _claim_body(new_claims[claim_id]))
            if found:
                claims_changed.append({"claim": claim_id, "changes": found})

    def about(m: Manifest) -> dict[str, Any]:
        return {
            "name": m.name,
            "version": m.version,
            "title": m.title,
            "description": m.description,
            "format": m.format,
        }

    result: dict[str, Any] = {
        "diff_format": DIFF_FORMAT,
        "old": {
            "file": old_file,
            "name": old.name,
            "version": old.version,
            "identity": old_identity,
        },
        "new": {
            "file": new_file,
            "name": new.name,
            "version": new.version,
            "identity": new_identity,
        },
        "identical": old_identity == new_identity,
        "expectations_changed": expectations,
        "checker_code_changed": _code_changes(old, new, common, old_hashes, new_hashes),
        "cases": {"added": cases_added, "removed": cases_removed, "changed": cases_changed},
        "claims": {"added": claims_added, "removed": claims_removed, "changed": claims_changed},
        "scope": {
            "added": [s for s in new.cannot_support if s not in old.cannot_support],
            "removed": [s for s in old.cannot_support if s not in new.cannot_support],
        },
        "files": {"added": files_added, "removed": files_removed, "changed": files_changed},
        "bundle": changes(about(old), about(new)),
        "environment": changes(dict(old.environment), dict(new.environment)),
    }
    return result


def summary_counts(result: Mapping[str, Any]) -> dict[str, int]:
    """How many things changed, by kind (for the headline)."""
    return {
        "expectations": len(result["expectations_changed"]),
        "flipped": sum(1 for x in result["expectations_changed"] if x["flipped"]),
        "code": len(result.get("checker_code_changed", [])),
        "cases": sum(len(result["cases"][k]) for k in ("added", "removed", "changed")),
        "claims": sum(len(result["claims"][k]) for k in ("added", "removed", "changed")),
        "scope": len(result["scope"]["added"]) + len(result["scope"]["removed"]),
        "files": sum(len(result["files"][k]) for k in ("added", "removed", "changed")),
        "bundle": len(result["bundle"]),
        "environment": len(result["environment"]),
    }
