"""An lm-evaluation-harness run (its output folder or ``results_<time>.json``) -> a bundle
source.

The results file and the samples files of the same run (``samples_<task>_<time>.jsonl``,
written with ``--log_samples``) are copied unchanged into ``inputs/``. Per task, with the
``lm-eval-counts@2``, ``lm-eval-hashes@1`` and ``lm-eval-metric@4`` checkers (the newest
versions):

- the sample counts (``n-samples`` against the stored records and the run's ``--limit``,
  and each filter's documents against the ones lm-eval takes);
- every stored hash recomputed (``doc_hash``, ``prompt_hash``, ``target_hash``, and the
  results file's ``task_hashes``);
- per filter and metric whose aggregation is ``mean``: the headline figure (and its
  stderr) re-derived from the per-sample values;
- a negative control for each, a copy with one record changed (or removed), so each check
  is shown able to fail.

What cannot be re-derived from what is stored (another aggregation and its bootstrap
stderr, group figures, every figure of a run without samples) goes under
``cannot_support``. A ``--limit`` run says so in every claim's limits. The files are read
as verify reads a case's inputs (``bundler.run.inputs.parse_input``: its size and value caps), and
every case is run here once, so the author learns before ``build`` what does not hold.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import checkers
from bundler.errors import SourceError, UsageError
from bundler.format.documents import DocumentProblem
from bundler.format.paths import path_problem
from bundler.importers import Checks, Imported, ImportLimits, slug, write_source
from bundler.importers.untrusted import AT_VERIFY, bounded
from bundler.run.inputs import LoadLimits, parse_input
from checkers.api import CheckerInputError, InputKind, failed_substantively
from checkers.lm_eval.checks import RESULTS_ROLE, SAMPLES_ROLE
from checkers.lm_eval.run import (
    Task,
    group_names,
    is_count,
    is_number,
    read_records,
    read_task,
    table,
    task_names,
)
from checkers.lm_eval.scores import project

CONTROLS = "inputs/controls"
# the split layout (``import lm-eval --split``, issue 45)
TRANSCRIPTS = "inputs/transcripts"
SCORES = "inputs/scores"
MAX_FILES = 10_000  # entries looked at in the folder given (and each of its folders)


@dataclass
class _Plan:
    results: Any
    results_path: str
    files: dict[str, bytes]
    loaded: dict[str, Any] = field(default_factory=dict)  # bundle path -> loaded value
    cases: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    cannot: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    slugs: dict[str, str] = field(default_factory=dict)
    split: bool = False  # the split layout (issue 45): samples under inputs/transcripts/
    checks: Checks = field(default_factory=Checks)  # each under a case's limits, as at verify

    def slug_of(self, task: str) -> str:
        """The task's name in ids and file names, one per task (two names can make one
        slug: ``a-b`` and ``a_b``)."""
        if task not in self.slugs:
            wanted = found = slug(task)
            n = 1
            while found in self.slugs.values():
                n += 1
                found = f"{wanted}-{n}"
            self.slugs[task] = found
        return self.slugs[task]

    def run(self, key: str, inputs: Mapping[str, str], params: Mapping[str, Any]) -> Any:
        found = checkers.get(key)
        assert found is not None
        return self.checks.run(found, {r: self.loaded[p] for r, p in inputs.items()}, params)

    def case(
        self,
        case_id: str,
        key: str,
        inputs: dict[str, str],
        params: dict[str, Any],
        verdict: Any = None,
    ) -> str:
        """A case expected to pass, run here (unless its ``verdict`` is given): a note
        when it does not pass on this run."""
        taken = {c["id"] for c in self.cases}
        found, n = case_id, 1
        while found in taken:
            n += 1
            found = f"{case_id}-{n}"
        self.cases.append(
            {"id": found, "checker": key, "inputs": inputs, "params": params, "expect": "pass"}
        )
        verdict = verdict or self.run(key, inputs, params)
        if verdict.status != "pass":
            why = "; ".join([verdict.message, *(r.message for r in verdict.reasons[:3])])
            self.notes.append(
                f"{found}: {why}; its claim will be contradicted (build refuses a bundle "
                "whose claims are not supported)"
            )
        return found

    def control(self, case_id: str, inputs: dict[str, str]) -> str | None:
        """The control of ``case_id``: its checker and params on ``inputs``, expected to
        fail with the codes it fails with here (None, and a note, if it does not fail)."""
        case = next(c for c in self.cases if c["id"] == case_id)
        verdict = self.run(case["checker"], inputs, case["params"])
        if not failed_substantively(verdict):
            self.notes.append(f"{case_id}: its changed copy does not fail it; it has no control")
            return None
        control_id = f"{case_id}-control"
        self.cases.append(
            {
                "id": control_id,
                "checker": case["checker"],
                "inputs": inputs,
                "params": case["params"],
                "expect": "fail",
                "expect_reasons": list(verdict.codes),
            }
        )
        return control_id

    def add_file(self, path: str, value: Any, lines: bool) -> str:
        if lines:
            text = "".join(json.dumps(v) + "\n" for _, v in value)
        else:
            text = json.dumps(value, indent=1) + "\n"
        self.files[path] = text.encode()
        self.loaded[path] = value
        return path


def import_lm_eval(
    path: Path,
    dest: Path,
    name: str | None = None,
    version: str = "1.0.0",
    split: bool = True,
    limits: ImportLimits = AT_VERIFY,
) -> Imported:
    """Write a bundle source for the lm-eval run at ``path`` into ``dest`` (new or empty).
    ``split`` (the default; False: the whole-log layout, as before issue 45): each samples
    file goes under ``inputs/transcripts/`` and its per-sample values, without documents,
    prompts or responses, into a sample scores file the figures and counts are checked on
    (``checkers/lm_eval/scores.py``). Each file is read, and each check run, within
    ``limits`` (by default verify's caps on one input and a case's time and memory)."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not an empty folder; import never overwrites")
    results_file = _results_file(path)
    data = _read_capped(results_file, limits.load)
    results = _parse(data, results_file, InputKind.DATA, limits)
    try:
        tasks = [read_task(results, t) for t in task_names(results)]
    except CheckerInputError as exc:
        raise SourceError(f"{results_file} is not lm-eval results this tool reads: {exc}") from None
    if not tasks:
        raise SourceError(f"{results_file} states no task")
    for task in tasks:
        _encodable(results_file, task)
    results_path = f"inputs/{_safe(results_file.name, 'results.json')}"
    plan = _Plan(results, results_path, {results_path: data}, {results_path: results})
    plan.checks = Checks(budget=limits.budget)
    plan.split = split
    date_id = results_file.stem.rpartition("_")[2]
    listing = _listing(results_file.parent)
    for task in tasks:
        samples_name = f"samples_{task.name}_{date_id}.jsonl"
        samples_path = None
        if samples_name in listing:
            samples_file = results_file.parent / samples_name
            samples_data = _read_capped(samples_file, limits.load)
            samples = _parse(samples_data, samples_file, InputKind.JSONL, limits)
            try:
                read_records(samples)
            except CheckerInputError as exc:
                raise SourceError(
                    f"{results_file.parent / samples_name} is not an lm-eval samples file this "
                    f"tool reads: {exc}"
                ) from None
            samples_path = (
                f"{TRANSCRIPTS if split else 'inputs'}/"
                f"{_safe(samples_name, f'samples_{plan.slug_of(task.name)}.jsonl')}"
            )
            plan.files[samples_path] = samples_data
            plan.loaded[samples_path] = samples
        _task(plan, task, samples_path)
        # what the task's cases read is written (plan.files); one task's parse at a time
        plan.loaded = {
            p: plan.loaded[p] for p in (results_path, EFFECTIVE_CHANGED) if p in plan.loaded
        }
    _scope(plan, results)
    document = _document(plan, results, results_file.name, name, version)
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise SourceError(
            f"{results_file} holds text with a lone surrogate (in the model's name, a "
            "metric's or a filter's): not text lm-eval writes, and bundle.yaml cannot carry it"
        ) from None
    written = write_source(dest, document, plan.files, "lm-eval")
    return Imported(dest, written, len(plan.cases), [c["id"] for c in plan.claims], plan.notes)


