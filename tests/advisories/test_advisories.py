"""Checker advisories (issue 41): each one shown on a forged bundle source.

``tests/advisories/sources/<ID>/`` holds, for every advisory file in
``checkers/advisories/``, a hand-written source (``bundle.yaml`` and its inputs) whose
claim the advised version supports against its evidence, with a negative control of the
same check. The harness finds the folders and requires one per advisory. For each:

- the source builds only with ``--accept-advisory ID`` (else ``case.advised_checker``,
  naming the line to write);
- the built bundle verifies supported (exit 0) with the advisory accepted, inconclusive
  (exit 4) without, the reason naming the advisory and the fixing version;
- the fixing version on the same evidence does not say supported: the source with the
  affected version replaced by the first ``fixed_in`` one (or ``fixed.yaml``, when the
  fixing version takes other inputs, params or reasons) is refused at home, a case
  expected to pass among the cases that did not reproduce.

A new advisory adds its folder (``sources/README.md``); nothing here names one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import checkers
from bundler.authoring.build import build
from bundler.errors import BuildRefused, SourceError, UsageError
from bundler.format.advisories import (
    AdvisoryError,
    advisories,
    by_id,
    parse,
    parse_all,
    shipped_files,
)
from bundler.run.verify import VerifyOptions, verify
from tests.helpers import REPO

SOURCES = Path(__file__).parent / "sources"
FOLDERS = sorted(p for p in SOURCES.iterdir() if (p / "bundle.yaml").is_file())
KNOWN = set(checkers.registry())


def test_every_advisory_file_loads_and_names_registered_checker_versions() -> None:
    found = advisories()
    assert found, "no advisory shipped"
    assert {f"checkers/advisories/{a.id}.toml" for a in found} == set(shipped_files())
    for advisory in found:
        assert set(advisory.affected) <= KNOWN and set(advisory.fixed_in) <= KNOWN
        for test in advisory.tests:
            path, name = test.split("::")
            assert (REPO / path).is_file(), test
            assert f"def {name}(" in (REPO / path).read_text("utf-8"), test


def test_every_advisory_has_a_forged_source_and_every_source_an_advisory() -> None:
    assert {p.name for p in FOLDERS} == set(by_id()), "one folder per advisory file"


GOOD = """id = "RB-2026-0099"
published = "2026-12-06"
summary = "s"
details = "d"
affected = ["inspect-metric@1"]
can_make_supported = "c"
fixed_in = ["inspect-metric@2"]
tests = ["tests/advisories/test_advisories.py::test_x"]
"""


def test_a_good_advisory_parses() -> None:
    found = parse(GOOD, "checkers/advisories/RB-2026-0099.toml", KNOWN)
    assert found.fix == "inspect-metric@2" and found.affected == ("inspect-metric@1",)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (('summary = "s"', 'summary = "s"\nseverity = "high"'), "unknown key(s) severity"),
        (('id = "RB-2026-0099"', 'id = "RB-26-99"'), "expected RB-YYYY-NNNN"),
        (('id = "RB-2026-0099"', 'id = "RB-2026-0098"'), "is not the file's name"),
        (('"inspect-metric@1"]', '"inspect-metric@9"]'), "'inspect-metric@9' is not a registered"),
        (('["inspect-metric@2"]', '["no-such@2"]'), "'no-such@2' is not a registered"),
        (('["inspect-metric@2"]', '["inspect-counts@2"]'), "no version of an affected checker"),
        (('["inspect-metric@2"]', '["inspect-metric@1"]'), "is both affected and fixed"),
        (('published = "2026-12-06"', 'published = "soon"'), "expected a date"),
        (('affected = ["inspect-metric@1"]', "affected = []"), "affected: expected a non-empty"),
        (('summary = "s"\n', ""), "missing key(s) summary"),
        (('"tests/advisories/test_advisories.py::test_x"', '"somewhere"'), "tests/PATH.py::NAME"),
        (('summary = "s"', "summary = "), "not TOML"),
    ],
)
def test_a_bad_advisory_is_refused_naming_the_file(change: tuple[str, str], fragment: str) -> None:
    text = GOOD.replace(*change)
    with pytest.raises(AdvisoryError) as caught:
        parse(text, "checkers/advisories/RB-2026-0099.toml", KNOWN)
    assert "checkers/advisories/RB-2026-0099.toml" in str(caught.value)
    assert fragment in str(caught.value)


def test_two_files_with_one_id_are_refused() -> None:
    files = {"a/RB-2026-0099.toml": GOOD, "b/RB-2026-0099.toml": GOOD}
    with pytest.raises(AdvisoryError, match="used twice"):
        parse_all(files, KNOWN)


def _copy(folder: Path, tmp_path: Path, fixed: bool = False) -> Path:
    """The source in a folder of its own (a build never writes beside the committed one);
    ``fixed``: with the advisory's first fixing version on the same evidence."""
    source = tmp_path / ("fixed" if fixed else "source") / folder.name
    shutil.copytree(folder, source)
    (source / "fixed.yaml").unlink(missing_ok=True)
    if fixed:
        advisory = by_id()[folder.name]
        if (folder / "fixed.yaml").is_file():
            text = (folder / "fixed.yaml").read_text("utf-8")
        else:
            text = (folder / "bundle.yaml").read_text("utf-8")
            for key in advisory.affected:
                text = text.replace(f"checker: {key}", f"checker: {advisory.fixed_in[0]}")
        assert not any(f"checker: {key}\n" in text for key in advisory.affected)
        (source / "bundle.yaml").write_text(text, "utf-8")
    return source


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_an_advised_source_builds_only_when_its_advisory_is_accepted(
    folder: Path, tmp_path: Path
) -> None:
    ident = folder.name
    advisory = by_id()[ident]
    source = _copy(folder, tmp_path)
    out = tmp_path / "forged.bundle.tar.zst"

    with pytest.raises(SourceError) as refused:
        build(source, out, source_date_epoch=0)
    codes = {p.code for p in refused.value.problems}
    assert codes == {"case.advised_checker"}, refused.value.diagnostics()
    assert f"checker: {advisory.fixed_in[-1]}" in refused.value.diagnostics()
    assert f"--accept-advisory {ident}" in refused.value.diagnostics()
    assert all(p.where.startswith("bundle.yaml:") for p in refused.value.problems)
    assert not out.exists()

    built = build(source, out, source_date_epoch=0, accept_advisories=[ident])
    assert built.home.status == "supported"

    accepted = verify(out, VerifyOptions(accept_advisories=[ident]))
    assert accepted.status == "supported" and accepted.exit_code == 0
    assert accepted.accepted_advisories == (ident,)
    assert all(u.accepted for c in accepted.claims for u in c.advisories)

    plain = verify(out)
    assert plain.status == "inconclusive" and plain.exit_code == 4
    for claim in plain.claims:
        assert claim.status == "inconclusive"
        assert ident in claim.why and advisory.fixed_in[0] in claim.why, claim.why
        assert f"--accept-advisory {ident}" in claim.why
    # the cases themselves are judged as before: only the claim withholds support
    assert [r.outcome for r in plain.cases] == [r.outcome for r in accepted.cases]


def _cases(source: Path) -> list[dict[str, object]]:
    document = yaml.safe_load((source / "bundle.yaml").read_text("utf-8"))
    return [c for c in document["cases"] if isinstance(c, dict)]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_the_fixing_version_does_not_support_the_forged_claim(folder: Path, tmp_path: Path) -> None:
    source = _copy(folder, tmp_path, fixed=True)
    with pytest.raises(BuildRefused) as refused:
        build(source, tmp_path / "fixed.bundle.tar.zst", source_date_epoch=0)
    not_reproduced = {p.where for p in refused.value.problems if p.code.startswith("case.")}
    passing = {f"case {c['id']}" for c in _cases(source) if c.get("expect", "pass") == "pass"}
    assert passing & not_reproduced, refused.value.diagnostics()


def test_an_unknown_advisory_id_is_a_usage_error_not_an_acceptance(tmp_path: Path) -> None:
    folder = FOLDERS[0]
    source = _copy(folder, tmp_path)
    with pytest.raises(UsageError, match="RB-2026-9999: no such advisory"):
        build(
            source,
            tmp_path / "x.bundle.tar.zst",
            source_date_epoch=0,
            accept_advisories=["RB-2026-9999"],
        )
