"""Inputs of the families' rows in ``checkers_bench.py``: each builder writes, into a
folder, a checker's inputs of about ``size`` bytes (the largest input; the others are as
small as the format allows) from a small real example scaled up, and returns the case's
inputs (role -> file, or list of files), params and expected verdict. ``differing``
changes one value the checker reads, so that it fails."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import shutil
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
Built = tuple[dict[str, Any], dict[str, Any], str]


def _dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value))


def _verdict(differing: bool) -> str:
    return "fail" if differing else "pass"


# -- trajectory: one long trace against the stored model of the search task ------------------


def trajectory(folder: Path, size: int, differing: bool) -> Built:
    import yaml

    source = ROOT / "bundles" / "trajectory-skeleton" / "inputs" / "search"
    shutil.copy(source / "model.json", folder / "model.json")
    trace = yaml.safe_load((source / "labelled" / "t01.yaml").read_text())
    states = trace["states"]
    one = len(json.dumps({"label": "notification", "attrs": {"view": "popup", "shot": "n-0"}}))
    noise = [
        {
            "action": {"type": "wait"},
            "label": "notification",
            "attrs": {"view": "popup", "shot": f"n-{i}"},
            "at": "2026-11-24T09:27:01.000Z",
        }
        for i in range(max(1, size // (one + 60)))
    ]
    middle = len(noise) // 2
    body = states[:1] + noise[:middle] + states[1:3] + noise[middle:] + states[3:]
    if differing:  # the query is never typed: an essential state missing
        body = [s for s in body if s.get("label") != "query typed"]
    trace["states"] = body
    _dump(folder / "trace.json", trace)
    return {"model": "model.json", "trace": "trace.json"}, {}, _verdict(differing)


# -- fault_injection: one runner report of many scenarios ---------------------------------------


def fault_report(folder: Path, size: int, differing: bool) -> Built:
    count = max(10, size // 60)
    records = [
        {"test": f"test_scenario_{i}", "status": "passed", "traceback": None} for i in range(count)
    ]
    if differing:  # an execution error: not a detection
        records[count // 2] = {
            "test": records[count // 2]["test"],
            "status": "error",
            "traceback": "ConnectionError: refused",
        }
    report = {
        "fault": "none",
        "planned": count,
        "executed": count,
        "complete": True,
        "blocked": False,
        "records": records,
    }
    _dump(folder / "report.json", report)
    return {"report": "report.json"}, {"want": "baseline_pass"}, _verdict(differing)


# -- promptfoo: the rows of a real results.json repeated, its stats scaled alike -------------


def _promptfoo(folder: Path, size: int, differing: bool, flip: str) -> Built:
    document = json.loads((ROOT / "tests" / "data" / "promptfoo" / "results.json").read_text())
    results = document["results"]
    rows = results["results"]
    times = max(1, size // len(json.dumps(rows)))
    results["results"] = [
        {**copy.deepcopy(row), "testIdx": row["testIdx"] + t * len(rows)}
        for t in range(times)
        for row in rows
    ]
    stats = results["stats"]
    for key in ("successes", "failures", "errors"):
        stats[key] *= times
    for key in ("prompt", "completion", "total", "numRequests"):
        stats["tokenUsage"][key] *= times
    for prompt in results["prompts"]:
        metrics = prompt["metrics"]
        for key in (
            "testPassCount",
            "testFailCount",
            "testErrorCount",
            "assertPassCount",
            "assertFailCount",
        ):
            metrics[key] *= times
    if differing and flip == "stats":
        stats["successes"] += 1
    if differing and flip == "assert":
        all_rows = results["results"]
        found = [
            component
            for row in all_rows[len(all_rows) // 2 :]
            for component in (row.get("gradingResult") or {}).get("componentResults", [])
            if component["assertion"]["type"] == "contains"
        ]
        found[0]["pass"] = not found[0]["pass"]
    _dump(folder / "results.json", document)
    return {"results": "results.json"}, {}, _verdict(differing)


def promptfoo_stats(folder: Path, size: int, differing: bool) -> Built:
    return _promptfoo(folder, size, differing, "stats")


def promptfoo_assert(folder: Path, size: int, differing: bool) -> Built:
    return _promptfoo(folder, size, differing, "assert")


# -- lm_eval: a results file and one task's samples, lm-eval 0.4.13's shapes -------------------


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lm_eval(folder: Path, size: int, differing: bool, checker: str) -> Built:
    count = max(4, size // 640)
    records: list[dict[str, Any]] = []
    values: list[float] = []
    for i in range(count):
        doc = {"question": f"q{i} café: what is {i} + {i}?", "label": i % 2}
        prompt = f"Question: q{i} café: what is {i} + {i}?\nAnswer:"
        target = str(i % 2)
        value = float(i % 3 != 0)
        values.append(value)
        records.append(
            {
                "doc_id": i,
                "doc": doc,
                "target": target,
                "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": " yes"}},
                "resps": [[["-1.25", "False"]]],
                "filtered_resps": [["-1.25", "False"]],
                "filter": "none",
                "metrics": ["acc"],
                "doc_hash": _sha(json.dumps(doc, indent=2, ensure_ascii=False)),
                "prompt_hash": _sha(prompt),
                "target_hash": _sha(target),
                "acc": value,
            }
        )
    mu = sum(values) / count
    stderr = (sum((x - mu) ** 2 for x in values) / (count - 1)) ** 0.5 / count**0.5
    joined = "".join(r["doc_hash"] + r["prompt_hash"] + r["target_hash"] for r in records)
    results = {
        "results": {"t": {"alias": "t", "acc,none": mu, "acc_stderr,none": stderr}},
        "configs": {"t": {"metric_list": [{"metric": "acc", "aggregation": "mean"}]}},
        "n-samples": {"t": {"original": count, "effective": count}},
        "config": {"limit": None, "bootstrap_iters": 100000},
        "task_hashes": {"t": _sha(joined)},
    }
    if differing:  # one stored value changed: the mean, the hashes' record, a duplicate doc
        middle = records[count // 2]
        if checker.startswith("lm-eval-metric@"):
            middle["acc"] = 1.0 - middle["acc"]
        elif checker == "lm-eval-hashes@1":
            middle["target_hash"] = _sha("changed")
        else:
            middle["doc_id"] = 0
    _dump(folder / "results.json", results)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    (folder / "samples.jsonl").write_text(text)
    params: dict[str, Any] = {"task": "t"}
    if checker.startswith("lm-eval-metric@"):
        params.update(metric="acc", filter="none", claimed=mu)
    elif checker.startswith("lm-eval-counts@"):
        params["claimed"] = {"original": count, "effective": count}
    return {"results": "results.json", "samples": "samples.jsonl"}, params, _verdict(differing)


def lm_eval(checker: str) -> Callable[[Path, int, bool], Built]:
    return lambda folder, size, differing: _lm_eval(folder, size, differing, checker)


# -- inspect_log: the samples of a real .eval repeated under new ids --------------------------


def _inspect(folder: Path, size: int, differing: bool, checker: str) -> Built:
    import zstandard

    source = zipfile.ZipFile(ROOT / "tests" / "data" / "inspect" / "mixed.eval")
    members: dict[str, Any] = {}
    for info in source.infolist():
        raw = source.fp
        assert raw is not None
        raw.seek(info.header_offset + 26)
        skip = int.from_bytes(raw.read(2), "little") + int.from_bytes(raw.read(2), "little")
        raw.seek(info.header_offset + 30 + skip)
        data = zstandard.ZstdDecompressor().decompress(
            raw.read(info.compress_size), max_output_size=info.file_size
        )
        members[info.filename] = json.loads(data)
    samples = {n: v for n, v in members.items() if n.startswith("samples/")}
    # s6 errors in epoch 1: left out, so that a clean run is the equal row
    samples = {n: v for n, v in samples.items() if not n.startswith("samples/s6_")}
    per_copy = len(zlib.compress(b"".join(json.dumps(v).encode() for v in samples.values())))
    times = max(1, size // per_copy)
    header = members["header.json"]
    out: dict[str, Any] = {}
    for t in range(times):
        for name, sample in samples.items():
            copied = copy.deepcopy(sample)
            copied["id"] = f"{sample['id']}-{t}"
            stem = name[len("samples/") :].replace("_epoch_", f"-{t}_epoch_")
            out[f"samples/{stem}"] = copied
    records = len(out)
    results = header["results"]
    results["total_samples"] = records
    results["completed_samples"] = records
    header["eval"]["dataset"]["samples"] = records // header["eval"]["config"].get("epochs", 1)
    header["status"] = "success"
    header.pop("error", None)
    # the header's figures as Inspect states them: per scorer, the accuracy over samples
    # of the mean of their epochs (what the checker recomputes, so equal when untouched)
    by_sample: dict[str, dict[str, list[float]]] = {}
    for sample in out.values():
        for scorer, score in sample["scores"].items():
            number = {"C": 1.0, "I": 0.0}.get(score["value"])
            if number is not None:
                by_sample.setdefault(scorer, {}).setdefault(str(sample["id"]), []).append(number)
    for entry in results["scores"]:
        per = by_sample.get(entry["name"])
        if per is None:
            continue
        reduced = [sum(v) / len(v) for v in per.values()]
        entry["scored_samples"] = len(reduced)
        entry["unscored_samples"] = 0
        if entry.get("reducer") in (None, "mean") and "accuracy" in entry["metrics"]:
            entry["metrics"]["accuracy"]["value"] = sum(reduced) / len(reduced)
    if differing:  # one record errors, one count stated wrong, or one stored score flipped
        name = sorted(out)[len(out) // 2]
        if checker.startswith("inspect-status"):
            out[name]["error"] = {"message": "RuntimeError: boom", "traceback": ""}
        elif checker.startswith("inspect-counts"):
            results["completed_samples"] -= 1
        else:
            for score in out[name]["scores"].values():
                score["value"] = "I" if score["value"] == "C" else "C"
    members = {
        **{n: v for n, v in members.items() if not n.startswith(("samples/", "_journal/"))},
        **out,
    }
    members["header.json"] = header
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, value in members.items():
            archive.writestr(name, json.dumps(value))
    (folder / "log.eval").write_bytes(buffer.getvalue())
    params: dict[str, Any] = {}
    if checker == "inspect-metric@2":
        params = {"scorer": "match", "reducer": "mean", "metric": "accuracy"}
    elif checker == "inspect-rescore@2":
        params = {"scorer": "match"}
    return {"log": "log.eval"}, params, _verdict(differing)


def inspect_log(checker: str) -> Callable[[Path, int, bool], Built]:
    return lambda folder, size, differing: _inspect(folder, size, differing, checker)


# -- intent: contamination markers over a tree of long transcripts ---------------------------


def contamination(folder: Path, size: int, differing: bool) -> Built:
    source = ROOT / "bundles" / "intent-router" / "inputs" / "delivery" / "transcripts" / "bare"
    tree = folder / "transcripts"
    tree.mkdir(exist_ok=True)
    files = sorted(source.iterdir())
    each = size
    for index, path in enumerate(files):
        text = path.read_text()
        copies = max(1, each // len(text))
        body = text * copies
        if differing and index == len(files) // 2:
            lines = body.splitlines(keepends=True)
            lines.insert(len(lines) // 2, '{"type": "note", "text": "intent-router loaded"}\n')
            body = "".join(lines)
        (tree / path.name).write_text(body)
    params = {"markers": ["## Intent contract", "intent-router", "unavailable tool"]}
    return {"transcripts": "transcripts"}, params, _verdict(differing)


# -- intent: the Intent-Router suite's cases and recorded runs, repeated under new ids ------


def _intent(folder: Path, size: int, differing: bool, checker: str) -> Built:
    import yaml

    source = ROOT / "bundles" / "intent-router" / "inputs"
    cases = yaml.safe_load((source / "cases.yaml").read_text())
    runs = yaml.safe_load((source / "runs" / "suite-run.yaml").read_text())
    other = "suite-run-three-misses.yaml" if checker.startswith("suite") else "controls.yaml"
    wrong = yaml.safe_load((source / "runs" / other).read_text())

    def written(value: Any) -> str:  # fresh objects: shared ones would be YAML aliases
        return str(yaml.dump(json.loads(json.dumps(value)), Dumper=yaml.CSafeDumper))

    times = max(1, size // len(written(runs)))
    middle = times // 2
    all_cases, all_runs = [], {}
    for t in range(times):
        for case in cases:
            all_cases.append({**case, "id": f"{case['id']}-{t}"})
        # differing: the suite's every copy with its misses (one copy's would stay above
        # the threshold), the case's one copy from the controls
        chosen = wrong if differing and (t == middle or checker.startswith("suite")) else runs
        for name, run in runs.items():
            all_runs[f"{name}-{t}"] = chosen.get(name, run)
    (folder / "cases.yaml").write_text(written(all_cases))
    (folder / "outputs.yaml").write_text(written(all_runs))
    shutil.copy(source / "intentspec.schema.json", folder / "schema.json")
    if not (folder / "fixtures").exists():
        shutil.copytree(source / "fixtures", folder / "fixtures")
    names = {
        "cases": "cases.yaml",
        "outputs": "outputs.yaml",
        "schema": "schema.json",
        "fixture": "fixtures",
    }
    if checker.startswith("suite"):
        params: dict[str, Any] = {"total": 12 * times}
    else:
        params = {"case": f"add-caching-auto-{middle}"}
    return names, params, _verdict(differing)


def intent(checker: str) -> Callable[[Path, int, bool], Built]:
    return lambda folder, size, differing: _intent(folder, size, differing, checker)


BUILDERS: dict[str, Callable[[Path, int, bool], Built]] = {
    "trajectory-skeleton@2": trajectory,
    "fault-report@3": fault_report,
    "promptfoo-stats@2": promptfoo_stats,
    "promptfoo-assert@2": promptfoo_assert,
    "lm-eval-metric@2": lm_eval("lm-eval-metric@2"),
    "lm-eval-counts@2": lm_eval("lm-eval-counts@2"),
    "lm-eval-hashes@1": lm_eval("lm-eval-hashes@1"),
    "inspect-metric@2": inspect_log("inspect-metric@2"),
    "inspect-counts@2": inspect_log("inspect-counts@2"),
    "inspect-status@2": inspect_log("inspect-status@2"),
    "inspect-rescore@2": inspect_log("inspect-rescore@2"),
    "contamination@1": contamination,
    "intent-expectations@2": intent("intent-expectations@2"),
    "suite-threshold@2": intent("suite-threshold@2"),
}

FAMILY = {
    "trajectory-skeleton@2": "trajectory",
    "fault-report@3": "fault_injection",
    "promptfoo-stats@2": "promptfoo",
    "promptfoo-assert@2": "promptfoo",
    "lm-eval-metric@2": "lm_eval",
    "lm-eval-counts@2": "lm_eval",
    "lm-eval-hashes@1": "lm_eval",
    "inspect-metric@2": "inspect_log",
    "inspect-counts@2": "inspect_log",
    "inspect-status@2": "inspect_log",
    "inspect-rescore@2": "inspect_log",
    "contamination@1": "intent",
    "intent-expectations@2": "intent",
    "suite-threshold@2": "intent",
}