# -- reading, as verify reads ------------------------------------------------------------


def _results_file(path: Path) -> Path:
    """The results file ``path`` names, or the one results file of the folder ``path``
    (or of one of its folders: lm-eval writes into OUTPUT/MODEL/)."""
    if not path.is_dir():
        return path
    found = []
    for folder in [path, *(path / n for n in sorted(_listing(path)))]:
        if folder == path or (folder.is_dir() and not folder.is_symlink()):
            found += [folder / n for n in sorted(_listing(folder)) if _is_results(n)]
    if len(found) != 1:
        shown = ", ".join(str(f) for f in found[:5]) or "none"
        raise UsageError(
            f"{path} must hold exactly one lm-eval results_*.json (in it or one folder "
            f"down); found {len(found)} ({shown}). Name the run's results file instead."
        )
    return found[0]


def _is_results(name: str) -> bool:
    return name.startswith("results_") and name.endswith(".json")


def _listing(folder: Path) -> set[str]:
    try:
        with os.scandir(folder) as entries:
            names: set[str] = set()
            for entry in entries:
                if len(names) >= MAX_FILES:
                    raise UsageError(f"{folder} holds more than {MAX_FILES} entries")
                names.add(entry.name)
            return names
    except OSError as exc:
        raise UsageError(f"cannot list {folder}: {exc.strerror}") from None


