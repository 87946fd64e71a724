"""The text of ``reprobundle diff``: loudest first (flipped expectations), then cases,
claims, scope, files, the bundle's own fields and the build environment."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..diff import summary_counts
from .common import printable


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def _change_lines(found: list[Mapping[str, Any]], indent: str) -> list[str]:
    lines = []
    for change in found:
        if change["change"] == "added":
            lines.append(f"{indent}+ {change['path']}: {_value(change['new'])}")
        elif change["change"] == "removed":
            lines.append(f"{indent}- {change['path']}: {_value(change['old'])}")
        else:
            lines.append(
                f"{indent}~ {change['path']}: {_value(change['old'])} -> {_value(change['new'])}"
            )
    return lines


def _expect(e: Mapping[str, Any]) -> str:
    reasons = e["expect_reasons"]
    finding = " (finding)" if e.get("kind") == "finding" else ""
    return str(e["expect"]) + (f" [{', '.join(reasons)}]" if reasons else "") + finding


def to_text(result: Mapping[str, Any], verbose: bool = False) -> str:
    """The diff for a person; text from the bundles is made ``printable``."""
    return printable(_to_text(result, verbose))


def _to_text(result: Mapping[str, Any], verbose: bool) -> str:
    old, new = result["old"], result["new"]
    out = [
        f"Old  {old['name']} {old['version']}  sha256:{old['identity']}",
        f"New  {new['name']} {new['version']}  sha256:{new['identity']}",
        "",
    ]
    if result["identical"]:
        out.append("The two bundles are identical (same manifest, so the same files).")
        return "\n".join(out)
    counts = summary_counts(result)

    if result["expectations_changed"]:
        out.append(
            f"EXPECTED VERDICTS CHANGED: {counts['expectations']} case(s), "
            f"{counts['flipped']} flipped between pass and fail"
        )
        for item in result["expectations_changed"]:
            mark = "!! FLIPPED" if item["flipped"] else "!! changed"
            claims = ", ".join(item["claims"]) or "no claim"
            out.append(
                f"  {mark} {item['case']}: expected {_expect(item['old'])} -> "
                f"{_expect(item['new'])} (claims: {claims})"
            )
        out.append("")

    cases = result["cases"]
    if counts["cases"]:
        out.append("Cases")
        out += [f"  + {c} (added)" for c in cases["added"]]
        out += [f"  - {c} (removed)" for c in cases["removed"]]
        for item in cases["changed"]:
            out.append(f"  ~ {item['case']}")
            out += _change_lines(item["changes"], "      ")
            for path in item["input_content_changed"]:
                out.append(f"      ~ input {path}: content changed")
        out.append("")

    claims = result["claims"]
    if counts["claims"]:
        out.append("Claims")
        out += [f"  + {c} (added)" for c in claims["added"]]
        out += [f"  - {c} (removed)" for c in claims["removed"]]
        for item in claims["changed"]:
            out.append(f"  ~ {item['claim']}")
            out += _change_lines(item["changes"], "      ")
        out.append("")

    if counts["scope"]:
        out.append("What the bundle cannot support")
        out += [f"  + {s}" for s in result["scope"]["added"]]
        out += [f"  - {s}" for s in result["scope"]["removed"]]
        out.append("")

    files = result["files"]
    if counts["files"]:
        out.append("Files")
        out += [f"  + {p}" for p in files["added"]]
        out += [f"  - {p}" for p in files["removed"]]
        for item in files["changed"]:
            line = f"  ~ {item['path']} ({item['old_size']} -> {item['new_size']} bytes)"
            if verbose:
                line += f" sha256 {item['old_sha256'][:16]}… -> {item['new_sha256'][:16]}…"
            out.append(line)
        out.append("")

    if counts["bundle"]:
        out.append("Bundle")
        out += _change_lines(result["bundle"], "  ")
        out.append("")

    if counts["environment"]:
        out.append("Build environment")
        out += _change_lines(result["environment"], "  ")
        out.append("")

    parts = [f"{n} {kind}" for kind, n in counts.items() if n and kind != "flipped"]
    out.append("Changed: " + ", ".join(parts))
    return "\n".join(out)
