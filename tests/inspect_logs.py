"""Write real Inspect AI logs for the tests: ``python tests/inspect_logs.py OUT [--samples N]``.

Runs tiny tasks offline on inspect-ai's mock model (every output carries a token usage,
so Inspect never fetches a tokenizer) and writes into OUT:

- ``mixed.eval`` and ``mixed.json``: 6 samples x 2 epochs, scorers match, includes,
  pattern, exact and model_graded_qa (graded by the mock model too), reducers mean,
  pass_at_2 and max; sample s6 errors in epoch 1;
- ``all-errored.eval``: every sample errors (Inspect still says success);
- unfinished and partial runs of a 6-sample, 2-scorer task (match, includes):
  ``failed.json`` (the default fail_on_error and sample s3 fails: status error, no
  results), ``cancelled.eval`` (SIGINT to a process running it while sample s4 waits:
  status cancelled), ``cancelled-epochs.eval`` (2 samples x 3 epochs, SIGINT in the
  fifth attempt), ``limit.json`` (--limit 3), ``retried.json`` (s3 fails its first
  attempt, --retry-on-error 2), ``score-on-error.json`` (s3 fails, --score-on-error) and
  ``eval-set.json`` (eval_set: the task fails, is retried, and the failed log deleted);
- ``retried.eval``: ``eval_retry()`` of a run of 40 samples stopped by s3's error
  (tests/inspect_retry_task.py); Inspect writes the re-run samples' entries a second
  time in the zip (``samples/s3_epoch_1.json`` twice);
- ``truth.json``: what inspect-ai's own reader finds in each log (per record: id, epoch,
  completion, score values, error), for comparing with reprobundle's reader.

Run it from inside a git working tree with uncommitted changes to get a dirty revision.
``--samples N [--scorers K]`` writes only ``big.eval`` (N samples, one epoch, K scorers:
match, includes, then includes again), for the benchmarks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Epochs, Task, eval, eval_retry, eval_set
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


def _run(task: Task, out: Path, name: str, fmt: Literal["eval", "json"]) -> Path:
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


ATTEMPTS: dict[str | int, int] = {}


@solver
def planted(kind: str, marker: str = "") -> Any:
    """``fail``: s3 raises; ``first``: s3 raises on its first attempt only; ``hang``: s4
    writes ``marker`` and waits (for the SIGINT that cancels the run); ``hang-fifth``:
    the fifth attempt of any sample does (4 records written before it)."""

    async def solve(state: TaskState, generate: Any) -> TaskState:
        attempt = ATTEMPTS.get(state.sample_id, 0)
        ATTEMPTS[state.sample_id] = attempt + 1
        if state.sample_id == "s3" and (kind == "fail" or (kind == "first" and not attempt)):
            raise RuntimeError("planted error")
        fifth = kind == "hang-fifth" and sum(ATTEMPTS.values()) == 5
        if fifth or (kind == "hang" and state.sample_id == "s4"):
            Path(marker).write_text("waiting\n")
            await asyncio.sleep(3600)
        return state

    return solve


def _small(kind: str, marker: str = "", samples: int = 6, epochs: int = 1) -> Task:
    return Task(
        dataset=[
            Sample(input=f"question {q}", target=t, id=f"s{q}")
            for q, t in list(TARGETS.items())[:samples]
        ],
        solver=[planted(kind, marker), generate()],
        scorer=[match(), includes()],
        epochs=epochs,
    )


def _unfinished(out: Path) -> list[Path]:
    """The failed, limited, retried and score-on-error runs, in this process."""
    model = get_model("mockllm/model", custom_outputs=_answers())
    runs: dict[str, tuple[str, dict[str, Any]]] = {
        "failed.json": ("fail", {}),
        "limit.json": ("none", {"limit": 3}),
        "retried.json": ("first", {"retry_on_error": 2}),
        "score-on-error.json": ("fail", {"fail_on_error": False, "score_on_error": True}),
    }
    written = []
    for name, (kind, options) in runs.items():
        logs = eval(
            _small(kind),
            model=model,
            log_dir=str(out / "raw" / name),
            log_format="json",
            display="none",
            max_samples=1,
            **options,
        )
        assert logs[0].location
        os.replace(logs[0].location, out / name)
        written.append(out / name)
    ATTEMPTS.clear()  # eval-set: the failed first run is retried, and its log deleted
    done, logs = eval_set(
        _small("first"),
        log_dir=str(out / "raw" / "eval-set"),
        model=model,
        retry_attempts=2,
        retry_wait=0.1,
        log_format="json",
        display="none",
        max_samples=1,
    )
    assert done and logs[0].location
    os.replace(logs[0].location.removeprefix("file://"), out / "eval-set.json")
    return [*written, out / "eval-set.json"]


def _cancelled(out: Path, shape: str = "samples") -> Path:
    """Run the hanging task in a child process and interrupt it (SIGINT, as Ctrl-C does)
    once sample s4 is running: Inspect writes a log with status cancelled. ``shape``
    ``epochs``: 2 samples x 3 epochs, interrupted in the fifth attempt."""
    marker = out / "raw" / f"waiting-{shape}"
    marker.parent.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen(
        [sys.executable, __file__, str(out), "--hang", str(marker), "--shape", shape],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(3000):  # until s4 runs (s1-s3 done: max_samples 1), or 5 minutes
            if marker.exists() or child.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), "the run never reached the waiting sample"
        child.send_signal(signal.SIGINT)
        child.wait(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
    name = "cancelled.eval" if shape == "samples" else "cancelled-epochs.eval"
    logs = sorted((out / "raw" / name).glob("*.eval"))
    assert len(logs) == 1, logs
    os.replace(logs[0], out / name)
    return out / name


def _hang(out: Path, marker: str, shape: str) -> None:
    # a child of a shell that ran its parent in the background starts with SIGINT ignored
    # (and Python then installs no handler): the SIGINT that cancels the run must arrive
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if shape == "samples":
        task, name = _small("hang", marker), "cancelled.eval"
    else:
        task, name = _small("hang-fifth", marker, samples=2, epochs=3), "cancelled-epochs.eval"
    eval(
        task,
        model=get_model("mockllm/model", custom_outputs=_answers()),
        log_dir=str(out / "raw" / name),
        display="none",
        max_samples=1,
    )


def _big(out: Path, n: int, scorers: int) -> None:
    task = Task(
        dataset=[Sample(input=f"question {i % 6 + 1}", target="4", id=i) for i in range(n)],
        solver=[generate()],
        scorer=[match(), includes()][:scorers]
        + [includes(ignore_case=i % 2 == 0) for i in range(max(scorers - 2, 0))],
    )
    _run(task, out, "big.eval", "eval")


def _retried(out: Path) -> Path:
    """A run stopped by an error, then ``eval_retry()`` (the ``inspect eval-retry`` CLI
    cannot resolve a custom model API): the retry's log, with the re-run samples written
    again under their names."""
    import inspect_retry_task  # registers the fixed model API  # noqa: F401

    os.environ["RETRY_MARK"] = str(out / "raw" / "retry-mark")
    task_file = Path(__file__).parent / "inspect_retry_task.py"
    logs = eval(
        f"{task_file}@retry_task",
        model="fixed/fixed",
        log_dir=str(out / "raw" / "retry"),
        log_format="eval",
        display="none",
        max_samples=1,
    )
    assert logs[0].status == "error", logs[0].status
    again = eval_retry(logs[0], log_dir=str(out / "raw" / "retried"), display="none", max_samples=1)
    assert again[0].status == "success" and again[0].location, again[0].status
    os.replace(again[0].location.removeprefix("file://"), out / "retried.eval")
    return out / "retried.eval"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--samples", type=int, default=0)
    parser.add_argument("--scorers", type=int, default=2)
    parser.add_argument("--hang", default="")
    parser.add_argument("--shape", default="samples")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.hang:
        _hang(args.out, args.hang, args.shape)
        return 0
    if args.samples:
        _big(args.out, args.samples, args.scorers)
        return 0
    written = [
        _run(_task(False), args.out, "mixed.eval", "eval"),
        _run(_task(False), args.out, "mixed.json", "json"),
        _run(_task(True), args.out, "all-errored.eval", "eval"),
        *_unfinished(args.out),
        _cancelled(args.out),
        _cancelled(args.out, "epochs"),
        _retried(args.out),
    ]
    truth = {p.name: _truth(p) for p in written}
    (args.out / "truth.json").write_text(json.dumps(truth, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