def _read_capped(file: Path, load: LoadLimits) -> bytes:
    """A regular file's bytes, refused past the size ``load`` accepts for an input (and
    never through a link: the bundle holds what the folder holds)."""
    cap = load.bytes
    try:
        # O_NONBLOCK: a FIFO planted in the folder is refused below, not waited on
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(file, flags)
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{file} is not a regular file")
        if info.st_size > cap:
            raise SourceError(f"{file} is {info.st_size} bytes; an input is at most {cap}")
        data = stream.read(cap + 1)
    if len(data) > cap:
        raise SourceError(f"{file} grew past {cap} bytes while read")
    return data


def _parse(data: bytes, file: Path, kind: InputKind, limits: ImportLimits) -> Any:
    """``data`` read as verify reads the input, within ``limits`` (its caps, and a case's
    time and memory for the parse)."""
    role = RESULTS_ROLE if kind is InputKind.DATA else SAMPLES_ROLE
    suffix = ".json" if kind is InputKind.DATA else ".jsonl"
    try:
        name = file.name if file.name.endswith(suffix) else f"(file){suffix}"
        return bounded(
            lambda: parse_input(data, name, kind, role.reading, limits=limits.load),
            f"reading {file}",
            limits.budget,
        )
    except DocumentProblem as exc:
        raise SourceError(f"{file} cannot be read as lm-eval writes it: {exc}") from None


def _safe(name: str, fallback: str) -> str:
    return name if not path_problem(name) else fallback


def _encodable(file: Path, task: Task) -> None:
    """Names go into sentences of bundle.yaml: refuse text UTF-8 cannot carry."""
    for text in [task.name, *task.figures]:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise SourceError(
                f"{file}: the name {text!r} holds a lone surrogate, not text lm-eval writes"
            ) from None


# -- per task ----------------------------------------------------------------------------


def _limit_note(task: Task) -> list[str]:
    if task.limit is None:
        return []
    return [
        f"A --limit {task.limit:g} run: {task.effective} of the task's {task.original} "
        "documents were evaluated; every figure is over those documents, not the whole task."
    ]


def _task(plan: _Plan, task: Task, samples_path: str | None) -> None:
    inputs = {"results": plan.results_path}
    if samples_path is not None:
        inputs["samples"] = samples_path
    if plan.split and samples_path is not None:
        _split_task(plan, task, samples_path)
        return
    _counts(plan, task, inputs)
    if samples_path is None:
        shown = ", ".join(f"{k} = {v!r}" for k, v in task.figures.items() if "," in k)
        plan.cannot.append(
            f"The figures of {task.name} ({shown or 'none stated'}): no samples file of "
            "the task is beside the results (a run made without --log_samples writes none), "
            "so no per-sample value is stored to re-derive them from."
        )
        return
    changed = _one_record_changed(plan, task, samples_path)
    _hashes(plan, task, inputs, changed)
    _figures(plan, task, inputs, changed)


