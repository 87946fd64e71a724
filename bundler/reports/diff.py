"""What changed between two versions of a bundle (``reprobundle diff OLD NEW``). Pure.

The result is data in its own versioned format (``DIFF_FORMAT``, documented in
``manifests/DIFF.md``). Expectations come first: a case whose expected verdict flipped
is what a reviewer most needs to see, because it can turn a contradicted claim into a
supported one without any evidence changing.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from bundler.format.claims import advisories_of
from bundler.format.manifest import Case, Claim, Manifest
from bundler.format.withheld import Withheld

DIFF_FORMAT = "reprobundle-diff/1"


# A list of changes holds at most this many, the first by path; the count of the rest is
# given beside it (``changes_omitted``): two 16 MiB manifests can differ at a million places
LISTED = 1000


def changes(old: Any, new: Any) -> list[dict[str, Any]]:
    """Every difference between two plain values, as ``{path, change, old, new}`` (the
    first ``LISTED`` by path: ``counted_changes`` says how many there are)."""
    return counted_changes(old, new)[0]


def counted_changes(old: Any, new: Any, limit: int = LISTED) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` differences between two plain values by path, and how many
    there are in all.

    Linear in the size of the two values, in memory bounded by ``limit`` beyond the values
    themselves (a manifest may be 16 MiB, and the bundles are untrusted): mappings are
    compared key by key; lists by position, after the items they share at both ends are
    set aside, so one item added or removed anywhere is one change; any other value is
    compared whole (a changed text is one change). The pairs still to compare are
    generated as they are reached, never listed."""
    total = [0]

    def counted() -> Iterator[_Found]:
        for change in _walk(old, new):
            total[0] += 1
            yield change

    listed = heapq.nsmallest(limit, counted(), key=itemgetter(0))
    return [_change(*found) for found in listed], total[0]


# one change as the walk finds it: its path as ``dotted`` writes it ("" for the whole
# value), the kind, the old value and the new; made a mapping only when it is listed
_Found = tuple[str, str, Any, Any]
_Pairs = Iterator[tuple[str, Any, Any]]
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _walk(old: Any, new: Any) -> Iterator[_Found]:
    todo: list[_Pairs] = [iter([("", old, new)])]
    while todo:
        pair = next(todo[-1], None)
        if pair is None:
            todo.pop()
            continue
        path, before, after = pair
        kind = type(before)
        if kind is type(after) and before == after:
            continue
        if kind in _SCALARS or type(after) in _SCALARS:  # the common case, decided first
            yield path, "changed", before, after
        elif isinstance(before, Mapping) and isinstance(after, Mapping):
            for key in before:
                if key not in after:
                    yield _child(path, key), "removed", before[key], None
            for key in after:
                if key not in before:
                    yield _child(path, key), "added", None, after[key]
            todo.append(_pairs_of(path, before, after, [k for k in before if k in after]))
        elif isinstance(before, list | tuple) and isinstance(after, list | tuple):
            yield from _list_changes(path, before, after, todo)
        else:
            yield path, "changed", before, after


def _child(path: str, part: Any) -> str:
    """``dotted`` of the parts of ``path`` and ``part``."""
    if isinstance(part, int):
        return f"{path}[{part}]"
    return f"{path}.{part}" if path else str(part)


def _pairs_of(path: str, before: Any, after: Any, keys: Iterable[Any]) -> _Pairs:
    for key in keys:
        yield _child(path, key), before[key], after[key]


def _items_of(path: str, before: Any, after: Any, indexes: range) -> _Pairs:
    for i in indexes:
        yield f"{path}[{i}]", before[i], after[i]


def _list_changes(
    path: str, before: Sequence[Any], after: Sequence[Any], todo: list[_Pairs]
) -> Iterator[_Found]:
    """The added and removed items; the pairs still to compare go on ``todo``."""
    start, shorter = 0, min(len(before), len(after))
    while start < shorter and _same(before[start], after[start]):
        start += 1
    end = 0  # items equal at the end, not overlapping the start
    while end < shorter - start and _same(before[-1 - end], after[-1 - end]):
        end += 1
    old_middle = range(start, len(before) - end)
    new_middle = range(start, len(after) - end)
    pairs = min(len(old_middle), len(new_middle))
    for i in old_middle[pairs:]:
        yield f"{path}[{i}]", "removed", before[i], None
    for i in new_middle[pairs:]:
        yield f"{path}[{i}]", "added", None, after[i]
    todo.append(_items_of(path, before, after, old_middle[:pairs]))


