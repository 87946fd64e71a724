"""What an Inspect log holds, against what its run planned, in words that are true of it
(issue 41, item 8): the sample records counted as they are, a record written twice for one
sample and epoch counted as a duplicate, and every planned (sample, epoch) that has no
record named as never run.

"4 sample records (2 samples x 3 epochs)" is said only where the 4 records are exactly
the 2 samples in each of the 3 epochs; otherwise the records are described sample by
sample ("2 samples: s1 in epochs 1-3, s2 in epoch 1"). The plan is the spec's
``dataset.sample_ids`` (the samples it chose, fewer than the dataset's under --limit)
times epochs 1 to ``config.epochs``; a spec that does not name its samples gives a count
of what never ran, not their names.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from bundler.importers import is_count
from checkers.inspect_log.log import InspectLog

SHOWN = 6  # samples (or runs of them) named in one sentence


@dataclass(frozen=True)
class Held:
    """The records of a log, counted."""

    records: int
    pairs: Counter[tuple[Any, int]]  # (sample id, epoch) -> records of it

    @property
    def distinct(self) -> int:
        return len(self.pairs)

    @property
    def duplicates(self) -> int:
        """Records beyond the first of their sample and epoch."""
        return self.records - self.distinct

    @property
    def samples(self) -> list[Any]:
        return list(dict.fromkeys(sample for sample, _ in self.pairs))

    @property
    def epochs(self) -> int:
        return max((epoch for _, epoch in self.pairs), default=0)

    @property
    def full_grid(self) -> bool:
        """Each sample in every epoch from 1 to the last, each once."""
        return not self.duplicates and self.distinct == len(self.samples) * self.epochs


def held(log: InspectLog) -> Held:
    return Held(len(log.records), Counter((r.sample_id, r.epoch) for r in log.records))


def planned_pairs(log: InspectLog) -> list[tuple[Any, int]] | None:
    """Every (sample, epoch) the run planned, if its spec names its samples."""
    ids = (log.spec.get("dataset") or {}).get("sample_ids")
    epochs = (log.spec.get("config") or {}).get("epochs") or 1
    if not isinstance(ids, list) or not is_count(epochs):
        return None
    if any(isinstance(i, bool) or not isinstance(i, str | int) for i in ids):
        return None  # not sample ids: what never ran is counted, not named
    return [(sample, epoch) for epoch in range(1, epochs + 1) for sample in ids]


def never_ran(log: InspectLog, planned: int | None) -> tuple[int, str]:
    """How many planned sample records have none in the log, and their names ("" when the
    spec does not name its samples)."""
    pairs = planned_pairs(log)
    found = held(log)
    if pairs is not None and (planned is None or planned == len(pairs)):
        missing = [p for p in pairs if p not in found.pairs]
        return len(missing), by_sample(missing)
    if planned is None:
        return 0, ""
    return max(planned - found.distinct, 0), ""


def records_text(log: InspectLog) -> str:
    """ "N sample records (...)", true of the log: the grid where it is one, else each
    sample's epochs, and the duplicates."""
    found = held(log)
    n = found.records
    if not n:
        return "0 sample records"
    if found.full_grid:
        return f"{n} sample records ({len(found.samples)} samples x {found.epochs} epochs)"
    parts = [f"{len(found.samples)} samples: {by_sample(list(found.pairs))}"]
    if found.duplicates:
        again = [(p, k) for p, k in found.pairs.items() if k > 1]
        shown = ", ".join(f"{_label(p)} {k} times" for p, k in again[:SHOWN])
        more = f" and {len(again) - SHOWN} more" if len(again) > SHOWN else ""
        parts.append(
            f"{found.duplicates} of them duplicates of a record of the same sample and epoch "
            f"({shown}{more}), so {found.distinct} distinct"
        )
    return f"{n} sample records ({'; '.join(parts)})"


def by_sample(pairs: list[tuple[Any, int]]) -> str:
    """``s1 in epochs 1-3; s2 in epoch 1``: each sample's epochs, samples with the same
    epochs together."""
    epochs: dict[Any, list[int]] = {}
    for sample, epoch in pairs:
        epochs.setdefault(sample, []).append(epoch)
    groups: dict[tuple[int, ...], list[Any]] = {}
    for sample, found in epochs.items():
        groups.setdefault(tuple(sorted(set(found))), []).append(sample)
    texts = []
    for run, samples in groups.items():
        names = ", ".join(str(s) for s in samples[:SHOWN])
        if len(samples) > SHOWN:
            names += f" and {len(samples) - SHOWN} more"
        texts.append(f"{names} in {_epochs(list(run))}")
    if len(texts) > SHOWN:
        texts = [*texts[:SHOWN], f"and {len(texts) - SHOWN} more samples' epochs"]
    return "; ".join(texts)


def _epochs(found: list[int]) -> str:
    runs: list[tuple[int, int]] = []
    for epoch in found:
        if runs and epoch == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], epoch)
        else:
            runs.append((epoch, epoch))
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return f"epoch {text}" if len(found) == 1 else f"epochs {text}"


def _label(pair: tuple[Any, int]) -> str:
    return f"{pair[0]} epoch {pair[1]}"
