"""Import is as hard to break as verify: hostile logs, each made small in the test and
named after its attack, are refused with a message (or bounded), never exit 5, never a
file outside -o, never unbounded time or memory."""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
import zstandard
from click.testing import CliRunner

from bundler.cli import main
from bundler.container.readrules import Limits
from bundler.errors import SourceError
from bundler.importers import ImportLimits, untrusted, write_source
from bundler.importers.inspect_eval import import_inspect
from bundler.run.inputs import LoadLimits
from bundler.run.limits import CaseBudget
from tests.helpers import refuse_backtracking
from tests.importers.layouts import LAYOUTS, inspect_version

ZSTD = 93


def header(**changes: Any) -> dict[str, Any]:
    """A minimal finished Inspect log header: one match scorer, one sample, accuracy 1."""
    found: dict[str, Any] = {
        "version": 2,
        "status": "success",
        "eval": {
            "task": "t",
            "model": "m/m",
            "dataset": {"samples": 1},
            "config": {"epochs": 1},
            "scorers": [{"name": "match", "options": {}, "metrics": []}],
        },
        "results": {
            "total_samples": 1,
            "completed_samples": 1,
            "scores": [
                {
                    "name": "match",
                    "scorer": "match",
                    "scored_samples": 1,
                    "metrics": {"accuracy": {"name": "accuracy", "value": 1.0}},
                }
            ],
        },
    }
    found.update(changes)
    return found


def sample(**changes: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": "s1",
        "epoch": 1,
        "target": "4",
        "output": {"completion": "4"},
        "scores": {"match": {"value": "C", "answer": "4"}},
    }
    found.update(changes)
    return found


def json_log(path: Path, head: dict[str, Any] | None = None, *samples: dict[str, Any]) -> Path:
    path.write_text(json.dumps({**(head or header()), "samples": list(samples or [sample()])}))
    return path


class Member:
    """One zip member: its local header and data, and what the directory says of it."""

    def __init__(self, name: str, content: bytes, method: int = ZSTD) -> None:
        self.name = name
        self.method = method
        self.raw = zstandard.ZstdCompressor().compress(content) if method == ZSTD else content
        self.crc = zlib.crc32(content)
        self.size = len(content)


def local(m: Member) -> bytes:
    name = m.name.encode()
    head = struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, 20, 0, m.method, 0, 0, m.crc, len(m.raw), m.size, len(name), 0
    )
    return head + name + m.raw


def zip_bytes(
    members: list[Member], directory: list[tuple[int, dict[str, Any]]] | None = None
) -> bytes:
    """Local headers and data for ``members``, then a directory: by default one entry per
    member as it is; else ``(member index, changed fields)`` per entry (``at``: bytes past
    the member's local header where the entry points)."""
    out = bytearray()
    offsets = []
    for m in members:
        offsets.append(len(out))
        out += local(m)
    start = len(out)
    entries = directory if directory is not None else [(i, {}) for i in range(len(members))]
    for index, changed in entries:
        m = members[index]
        fields: dict[str, Any] = {"name": m.name, "method": m.method, "crc": m.crc}
        fields.update(packed=len(m.raw), size=m.size, at=0)
        fields.update(changed)
        name = fields["name"].encode()
        out += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            20,
            20,
            0,
            fields["method"],
            0,
            0,
            fields["crc"],
            fields["packed"],
            fields["size"],
            len(name),
            0,
            0,
            0,
            0,
            0,
            offsets[index] + fields["at"],
        )
        out += name
    size = len(out) - start
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), size, start, 0)
    return bytes(out)


def eval_members(head: dict[str, Any] | None = None) -> list[Member]:
    return [
        Member("header.json", json.dumps(head or header()).encode()),
        Member("samples/s1_epoch_1.json", json.dumps(sample()).encode()),
    ]


def refused(
    log: Path, tmp_path: Path, *words: str, limits: ImportLimits = untrusted.AT_VERIFY
) -> str:
    with pytest.raises(SourceError) as caught:
        import_inspect(log, tmp_path / "out", limits=limits)
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