def _omitted(listed: list[dict[str, Any]], total: int) -> dict[str, int]:
    """``{"changes_omitted": N}`` when ``N`` changes were left out of ``listed``, else {}."""
    return {"changes_omitted": total - len(listed)} if total > len(listed) else {}


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _change(path: str, change: str, old: Any, new: Any) -> dict[str, Any]:
    return {"path": path or "(all)", "change": change, "old": old, "new": new}


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


def _refs(case: Case) -> tuple[str, ...]:
    return tuple(
        p for ref in case.inputs.values() for p in ([ref] if isinstance(ref, str) else ref)
    )


def _files_of(path: str, hashes: Mapping[str, str], ordered: Sequence[str]) -> dict[str, str]:
    """The file ``path`` (or, for a folder, every file under it) with its hash;
    ``ordered`` is ``sorted(hashes)``, so a folder is found by bisection, not a scan."""
    if path in hashes:
        return {path: hashes[path]}
    prefix = path.rstrip("/") + "/"
    out = {}
    at = bisect.bisect_left(ordered, prefix)
    while at < len(ordered) and ordered[at].startswith(prefix):
        out[ordered[at]] = hashes[ordered[at]]
        at += 1
    return out


def _code_files(manifest: Manifest, key: str, hashes: Mapping[str, str]) -> dict[str, Any] | None:
    """What a bundled checker runs: its entry, its reason codes and the hash of every
    Python file it can import (the entry's folder is on its path), or None for a
    built-in checker."""
    code = manifest.bundled(key)
    if code is None:
        return None
    files = {p: hashes[p] for p in code.code_files(hashes)}
    return {"entry": code.entry, "reasons": dict(code.reasons), "files": files}


def _code_changes(
    old: Manifest,
    new: Manifest,
    common: list[str],
    old_hashes: Mapping[str, str],
    new_hashes: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Cases in both whose bundled checker code is not the same: the same expectation can
    now be met by other code. Each checker's files are gathered once, not once a case."""
    out = []
    old_cases = {c.id: c for c in old.cases}
    new_cases = {c.id: c for c in new.cases}
    cited = _citing(new)
    old_code: dict[str, dict[str, Any] | None] = {}
    new_code: dict[str, dict[str, Any] | None] = {}
    for case_id in common:
        old_key, new_key = old_cases[case_id].checker, new_cases[case_id].checker
        if old_key not in old_code:
            old_code[old_key] = _code_files(old, old_key, old_hashes)
        if new_key not in new_code:
            new_code[new_key] = _code_files(new, new_key, new_hashes)
        before, after = old_code[old_key], new_code[new_key]
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
                "claims": cited.get(case_id, []),
            }
        )
    return out


def _citing(manifest: Manifest) -> dict[str, list[str]]:
    """Case id -> the ids of the claims that cite it, in claim order (one pass)."""
    cited: dict[str, list[str]] = {}
    for claim in manifest.claims:
        for case_id in dict.fromkeys(claim.cases):
            cited.setdefault(case_id, []).append(claim.id)
    return cited


class _Content:
    """Which input files of a case changed content, each input path compared once: many
    cases reading one folder cost the folder's size once, not once a case."""

    def __init__(self, old: Mapping[str, str], new: Mapping[str, str]) -> None:
        self.old, self.new = old, new
        self.old_order, self.new_order = sorted(old), sorted(new)
        self.memo: dict[str, list[str]] = {}

    def _changed(self, ref: str) -> list[str]:
        if ref not in self.memo:
            self.memo[ref] = self._compare((ref,), (ref,))
        return self.memo[ref]

    def _compare(self, old_refs: Sequence[str], new_refs: Sequence[str]) -> list[str]:
        before = {k: v for r in old_refs for k, v in _files_of(r, self.old, self.old_order).items()}
        after = {k: v for r in new_refs for k, v in _files_of(r, self.new, self.new_order).items()}
        return sorted(p for p in before if p in after and before[p] != after[p])

    def changed(self, old_case: Case, new_case: Case) -> list[str]:
        old_refs, new_refs = _refs(old_case), _refs(new_case)
        if old_refs != new_refs:
            return self._compare(old_refs, new_refs)
        return sorted({p for ref in old_refs for p in self._changed(ref)})


