"""Trial records tallied in one pass when they are well formed and in order (issue 33).

The readers of ``trials.py`` check every record, collect every problem, then group the
trials by task: a dataclass and a few containers a record, and each configuration written
as JSON once a record. Most files need none of that: every record an object, each task's
trials numbered in order, one configuration. ``trials_v1`` and ``samples_v2`` take such a
file in one pass, keeping per task three counters and per configuration its lines, and
give up (None) at the first record they cannot take as it is: the caller then reads the
file with ``trials.py``'s readers, which name every problem. So a tally, when there is
one, is what those readers and their grouping give (``tests/checkers/test_trial_tally.py``
holds the verdicts to that, reading each file both ways).

Configurations are grouped by their ``marshal`` bytes, in C: equal bytes are the same
value, types and key order included, so they write the same JSON; the caller then groups
each group's first configuration by its JSON text, as the readers group every record's.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Iterator, Mapping
from typing import Any

from .trials import OUTCOMES, TaskCount, TaskStats, outcome_of

# one configuration's lines, in file order: a group of records whose configurations
# marshal alike, the first one kept
Group = tuple[Any, list[int]]


def _grouped(groups: dict[bytes, Group], config: Any, line: int) -> bool:
    """Add ``line`` to its configuration's group; False when it cannot be marshalled."""
    try:
        key = marshal.dumps(config)
    except ValueError:
        return False
    found = groups.get(key)
    if found is None:
        groups[key] = (config, [line])
    else:
        found[1].append(line)
    return True


class _Counts:
    """Per task: its records, environment failures and successes."""

    def __init__(self) -> None:
        self.launched: dict[str, int] = {}
        self.environment: dict[str, int] = {}
        self.successes: dict[str, int] = {}

    def add(self, task: str, count: int, outcome: str) -> None:
        """One more record of ``task`` (``count`` before it)."""
        self.launched[task] = count + 1
        if outcome == "success":
            self.successes[task] = self.successes.get(task, 0) + 1
        elif outcome == "environment_failure":
            self.environment[task] = self.environment.get(task, 0) + 1

    def rows(self, rule: str) -> Iterator[tuple[str, int, int, int, int]]:
        """Per task in order: launched, environment failures, counted, successes."""
        for task in sorted(self.launched):
            launched, env = self.launched[task], self.environment.get(task, 0)
            counted = launched - env if rule == "exclude" else launched
            yield task, launched, env, counted, self.successes.get(task, 0)


def _objects(records: list[Any], previous: Any) -> Iterator[tuple[int, dict[str, Any]] | None]:
    """Each ``(line, object)`` pair, lines upwards from ``previous``; None, and no more,
    at the first entry that is not one."""
    if type(previous) is not int:
        yield None
        return
    for entry in records:
        if type(entry) is not tuple or len(entry) != 2:
            yield None
            return
        line, value = entry
        if type(line) is not int or line <= previous or type(value) is not dict:
            yield None
            return
        previous = line
        yield line, value


def trials_v1(lines: Any, k: int, rule: str) -> tuple[list[TaskStats], list[Group]] | None:
    """trial-stats@1's tasks (as ``compute_stats`` gives them) and configuration groups, or
    None: a record ``parse_trials`` would refuse or a task's trials not numbered upwards
    (``parse_trials`` then finds any duplicate), lines not in order, more than k
    counted trials in a task (``compute_stats`` names every such task)."""
    if type(lines) is not list or not lines:
        return None
    counts = _Counts()
    last: dict[str, int] = {}
    groups: dict[bytes, Group] = {}
    for pair in _objects(lines, 0):
        if pair is None:
            return None
        line, value = pair
        task, number = value.get("task"), value.get("trial")
        outcome, config = value.get("outcome"), value.get("config")
        if type(task) is not str or not task or type(number) is not int:
            return None
        if number <= last.get(task, 0) or outcome not in OUTCOMES or type(config) is not dict:
            return None
        last[task] = number
        counts.add(task, counts.launched.get(task, 0), outcome)
        if not _grouped(groups, config, line):
            return None
    tasks = [TaskStats(*row, k) for row in counts.rows(rule)]
    if any(task.counted > k for task in tasks):
        return None
    return tasks, list(groups.values())


def samples_v2(
    lines: Any,
    fields: Mapping[str, str],
    first: int,
    outcomes: Mapping[str, str],
    rule: str,
    *,
    unrecorded_config: bool,
) -> tuple[list[TaskCount], Any, list[Group]] | None:
    """trial-stats@2's (``unrecorded_config``: @3's) tasks (as ``_counts`` gives them), the
    header's config and the configuration groups (none when the records carry no
    config), or None: a record ``_read_samples`` would refuse or read otherwise (a task id
    that is a number), a task's samples not numbered ``first``, ``first + 1``... in file
    order (``_check_numbering`` then finds any gap), lines not in order."""
    if type(lines) is not list:
        return None
    tf, sf, of, cf = fields["task"], fields["sample"], fields["outcome"], fields["config"]
    unrecorded = unrecorded_config and not cf
    header: Any = None
    records = lines
    if not unrecorded and lines:
        head = lines[0]
        if type(head) is not tuple or len(head) != 2 or type(head[1]) is not dict:
            return None
        if tf not in head[1]:  # a header record: its config, if it holds one
            if not cf or cf not in head[1]:
                return None
            header, records = head[1][cf], lines[1:]
    if not records:
        return None
    counts = _Counts()
    groups: dict[bytes, Group] = {}
    for pair in _objects(records, 0 if records is lines else lines[0][0]):
        if pair is None:
            return None
        line, value = pair
        task = value.get(tf)
        if type(task) is not str or not task:
            return None
        count = counts.launched.get(task, 0)
        if sf:
            index = value.get(sf)
            if type(index) is not int or index != first + count:
                return None
        given = value.get(of)
        if type(given) is str:
            outcome = outcomes.get(given) or outcome_of(given, outcomes)
        elif type(given) is bool:
            outcome = "success" if given else "failure"
        else:
            return None
        if outcome is None:
            return None
        counts.add(task, count, outcome)
        if unrecorded:
            continue
        if cf and cf in value:
            config = value[cf]
        elif header is not None:
            config = header
        else:
            return None
        if not _grouped(groups, config, line):
            return None
    tasks = [TaskCount(*row) for row in counts.rows(rule)]
    return tasks, header, list(groups.values())


def configs_v1(groups: list[Group]) -> list[tuple[Any, list[int]]]:
    """trial-stats@1's configurations (as ``_distinct_configs`` gives them) from the
    groups: by JSON text, each with its first record's copy and its lines in file order."""
    out: dict[str, tuple[Any, list[int]]] = {}
    for config, lines in groups:
        key = json.dumps(config, sort_keys=True, default=str)
        found = out.setdefault(key, (dict(config), []))
        found[1].extend(lines)
    for _, lines in out.values():
        lines.sort()  # the lines of several groups: in file order, as the records come
    return list(out.values())
