"""Structured checkers against parsing their inputs (issue 33, items 3 and 6).

    python bench/checkers_bench.py --runs 3 --work /dev/shm/rb-checkers
    python bench/checkers_bench.py --runs 1 --work /tmp/rb-checkers --quick   # 1 MB rows only
    git archive 743d49a bundler checkers | tar -x -C /tmp/before   # the code before
    python bench/checkers_bench.py --runs 1 --work /tmp/rb-checkers --quick --code /tmp/before

Each row runs one checker the way ``verify`` runs a built-in case: ``runner.run_case``
on files listed with their SHA-256 (read and re-hashed, parsed strictly under verify's
caps, params checked, the checker called under the case's time and memory limits), not
a built bundle. The yardstick, in the same run, reads the same files, parses them with
the standard library (``json``, PyYAML's ``CSafeLoader``) and compares the two documents
with ``==`` (a checker of one input: parses it). Both run in a fresh process of their
own, taking turns; "s" is the median wall time of the work (imports excluded: that is
verify's fixed cost, measured by ``bench.py``), "ratio" the median of the per-run
ratios, "peak RSS" the checker process's largest resident size (``ru_maxrss``).

Sizes are of each input file (the rows ask for 1, 10 and 100 MB of JSON; the same rows
written as YAML are larger). YAML is read under verify's cap of 200,000 values an input
(about 1.8 MB of these rows): its rows are 1 MB and 10 MB, the second refused by the cap
(the cost of refusing it). The other families' inputs (trajectory, fault-report@3,
promptfoo, lm-eval, Inspect, contamination) are written by ``checkers_inputs.py``, from
small real examples scaled up; their yardstick parses every file they name (a ``.eval``:
``zipfile`` and ``json`` per member; text: its lines). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000


def _rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "name": f"row-{i}",
            "score": i * 0.5,
            "tags": ["a", "b", str(i % 7)],
            "ok": i % 2 == 0,
            "meta": {"x": i, "y": None},
        }
        for i in range(count)
    ]


def _changed(document: Any, rows: list[dict[str, Any]]) -> Any:
    """The document again, one value of its middle row changed."""
    copy = json.loads(json.dumps(document))
    found = copy
    for key in ("fields", "config", "rows"):
        found = found.get(key, found) if isinstance(found, dict) else found
    found[len(rows) // 2]["score"] = -1.0
    return copy


@dataclass(frozen=True)
class Spec:
    """One row: a checker, its files, params and the verdict it must give."""

    family: str
    checker: str
    kind: str  # json, yaml or jsonl
    roles: tuple[str, ...]  # the compared roles (two) or the one input
    size: int  # bytes of each input
    differing: bool

    @property
    def label(self) -> str:
        return f"{self.family}: {self.checker} ({self.kind})"


def _json_documents(spec: Spec, wrap: Callable[[Any], Any]) -> list[Any]:
    rows = _rows(max(1, spec.size // 124))
    first = wrap({"rows": rows})
    return [first, _changed(first, rows) if spec.differing else json.loads(json.dumps(first))]


def _state(document: Any) -> Any:
    return {
        "observed_at": "2026-01-01T00:00:00Z",
        "source": "GET /config",
        "fields": {"config": document},
    }


def _write(spec: Spec, work: Path) -> tuple[dict[str, str], dict[str, Any], str]:
    """The case's files (role -> path under ``work``), its params and expected verdict."""
    folder = (
        work / f"{spec.checker.replace('@', '-')}-{spec.kind}-{spec.size}-{int(spec.differing)}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    expect = "fail" if spec.differing else "pass"
    if spec.kind == "family":
        import checkers_inputs

        return checkers_inputs.BUILDERS[spec.checker](folder, spec.size, spec.differing)
    if spec.kind == "jsonl":  # trial-stats: 3 trials a task, every 5th task all failed
        tasks = max(1, spec.size // 390)
        config = {"model": "model-a", "skill": "inventory-tests@2", "temperature": 0.8}
        lines = [
            json.dumps(
                {
                    "task": f"task-{t:07d}",
                    "trial": s + 1,
                    "outcome": "failure" if t % 5 == 0 else "success",
                    "config": config,
                }
            )
            for t in range(tasks)
            for s in range(3)
        ]
        (folder / "trials.jsonl").write_text("\n".join(lines) + "\n")
        claimed = tasks + (1 if spec.differing else 0)
        return {"trials": "trials.jsonl"}, {"k": 3, "claimed": {"tasks": claimed}}, expect
    wrap = _state if spec.family == "config_change" else (lambda document: document)
    documents = _json_documents(spec, wrap)
    if spec.family == "config_change":
        documents[1]["observed_at"] = "2026-01-01T01:00:00Z"  # the after record is later
    names = {}
    for role, document in zip(spec.roles, documents, strict=True):
        name = f"{role}.{spec.kind}"
        if spec.kind == "yaml":
            import yaml

            text = yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False)
        else:
            text = json.dumps(document)
        (folder / name).write_text(text)
        names[role] = name
    if spec.kind == "yaml" and spec.size > 3 * MB:
        expect = "error"  # over verify's 200,000 values: refused before it is built
    return names, {}, expect


def _child_checker(folder: Path, names: dict[str, str], params: dict[str, Any]) -> dict[str, Any]:
    import checkers
    from bundler.format.manifest import Case
    from bundler.run import runner

    checkers.get(CHECKER)  # its family's modules: imported before timing, like checkers
    start = _clock()
    listed = {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in _files(folder, names)
    }
    inputs = {role: tuple(v) if isinstance(v, list) else v for role, v in names.items()}
    case = Case("bench", CHECKER, inputs, params, "pass")
    verdict = runner.run_case(case, folder, listed)
    seconds = _clock() - start
    return {"seconds": seconds, "status": verdict.status, "message": verdict.message[:100]}


def _files(folder: Path, names: dict[str, Any]) -> list[Path]:
    """Every file the inputs name: a list's files, a folder's files in order."""
    out = []
    for value in names.values():
        for name in value if isinstance(value, list) else [value]:
            path = folder / name
            out.extend(
                sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            )
    return out


def _parse(path: Path, data: bytes) -> Any:
    """A file parsed as the standard library (PyYAML's C loader for YAML) parses it."""
    if path.suffix == ".yaml":
        import yaml

        return yaml.load(data, Loader=yaml.CSafeLoader)
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in data.splitlines() if line.strip()]
    if path.suffix == ".json":
        return json.loads(data)
    if path.suffix == ".eval":  # a zip of JSON members
        import io
        import zipfile

        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return {info.filename: json.loads(archive.read(info)) for info in archive.infolist()}
    return data.decode("utf-8").splitlines()  # text: its lines


