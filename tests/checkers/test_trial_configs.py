"""trial-stats@3 names mixed configurations as it did, grouping each text once.

``_mixed_configs_v2`` made every sample's configuration plain and wrote it as JSON (two
copies a sample); it now groups the samples by their configuration's JSON text first and
makes each group plain once. ``_before`` is the old grouping, the reference.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.api import Reason
from checkers.fault_injection.report import SHOWN, shown_value
from checkers.fault_injection.trial_stats import _mixed_configs_v2
from checkers.fault_injection.trials import Sample, finite, line_numbers


def _before(samples: list[Sample]) -> list[Reason]:
    configs: dict[str, tuple[Any, list[int]]] = {}
    for sample in samples:
        key = json.dumps(finite(sample.config), sort_keys=True, default=str)
        configs.setdefault(key, (finite(sample.config), []))[1].append(sample.line)
    if len(configs) <= 1:
        return []
    shown = "; ".join(
        f"{shown_value(c)} on lines {line_numbers(ls)}" for c, ls in list(configs.values())[:5]
    )
    return [
        Reason(
            "stats.config_mixed",
            f"{len(configs)} configurations in one set of samples: {shown}",
            {"configurations": [{"config": c, "lines": ls[:SHOWN]} for c, ls in configs.values()]},
        )
    ]


# NaN and "nan" are one configuration once plain; 1 and 1.0 are two
_CONFIGS = st.sampled_from(
    [{"t": math.nan}, {"t": "nan"}, {"t": 1}, {"t": 1.0}, {"m": "a", "t": 0.8}, None, [1, 2]]
)


@settings(max_examples=300)
@given(st.lists(_CONFIGS, min_size=1, max_size=40))
def test_mixed_configurations_are_named_as_before(configs: list[Any]) -> None:
    samples = [
        Sample(f"task-{n // 3}", n % 3, "success", config, n + 1)
        for n, config in enumerate(configs)
    ]
    assert repr(_mixed_configs_v2(samples)) == repr(_before(samples))