@LAYOUTS
def test_the_small_hand_made_logs_import_when_nothing_is_wrong(tmp_path: Path, split: bool) -> None:
    """The baseline of every attack below: the same files, unchanged, import."""
    (tmp_path / "ok.eval").write_bytes(zip_bytes(eval_members()))
    assert import_inspect(tmp_path / "ok.eval", tmp_path / "a", split=split).claims
    assert import_inspect(json_log(tmp_path / "ok.json"), tmp_path / "b", split=split).claims


def test_zstd_member_that_expands_without_bound_is_refused_at_its_declared_size(
    tmp_path: Path,
) -> None:
    bomb = Member("samples/s1_epoch_1.json", b"")
    writer = zstandard.ZstdCompressor().compressobj()
    chunk = b"\0" * (1 << 20)
    bomb.raw = b"".join(writer.compress(chunk) for _ in range(512)) + writer.flush()  # 512 MiB
    bomb.size, bomb.crc = 100, 0
    assert len(bomb.raw) < 100_000
    (tmp_path / "bomb.eval").write_bytes(zip_bytes([eval_members()[0], bomb]))
    refused(tmp_path / "bomb.eval", tmp_path, "decompresses to more bytes than the 100")


def test_members_that_declare_more_than_verify_reads_are_refused_before_decompressing(
    tmp_path: Path,
) -> None:
    members = eval_members()
    directory = [(0, {}), (1, {"size": 300 << 20})]
    (tmp_path / "big.eval").write_bytes(zip_bytes(members, directory))
    refused(tmp_path / "big.eval", tmp_path, "declare", "the most verify reads")


def test_many_directory_entries_pointing_at_one_member_are_refused(tmp_path: Path) -> None:
    members = eval_members()
    directory: list[tuple[int, dict[str, Any]]] = [(0, {})]
    directory += [(1, {"name": f"samples/s{i}_epoch_1.json"}) for i in range(40)]
    (tmp_path / "forty.eval").write_bytes(zip_bytes(members, directory))
    refused(tmp_path / "forty.eval", tmp_path, "disagree", "the local header names it")


def test_directory_that_disagrees_with_the_local_header_sizes_is_refused(tmp_path: Path) -> None:
    members = eval_members()
    content = json.dumps(sample(output={"completion": "44"})).encode()
    # the directory describes other content than the member holds: size and CRC differ
    directory = [(0, {}), (1, {"crc": zlib.crc32(content), "size": len(content)})]
    (tmp_path / "disagree.eval").write_bytes(zip_bytes(members, directory))
    refused(tmp_path / "disagree.eval", tmp_path, "CRC or sizes differ")


def test_a_member_no_reader_parses_is_still_held_to_its_crc(tmp_path: Path) -> None:
    """Members are screened one at a time; one that is not JSON is decompressed and its
    CRC checked all the same (the directory and local header agree on the wrong CRC)."""
    notes = Member("notes.bin", b"not json, and not what the directory says")
    notes.crc ^= 1
    (tmp_path / "crc.eval").write_bytes(zip_bytes([*eval_members(), notes]))
    refused(tmp_path / "crc.eval", tmp_path, "notes.bin", "CRC-32 differs")


def test_member_listed_twice_in_the_directory_is_refused(tmp_path: Path) -> None:
    members = eval_members()
    (tmp_path / "twice.eval").write_bytes(zip_bytes(members, [(0, {}), (1, {}), (1, {})]))
    refused(tmp_path / "twice.eval", tmp_path, "listed twice")


@LAYOUTS
def test_a_sample_written_twice_is_read_as_inspect_reads_it_the_last_entry(
    tmp_path: Path, split: bool
) -> None:
    """What Inspect's eval-retry writes (issue 41, item 9): the same sample name twice,
    each its own bytes; Inspect reads the last directory entry, and so does import (the
    first entry's wrong answer would make the header's accuracy 1 contradicted)."""
    head, right = eval_members()
    wrong = Member(
        right.name,
        json.dumps(
            sample(
                output={"completion": "5"},
                error={"message": "RuntimeError('first attempt')", "traceback": ""},
            )
        ).encode(),
    )
    (tmp_path / "rerun.eval").write_bytes(zip_bytes([head, wrong, right]))
    done = import_inspect(tmp_path / "rerun.eval", tmp_path / "out", split=split)
    said = " ".join(done.notes)
    assert "contradicted" not in said  # the figure is the last entry's
    assert "Retried run: the .eval zip holds 1 superseded sample entries" in said
    assert "samples/s1_epoch_1.json (errored: RuntimeError('first attempt'))" in said
    source = yaml.safe_load((tmp_path / "out" / "bundle.yaml").read_text())
    others = [c for c in source["claims"] if c["id"] != "finding-retried-run"]
    assert all(any("Retried run" in limit for limit in c["limits"]) for c in others)
    assert "finding-retried-run" in done.claims


