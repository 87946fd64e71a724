"""The text of ``reprobundle diff``: loudest first (flipped expectations), then cases,
claims, scope, files, the bundle's own fields and the build environment."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bundler.errors import one_line as t
from bundler.reports.diff import same_evidence_but_withheld, summary_counts


def _value(value: Any) -> str:
    text = t(
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, allow_nan=False)
    )
    return text if len(text) <= 120 else text[:117] + "..."


def _change_lines(found: list[Mapping[str, Any]], indent: str, omitted: int = 0) -> list[str]:
    lines = []
    for change in found:
        if change["change"] == "added":
            lines.append(f"{indent}+ {t(change['path'])}: {_value(change['new'])}")
        elif change["change"] == "removed":
            lines.append(f"{indent}- {t(change['path'])}: {_value(change['old'])}")
        else:
            lines.append(
                f"{indent}~ {t(change['path'])}: {_value(change['old'])} -> {_value(change['new'])}"
            )
    if omitted:  # the diff lists the first changes by path (diff.LISTED) and counts the rest
        lines.append(f"{indent}… and {omitted} more change(s), not listed")
    return lines


def _expect(e: Mapping[str, Any]) -> str:
    reasons = e["expect_reasons"]
    # a case expected to fail is a control or a finding, said on both sides, so that a
    # control turned finding reads "(control) -> (finding)" (issue 43, friction 14)
    kind = f" ({e.get('kind') or 'control'})" if e["expect"] == "fail" else ""
    return t(e["expect"]) + (f" [{t(', '.join(reasons))}]" if reasons else "") + kind


def to_text(result: Mapping[str, Any], verbose: bool = False) -> str:
    """The diff for a person; every text from the bundles is on one line (``one_line``)."""
    return _to_text(result, verbose)


def _to_text(result: Mapping[str, Any], verbose: bool) -> str:
    old, new = result["old"], result["new"]
    out = [
        f"Old  {t(old['name'])} {t(old['version'])}  sha256:{t(old['identity'])}",
        f"New  {t(new['name'])} {t(new['version'])}  sha256:{t(new['identity'])}",
        "",
    ]
    if same_evidence_but_withheld(result):
        out += [
            "The two bundles have the same manifest (so the same identity and the same files, "
            "by digest); they differ only in what is withheld:",
            *_withheld_lines(result),
        ]
        held = result["withheld"]
        out.append(
            f"Changed: {len(held['withheld_in_new']) + len(held['withheld_in_old'])} file(s) "
            "withheld in one bundle and held in the other"
        )
        return "\n".join(out)
    if result["identical"]:
        out.append("The two bundles are identical (same manifest, so the same files).")
        return "\n".join(out)
    counts = summary_counts(result)
    for section in (_expectations, _code, _advisories, _cases, _claims, _scope):
        out += section(result, counts)
    out += _files(result, counts, verbose)
    omitted = result.get("changes_omitted", {})
    if counts["bundle"]:
        out += ["Bundle", *_change_lines(result["bundle"], "  ", omitted.get("bundle", 0)), ""]
    if counts["environment"]:
        lines = _change_lines(result["environment"], "  ", omitted.get("environment", 0))
        out += ["Build environment", *lines, ""]
    parts = [f"{n} {kind}" for kind, n in counts.items() if n and kind not in ("flipped", "code")]
    if counts["code"]:
        parts.insert(0, f"{counts['code']} case(s) with changed checker code")
    out.append("Changed: " + ", ".join(parts))
    return "\n".join(out)


def _expectations(result: Mapping[str, Any], counts: Mapping[str, int]) -> list[str]:
    """First and loudest: a flipped expectation can turn a contradicted claim supported."""
    if not result["expectations_changed"]:
        return []
    out = [
        f"EXPECTED VERDICTS CHANGED: {counts['expectations']} case(s), "
        f"{counts['flipped']} flipped between pass and fail"
    ]
    for item in result["expectations_changed"]:
        mark = "!! FLIPPED" if item["flipped"] else "!! changed"
        claims = t(", ".join(item["claims"])) or "no claim"
        out.append(
            f"  {mark} {t(item['case'])}: expected {_expect(item['old'])} -> "
            f"{_expect(item['new'])} (claims: {claims})"
        )
    return [*out, ""]


def _code(result: Mapping[str, Any], counts: Mapping[str, int]) -> list[str]:
    if not counts["code"]:
        return []
    out = [f"BUNDLED CHECKER CODE CHANGED: {counts['code']} case(s) run other code"]
    for item in result["checker_code_changed"]:
        claims = t(", ".join(item["claims"])) or "no claim"
        what = ", ".join(t(p) for p in item["files_changed"]) or "its entry or reasons"
        out.append(f"  !! code {t(item['case'])} ({t(item['checker'])}): {what} (claims: {claims})")
    return [*out, ""]


def _cases(result: Mapping[str, Any], counts: Mapping[str, int]) -> list[str]:
    if not counts["cases"]:
        return []
    cases = result["cases"]
    out = ["Cases"]
    out += [f"  + {t(c)} (added)" for c in cases["added"]]
    out += [f"  - {t(c)} (removed)" for c in cases["removed"]]
    for item in cases["changed"]:
        out.append(f"  ~ {t(item['case'])}")
        out += _change_lines(item["changes"], "      ", item.get("changes_omitted", 0))
        for path in item["input_content_changed"]:
            out.append(f"      ~ input {t(path)}: content changed")
        for path in item.get("checker_code_changed", []):
            out.append(f"      ~ checker code {t(path)}: content changed")
    return [*out, ""]


def _claims(result: Mapping[str, Any], counts: Mapping[str, int]) -> list[str]:
    if not counts["claims"]:
        return []
    claims = result["claims"]
    out = ["Claims"]
    out += [f"  + {t(c)} (added)" for c in claims["added"]]
    out += [f"  - {t(c)} (removed)" for c in claims["removed"]]
    for item in claims["changed"]:
        out.append(f"  ~ {t(item['claim'])}")
        out += _change_lines(item["changes"], "      ", item.get("changes_omitted", 0))
        cases = item.get("cases_changed", [])
        if cases:
            more = f" and {len(cases) - 10} more" if len(cases) > 10 else ""
            out.append(f"      ~ cases changed: {t(', '.join(cases[:10]))}{more}")
    return [*out, ""]


def _advisories(result: Mapping[str, Any], counts: Mapping[str, int]) -> list[str]:
    if not counts.get("advisories"):
        return []
    found = result["advisories"]
    out = [
        "Advisories (checker versions an author can make say supported; verify withholds support)"
    ]
    for sign, kind in (("+", "added"), ("-", "removed")):
        out += [
            f"  {sign} {a['id']} on {a['checker']} (fixed in {', '.join(a['fixed_in'])}; "
            f"{kind}): claims {t(', '.join(a['claims']))}"
            for a in found[kind]
        ]
    return [*out, ""]


def _scope(result: Mapping[str, Any], counts: Mapping[str, int]) -> list[str]:
    if not counts["scope"]:
        return []
    out = ["What the bundle cannot support"]
    out += [f"  + {t(s)}" for s in result["scope"]["added"]]
    out += [f"  - {t(s)}" for s in result["scope"]["removed"]]
    return [*out, ""]


def _withheld_lines(result: Mapping[str, Any]) -> list[str]:
    held = result.get("withheld") or {}
    out = []
    for side, key in (("NEW", "withheld_in_new"), ("OLD", "withheld_in_old")):
        for f in held.get(key, []):
            out.append(
                f"  withheld in {side}: {t(f['path'])} ({f['size']} bytes, sha256 "
                f"{t(f['sha256'])}): {t(f['reason'])}"
            )
    return out


def _files(result: Mapping[str, Any], counts: Mapping[str, int], verbose: bool) -> list[str]:
    if not counts["files"]:
        return []
    files = result["files"]
    out = ["Files"]
    out += [f"  + {t(p)}" for p in files["added"]]
    out += [f"  - {t(p)}" for p in files["removed"]]
    for item in files["changed"]:
        line = f"  ~ {t(item['path'])} ({item['old_size']} -> {item['new_size']} bytes)"
        if verbose:
            line += f" sha256 {item['old_sha256'][:16]}… -> {item['new_sha256'][:16]}…"
        out.append(line)
    return [*out, ""]
