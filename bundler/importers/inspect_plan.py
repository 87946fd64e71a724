"""What an Inspect import writes, as it is planned: the cases, claims, scope and notes, and
the checkers run on the way (``Plan``), with the wording every claim shares (the run's
limits, its revision)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import checkers
from bundler.importers import Checks, is_count
from bundler.importers.inspect_held import never_ran, records_text
from checkers.api import Verdict
from checkers.inspect_log.log import InspectLog

CONTROLS = "inputs/controls"
# the split layout (``import inspect --split``, issue 45): the log, with its transcripts, and
# the controls that hold transcripts, apart from the scores file the figures are checked on
TRANSCRIPTS = "inputs/transcripts"
SCORES = "inputs/scores"
# checker -> the version that reads a scores file (the split layout)
SPLIT_VERSIONS = {
    "inspect-metric@4": "inspect-metric@5",
    "inspect-counts@3": "inspect-counts@4",
    "inspect-status@2": "inspect-status@3",
}


@dataclass
class Plan:
    log: InspectLog
    log_path: str
    data: bytes
    cases: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    cannot: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    controls: dict[str, bytes] = field(default_factory=dict)
    checks: Checks = field(default_factory=Checks)
    case_ids: set[str] = field(default_factory=set)
    claim_ids: set[str] = field(default_factory=set)
    # the split layout: ``log``, ``log_path`` and ``data`` are the scores file; ``full`` the
    # whole log (with its transcripts), at ``full_path``, for the re-scoring
    full: InspectLog | None = None
    full_path: str = ""
    full_data: bytes = b""

    @property
    def split(self) -> bool:
        return self.full is not None

    def key(self, checker_key: str) -> str:
        """The version of ``checker_key`` this layout uses (the scores-file one when split)."""
        return SPLIT_VERSIONS.get(checker_key, checker_key) if self.split else checker_key

    def run(self, checker_key: str, data: bytes, params: Mapping[str, Any]) -> Verdict:
        """The verdict of ``checker_key`` on ``data``, under a case's limits at verify."""
        checker = checkers.get(checker_key)
        assert checker is not None
        return self.checks.run(checker, {role(checker_key): data}, params)

    def fails_with(
        self, checker_key: str, data: bytes, params: Mapping[str, Any], code: str
    ) -> bool:
        verdict = self.run(checker_key, data, params)
        return verdict.status == "fail" and verdict.codes == (code,)

    def case(self, case: dict[str, Any]) -> str:
        case["id"] = unique(str(case["id"]), self.case_ids)
        self.case_ids.add(case["id"])
        self.cases.append(case)
        return str(case["id"])

    def expected_pass(
        self,
        case_id: str,
        checker_key: str,
        params: dict[str, Any],
        what: str,
        data: bytes | None = None,
        path: str | None = None,
    ) -> tuple[str | None, str | None]:
        """A case of ``checker_key`` on the log that must pass, and what it says when it does
        not on this log (None when it passes): run here, so the note is made before build.
        A check that cannot decide here (an error: past a case's time or memory limit, a
        log it cannot read) gets no case: ``what`` goes under the scope with the reason.
        ``data``: what to run it on here, if not the log (a copy that gives the same
        verdict: the log with only the scorer's scores, so the checks of S scorers do not
        each read all S scorers' scores). ``path``: the case's input, if not the log's."""
        verdict = self.run(checker_key, self.data if data is None else data, params)
        if verdict.status == "error":
            self.cannot.append(f"That {what}: not checked ({verdict.message}).")
            self.notes.append(f"{case_id}: {verdict.message}; left out of the claims")
            return None, verdict.message
        found = self.case(
            {
                "id": case_id,
                "checker": checker_key,
                "inputs": {role(checker_key): path or self.log_path},
                "params": params,
                "expect": "pass",
            }
        )
        return found, None if verdict.status == "pass" else verdict.message

    def drop(self, case_id: str) -> None:
        """Take a case back (one that no control can show able to fail)."""
        self.cases = [c for c in self.cases if c["id"] != case_id]

    def claim(self, claim: dict[str, Any]) -> None:
        claim["id"] = unique(str(claim["id"]), self.claim_ids)
        self.claim_ids.add(claim["id"])
        self.claims.append(claim)


def role(checker_key: str) -> str:
    """The name of the one input role of an inspect checker (``log``, or ``scores``)."""
    checker = checkers.get(checker_key)
    assert checker is not None
    return checker.roles[0].name


def unique(wanted: str, taken: set[str]) -> str:
    """``wanted``, or with a number after it: two scorer names can make one slug."""
    found, n = wanted, 1
    while found in taken:
        n += 1
        found = f"{wanted}-{n}"
    return found


def finished(log: InspectLog) -> bool:
    return log.status == "success"


def plan_size(log: InspectLog) -> tuple[int | None, Any, Any]:
    """The sample records the run planned (samples x epochs of its plan), and both; the
    samples are the ids it chose (fewer than the dataset's under --limit) if it names them."""
    dataset = log.spec.get("dataset") or {}
    ids = dataset.get("sample_ids")
    samples = len(ids) if isinstance(ids, list) else dataset.get("samples")
    epochs = (log.spec.get("config") or {}).get("epochs") or 1
    if is_count(samples) and is_count(epochs):
        return samples * epochs, samples, epochs
    return None, samples, epochs


def run_limits(log: InspectLog) -> list[str]:
    """What every figure of the run is limited by: an unfinished run, a --limit, retries."""
    config = log.spec.get("config") or {}
    out = []
    if not finished(log):
        planned = plan_size(log)[0]
        never, names = never_ran(log, planned)
        out.append(
            f"The run did not finish (status {log.status}): this covers the "
            f"{records_text(log)} the log holds"
            + (f", of the {planned} the run planned" if planned is not None else "")
            + (f"; {never} never ran" if never else "")
            + (f" ({names})." if never and names else ".")
        )
    limit = config.get("limit")
    if limit is not None:
        out.append(
            f"A limited run (--limit {limit!r}): only part of the dataset "
            f"({(log.spec.get('dataset') or {}).get('samples', '?')} samples) was run."
        )
    retries = config.get("retry_on_error")
    if is_count(retries) and retries:
        out.append(
            f"Errored samples were retried up to {retries} times (--retry-on-error); the log "
            "keeps each sample's last attempt, which is what is counted here."
        )
    return out


def revision_limit(log: InspectLog) -> str:
    revision = log.spec.get("revision")
    if not isinstance(revision, dict):
        return "The log records no code revision: the code that produced it is not identified."
    commit = str(revision.get("commit", "?"))
    where = f"commit {commit} of {revision.get('origin') or 'a repository with no origin'}"
    if revision.get("dirty"):
        return (
            f"DIRTY REVISION: the run was made from {where} with uncommitted changes, so "
            "the code that produced the log is not exactly that commit."
        )
    return f"The run was made from {where} (clean working tree)."


def short(text: Any, most: int = 80) -> str:
    shown = " ".join(str(text).split())
    return shown if len(shown) <= most else shown[: most - 3] + "..."