@LAYOUTS
def test_the_entry_that_wins_is_the_directorys_last_not_the_files_last(
    tmp_path: Path, split: bool
) -> None:
    """zipfile (and so Inspect) keeps the last directory entry of a name, wherever its
    bytes lie: the wrong answer, later in the file but earlier in the directory, is the
    superseded one."""
    head, right = eval_members()
    wrong = Member(right.name, json.dumps(sample(output={"completion": "5"})).encode())
    directory = [(0, {}), (2, {}), (1, {})]  # bytes: head, right, wrong
    (tmp_path / "order.eval").write_bytes(zip_bytes([head, right, wrong], directory))
    done = import_inspect(tmp_path / "order.eval", tmp_path / "out", split=split)
    assert "contradicted" not in " ".join(done.notes)
    assert "samples/s1_epoch_1.json (no error)" in " ".join(done.notes)


def test_a_header_listed_twice_is_refused_inspect_writes_only_samples_twice(
    tmp_path: Path,
) -> None:
    head, one = eval_members()
    other = Member("header.json", json.dumps(header(status="error")).encode())
    (tmp_path / "two-headers.eval").write_bytes(zip_bytes([head, one, other]))
    refused(tmp_path / "two-headers.eval", tmp_path, "header.json: listed twice", "re-run")


def test_a_sample_written_twice_whose_local_header_disagrees_is_refused(tmp_path: Path) -> None:
    head, one = eval_members()
    again = Member(one.name, json.dumps(sample(output={"completion": "5"})).encode())
    directory = [(0, {}), (1, {}), (2, {"crc": one.crc, "size": one.size})]
    (tmp_path / "disagree-twice.eval").write_bytes(zip_bytes([head, one, again], directory))
    refused(tmp_path / "disagree-twice.eval", tmp_path, "CRC or sizes differ")


def test_a_sample_listed_twice_at_the_same_bytes_is_refused_as_overlapping(
    tmp_path: Path,
) -> None:
    members = eval_members()
    (tmp_path / "same.eval").write_bytes(zip_bytes(members, [(0, {}), (1, {}), (1, {})]))
    refused(tmp_path / "same.eval", tmp_path, "listed twice", "overlap")


def test_members_whose_bytes_overlap_are_refused(tmp_path: Path) -> None:
    """A stored member whose data holds a whole second member (local header and all), and
    a directory entry pointing into it: each entry agrees with its local header."""
    head, inner = eval_members()
    outer = Member("notes.bin", local(inner), method=0)
    directory = [
        (0, {}),
        (1, {}),
        (
            1,
            {
                "name": inner.name,
                "method": ZSTD,
                "crc": inner.crc,
                "packed": len(inner.raw),
                "size": inner.size,
                "at": 30 + len(outer.name),
            },
        ),
    ]
    (tmp_path / "overlap.eval").write_bytes(zip_bytes([head, outer], directory))
    refused(tmp_path / "overlap.eval", tmp_path, "overlap")


def test_json_log_with_more_values_than_verify_reads_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = json_log(tmp_path / "many.json", header(), sample(metadata={"v": list(range(2000))}))
    parsed = []
    monkeypatch.setattr(json, "loads", lambda *a, **k: parsed.append(1))
    refused(
        log,
        tmp_path,
        "holds more than 1000 values",
        limits=ImportLimits(load=LoadLimits(values=1000)),
    )
    assert parsed == []


def test_an_eval_member_with_more_values_than_verify_reads_is_refused(tmp_path: Path) -> None:
    members = eval_members()
    members[1] = Member("samples/s1_epoch_1.json", json.dumps(sample(metadata=[0] * 2000)).encode())
    (tmp_path / "many.eval").write_bytes(zip_bytes(members))
    refused(
        tmp_path / "many.eval",
        tmp_path,
        "samples/s1_epoch_1.json: holds more than 1000",
        limits=ImportLimits(load=LoadLimits(values=1000)),
    )


