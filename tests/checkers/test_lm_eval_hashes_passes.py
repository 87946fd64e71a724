"""lm-eval-hashes@1 gives the verdict it gave, reading the records a pass at a time
(issue 33, item 3).

It kept a ``Record`` (a frozen dataclass, two containers) a record for the whole check,
so the collector went over the loaded file again and again, and wrote each doc with
Python's indenting encoder. It now checks every record first, then reads them one at a
time for the hashes and again for the task hash, keeping none, and writes each doc with
``run.doc_text``. ``_before`` is the old check, the reference, over generated runs: good
and forged hashes, records lacking what is hashed, bad ids, docs of every JSON shape.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.api import CheckerInputError, Reason, Verdict
from checkers.lm_eval import checks, run


def _old_records(samples: Any) -> list[tuple[int, Any, str, Any]]:
    if not isinstance(samples, list):
        raise CheckerInputError("input.invalid", "the samples file is not JSON Lines")
    records = []
    for line, value in samples:
        if not isinstance(value, dict):
            raise CheckerInputError("input.invalid", f"line {line} is not an object")
        doc_id, filter_name = value.get("doc_id"), value.get("filter")
        if not run.is_count(doc_id) or not isinstance(filter_name, str):
            raise CheckerInputError(
                "input.invalid",
                f"line {line}: doc_id {doc_id!r} must be a whole number and filter "
                f"{filter_name!r} a text",
            )
        records.append((line, doc_id, filter_name, value))
    return records


def _label(record: tuple[int, Any, str, Any]) -> str:
    return f"line {record[0]} (doc_id {record[1]!r}, filter {record[2]!r})"


def _old_hashes(record: tuple[int, Any, str, Any]) -> dict[str, str]:
    raw = record[3]
    if "doc" not in raw or not isinstance(raw.get("target"), str):
        raise CheckerInputError(
            "input.invalid", f"{_label(record)}: needs a 'doc' and a text 'target'"
        )
    arguments = raw.get("arguments")
    first = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    prompt = first.get("arg_0") if isinstance(first, dict) else None
    if not isinstance(prompt, str):
        raise CheckerInputError(
            "input.invalid",
            f"{_label(record)}: arguments.gen_args_0.arg_0 (the prompt) is not text",
        )
    doc = json.dumps(raw["doc"], indent=2, ensure_ascii=False)
    return {
        "doc_hash": run.sha256_text(doc),
        "prompt_hash": run.sha256_text(prompt),
        "target_hash": run.sha256_text(raw["target"]),
    }


def _old_task_hash(records: list[tuple[int, Any, str, Any]]) -> str:
    parts = []
    for record in records:
        stored = [record[3].get(name) for name in run.HASHES]
        texts = [h for h in stored if isinstance(h, str)]
        if len(texts) != len(run.HASHES):
            raise CheckerInputError(
                "input.invalid",
                f"{_label(record)}: doc_hash, prompt_hash and target_hash must be text",
            )
        parts.append("".join(texts))
    return run.sha256_text("".join(parts))


def _before(inputs: Mapping[str, Any], name: str) -> Verdict:
    results = inputs["results"]
    run.read_task(results, name)
    if "samples" not in inputs:
        raise CheckerInputError(
            "input.invalid", "no samples file: the run was not made with --log_samples"
        )
    records = _old_records(inputs["samples"])
    reasons = []
    wrong: Counter[str] = Counter()
    for record in records:
        again = _old_hashes(record)
        for key in run.HASHES:
            if record[3].get(key) != again[key]:
                wrong[key] += 1
                if wrong[key] <= 20:
                    reasons.append(
                        Reason(
                            f"lmeval.{key}_mismatch",
                            f"{name} {_label(record)}: {key} {record[3].get(key)!r}, the record "
                            f"gives {again[key]}",
                            {"line": record[0], "hash": key},
                        )
                    )
    stated = run.stated_task_hash(results, name)
    again_task = _old_task_hash(records)
    if stated != again_task:
        reasons.append(
            Reason(
                "lmeval.task_hash_mismatch",
                f"{name}: task_hashes states {stated!r}, the {len(records)} records give "
                f"{again_task}",
                {"stated": stated, "recomputed": again_task},
            )
        )
    details = {"records": len(records), "mismatches": dict(wrong), "task_hash": again_task}
    if reasons:
        return Verdict.failed(f"{name}'s stored hashes do not all hold", reasons, **details)
    return Verdict.passed(
        f"{name}: the 3 hashes of each of {len(records)} records and the task hash hold",
        **details,
    )


def _judged(check: Any, inputs: Mapping[str, Any]) -> str:
    try:
        return repr(check(inputs))
    except CheckerInputError as exc:
        return f"error {exc.code}: {exc.message}"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
_DOCS = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def _records(draw: st.DrawFn) -> Any:
    doc = draw(_DOCS)
    prompt = draw(st.text(max_size=8))
    target = draw(st.sampled_from(["0", "1", "yes", "\ud800"]))
    record: dict[str, Any] = {
        "doc_id": draw(st.sampled_from([0, 1, 2, True, "3", -1])),
        "filter": draw(st.sampled_from(["none", "none", "strict", None])),
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": " yes"}},
        "doc_hash": _sha(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": _sha(prompt),
        "target_hash": _sha(target),
    }
    for key in draw(st.sets(st.sampled_from([*run.HASHES, "doc", "target", "arguments"]))):
        record[key] = draw(st.sampled_from(["0" * 64, None, 5]))
    if draw(st.integers(0, 3)) == 0:
        del record[draw(st.sampled_from(sorted(record)))]
    return record if draw(st.integers(0, 20)) else "not an object"


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_records(), max_size=6),
    st.booleans(),
    st.sampled_from(["stated", "forged", "none"]),
)
def test_the_hashes_are_judged_as_before(records: list[Any], clean: bool, task: str) -> None:
    if clean:  # every record as lm-eval wrote it
        records = [r for r in records if isinstance(r, dict) and r.get("doc_id") in (0, 1, 2)]
        for record in records:
            record.update(filter="none", target="0", arguments={"gen_args_0": {"arg_0": "p"}})
            record["doc_hash"] = _sha(json.dumps(record.setdefault("doc", {}), indent=2))
            record.update(prompt_hash=_sha("p"), target_hash=_sha("0"))
    samples = [(n + 1, record) for n, record in enumerate(records)]
    joined = "".join(
        "".join(str(r.get(h)) for h in run.HASHES) for r in records if isinstance(r, dict)
    )
    stated = {"stated": _sha(joined), "forged": "f" * 64}.get(task)
    results = {
        "results": {"t": {}},
        "n-samples": {"t": {"original": len(records), "effective": len(records)}},
        "task_hashes": {"t": stated} if stated else {},
    }
    inputs = {"results": results, "samples": samples}
    now = _judged(lambda i: checks.lm_eval_hashes.function(i, {"task": "t"}), inputs)
    assert now == _judged(lambda i: _before(i, "t"), inputs)