def _added_removed(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    return [k for k in new if k not in old], [k for k in old if k not in new]


def diff(
    old: Manifest,
    new: Manifest,
    old_identity: str,
    new_identity: str,
    old_file: str = "",
    new_file: str = "",
    old_withheld: Withheld | None = None,
    new_withheld: Withheld | None = None,
) -> dict[str, Any]:
    """Compare two manifests (already read strictly and checked against their files), and
    what each bundle withholds (a redacted bundle: the files are compared by the digests
    the manifest binds, so a bundle and its redacted copy differ only there)."""
    old_cases = {c.id: c for c in old.cases}
    new_cases = {c.id: c for c in new.cases}
    common = [k for k in old_cases if k in new_cases]
    old_hashes = {f.path: f.sha256 for f in old.files}
    new_hashes = {f.path: f.sha256 for f in new.files}
    old_scope, new_scope = set(old.cannot_support), set(new.cannot_support)
    expectations = _expectations_changed(old_cases, new_cases, common, new)
    code = _code_changes(old, new, common, old_hashes, new_hashes)
    cases = _cases_diff(
        old_cases,
        new_cases,
        common,
        _Content(old_hashes, new_hashes),
        {c["case"]: c["files_changed"] for c in code},
    )
    changed_cases = {c["case"] for c in cases["changed"]} | {e["case"] for e in expectations}
    about, about_total = counted_changes(_about(old), _about(new))
    environment, environment_total = counted_changes(dict(old.environment), dict(new.environment))
    omitted = {
        section: total - len(listed)
        for section, listed, total in (
            ("bundle", about, about_total),
            ("environment", environment, environment_total),
        )
        if total > len(listed)
    }
    return {
        "diff_format": DIFF_FORMAT,
        "old": _side(old, old_identity, old_file),
        "new": _side(new, new_identity, new_file),
        "identical": old_identity == new_identity,
        "expectations_changed": expectations,
        "checker_code_changed": code,
        "cases": cases,
        "claims": _claims_diff(old, new, changed_cases),
        "scope": {
            "added": [s for s in new.cannot_support if s not in old_scope],
            "removed": [s for s in old.cannot_support if s not in new_scope],
        },
        "files": _files_diff(old, new),
        "advisories": _advisories_diff(old, new),
        "bundle": about,
        "environment": environment,
        **({"changes_omitted": omitted} if omitted else {}),
        "withheld": _withheld_diff(old_withheld, new_withheld),
    }


def _withheld_diff(old: Withheld | None, new: Withheld | None) -> dict[str, Any]:
    """The files withheld in NEW and not in OLD, and the reverse (path, size, digest,
    reason): what one bundle holds and the other does not, by the same digest."""
    before = {f.path: f for f in old.files} if old else {}
    after = {f.path: f for f in new.files} if new else {}
    return {
        "withheld_in_new": [after[p].to_dict() for p in sorted(set(after) - set(before))],
        "withheld_in_old": [before[p].to_dict() for p in sorted(set(before) - set(after))],
    }


def same_evidence_but_withheld(result: Mapping[str, Any]) -> bool:
    """One manifest (so one identity) on both sides, but not the same files withheld."""
    held = result.get("withheld") or {}
    return bool(
        result["identical"] and (held.get("withheld_in_new") or held.get("withheld_in_old"))
    )


def _side(manifest: Manifest, identity: str, file: str) -> dict[str, Any]:
    return {
        "file": file,
        "name": manifest.name,
        "version": manifest.version,
        "identity": identity,
    }


def _about(m: Manifest) -> dict[str, Any]:
    return {
        "name": m.name,
        "version": m.version,
        "title": m.title,
        "description": m.description,
        "format": m.format,
    }


def _expectations_changed(
    old_cases: Mapping[str, Case], new_cases: Mapping[str, Case], common: list[str], new: Manifest
) -> list[dict[str, Any]]:
    """Each case kept whose expected verdict changed, and the claims that cite it now."""
    expectations = []
    cited = _citing(new)
    for case_id in common:
        before, after = _expectation(old_cases[case_id]), _expectation(new_cases[case_id])
        if before != after:
            expectations.append(
                {
                    "case": case_id,
                    "flipped": before["expect"] != after["expect"],
                    "old": before,
                    "new": after,
                    "claims": cited.get(case_id, []),
                }
            )
    return expectations


def _rests_on(manifest: Manifest) -> dict[tuple[str, str], dict[str, Any]]:
    """Each (advisory, checker version) the manifest's claims rest on, with those claims."""
    cases = {c.id: c for c in manifest.cases}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for claim in manifest.claims:
        for use in advisories_of([cases[i] for i in claim.cases if i in cases]):
            entry = found.setdefault(
                (use.advisory.id, use.checker),
                {
                    "id": use.advisory.id,
                    "checker": use.checker,
                    "summary": use.advisory.summary,
                    "fixed_in": list(use.advisory.fixed_in),
                    "claims": [],
                },
            )
            entry["claims"].append(claim.id)
    return found


def _advisories_diff(old: Manifest, new: Manifest) -> dict[str, Any]:
    """The advisories (today's) the new bundle's claims rest on and the old's do not
    (``added``), and the reverse (``removed``): a version change can bring one in."""
    before, after = _rests_on(old), _rests_on(new)
    return {
        "added": [v for k, v in sorted(after.items()) if k not in before],
        "removed": [v for k, v in sorted(before.items()) if k not in after],
    }


def _files_diff(old: Manifest, new: Manifest) -> dict[str, Any]:
    old_hashes = {f.path: f.sha256 for f in old.files}
    new_hashes = {f.path: f.sha256 for f in new.files}
    old_sizes = {f.path: f.size for f in old.files}
    new_sizes = {f.path: f.size for f in new.files}
    added, removed = _added_removed(old_hashes, new_hashes)
    changed = [
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
    return {"added": added, "removed": removed, "changed": changed}


def _cases_diff(
    old_cases: Mapping[str, Case],
    new_cases: Mapping[str, Case],
    common: list[str],
    content_of: _Content,
    code_changed: Mapping[str, list[str]],
) -> dict[str, Any]:
    """A case is changed when its checker, inputs or params are, the content of an input
    it reads, or the bundled code it runs (``code_changed``: case -> files changed)."""
    added, removed = _added_removed(old_cases, new_cases)
    changed = []
    for case_id in common:
        found, total = counted_changes(
            _case_body(old_cases[case_id]), _case_body(new_cases[case_id])
        )
        content = content_of.changed(old_cases[case_id], new_cases[case_id])
        if found or content or case_id in code_changed:
            changed.append(
                {
                    "case": case_id,
                    "changes": found,
                    **_omitted(found, total),
                    "input_content_changed": content,
                    "checker_code_changed": code_changed.get(case_id, []),
                }
            )
    return {"added": added, "removed": removed, "changed": changed}


def _claims_diff(old: Manifest, new: Manifest, changed_cases: set[str]) -> dict[str, Any]:
    """A claim is changed when its own text is, or a case it cites now is changed
    (``changed_cases``: its evidence, expectation or checker code)."""
    old_claims = {c.id: c for c in old.claims}
    new_claims = {c.id: c for c in new.claims}
    added, removed = _added_removed(old_claims, new_claims)
    changed = []
    for claim_id in old_claims:
        if claim_id in new_claims:
            found, total = counted_changes(
                _claim_body(old_claims[claim_id]), _claim_body(new_claims[claim_id])
            )
            cases = [i for i in dict.fromkeys(new_claims[claim_id].cases) if i in changed_cases]
            if found or cases:
                changed.append(
                    {
                        "claim": claim_id,
                        "changes": found,
                        **_omitted(found, total),
                        "cases_changed": cases,
                    }
                )
    return {"added": added, "removed": removed, "changed": changed}


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
        "advisories": sum(
            len(result.get("advisories", {}).get(k, [])) for k in ("added", "removed")
        ),
        **{
            section: len(result[section]) + result.get("changes_omitted", {}).get(section, 0)
            for section in ("bundle", "environment")
        },
    }


AS_PREREGISTERED = "as pre-registered"
CHANGED = "changed after pre-registration"
NOT_PREREGISTERED = "not pre-registered"


def against_preregistration(
    pre: Manifest, now: Manifest, fixed: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Per claim of ``now``: as pre-registered, changed after pre-registration (each change
    named by the rules ``diff`` compares two versions with: the claim's statement, limits
    and cases; each of its cases' checker, inputs, params, expectation, reasons and kind;
    the content of an input whose digest the pre-registration fixed (``fixed``: path ->
    SHA-256); the bundled code a case runs, when the pre-registration fixed it), or not
    pre-registered; the pre-registered claims ``now`` no longer makes; the scope
    (``cannot_support``) items added or removed since, compared like claims: a limit the
    author fixed and later deleted shows; and each fixed file, as it is now."""
    fixed = fixed or {}
    now_hashes = {f.path: f.sha256 for f in now.files}
    pre_claims = {c.id: c for c in pre.claims}
    pre_cases = {c.id: c for c in pre.cases}
    now_cases = {c.id: c for c in now.cases}
    claims: dict[str, Any] = {}
    for claim in now.claims:
        before = pre_claims.get(claim.id)
        if before is None:
            claims[claim.id] = {"status": NOT_PREREGISTERED, "changes": []}
            continue
        found = [{"what": "claim", **c} for c in changes(_claim_body(before), _claim_body(claim))]
        for case_id in dict.fromkeys([*before.cases, *claim.cases]):
            old, new = pre_cases.get(case_id), now_cases.get(case_id)
            what = f"case {case_id}"
            if old is None or new is None:
                change = "added" if old is None else "removed"
                found.append({"what": what, "path": "(all)", "change": change})
                continue
            found += [{"what": what, **c} for c in changes(_case_body(old), _case_body(new))]
            found += [{"what": what, **c} for c in changes(_expectation(old), _expectation(new))]
            found += _fixed_changes(what, old, fixed, now_hashes)
            if pre.bundled(old.checker) is not None:
                code = (
                    _code_files(pre, old.checker, fixed),
                    _code_files(now, new.checker, now_hashes),
                )
                found += [
                    {"what": what, **c} for c in changes({"code": code[0]}, {"code": code[1]})
                ]
        claims[claim.id] = {"status": CHANGED if found else AS_PREREGISTERED, "changes": found}
    made = {c.id for c in now.claims}
    stated, declared = list(pre.cannot_support), list(now.cannot_support)
    scope = {
        "added": [s for s in declared if s not in stated],
        "removed": [s for s in stated if s not in declared],
    }
    dropped = [c for c in pre_claims if c not in made]
    out: dict[str, Any] = {"claims": claims, "dropped": dropped, "scope": scope}
    if fixed:
        out["fixed"] = [
            {"path": path, "status": _fixed_status(sha, now_hashes.get(path))}
            for path, sha in sorted(fixed.items())
        ]
    return out


def _fixed_changes(
    what: str, case: Case, fixed: Mapping[str, str], now: Mapping[str, str]
) -> list[dict[str, Any]]:
    """The inputs of ``case`` whose content the pre-registration fixed and that differ now."""
    found = []
    for path in dict.fromkeys(_refs(case)):
        if path in fixed and now.get(path) != fixed[path]:
            change = "removed" if path not in now else "changed"
            found.append(
                {
                    "what": what,
                    "path": f"content of {path}",
                    "change": change,
                    "old": f"sha256:{fixed[path]}",
                    "new": f"sha256:{now[path]}" if path in now else None,
                }
            )
    return found


def _fixed_status(pre: str, now: str | None) -> str:
    if now is None:
        return "missing"
    return AS_PREREGISTERED if now == pre else CHANGED