def _child_parse(folder: Path, names: dict[str, Any]) -> dict[str, Any]:
    start = _clock()
    values = []
    for path in _files(folder, names):
        data = path.read_bytes()
        hashlib.sha256(data)  # verify re-hashes every input it reads
        values.append(_parse(path, data))
    if len(values) >= 2:
        values[0] == values[1]  # noqa: B015 (the comparison is the work)
    return {"seconds": _clock() - start, "status": "-", "message": ""}


CHECKER = ""
_clock = time.process_time if os.environ.get("CHECKERS_BENCH_CLOCK") == "cpu" else time.perf_counter


def child(argv: list[str]) -> None:
    global CHECKER
    mode, folder, checker, names, params = argv
    CHECKER = checker
    sys.path.insert(0, os.environ.get("CHECKERS_BENCH_CODE") or str(ROOT))
    import checkers  # noqa: F401  (imported before timing, as verify has by then)
    from bundler.run import runner  # noqa: F401

    if mode == "checker":
        out = _child_checker(Path(folder), json.loads(names), json.loads(params))
    else:
        out = _child_parse(Path(folder), json.loads(names))
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def _run(mode: str, folder: Path, spec: Spec, names: dict[str, str], params: Any) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        mode,
        str(folder),
        spec.checker,
        json.dumps(names),
        json.dumps(params),
    ]
    code = os.environ.get("CHECKERS_BENCH_CODE") if mode == "checker" else None
    env = {**os.environ, "PYTHONPATH": code or str(ROOT)}
    if not code:
        env.pop("CHECKERS_BENCH_CODE", None)
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{spec.label} {mode} failed:\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def _written(spec: Spec, work: Path) -> tuple[dict[str, str], dict[str, Any], str]:
    """``_write`` in a process of its own: a child started from this process after it held
    the documents would report this process's peak as its own (Linux keeps ``ru_maxrss``
    across ``exec``)."""
    fields = json.dumps(list(spec.__dict__.values()))
    command = [sys.executable, __file__, "--write", fields, str(work)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{spec.label}: writing its inputs failed:\n{done.stderr[-2000:]}")
    names, params, expect = json.loads(done.stdout)
    return names, params, expect


def specs(quick: bool, most: int) -> list[Spec]:
    sizes = [size for size in ([MB] if quick else [MB, 10 * MB, 100 * MB]) if size <= most * MB]
    out = []
    for size in sizes:
        for differing in (False, True):
            out.append(
                Spec(
                    "structured",
                    "structured-equal@1",
                    "json",
                    ("actual", "expected"),
                    size,
                    differing,
                )
            )
            for state in ("state-unchanged@2", "state-unchanged@3"):  # @3: bounded excerpts
                out.append(
                    Spec("config_change", state, "json", ("before", "after"), size, differing)
                )
            out.append(
                Spec("fault_injection", "trial-stats@3", "jsonl", ("trials",), size, differing)
            )
    import checkers_inputs

    for size in sizes:
        for checker, family in checkers_inputs.FAMILY.items():
            for differing in (False, True):
                out.append(Spec(family, checker, "family", (), size, differing))
    yaml_sizes = [size for size in ([MB] if quick else [MB, 10 * MB]) if size <= most * MB]
    for size in yaml_sizes:
        for differing in (False, True):
            out.append(
                Spec(
                    "structured",
                    "structured-equal@2",
                    "yaml",
                    ("actual", "expected"),
                    size,
                    differing,
                )
            )
    return out


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
        return 0
    if sys.argv[1:2] == ["--write"]:
        family, checker, kind, roles, size, differing = json.loads(sys.argv[2])
        spec = Spec(family, checker, kind, tuple(roles), size, differing)
        print(json.dumps(_write(spec, Path(sys.argv[3]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="1 MB rows only")
    parser.add_argument(
        "--code", type=Path, help="run the checkers from this copy of the code (a before column)"
    )
    parser.add_argument("--only", default="", help="rows whose checker name contains this")
    parser.add_argument("--min-mb", type=int, default=0, help="leave out smaller rows")
    parser.add_argument("--max-mb", type=int, default=100, help="leave out larger rows")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time by CPU seconds of the process instead of wall time (a busy machine)",
    )
    args = parser.parse_args()
    if args.code:
        os.environ["CHECKERS_BENCH_CODE"] = str(args.code.resolve())
    if args.cpu:
        os.environ["CHECKERS_BENCH_CLOCK"] = "cpu"
    lines = [
        "| checker | size | equal/differing | checker s | parse+== s | ratio | target 3× "
        "| peak RSS MiB |",
        "| --- | ---: | --- | ---: | ---: | ---: | --- | ---: |",
    ]
    print("\n".join(lines), flush=True)
    merged: list[str] = []
    for spec in specs(args.quick, args.max_mb):
        if args.only not in spec.checker or spec.size < args.min_mb * MB:
            continue
        names, params, expect = _written(spec, args.work)
        folder = (
            args.work
            / f"{spec.checker.replace('@', '-')}-{spec.kind}-{spec.size}-{int(spec.differing)}"
        )
        ours, yard, ratios, rss = [], [], [], []
        wrong = ""
        for _ in range(args.runs):
            a = _run("checker", folder, spec, names, params)
            b = _run("parse", folder, spec, names, params)
            wrong = "" if a["status"] == expect else f"{a['status']}: {a['message']}"
            ours.append(a["seconds"])
            yard.append(b["seconds"])
            ratios.append(a["seconds"] / b["seconds"])
            rss.append(a["rss_mib"])
        ratio = statistics.median(ratios)
        note = "yes" if ratio <= 3 else "no"
        if expect == "error":
            note = "refused (over the YAML cap)"
        if wrong:  # not the verdict the row is about (a case limit reached): said, not timed
            note = f"not the expected {expect}: {wrong}"
        which = "differing" if spec.differing else "equal"
        size = max(path.stat().st_size for path in _files(folder, names)) / MB
        line = (
            f"| {spec.label} | {size:.1f} MB | {which} | {statistics.median(ours):.2f} "
            f"| {statistics.median(yard):.2f} | {ratio:.2f} | {note} | {max(rss):.0f} |"
        )
        print(line, flush=True)
        lines.append(line)
        ok = note == "yes" and max(rss) < 200
        merged.append(
            f"| {spec.label}, {size:.1f} MB, {which} | {statistics.median(ours):.2f} s "
            f"| parse + `==`: {statistics.median(yard):.2f} s | {ratio:.2f}x | <= 3x, < 200 MiB "
            f"| {'yes' if ok else 'no'}{'' if note in ('yes', 'no') else f' ({note})'} "
            f"| {max(rss):.0f} MiB |"
        )
    # the same rows in bench/all.py's columns (merged into its table)
    print()
    print("| work | reprobundle | yardstick | ratio | target | met? | peak RSS |")
    print("| --- | ---: | --- | ---: | ---: | --- | ---: |")
    print("\n".join(merged))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
