"""Write real Inspect AI logs for the tests: ``python tests/inspect_logs.py OUT [--samples N]``.

Runs tiny tasks offline on inspect-ai's mock model (every output carries a token usage,
so Inspect never fetches a tokenizer) and writes into OUT:

- ``mixed.eval`` and ``mixed.json``: 6 samples x 2 epochs, scorers match, includes,
  pattern, exact and model_graded_qa (graded by the mock model too), reducers mean,
  pass_at_2 and max; sample s6 errors in epoch 1;
- ``all-errored.eval``: every sample errors (Inspect still says success);
- ``truth.json``: what inspect-ai's own reader finds in each log (per record: id, epoch,
  completion, score values, error), for comparing with reprobundle's reader.

Run it from inside a git working tree with uncommitted changes to get a dirty revision.
``--samples N [--scorers K]`` writes only ``big.eval`` (N samples, one epoch, K scorers:
match, includes, then includes again), for the benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import exact, includes, match, model_graded_qa, pattern
from inspect_ai.solver import TaskState, generate, solver

# per question: the answer in epoch 1, then in epoch 2
ANSWERS = {
    "1": ("The answer is 4", "4"),
    "2": ("ANSWER: 9", "eight"),
    "3": ("nope", "ANSWER: 5"),
    "4": ("16", "16"),
    "5": ("ANSWER: 2", "ANSWER: 2"),
    "6": ("-", "seven"),
}
TARGETS = {"1": "4", "2": "9", "3": "5", "4": "16", "5": "3", "6": "7"}


def _usage(content: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm/model", content=content)
    out.usage = ModelUsage(input_tokens=3, output_tokens=2, total_tokens=5)
    return out


def _answers() -> Any:
    seen: dict[str, int] = {}

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        text = messages[-1].text
        if "GRADE" in text:  # the grader's prompt
            return _usage("GRADE: C" if "4" in text.split("[Submission]:")[-1][:40] else "GRADE: I")
        question = text.split()[-1]
        n = seen.get(question, 0)
        seen[question] = n + 1
        return _usage(ANSWERS.get(question, ("x", "x"))[n % 2])

    return answer


@solver
def fail_when(everything: bool) -> Any:
    async def solve(state: TaskState, generate: Any) -> TaskState:
        if everything or (state.input_text.endswith(" 6") and state.epoch == 1):
            raise RuntimeError("planted error")
        return state

    return solve


def _task(everything: bool) -> Task:
    grader = get_model("mockllm/model", custom_outputs=_answers())
    return Task(
        dataset=[Sample(input=f"question {q}", target=t, id=f"s{q}") for q, t in TARGETS.items()],
        solver=[fail_when(everything), generate()],
        scorer=[
            match(),
            includes(),
            pattern(r"ANSWER: (\d+)"),
            exact(),
            model_graded_qa(model=grader),
        ],
        epochs=Epochs(2, ["mean", "pass_at_2", "max"]),
    )


def _run(task: Task, out: Path, name: str, fmt: str) -> Path:
    logs = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=_answers()),
        log_dir=str(out / "raw"),
        log_format=fmt,
        fail_on_error=False,
        display="none",
    )
    assert logs[0].location
    target = out / name
    os.replace(logs[0].location, target)
    return target


def _truth(path: Path) -> list[dict[str, Any]]:
    log = read_eval_log(str(path))
    return [
        {
            "id": s.id,
            "epoch": s.epoch,
            "completion": s.output.completion,
            "scores": {k: v.value for k, v in (s.scores or {}).items()},
            "error": s.error.message if s.error else None,
        }
        for s in log.samples or []
    ]


def _big(out: Path, n: int, scorers: int) -> None:
    task = Task(
        dataset=[Sample(input=f"question {i % 6 + 1}", target="4", id=i) for i in range(n)],
        solver=[generate()],
        scorer=[match(), includes()][:scorers]
        + [includes(ignore_case=i % 2 == 0) for i in range(max(scorers - 2, 0))],
    )
    _run(task, out, "big.eval", "eval")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--samples", type=int, default=0)
    parser.add_argument("--scorers", type=int, default=2)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.samples:
        _big(args.out, args.samples, args.scorers)
        return 0
    written = [
        _run(_task(False), args.out, "mixed.eval", "eval"),
        _run(_task(False), args.out, "mixed.json", "json"),
        _run(_task(True), args.out, "all-errored.eval", "eval"),
    ]
    truth = {p.name: _truth(p) for p in written}
    (args.out / "truth.json").write_text(json.dumps(truth, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
