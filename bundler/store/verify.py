"""Re-verifying stored bundles: fan the work out (``reverify`` worker processes, or a Dask
cluster through ``cluster``), record each outcome as it comes (only this process writes
the index and the log), and the batch's overall result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

from bundler.codes import COMMAND_EXITS
from bundler.format.arguments import count
from bundler.store import audit, index, query, reverify, trust
from bundler.store.context import TOOL, Context, now
from bundler.store.index import BundleRow
from bundler.store.reverify import EXIT_CODES, RESULTS, Reverification

if TYPE_CHECKING:
    from bundler.run.verify import VerifyOptions

# the exit code of a batch that verified no bundle (inconclusive)
NOTHING_VERIFIED = COMMAND_EXITS["nothing_verified"]


@dataclass(frozen=True)
class Batch(Sequence[Reverification]):
    """The outcomes of one re-verification batch, in the order they were recorded, with
    the bundle each is of; the batch exits with the worst result."""

    outcomes: tuple[Reverification, ...]
    bundles: Mapping[str, BundleRow]  # by digest

    @overload
    def __getitem__(self, i: int) -> Reverification: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Reverification]: ...
    def __getitem__(self, i: int | slice) -> Reverification | Sequence[Reverification]:
        return self.outcomes[i]

    def __len__(self) -> int:
        return len(self.outcomes)

    def name(self, outcome: Reverification) -> str:
        bundle = self.bundles[outcome.digest]
        return f"{bundle.name}@{bundle.version}"

    @property
    def counts(self) -> dict[str, int]:
        """How many outcomes had each result, worst first."""
        return {r: sum(1 for o in self.outcomes if o.result == r) for r in RESULTS}

    @property
    def worst(self) -> str | None:
        counts = self.counts
        return next((r for r in RESULTS if counts[r]), None)

    @property
    def exit_code(self) -> int:
        worst = self.worst
        return EXIT_CODES[worst] if worst else NOTHING_VERIFIED

    @property
    def summary(self) -> str:
        counts = ", ".join(f"{n} {r}" for r, n in self.counts.items() if n)
        return f"{len(self.outcomes)} bundle(s) verified: {counts or 'none'}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [
                {
                    "bundle": self.name(o),
                    "digest": o.digest,
                    "copy": self.bundles[o.digest].copy_text,
                    "result": o.result,
                    "exit_code": o.exit_code,
                    "claims": o.claims,
                    "detail": o.detail,
                    "environment": o.environment,
                }
                for o in self.outcomes
            ],
            "exit_code": self.exit_code,
        }


def verify(
    context: Context,
    selectors: Sequence[str] = (),
    all_bundles: bool = False,
    jobs: int = 1,
    options: VerifyOptions | None = None,
    on_result: Callable[[Reverification, BundleRow], None] | None = None,
    scheduler: str | None = None,
    on_note: Callable[[str], None] | None = None,
    function: Callable[[reverify.Job], Reverification] = reverify.verify_one,
) -> Batch:
    """Re-verify bundles in ``jobs`` worker processes, or on the Dask cluster whose
    scheduler is at ``scheduler`` (``cluster.run``), recording each result as it comes;
    only this process writes the index and the log. Each bundle is judged by
    ``options`` (limits, code, case budget, advisories accepted) with the archive's
    signature policy: signatures are judged against the archive's trusted keys and the
    keys ``options.policy`` trusts; a verification that judged them records the signer
    (it replaces the bundle's). ``on_note`` hears of refused workers. A result that
    differs from the bundle's last one because of an advisory says so
    (``advisory_change``). Refuses first when a selected bundle's index rows are not what
    its own records in the log say (``audit.refuse_unless_logged``: never a walk of the
    whole log, which is ``log verify``'s), or the trust store is not what the log says."""
    count("jobs", jobs, 1)
    from bundler.run.verify import VerifyOptions

    options = options or VerifyOptions()
    digests = query.select(context.conn, selectors, all_bundles)
    audit.refuse_unless_logged(context, digests)
    archived = replace(options, policy=trust.policy(context, options.policy.trusted))
    work = [
        reverify.Job(str(context.root), d, archived, size=query.bundle(context.conn, d).size)
        for d in digests
    ]
    outcomes: list[Reverification] = []
    bundles: dict[str, BundleRow] = {}
    # closed at once if this loop is left by an exception (Ctrl-C in on_result): the
    # workers are stopped then, not when the interpreter exits
    results = _run(work, jobs, scheduler, function, on_note)
    try:
        for outcome in results:
            outcome = record(context, outcome)
            outcomes.append(outcome)
            bundles[outcome.digest] = query.bundle(context.conn, outcome.digest)
            if on_result is not None:
                on_result(outcome, bundles[outcome.digest])
    finally:
        getattr(results, "close", lambda: None)()
    return Batch(tuple(outcomes), bundles)


def _run(
    work: list[reverify.Job],
    jobs: int,
    scheduler: str | None,
    function: Callable[[reverify.Job], Reverification],
    on_note: Callable[[str], None] | None,
) -> Iterator[Reverification]:
    """The outcomes, in completion order, from local workers or the Dask cluster."""

    def failed(job: reverify.Job, why: str) -> Reverification:
        return Reverification(job.digest, "error", {}, [], {"message": why})

    if scheduler is not None:
        from bundler.store import cluster

        return cluster.run(work, scheduler, failed, function, on_note)
    return reverify.run(work, jobs, failed, function)


def advisory_change(last: str, outcome: Reverification) -> Reverification:
    """``outcome`` with ``advisory_change`` in its detail when its result differs from the
    bundle's ``last`` one because of an advisory: what was believed then (``from``), what
    is known now (``to``), the advisories and the claims they withheld support from.
    An advisory only ever turns ``supported`` into ``inconclusive``; accepting it turns
    it back (``accepted``)."""
    withheld = outcome.detail.get("advisories") or {}
    accepted = outcome.detail.get("accepted_advisories") or []
    if last == "supported" and outcome.result == "inconclusive" and withheld:
        ids = sorted({i for found in withheld.values() for i in found})
        change = {"from": last, "to": outcome.result, "advisories": ids, "claims": sorted(withheld)}
    elif last == "inconclusive" and outcome.result == "supported" and accepted:
        change = {"from": last, "to": outcome.result, "accepted": list(accepted)}
    else:
        return outcome
    return replace(outcome, detail={**outcome.detail, "advisory_change": change})


def record(context: Context, outcome: Reverification) -> Reverification:
    """One outcome into the history, the bundle's last result and the log, at once;
    returns it as recorded (with ``advisory_change`` when an advisory changed it)."""
    at = now()
    conn = context.conn
    outcome = advisory_change(query.bundle(conn, outcome.digest).last_result, outcome)
    with context.transaction("record the verification"):
        claims = [(c["id"], c["status"], c["why"]) for c in outcome.claims]
        vid = index.insert_verification(
            conn,
            outcome.digest,
            at,
            TOOL,
            outcome.result,
            outcome.exit_code,
            outcome.environment,
            outcome.detail,
            claims,
        )
        index.set_last_result(conn, outcome.digest, outcome.result, vid)
        data: dict[str, Any] = {
            "digest": outcome.digest,
            "copy": query.bundle(conn, outcome.digest).copy,  # which copy was verified
            "verification": vid,
            "result": outcome.result,
            "claims": {c["id"]: c["status"] for c in outcome.claims},
            "outcome": {
                "claims": outcome.claims,
                "environment": outcome.environment,
                "detail": outcome.detail,
            },
        }
        signed = outcome.signed
        if signed is not None:
            index.set_signer(conn, outcome.digest, signed.text, signed.keys)
            data["signer"] = signed.text
            data["keys"] = [{"keyid": k, "trusted": n} for k, n in signed.keys]
            data["trust"] = outcome.detail.get("trust", [])
        if "advisory_change" in outcome.detail:
            data["advisory_change"] = outcome.detail["advisory_change"]
        context.append("verify", data, at)
    return outcome
