"""The manifest reader is strict: it refuses, it never repairs."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from bundler.errors import BundleRejected
from bundler.format.manifest import MAX_DEPTH, FileEntry, identity, parse
from tests.helpers import read_entries


@pytest.fixture(scope="module")
def good(quickstart_bundle: Path) -> bytes:
    return read_entries(quickstart_bundle)[0].data


def codes_of(data: bytes) -> list[str]:
    with pytest.raises(BundleRejected) as caught:
        parse(data)
    return [p.code for p in caught.value.problems]


def edited(good: bytes, edit: Any) -> bytes:
    doc = tomllib.loads(good.decode())
    edit(doc)
    return tomli_w.dumps(doc).encode()


def test_built_manifest_round_trips_exactly(good: bytes) -> None:
    manifest = parse(good)
    assert manifest.to_bytes() == good
    assert good.startswith(b'format = "reprobundle/1"\n')
    assert identity(good) == identity(manifest.to_bytes())


@pytest.mark.parametrize(
    "paths",
    [
        ["a.txt"],
        ["a.txt", "b/c.txt", "b/d e.txt"],
        ["a.txt", 'quote".txt', "b.txt"],  # escaped by tomli_w
        ['quote".txt', "a.txt"],
        ["a.txt", "back\\slash.txt"],
        ["a.txt", "tab\there.txt", "caf\u00e9.txt"],
        ["size = 1", "[[files]]", "a"],  # text of the tables, as a name
    ],
)
def test_manifest_bytes_are_tomli_w_bytes_for_any_file_list(good: bytes, paths: list[str]) -> None:
    """``to_bytes`` writes the [[files]] tables itself; the bytes stay exactly tomli_w's,
    whatever the names (the ones it must escape included), hashes and sizes."""
    manifest = parse(good)
    entries = tuple(FileEntry(p, f"{i:064x}", i * 1000) for i, p in enumerate(paths))
    short = FileEntry("short-hash", "x", 0)  # fits on one line: tomli_w may write it inline
    for files in (entries, (*entries, short), (short, *entries)):
        changed = dataclasses.replace(manifest, files=files)
        assert changed.to_bytes() == tomli_w.dumps(changed.to_dict()).encode()


def test_unknown_top_level_key(good: bytes) -> None:
    assert codes_of(edited(good, lambda d: d.update(extra=1))) == ["manifest.schema"]


def test_wrong_type(good: bytes) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["files"][0]["size"] = "12"

    assert codes_of(edited(good, edit)) == ["manifest.schema"]


def test_bad_hex(good: bytes) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["files"][0]["sha256"] = "Z" * 64

    assert codes_of(edited(good, edit)) == ["manifest.schema"]


def test_other_hash_algorithm_is_refused(good: bytes) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["files"][0]["sha1"] = d["files"][0].pop("sha256")[:40]

    assert "manifest.schema" in codes_of(edited(good, edit))


def test_duplicate_paths(good: bytes) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["files"].append(dict(d["files"][1]))

    assert codes_of(edited(good, edit)) == ["manifest.path.duplicate"]


def test_paths_equal_after_case_folding_collide(good: bytes) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["files"].append({**d["files"][1], "path": d["files"][1]["path"].upper()})

    assert codes_of(edited(good, edit)) == ["manifest.path.duplicate"]


@pytest.mark.parametrize(
    "path", ["../x", "/abs", "a\\b", "cafe\u0301.txt", "CON", "a//b", "x\u202ey"]
)
def test_non_portable_paths(good: bytes, path: str) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["files"].append({**d["files"][1], "path": path})

    assert codes_of(edited(good, edit)) == ["manifest.path.invalid"]


def test_unknown_major_version_names_both_versions(good: bytes) -> None:
    with pytest.raises(BundleRejected) as caught:
        parse(edited(good, lambda d: d.update(format="reprobundle/2")))
    assert (
        "reprobundle/2" in caught.value.headline and "reads reprobundle/1" in caught.value.headline
    )


def test_newer_minor_version_is_read_with_a_warning(good: bytes) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["format"] = "reprobundle/1.3"
        d["future_field"] = {"x": 1}

    manifest = parse(edited(good, edit))
    assert any("newer" in w for w in manifest.warnings)
    assert any("future_field" in w for w in manifest.warnings)


def test_byte_order_mark(good: bytes) -> None:
    assert codes_of(b"\xef\xbb\xbf" + good) == ["manifest.bom"]


def test_not_utf8(good: bytes) -> None:
    assert codes_of(good.replace(b"quickstart", b"quick\xffstart", 1)) == ["manifest.encoding"]


def test_duplicate_toml_key(good: bytes) -> None:
    assert codes_of(
        good.replace(b'format = "reprobundle/1"\n', b'format = "reprobundle/1"\nformat = "x"\n')
    ) == ["manifest.toml"]


def test_nan_is_refused(good: bytes) -> None:
    data = good.replace(b"[[files]]", b"[extra]\nv = nan\n\n[[files]]", 1)
    assert codes_of(data) == ["manifest.not_finite"]


def test_absurd_nesting_is_refused(good: bytes) -> None:
    data = good.replace(b"[[files]]", b"deep = " + b"[" * 5000 + b"]" * 5000 + b"\n[[files]]", 1)
    assert codes_of(data)[0] in ("manifest.too_deep", "manifest.toml")


@pytest.mark.parametrize("inner", [b"1", b"1.5", b"[]", b"{}", b"nan", b"1979-05-27"])
@pytest.mark.parametrize("levels", [MAX_DEPTH - 5, MAX_DEPTH - 4, MAX_DEPTH - 3])
def test_nesting_is_refused_exactly_past_the_limit(good: bytes, levels: int, inner: bytes) -> None:
    """cases[0].params.x is 4 deep and each level of brackets puts the value inside one
    deeper (an empty list counts too). The quick walk and the naming walk must agree."""
    value = b"[" * levels + inner + b"]" * levels
    data = good.replace(b"[cases.params]\n", b"[cases.params]\nx = " + value + b"\n", 1)
    depth = 4 + levels
    kinds = {b"nan": "manifest.not_finite", b"1979-05-27": "manifest.type"}
    if depth > MAX_DEPTH:
        assert codes_of(data) == ["manifest.too_deep"]
    elif inner in kinds:
        assert codes_of(data) == [kinds[inner]]
    else:
        assert parse(data).cases[0].params["x"]


def test_claim_naming_unknown_case(good: bytes) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["claims"][0]["cases"].append("ghost")

    assert codes_of(edited(good, edit)) == ["manifest.claim.unknown_case"]
