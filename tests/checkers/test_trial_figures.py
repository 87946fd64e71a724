"""``figures_of`` sums each estimator once per (counted, successes) pair, times its
tasks: on many seeded task tables it gives, to the last bit, the figures of the sum over
every task (the rule before the shortcut)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from checkers.fault_injection.trials import TaskCount, figures_of, pass_at_k, pass_hat_k


def per_task(tasks: list[TaskCount], k: int) -> dict[str, float | None]:
    included = [t for t in tasks if t.counted >= k]

    def mean(values: list[Fraction]) -> float | None:
        return float(sum(values, Fraction(0)) / len(values)) if values else None

    return {
        "mean_success_rate": mean([Fraction(t.successes, t.counted) for t in included]),
        "pass_at_k": mean([pass_at_k(t.counted, t.successes, k) for t in included]),
        "pass_hat_k": mean([pass_hat_k(t.counted, t.successes, k) for t in included]),
    }


@pytest.mark.parametrize("seed", range(10))
def test_figures_summed_per_pair_are_the_figures_summed_per_task(seed: int) -> None:
    rng = random.Random(seed)
    compared = 0
    for _ in range(200):
        k = rng.randint(1, 6)
        tasks = []
        for i in range(rng.randint(0, 60)):
            launched = rng.randint(1, 12)
            env = rng.randint(0, launched // 3)
            counted = launched - env if rng.random() < 0.5 else launched
            tasks.append(TaskCount(f"t{i}", launched, env, counted, rng.randint(0, counted)))
        got = figures_of(tasks, k)
        for name, wanted in per_task(tasks, k).items():
            assert repr(got[name]) == repr(wanted)
            compared += wanted is not None
    assert compared > 400