def _split_task(plan: _Plan, task: Task, samples_path: str) -> None:
    """The split layout: counts and figures on the sample scores file (their controls are
    scores files too); the hashes, which read the documents, on the samples file (its
    control under the transcripts); and a claim that the scores are the samples'."""
    name = samples_path.rsplit("/", 1)[1].removesuffix(".jsonl")
    scores_path = plan.add_file(
        f"{SCORES}/{name}.scores.jsonl", project(plan.loaded[samples_path]), lines=True
    )
    full = {"results": plan.results_path, "samples": samples_path}
    scored = {"results": plan.results_path, "sample_scores": scores_path}
    _counts(plan, task, scored)
    changed = _one_record_changed(plan, task, samples_path, f"{TRANSCRIPTS}/controls")
    _hashes(plan, task, full, changed)
    changed_scores = _one_record_changed(plan, task, scores_path, CONTROLS, doc=False)
    _figures(plan, task, scored, changed_scores)
    slug_ = plan.slug_of(task.name)
    case = plan.case(
        f"{slug_}-scores",
        "lm-eval-scores@1",
        {"samples": samples_path, "sample_scores": scores_path},
        {},
    )
    control = plan.control(case, {"samples": samples_path, "sample_scores": changed_scores})
    plan.claims.append(
        {
            "id": f"{slug_}-scores-match-samples",
            "statement": f"Task {task.name}: {scores_path} holds exactly the records of "
            f"{samples_path} without their documents, prompts and responses: the figures "
            "and counts checked on it are the samples'.",
            "cases": [case, *([control] if control else [])],
            "limits": [
                *_limit_note(task),
                "Reads the samples file with its transcripts: a bundle that withholds it "
                "cannot check this claim; the figures and counts are then checked on the "
                "scores file as it stands.",
            ],
        }
    )


def _counts(plan: _Plan, task: Task, inputs: dict[str, str]) -> None:
    params = {
        "task": task.name,
        "claimed": {"original": task.original, "effective": task.effective},
    }
    role = "sample_scores" if "sample_scores" in inputs else "samples"
    key = "lm-eval-counts@3" if role == "sample_scores" else "lm-eval-counts@2"
    case = plan.case(f"{plan.slug_of(task.name)}-counts", key, inputs, params)
    if role in inputs:
        records = plan.loaded[inputs[role]]
        control_path = plan.add_file(
            f"{CONTROLS}/{plan.slug_of(task.name)}-one-record-removed.jsonl",
            records[:-1],
            lines=True,
        )
        control = plan.control(case, {**inputs, role: control_path})
        what = "the samples file with its last record removed"
    else:
        control = plan.control(case, {"results": _effective_changed(plan)})
        what = "a copy of the results file with every task's effective count one higher"
    stored = " and each of them stored once per filter" if role in inputs else ""
    limit = _limit_text(task.limit)
    plan.claims.append(
        {
            "id": f"{plan.slug_of(task.name)}-counts",
            "statement": (
                f"Task {task.name}: {task.effective} of its {task.original} documents were "
                f"evaluated ({limit}), as its n-samples states{stored}."
            ),
            "cases": [case, *([control] if control else [])],
            "limits": [
                *_limit_note(task),
                "Re-counts stored data; lm-eval does not record a --samples selection, which "
                "would show as a mismatch with the limit.",
                f"The control is {what}.",
            ],
        }
    )


EFFECTIVE_CHANGED = f"{CONTROLS}/effective-changed.json"


def _effective_changed(plan: _Plan) -> str:
    """One control for every task's counts (a copy per task would grow with tasks^2)."""
    if EFFECTIVE_CHANGED not in plan.loaded:
        copy = json.loads(json.dumps(plan.results))
        for counts in table(copy.get("n-samples")).values():
            if isinstance(counts, dict) and is_count(counts.get("effective")):
                counts["effective"] += 1
        plan.add_file(EFFECTIVE_CHANGED, copy, lines=False)
    return EFFECTIVE_CHANGED


