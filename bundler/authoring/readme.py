"""The README.md packed into every bundle: what it claims, in words, and how to check it."""

from __future__ import annotations

from bundler.format.manifest import Manifest


def bundle_readme(manifest: Manifest) -> str:
    lines = [
        f"# {manifest.title}",
        "",
        f"Reproducibility bundle `{manifest.name}` version {manifest.version}, "
        f"format `{manifest.format}`.",
        "",
    ]
    if manifest.description.strip():
        lines += [manifest.description.strip(), ""]
    lines += [
        "## How to verify",
        "",
        "With reprobundle installed (from a clone of its repository: `python -m pip install .`):",
        "",
        "```",
        f"reprobundle verify {manifest.top}.bundle.tar.zst   # or .tar.gz: the same manifest",
        "```",
        "",
        "`verify` unpacks this bundle into an empty folder, checks every file against the",
        "SHA-256 in `manifest.toml`, re-runs every case with the named checker and reports,",
        "per claim, whether the evidence supports it. Exit code 0 means every claim is",
        "supported; 1 a claim is contradicted; 3 the bundle was rejected; 4 inconclusive.",
        "",
        "## Claims",
        "",
    ]
    for claim in manifest.claims:
        lines += [f"### {claim.id}", "", claim.statement, "", "Cases:"]
        for case_id in claim.cases:
            case = manifest.case(case_id)
            reasons = f" with {', '.join(case.expect_reasons)}" if case.expect_reasons else ""
            kind = " (a finding: a real output the author judges wrong)" if case.is_finding else ""
            lines.append(
                f"- `{case.id}`: `{case.checker}` expected to {case.expect}{reasons}{kind}"
            )
        lines += ["", "Limits:"]
        lines += [f"- {limit}" for limit in claim.limits] or ["- (none stated)"]
        if claim.negative_control_waiver:
            lines.append(f"- negative control waived: {claim.negative_control_waiver}")
        lines.append("")
    lines += ["## What this bundle cannot support", ""]
    lines += [f"- {item}" for item in manifest.cannot_support] or ["- (nothing stated)"]
    lines += [
        "",
        "Re-running a checker on the stored inputs shows the checker behaves as stated on",
        "these inputs. It does not re-run whatever produced the inputs.",
        "",
    ]
    return "\n".join(lines)
