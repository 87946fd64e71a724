"""The task ``tests/inspect_logs.py`` retries with ``eval_retry`` (issue 41, item 9).

``eval_retry`` loads a task by the file its log names, and the model by its API's name,
so both live here, in a file: the ``fixed`` model API (answers each question with a fixed
text and sets the token usage itself: no tokenizer download) and ``retry_task`` (40
samples; s3 raises on its first attempt, which stops the run with status error). The
first attempt leaves a marker file (``RETRY_MARK``) so the retry's s3 runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.scorer import includes, match
from inspect_ai.solver import TaskState, solver
from inspect_ai.solver import generate as generate_solver

SAMPLES = 40


@modelapi(name="fixed")
class Fixed(ModelAPI):
    """Right (the number plus one) on odd questions, "x" on even ones."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **_: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        question = int(input[-1].text.split()[-1])
        answer = str(question + 1) if question % 2 else "x"
        out = ModelOutput.from_content(model="fixed", content=answer)
        out.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return out


@solver
def fail_s3_once() -> Any:
    async def solve(state: TaskState, generate: Any) -> TaskState:
        mark = Path(os.environ["RETRY_MARK"])
        if state.sample_id == "s3" and not mark.exists():
            mark.write_text("s3 failed once\n")
            raise RuntimeError("planted error")
        return state

    return solve


@task
def retry_task() -> Task:
    return Task(
        dataset=[
            Sample(input=f"question {q}", target=str(q + 1), id=f"s{q}")
            for q in range(1, SAMPLES + 1)
        ],
        solver=[fail_s3_once(), generate_solver()],
        scorer=[match(), includes()],
    )
