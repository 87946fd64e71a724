"""The forged lm-eval bundle sources of advisories RB-2026-0040, 0041 (issue 41, item 7),
0052 and 0053 (issue 41, issue 45 item 5):
``python -m tests.advisories.lm_eval_forgeries`` writes their ``inputs/`` under
``tests/advisories/sources/``; ``tests/advisories/test_lm_eval_forgeries.py`` checks the
committed files are what this writes.

Each source holds a results file and a samples file in lm-eval 0.4.13's shapes (the
records' hashes computed as lm-eval computes them), a forged case the @1 version passes
and a control: the same checker and params on evidence it must fail.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from checkers.arithmetic import left_sum
from checkers.lm_eval.scores import project_record

SOURCES = Path(__file__).parent / "sources"
TASK = "arith"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _record(doc_id: int, acc: float | None) -> dict[str, Any]:
    """A record as lm-eval writes it; ``acc`` None: its value deleted (the ``metrics``
    list left as lm-eval wrote it)."""
    doc = {"question": f"What is {doc_id} + 1?", "answer": str(doc_id + 1)}
    prompt = f"Question: What is {doc_id} + 1?\nAnswer:"
    target = str(doc_id + 1)
    written: dict[str, Any] = {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": f" {target}"}},
        "resps": [[["-1.0", "False"]]],
        "filtered_resps": [["-1.0", "False"]],
        "filter": "none",
        "metrics": ["acc"],
        "doc_hash": _sha(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": _sha(prompt),
        "target_hash": _sha(target),
    }
    if acc is not None:
        written["acc"] = acc
    return written


def _stderr(values: list[float]) -> float:
    n = len(values)
    mu = left_sum(values) / n
    return float((left_sum((x - mu) ** 2 for x in values) / (n - 1)) ** 0.5 / n**0.5)


def _run(
    values: list[float | None],
    doc_ids: list[int],
    original: int,
    limit: int | None,
    stated: float | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    records = [_record(i, v) for i, v in zip(doc_ids, values, strict=True)]
    present = [v for v in values if v is not None]
    mu = left_sum(present) / len(present)
    results = {
        "results": {
            TASK: {
                "alias": TASK,
                "acc,none": mu if stated is None else stated,
                "acc_stderr,none": _stderr(present),
            }
        },
        "group_subtasks": {TASK: []},
        "configs": {
            TASK: {
                "task": TASK,
                "output_type": "multiple_choice",
                "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
            }
        },
        "n-samples": {TASK: {"original": original, "effective": len(values)}},
        "config": {"model": "dummy", "limit": limit, "bootstrap_iters": 100000},
        "task_hashes": {
            TASK: _sha(
                "".join(r["doc_hash"] + r["prompt_hash"] + r["target_hash"] for r in records)
            )
        },
        "lm_eval_version": "0.4.13",
    }
    return results, records


def forgeries() -> dict[str, dict[str, Any]]:
    """Per advisory: its input files (path in the source -> JSON value, a list of records
    for a samples file)."""
    right_86 = [1.0] * 86 + [0.0] * 14
    right_50 = [1.0] * 50 + [0.0] * 50
    deleted = [1.0] * 63 + [0.0] * 7 + [None] * 30  # 63 of 70 values: "0.90"
    honest_70 = [1.0] * 62 + [0.0] * 8 + [None] * 30  # a wrong answer more: 62/70
    hundred = list(range(100))
    files: dict[str, dict[str, Any]] = {}

    # RB-2026-0040, one way: the header states 0.90 over samples giving 0.86, tolerance 0.049
    forged = _run(right_86, hundred, 100, None, stated=0.90)
    control = _run(right_50, hundred, 100, None, stated=0.90)
    # the other: the acc of 30 wrong answers deleted, the header the mean of the rest
    deleted_forged = _run(deleted, hundred, 100, None)
    stated = deleted_forged[0]["results"][TASK]["acc,none"]
    deleted_control = _run(honest_70, hundred, 100, None, stated=stated)
    files["RB-2026-0040"] = {
        "inputs/tolerance/results.json": forged[0],
        "inputs/tolerance/samples_arith.jsonl": forged[1],
        "inputs/tolerance/control/results.json": control[0],
        "inputs/tolerance/control/samples_arith.jsonl": control[1],
        "inputs/deleted/results.json": deleted_forged[0],
        "inputs/deleted/samples_arith.jsonl": deleted_forged[1],
        "inputs/deleted/control/results.json": deleted_control[0],
        "inputs/deleted/control/samples_arith.jsonl": deleted_control[1],
    }
    # RB-2026-0041: a --limit 10 run of 1,000 documents whose records are documents 990-999
    ten = [1.0] * 9 + [0.0]
    forged = _run(ten, list(range(990, 1000)), 1000, 10)
    control = _run(ten[:9], list(range(990, 999)), 1000, 10)
    control[0]["n-samples"][TASK]["effective"] = 10
    files["RB-2026-0041"] = {
        "inputs/results.json": forged[0],
        "inputs/samples_arith.jsonl": forged[1],
        "inputs/control/results.json": control[0],
        "inputs/control/samples_arith.jsonl": control[1],
    }
    # RB-2026-0052 (lm-eval-metric@2, the samples file) and RB-2026-0053 (lm-eval-metric@3,
    # the sample scores file of the split layout): a run of 10 documents, 3 answered right
    # (acc 0.3), whose records of documents 7 and 8 (wrong) are replaced by copies of the
    # records of documents 0 and 1 (right), the header the mean of what is then stored (0.5).
    # The control: the run's own records under that header.
    honest = [1.0, 1.0, 1.0] + [0.0] * 7
    forged = _run([*honest[:7], 1.0, 1.0, 0.0], [*range(7), 0, 1, 9], 10, None)
    control = _run(honest, list(range(10)), 10, None, stated=0.5)
    files["RB-2026-0052"] = {
        "inputs/results.json": forged[0],
        "inputs/samples_arith.jsonl": forged[1],
        "inputs/control/results.json": control[0],
        "inputs/control/samples_arith.jsonl": control[1],
    }
    files["RB-2026-0053"] = {
        "inputs/results.json": forged[0],
        "inputs/samples_arith.scores.jsonl": [project_record(r) for r in forged[1]],
        "inputs/control/results.json": control[0],
        "inputs/control/samples_arith.scores.jsonl": [project_record(r) for r in control[1]],
    }
    return files


def text(value: Any, path: str) -> str:
    if path.endswith(".jsonl"):
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in value)
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write(root: Path = SOURCES) -> None:
    for ident, files in forgeries().items():
        for path, value in files.items():
            target = root / ident / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text(value, path), "utf-8")


if __name__ == "__main__":
    write()