def test_log_nested_deeper_than_verify_reads_is_refused(tmp_path: Path) -> None:
    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    refused(json_log(tmp_path / "deep.json", header(), sample(metadata=deep)), tmp_path, "deeper")


def test_log_larger_than_verify_reads_is_refused_unread(tmp_path: Path) -> None:
    log = json_log(tmp_path / "big.json", header(), sample(output={"completion": "x" * 5000}))
    refused(log, tmp_path, "more than 1000 bytes", limits=ImportLimits(load=LoadLimits(bytes=1000)))


@LAYOUTS
def test_scorer_pattern_that_backtracks_for_ever_is_run_by_a_linear_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    # issue 42, item 4: (a+)+$ kept import busy until the case time limit stopped it; it
    # is inside the subset RE2 reads as Python does, so it is re-scored, never backtracked
    from checkers.inspect_log import rules

    refuse_backtracking(monkeypatch, rules.re)
    head = header()
    head["eval"]["scorers"] = [
        {"name": "pattern", "options": {"pattern": "(a+)+$", "ignore_case": False}, "metrics": []}
    ]
    head["results"]["scores"][0].update(name="pattern", scorer="pattern")
    evil = sample(
        output={"completion": "a" * 40 + "b"}, scores={"pattern": {"value": "I", "answer": None}}
    )
    head["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 0.0
    done = import_inspect(
        json_log(tmp_path / "redos.json", head, evil), tmp_path / "out", split=split
    )
    assert not any("ran longer than" in n for n in done.notes), done.notes
    written = (done.source / "bundle.yaml").read_text()
    assert "checker: inspect-rescore@" in written  # re-scored, with its control


def test_reading_a_log_past_a_case_memory_limit_is_refused(tmp_path: Path) -> None:
    log = json_log(
        tmp_path / "wide.json", header(), sample(output={"completion": "x" * (64 << 20)})
    )
    budget = CaseBudget(memory=4 << 20)
    refused(log, tmp_path, "needed more than 4 MiB", limits=ImportLimits(budget=budget))


def test_lone_surrogate_in_a_sample_id_is_refused_with_a_message(tmp_path: Path) -> None:
    log = tmp_path / "surrogate.json"
    log.write_text(json.dumps({**header(), "samples": [sample(id="s\ud800")]}))
    refused(log, tmp_path, "not valid Unicode", "\\ud800")


def test_lone_surrogate_in_a_task_name_is_refused_by_the_shared_bundle_yaml_writer(
    tmp_path: Path,
) -> None:
    with pytest.raises(SourceError, match="cannot be written as UTF-8"):
        write_source(tmp_path / "out", {"name": "t\udc80"}, {"inputs/a": b"x"}, "inspect")
    assert not (tmp_path / "out").exists()  # refused before anything is written


@LAYOUTS
def test_boolean_counts_are_not_counts(tmp_path: Path, split: bool) -> None:
    head = header()
    head["results"].update(total_samples=True, completed_samples=True)
    head["results"]["scores"][0]["scored_samples"] = True
    imported = import_inspect(
        json_log(tmp_path / "bools.json", head), tmp_path / "out", split=split
    )
    text = (tmp_path / "out" / "bundle.yaml").read_text()
    assert "sample-counts" not in imported.claims
    import yaml

    for case in yaml.safe_load(text)["cases"]:  # no count a case claims is a boolean
        claimed = case.get("params", {}).get("claimed", {})
        assert not any(v is True or v is False for v in claimed.values()), case
        assert "scored_samples" not in case.get("params", {}), case


@LAYOUTS
def test_boolean_plan_sizes_are_not_counts(tmp_path: Path, split: bool) -> None:
    head = header(status="error", results=None)
    head["eval"]["dataset"] = {"samples": True}
    head["eval"]["config"] = {"epochs": True}
    imported = import_inspect(
        json_log(tmp_path / "bools.json", head), tmp_path / "out", split=split
    )
    assert "planned" not in (tmp_path / "out" / "bundle.yaml").read_text()
    assert imported.claims


HOSTILE: dict[str, Callable[[], bytes]] = {
    "bomb.eval": lambda: zip_bytes(
        [eval_members()[0], _bomb()],
    ),
    "forty.eval": lambda: zip_bytes(
        eval_members(), [(0, {})] + [(1, {"name": f"samples/s{i}_epoch_1.json"}) for i in range(40)]
    ),
    "deflate-bomb.eval": lambda: zip_bytes([eval_members()[0], _bomb(zlib.DEFLATED)]),
    "twice.eval": lambda: zip_bytes(eval_members(), [(0, {}), (1, {}), (1, {})]),
    "surrogate.json": lambda: json.dumps({**header(), "samples": [sample(id="\ud800")]}).encode(),
    "no-header.eval": lambda: zip_bytes([Member("_journal/start.json", b"{}")]),
    "not-a-log.json": lambda: b"[1, 2",
    "deep.json": lambda: b"[" * 100_000 + b"]" * 100_000,
}


def _bomb(method: int = ZSTD) -> Member:
    bomb = Member("samples/s1_epoch_1.json", b"", method=method)
    if method == ZSTD:
        bomb.raw = zstandard.ZstdCompressor().compress(b"\0" * (64 << 20))
    else:
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        bomb.raw = deflate.compress(b"\0" * (64 << 20)) + deflate.flush()
    bomb.size, bomb.crc = 10, 0
    return bomb


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_cli_import_of_a_hostile_log_exits_2_with_a_message_and_writes_nothing(
    tmp_path: Path, name: str
) -> None:
    log = tmp_path / name
    log.write_bytes(HOSTILE[name]())
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(main, ["import", "inspect", str(log), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "reprobundle:" in result.output and "internal error" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # -o never even made


@LAYOUTS
def test_counts_with_no_control_that_fails_are_stated_under_scope_not_claimed(
    tmp_path: Path, split: bool
) -> None:
    """A log of one record: removing it leaves nothing to count (the check cannot decide,
    it does not fail), so the counts check has no control and no claim may rest on it."""
    from bundler.authoring.build import build

    log = json_log(tmp_path / "one-record.json", header(), sample())
    done = import_inspect(log, tmp_path / "source", split=split)
    assert "sample-counts" not in done.claims
    text = (tmp_path / "source" / "bundle.yaml").read_text()
    assert "no claim rests on them" in text
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"


@LAYOUTS
def test_counts_whose_completed_count_no_removed_record_moves_still_have_a_control(
    tmp_path: Path, split: bool
) -> None:
    """Only a completed count in the header, and the last record errored: removing it
    leaves the completed count as it was, but the records the log holds are claimed too
    (inspect-counts@3), so the control fails and the claim stands on it."""
    from bundler.authoring.build import build

    head = header()
    del head["results"]["total_samples"]
    head["results"]["completed_samples"] = 1
    head["eval"]["dataset"]["samples"] = 2
    errored = sample(id="s2", scores={}, error={"message": "planted"})
    log = json_log(tmp_path / "completed-only.json", head, sample(), errored)
    done = import_inspect(log, tmp_path / "source", split=split)
    assert "sample-counts" in done.claims
    source = yaml.safe_load((tmp_path / "source" / "bundle.yaml").read_text())
    control = next(c for c in source["cases"] if c["id"] == "counts-control")
    assert control["checker"] == inspect_version("inspect-counts@3", split)
    assert control["expect_reasons"] == ["inspect.claimed_mismatch", "inspect.planned_not_run"]
    result = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert result.home.status == "supported"


def test_checks_past_a_whole_verification_time_refuse_the_import() -> None:
    import checkers

    found = checkers.get("inspect-counts@1")
    assert found is not None
    with pytest.raises(SourceError, match="the time verify allows a whole bundle"):
        untrusted.Checks(seconds=0).run(found, {"log": b"{}"}, {"claimed": {"total_samples": 1}})


@LAYOUTS
def test_eval_members_are_each_held_to_the_value_cap_not_all_together(
    tmp_path: Path, split: bool
) -> None:
    """A real 10,000-sample .eval holds millions of values across its members, each a
    small JSON document: each member is one JSON input to the cap, as verify would read it."""
    head = header()
    head["results"].update(total_samples=2, completed_samples=2)
    head["eval"]["dataset"]["samples"] = 2
    members = [Member("header.json", json.dumps(head).encode())]
    for i in (1, 2):
        content = sample(id=f"s{i}", metadata=[0] * 600)
        members.append(Member(f"samples/s{i}_epoch_1.json", json.dumps(content).encode()))
    (tmp_path / "wide.eval").write_bytes(zip_bytes(members))
    small = ImportLimits(load=LoadLimits(values=1000))
    imported = import_inspect(tmp_path / "wide.eval", tmp_path / "out", split=split, limits=small)
    assert imported.claims


def test_a_zip_listing_more_members_than_verify_reads_from_an_archive_is_refused(
    tmp_path: Path,
) -> None:
    members = [*eval_members(), *(Member(f"extra/{i}.txt", b"x", method=0) for i in range(2))]
    (tmp_path / "many.eval").write_bytes(zip_bytes(members))
    few = ImportLimits(archive=Limits(members=3))
    refused(tmp_path / "many.eval", tmp_path, "lists 4 members, more than the 3", limits=few)


@LAYOUTS
@pytest.mark.parametrize("bad", [{"a": 1}, ["s1"]])
def test_a_plan_whose_sample_ids_are_not_ids_imports_without_a_counts_claim(
    tmp_path: Path, bad: Any, split: bool
) -> None:
    """An unhashable sample id in the plan of an unfinished run used to be a traceback
    (the never-run samples were looked up in a set); now the counts are not checked, and
    the import says why."""
    from bundler.authoring.build import build

    head = header(status="cancelled")
    head["eval"]["dataset"] = {"samples": 2, "sample_ids": ["s1", bad]}
    done = import_inspect(
        json_log(tmp_path / "ids.json", head, sample()), tmp_path / "source", split=split
    )
    assert "sample-counts" not in done.claims
    assert any("sample_ids[1]" in n and "no sample counts are checked" in n for n in done.notes)
    built = build(tmp_path / "source", tmp_path / "b.bundle.tar.gz", 1700000000)
    assert built.home.status == "supported"


@LAYOUTS
def test_out_of_subset_pattern_scorer_is_listed_as_not_rerun_never_run_on_re(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    # issue 42, item 4: a back-reference is outside the subset RE2 reads as Python does;
    # the import neither runs it on Python's backtracking engine nor claims its scores
    from checkers.inspect_log import rules

    refuse_backtracking(monkeypatch, rules.re)
    head = header()
    head["eval"]["scorers"] = [
        {"name": "pattern", "options": {"pattern": r"(a)\1", "ignore_case": False}, "metrics": []}
    ]
    head["results"]["scores"][0].update(name="pattern", scorer="pattern")
    head["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 0.0
    kept = sample(output={"completion": "ab"}, scores={"pattern": {"value": "I", "answer": None}})
    done = import_inspect(
        json_log(tmp_path / "backref.json", head, kept), tmp_path / "out", split=split
    )
    document = yaml.safe_load((done.source / "bundle.yaml").read_text())
    assert not any(c["checker"].startswith("inspect-rescore@") for c in document["cases"])
    cannot = "\n".join(document["scope"]["cannot_support"])
    assert "That the 'pattern' scores are right (its pattern '(a)\\\\1' is not re-run" in cannot
    assert "escape" in cannot  # why: the construct outside the subset is named


@LAYOUTS
def test_a_score_named_apart_from_its_scorer_is_rescored_at_import(
    tmp_path: Path, split: bool
) -> None:
    # the score "p0" made by the scorer "pattern": the copy of the log a case runs on at
    # import kept only specs named "p0", so the scorer looked unrecorded and was not re-scored
    head = header()
    head["eval"]["scorers"] = [
        {"name": "pattern", "options": {"pattern": "(a+)", "ignore_case": False}, "metrics": []}
    ]
    head["results"]["scores"][0].update(name="p0", scorer="pattern")
    kept = sample(output={"completion": "aa"}, target="aa", scores={"p0": {"value": "C"}})
    done = import_inspect(
        json_log(tmp_path / "named.json", head, kept), tmp_path / "out", split=split
    )
    document = yaml.safe_load((done.source / "bundle.yaml").read_text())
    rescored = [c["id"] for c in document["cases"] if c["checker"] == "inspect-rescore@3"]
    assert rescored == ["rescore-p0", "rescore-p0-control"]