def _one_record_changed(
    plan: _Plan, task: Task, samples_path: str, folder: str = CONTROLS, doc: bool = True
) -> str:
    """A copy of the samples with, in the first record of each filter, the doc changed
    (unless not ``doc``: a sample scores file has none) and every numeric value turned
    (0 <-> 1, any other v to v + 1), written under ``folder``."""
    records = plan.loaded[samples_path]
    seen: set[Any] = set()
    changed = []
    for line, value in records:
        if isinstance(value, dict) and value.get("filter") not in seen:
            seen.add(value.get("filter"))
            value = dict(value)
            if doc:
                value["doc"] = {"changed by the control": value.get("doc")}
            for metric in value.get("metrics") or []:
                if isinstance(metric, str) and is_number(value.get(metric)):
                    v = value[metric]
                    value[metric] = 1 - v if v in (0, 1) else v + 1
        changed.append((line, value))
    return plan.add_file(
        f"{folder}/{plan.slug_of(task.name)}-one-record-changed.jsonl", changed, True
    )


def _hashes(plan: _Plan, task: Task, inputs: dict[str, str], changed: str) -> None:
    params = {"task": task.name}
    verdict = plan.run("lm-eval-hashes@1", inputs, params)
    if verdict.status == "error":
        plan.cannot.append(
            f"That the records of {task.name} are the ones lm-eval hashed: {verdict.message}."
        )
        return
    case = plan.case(
        f"{plan.slug_of(task.name)}-hashes", "lm-eval-hashes@1", inputs, params, verdict
    )
    control = plan.control(case, {**inputs, "samples": changed})
    n = len(plan.loaded[inputs["samples"]])
    plan.claims.append(
        {
            "id": f"{plan.slug_of(task.name)}-hashes",
            "statement": (
                f"Every hash lm-eval stored for task {task.name} holds: the doc, prompt and "
                f"target hash of each of its {n} records, and the task hash of the results "
                "file."
            ),
            "cases": [case, *([control] if control else [])],
            "limits": [
                *_limit_note(task),
                "Shows the stored records are the ones lm-eval hashed; it does not show the "
                "documents are the task's dataset, nor that the model answered so.",
                "The control is the samples file with the doc of the first record of each "
                "filter changed.",
            ],
        }
    )


