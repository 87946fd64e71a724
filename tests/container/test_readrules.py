"""The read rules without a tar file: headers, names and digests in, problems out."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bundler.container.readrules import Action, Limits, ReadRules, Stop
from bundler.container.tarstream import FOLDER, REGULAR, Header
from tests.helpers import read_entries

TOP = "quickstart-1.0.0"


@pytest.fixture(scope="module")
def members(quickstart_bundle: Path) -> dict[str, bytes]:
    """Each member of the quickstart bundle by name, in archive order."""
    return {e.name: e.data for e in read_entries(quickstart_bundle)}


def file(name: str, size: int) -> Header:
    return Header(name, REGULAR[0], size)


def started(members: dict[str, bytes], limits: Limits | None = None) -> ReadRules:
    """Rules that have read the manifest."""
    rules = ReadRules(limits or Limits())
    name = f"{TOP}/manifest.toml"
    step = rules.member(file(name, len(members[name])))
    assert step.action is Action.MANIFEST
    rules.manifest_read(members[name])
    return rules


def feed_payload(rules: ReadRules, members: dict[str, bytes], skip: str = "") -> None:
    for name, data in members.items():
        if name.endswith("/manifest.toml") or name == skip:
            continue
        step = rules.member(file(name, len(data)))
        if step.action is Action.FILE:
            rules.hashed(step.rel, hashlib.sha256(data).hexdigest())


def codes(rules: ReadRules) -> list[tuple[str, str]]:
    rules.end()
    return [(p.where, p.code) for p in rules.finish()]


def stop_code(action: object) -> str:
    with pytest.raises(Stop) as caught:
        action()  # type: ignore[operator]
    return caught.value.problem.code


def test_a_whole_bundle_fed_in_order_has_no_problem(members: dict[str, bytes]) -> None:
    rules = started(members)
    feed_payload(rules, members)
    assert codes(rules) == []
    assert rules.total == sum(len(d) for n, d in members.items() if "manifest" not in n)


def test_the_payload_starts_once_at_the_first_payload_member(members: dict[str, bytes]) -> None:
    rules = started(members)
    names = [n for n in members if not n.endswith("manifest.toml")]
    steps = [rules.member(file(n, len(members[n]))) for n in names]
    assert [s.starts_payload for s in steps] == [True] + [False] * (len(names) - 1)
    assert rules.end() is False


def test_the_first_member_must_be_the_manifest(members: dict[str, bytes]) -> None:
    rules = ReadRules(Limits())
    assert stop_code(lambda: rules.member(file(f"{TOP}/README.md", 3))) == "archive.layout"


def test_a_manifest_naming_another_top_folder_is_refused(members: dict[str, bytes]) -> None:
    rules = ReadRules(Limits())
    rules.member(file("other-1.0.0/manifest.toml", 10))
    manifest = members[f"{TOP}/manifest.toml"]
    assert stop_code(lambda: rules.manifest_read(manifest)) == "archive.layout"


def test_a_signature_after_the_payload_began_stops_the_read(members: dict[str, bytes]) -> None:
    rules = started(members)
    rules.member(file(f"{TOP}/README.md", len(members[f"{TOP}/README.md"])))
    late = file(f"{TOP}/signatures/k.json", 10)
    assert stop_code(lambda: rules.member(late)) == "archive.layout"


def test_a_signature_before_the_payload_is_read(members: dict[str, bytes]) -> None:
    rules = started(members)
    step = rules.member(file(f"{TOP}/signatures/k.json", 10))
    assert (step.action, step.rel, step.starts_payload) == (
        Action.SIGNATURE,
        "signatures/k.json",
        False,
    )


def test_a_changed_file_and_a_missing_one_are_both_named(members: dict[str, bytes]) -> None:
    rules = started(members)
    gone = f"{TOP}/inputs/candidate-reordered.yaml"
    feed_payload(rules, members, skip=gone)
    rules.hashed("inputs/expected.yaml", "0" * 64)
    assert codes(rules) == [
        (f"{TOP}/inputs/candidate-reordered.yaml", "file.missing"),
        (f"{TOP}/inputs/expected.yaml", "file.hash"),
    ]


@pytest.mark.parametrize(
    ("header", "code"),
    [
        (file(f"{TOP}/inputs/extra.txt", 1), "member.unlisted"),
        (file(f"{TOP}/inputs/candidate-reordered.yaml", 1), "member.size"),
        (file("elsewhere/x", 1), "member.outside_top"),
        (file(f"{TOP}/../x", 1), "member.name"),
        (Header(f"{TOP}/inputs/link", b"2", 0, linkname="/etc/passwd"), "member.type"),
        (Header(f"{TOP}/stray", FOLDER, 0), "member.unlisted"),
        (file(f"{TOP}/INPUTS/expected.yaml", 1), "member.duplicate"),
    ],
)
def test_a_bad_member_is_a_problem_and_its_data_is_skipped(
    members: dict[str, bytes], header: Header, code: str
) -> None:
    rules = started(members)
    rules.member(file(f"{TOP}/inputs/expected.yaml", len(members[f"{TOP}/inputs/expected.yaml"])))
    assert rules.member(header).action is Action.SKIP
    assert (header.name, code) in [(p.where, p.code) for p in rules.problems]


def test_a_file_where_a_folder_is_needed_clashes(members: dict[str, bytes]) -> None:
    rules = started(members)
    rules.member(file(f"{TOP}/inputs/x", 0))
    assert rules.member(file(f"{TOP}/inputs/x/y", 0)).action is Action.SKIP
    assert rules.problems[-1].code == "member.file_and_folder"


@pytest.mark.parametrize(
    ("limits", "size", "code"),
    [
        (Limits(file_bytes=10), 100, "limit.file_size"),
        (Limits(total_bytes=10), 100, "limit.total_size"),
    ],
)
def test_payload_limits_stop_the_read(
    members: dict[str, bytes], limits: Limits, size: int, code: str
) -> None:
    rules = started(members, limits)
    name = next(n for n, d in members.items() if len(d) >= 100 and "manifest" not in n)
    assert stop_code(lambda: rules.member(file(name, len(members[name])))) == code


def test_too_many_members_stop_the_read(members: dict[str, bytes]) -> None:
    rules = started(members, Limits(members=1))
    assert stop_code(lambda: rules.member(Header(f"{TOP}/inputs", FOLDER, 0))) == "limit.members"


def test_a_large_manifest_stops_the_read() -> None:
    rules = ReadRules(Limits(manifest_bytes=10))
    assert stop_code(lambda: rules.member(file("a-1/manifest.toml", 11))) == "limit.manifest_size"


def test_the_ratio_counts_only_past_its_floor() -> None:
    rules = ReadRules(Limits(ratio=10, ratio_floor=1000))
    rules.stream(decompressed=999, compressed=1)  # below the floor: any ratio
    rules.stream(decompressed=5000, compressed=600)
    assert stop_code(lambda: rules.stream(decompressed=5000, compressed=400)) == "limit.ratio"


def test_an_archive_without_a_manifest_is_empty() -> None:
    assert stop_code(ReadRules(Limits()).end) == "archive.empty"