def _figures(plan: _Plan, task: Task, inputs: dict[str, str], changed: str) -> None:
    """A case per re-derivable figure (mean aggregation), one claim for the task."""
    role = "sample_scores" if "sample_scores" in inputs else "samples"
    metric_key = "lm-eval-metric@5" if role == "sample_scores" else "lm-eval-metric@4"
    records = read_records(plan.loaded[inputs[role]])
    filters = sorted({r.filter for r in records})
    cases: list[str] = []
    shown: list[tuple[str, int]] = []  # the figure as stated, over how many values
    for key, value in task.figures.items():
        metric, comma, filter_name = key.partition(",")
        if not comma or metric.endswith("_stderr"):
            continue
        what = f"{task.name} {key} = {value!r}"
        aggregation = task.aggregation(metric)
        stderr = task.stderr(metric, filter_name)
        if aggregation != "mean" or not is_number(value):
            why = (
                f"aggregation {aggregation or 'not a name lm-eval registers'}, not the mean of "
                "the per-sample values"
                if aggregation != "mean"
                else "not a finite number"
            )
            plan.cannot.append(f"The figure {what}: {why}; not re-derived.")
            if aggregation != "mean" and stderr not in (None, "N/A"):
                plan.cannot.append(
                    f"The stderr of {task.name} {key} = {stderr!r}: a bootstrap estimate "
                    "(random resampling), not re-derived."
                )
            continue
        params = {"task": task.name, "metric": metric, "filter": filter_name, "claimed": value}
        verdict = plan.run(metric_key, inputs, params)
        if verdict.status == "error":
            plan.cannot.append(f"The figure {what}: {verdict.message}; not re-derived.")
            continue
        case_id = f"{plan.slug_of(task.name)}-{slug(metric)}-{slug(filter_name)}"
        case = plan.case(case_id, metric_key, inputs, params, verdict)
        control = plan.control(case, {**inputs, role: changed})
        cases += [case, *([control] if control else [])]
        pm = f" ± {stderr:.4g}" if is_number(stderr) else ""
        left_out = verdict.details.get("omitted_by_task", 0)
        aside = (
            f" ({left_out} records left out: the task gave them no {metric})" if left_out else ""
        )
        shown.append((f"{key} {value:.4g}{pm}{aside}", verdict.details.get("values", 0)))
    if not cases:
        return
    plan.claims.append(
        {
            "id": f"{plan.slug_of(task.name)}-figures",
            "statement": (
                f"Task {task.name}: {_over(shown)}, each "
                "the mean of the stored per-sample values (and its stderr lm-eval's "
                "closed form)."
            ),
            "cases": cases,
            "limits": [
                *_limit_note(task),
                f"Filters stored: {', '.join(filters)}. Denominator: every record of the "
                "filter; one without the metric's value is left out only where its metrics "
                "list says the task gave none (as lm-eval averages), and fails the case "
                "otherwise.",
                "Re-checks the arithmetic on the stored per-sample values; the values "
                "themselves (computed by the task's process_results from the model's "
                "responses) are taken as stored, and the model is never re-run.",
                "The control is the samples file with every value of the first record of each "
                "filter turned (0 and 1 swapped, any other value plus 1).",
            ],
        }
    )


def _limit_text(limit: Any) -> str:
    if limit is None:
        return "no --limit"
    return f"--limit {limit:g}" if is_number(limit) else f"limit {limit!r}"


def _over(shown: list[tuple[str, int]]) -> str:
    """The figures and their denominators: once when all share one."""
    counts = {n for _, n in shown}
    if len(counts) == 1:
        return f"{', '.join(text for text, _ in shown)} over {counts.pop()} documents"
    return ", ".join(f"{text} over {n} documents" for text, n in shown)


def _scope(plan: _Plan, results: Mapping[str, Any]) -> None:
    config = table(results.get("config"))
    model = config.get("model", "the model")
    plan.cannot[:0] = [
        f"That {model} gives these outputs again: the bundle re-checks stored values, "
        "counts and hashes, never the model.",
        "That these files are the ones lm-eval wrote: they are not signed; the bundle fixes "
        "their bytes from the import on.",
    ]
    stated = table(results.get("results"))
    for group in group_names(results):
        shown = ", ".join(f"{k} = {v!r}" for k, v in table(stated.get(group)).items() if "," in k)
        if shown:
            plan.cannot.append(
                f"The figures of group {group} ({shown}): aggregated over its subtasks by "
                "lm-eval's group rules, not re-derived."
            )


def _document(
    plan: _Plan, results: Mapping[str, Any], original: str, name: str | None, version: str
) -> dict[str, Any]:
    config = table(results.get("config"))
    tasks = task_names(results)
    title = ", ".join(tasks)
    description = (
        f"Imported by `reprobundle import lm-eval` from {original} (lm-eval "
        f"{results.get('lm_eval_version', '?')}, model {config.get('model', '?')}, "
        f"{_limit_text(config.get('limit'))}, seed {config.get('random_seed', '?')}, git "
        f"{results.get('git_hash', '?')}). {plan.results_path} and the samples files beside "
        f"it are the run's files, unchanged; {CONTROLS}/ holds the negative controls (copies "
        "with one record changed or removed, or one count changed).\n"
    )
    return {
        "name": name or f"lm-eval-{slug(title)}"[:64].rstrip("-"),
        "version": version,
        "title": f"lm-eval results: {title} on {config.get('model', '?')}"[:200],
        "description": description,
        "files": ["inputs/**"],
        "cases": plan.cases,
        "claims": plan.claims,
        "scope": {"cannot_support": plan.cannot},
    }
