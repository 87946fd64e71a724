"""Inspect AI eval logs read from their bytes, without inspect-ai.

Inspect writes two formats. ``.eval`` is a zip whose JSON members are compressed with
zstd (method 93), which ``zipfile`` cannot open before Python 3.14: the central directory
is read with ``zipfile``, each member's raw bytes are taken from its local header and
decompressed here, and its size and CRC-32 are checked against the directory. ``.json``
is one document holding the header fields and ``samples``. Both carry a log ``version``;
only the versions in ``KNOWN_VERSIONS`` are read, any other is refused by name.

The result is an ``InspectLog``: the header as written (``eval``, ``plan``, ``results``,
``stats``, ...) and one ``Record`` per sample and epoch with what the checkers judge
(target, completion, scores, error). Pure: bytes in, values out, nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import struct
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .. import strictjson

KNOWN_VERSIONS = (2,)
ZSTD_METHOD = 93
MAX_MEMBER_BYTES = 1 << 30  # one decompressed member
MAX_TOTAL_BYTES = 4 << 30  # every member together


class LogLimits(NamedTuple):
    """What an ``.eval`` log's members may decompress to: one, and all together."""

    member_bytes: int = MAX_MEMBER_BYTES
    total_bytes: int = MAX_TOTAL_BYTES


LOG_LIMITS = LogLimits()
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_HEADER_KEYS = ("version", "status", "eval", "plan", "results", "stats", "error")


class LogError(ValueError):
    """The bytes are not an Inspect log this reader knows; the message says why."""


@dataclass(frozen=True)
class Score:
    value: Any  # str, int, float, bool (a dict or list value is kept, never reduced)
    answer: str | None


@dataclass(frozen=True)
class Record:
    """One sample in one epoch, as the log recorded it."""

    sample_id: str | int
    epoch: int
    target: tuple[str, ...]
    completion: str
    scores: Mapping[str, Score]
    error: str | None  # the error message, when the sample errored
    where: str  # the member (``samples/ID_epoch_N.json``) or ``samples[i]``

    @property
    def label(self) -> str:
        return f"{self.sample_id} epoch {self.epoch}"


@dataclass(frozen=True)
class InspectLog:
    """A parsed log. ``header`` is the log's own document without samples (never
    mutate it: parsed logs are shared between checkers)."""

    format: str  # "eval" or "json"
    header: Mapping[str, Any]
    records: tuple[Record, ...]

    @property
    def version(self) -> int:
        return int(self.header["version"])

    @property
    def status(self) -> str:
        return str(self.header.get("status"))

    @property
    def spec(self) -> Mapping[str, Any]:
        spec = self.header.get("eval")
        return spec if isinstance(spec, dict) else {}

    @property
    def results(self) -> Mapping[str, Any] | None:
        results = self.header.get("results")
        return results if isinstance(results, dict) else None

    @property
    def errored(self) -> tuple[Record, ...]:
        return tuple(r for r in self.records if r.error is not None)

    def result_scores(self) -> list[Mapping[str, Any]]:
        """The header's figures: one entry per scorer (and reducer)."""
        scores: list[Mapping[str, Any]] = (self.results or {}).get("scores") or []
        return scores


_CACHE: OrderedDict[tuple[str, LogLimits], InspectLog] = OrderedDict()
_CACHE_SIZE = 4


def read_log(data: bytes, limits: LogLimits = LOG_LIMITS) -> InspectLog:
    """Parse a ``.eval`` or ``.json`` log, its members within ``limits``. Raises
    ``LogError`` naming the problem.

    A bundle runs several cases on one log; the parse of the last few logs is kept,
    keyed by the SHA-256 of their bytes (and the limits), so it is done once (the same
    bytes always give the same log)."""
    key = (hashlib.sha256(data).hexdigest(), limits)
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached
    log = _read_eval(data, limits) if data[:4] == b"PK\x03\x04" else _read_json(data)
    _CACHE[key] = log
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return log


def _loads(text: bytes | str, where: str) -> Any:
    """JSON as every version reads a log: a key given twice refused, NaN, infinities and
    any depth Python can read accepted (``strictjson``'s options for that)."""
    try:
        return strictjson.loads(text, None, constants=True, huge_numbers=True)
    except RecursionError:
        raise LogError(f"{where}: nested too deeply") from None
    except strictjson.DuplicateKey as exc:
        raise LogError(f"{where}: key {exc.key!r} appears twice in one object") from None
    except ValueError as exc:
        raise LogError(f"{where}: not valid JSON ({exc})") from None


def _check_version(header: Mapping[str, Any], where: str) -> None:
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise LogError(f"{where}: no integer log 'version' (observed {version!r})")
    if version not in KNOWN_VERSIONS:
        known = ", ".join(str(v) for v in KNOWN_VERSIONS)
        raise LogError(
            f"{where}: Inspect log version {version} is not one this reader knows "
            f"(it reads version {known}); a log of another version needs a checker "
            "written for it, so nothing in this log was checked"
        )


def _shape(value: Any, kind: type | tuple[type, ...], where: str, problems: list[str]) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        problems.append(f"{where} must be {names}, observed {type(value).__name__}")
        return None
    return value


def _check_header(header: Mapping[str, Any], where: str) -> None:
    """The header fields the checkers and the importer read have Inspect's shapes."""
    problems: list[str] = []
    _shape(header.get("status", ""), str, "status", problems)
    spec = _shape(header.get("eval", {}), dict, "eval", problems) or {}
    for key in ("dataset", "config", "packages", "task_args"):
        _shape(spec.get(key, {}), dict, f"eval.{key}", problems)
    if spec.get("revision") is not None:
        _shape(spec["revision"], dict, "eval.revision", problems)
    for i, scorer in enumerate(
        _shape(spec.get("scorers", []), list, "eval.scorers", problems) or []
    ):
        if _shape(scorer, dict, f"eval.scorers[{i}]", problems):
            _shape(scorer.get("name"), str, f"eval.scorers[{i}].name", problems)
            _shape(scorer.get("options", {}), dict, f"eval.scorers[{i}].options", problems)
            for j, m in enumerate(
                _shape(scorer.get("metrics", []), list, f"eval.scorers[{i}].metrics", problems)
                or []
            ):
                _shape(m, dict, f"eval.scorers[{i}].metrics[{j}]", problems)
    results = header.get("results")
    if results is not None and _shape(results, dict, "results", problems):
        for i, entry in enumerate(
            _shape(results.get("scores", []), list, "results.scores", problems) or []
        ):
            at = f"results.scores[{i}]"
            if not _shape(entry, dict, at, problems):
                continue
            _shape(entry.get("name"), str, f"{at}.name", problems)
            if entry.get("reducer") is not None:
                _shape(entry["reducer"], str, f"{at}.reducer", problems)
            metrics = _shape(entry.get("metrics", {}), dict, f"{at}.metrics", problems) or {}
            for name, m in metrics.items():
                _shape(m, dict, f"{at}.metrics.{name}", problems)
        if results.get("headline") is not None:
            _shape(results["headline"], dict, "results.headline", problems)
    if problems:
        raise LogError(f"{where}: " + "; ".join(problems[:10]))


def _read_json(data: bytes) -> InspectLog:
    document = _loads(data, "log")
    if not isinstance(document, dict):
        raise LogError("log: neither a .eval zip nor a JSON object")
    _check_version(document, "log")
    samples = document.get("samples") or []
    if not isinstance(samples, list):
        raise LogError("log: 'samples' is not a list")
    header = {k: v for k, v in document.items() if k not in ("samples", "reductions")}
    _check_header(header, "log")
    records = tuple(_record(s, f"samples[{i}]") for i, s in enumerate(samples))
    return InspectLog("json", header, records)


def _read_eval(data: bytes, limits: LogLimits) -> InspectLog:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        OSError,
        ValueError,
    ) as exc:
        raise LogError(f"log: not a readable .eval zip ({exc})") from None
    latest: dict[str, zipfile.ZipInfo] = {}
    for info in infos:  # a member written again replaces the earlier one, as in Inspect
        latest[info.filename] = info
    if "header.json" not in latest:
        started = "_journal/start.json" in latest
        raise LogError(
            "log: the .eval file has no header.json"
            + (" (only the start journal: the run did not finish writing it)" if started else "")
        )
    budget = [limits.total_bytes]
    header = _loads(_member(data, latest["header.json"], budget, limits), "header.json")
    if not isinstance(header, dict):
        raise LogError("header.json: not a JSON object")
    _check_version(header, "header.json")
    _check_header(header, "header.json")
    names = sorted(
        (n for n in latest if n.startswith("samples/") and n.endswith(".json")),
        key=_sample_order,
    )
    records = tuple(_record(_loads(_member(data, latest[n], budget, limits), n), n) for n in names)
    return InspectLog("eval", dict(header), records)


def _sample_order(name: str) -> tuple[int, str]:
    stem = name[len("samples/") : -len(".json")]
    base, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, base)


def _member(
    data: bytes, info: zipfile.ZipInfo, budget: list[int], limits: LogLimits = LOG_LIMITS
) -> bytes:
    """A member's bytes, decompressed and checked against the central directory."""
    name = info.filename
    most = limits.member_bytes
    if info.file_size > most:
        raise LogError(f"{name}: {info.file_size} bytes, more than {most} allowed")
    budget[0] -= info.file_size
    if budget[0] < 0:
        raise LogError(f"log: members hold more than {limits.total_bytes} bytes in all")
    offset = info.header_offset
    head = data[offset : offset + _LOCAL_HEADER.size]
    if len(head) < _LOCAL_HEADER.size:
        raise LogError(f"{name}: local header past the end of the file")
    signature, *_, name_len, extra_len = _LOCAL_HEADER.unpack(head)
    if signature != _LOCAL_SIGNATURE:
        raise LogError(f"{name}: no local header at offset {offset}")
    start = offset + _LOCAL_HEADER.size + name_len + extra_len
    raw = data[start : start + info.compress_size]
    if len(raw) != info.compress_size:
        raise LogError(f"{name}: compressed bytes run past the end of the file")
    limit = info.file_size
    try:
        if info.compress_type == zipfile.ZIP_STORED:
            out = raw
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            inflater = zlib.decompressobj(-15)
            out = inflater.decompress(raw, limit + 1)
        elif info.compress_type == ZSTD_METHOD:
            import zstandard

            reader = zstandard.ZstdDecompressor().stream_reader(
                io.BytesIO(raw), read_across_frames=True
            )
            out = reader.read(limit + 1)
        else:
            raise LogError(
                f"{name}: compression method {info.compress_type} (Inspect writes zstd, 93)"
            )
    except (zlib.error, ValueError) as exc:
        if isinstance(exc, LogError):
            raise
        raise LogError(f"{name}: does not decompress ({exc})") from None
    except Exception as exc:  # zstandard.ZstdError is not a ValueError
        raise LogError(f"{name}: does not decompress ({exc})") from None
    if len(out) != limit:
        raise LogError(f"{name}: {len(out)} bytes decompressed, the zip directory says {limit}")
    if zlib.crc32(out) != info.CRC:
        raise LogError(f"{name}: CRC-32 differs from the zip directory's (the member changed)")
    return out


def _record(sample: Any, where: str) -> Record:
    if not isinstance(sample, dict):
        raise LogError(f"{where}: a sample must be a JSON object")
    sample_id = sample.get("id")
    epoch = sample.get("epoch")
    if isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
        raise LogError(f"{where}: sample 'id' must be text or an integer")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise LogError(f"{where}: sample 'epoch' must be an integer >= 1")
    target = sample.get("target", "")
    if isinstance(target, str):
        targets: tuple[str, ...] = (target,)
    elif isinstance(target, list) and all(isinstance(t, str) for t in target):
        targets = tuple(target)
    else:
        raise LogError(f"{where}: 'target' must be text or a list of text")
    output = sample.get("output") or {}
    completion = output.get("completion", "") if isinstance(output, dict) else None
    if not isinstance(completion, str):
        raise LogError(f"{where}: 'output.completion' must be text")
    scores: dict[str, Score] = {}
    raw_scores = sample.get("scores") or {}
    if not isinstance(raw_scores, dict):
        raise LogError(f"{where}: 'scores' must be an object")
    for name, score in raw_scores.items():
        if not isinstance(score, dict) or "value" not in score:
            raise LogError(f"{where}: score {name!r} has no 'value'")
        answer = score.get("answer")
        scores[name] = Score(score["value"], answer if isinstance(answer, str) else None)
    error = sample.get("error")
    message: str | None = None
    if error is not None:
        message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
    return Record(sample_id, epoch, targets, completion, scores, message, where)


# -- the arithmetic of Inspect's reducers and metrics, on recorded values ----------------

CORRECT, INCORRECT, PARTIAL, NOANSWER = "C", "I", "P", "N"


def to_float(value: Any) -> float:
    """A score value as a number, the way Inspect's default ``value_to_float`` maps it:
    C 1, P 0.5, I and N 0; numbers as they are; yes/true 1, no/false 0; numeric text."""
    if value == CORRECT:
        return 1.0
    if value == PARTIAL:
        return 0.5
    if value in (INCORRECT, NOANSWER):
        return 0.0
    if isinstance(value, int | float | bool):
        return float(value)
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            number = float(lowered)
        except ValueError:
            return 0.0
        return number if math.isfinite(number) else 0.0
    return 0.0


def is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def unscored(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def to_json_log(log: InspectLog, records: tuple[Record, ...]) -> bytes:
    """A ``.json`` log holding ``log``'s header and ``records`` with only the fields this
    reader uses (how the importer writes its negative controls: small and readable, the
    header indented and one sample a line, each line written by the C encoder)."""
    lines = []
    for r in records:
        sample: dict[str, Any] = {
            "id": r.sample_id,
            "epoch": r.epoch,
            "target": r.target[0] if len(r.target) == 1 else list(r.target),
            "output": {"completion": r.completion},
            "scores": {
                name: {"value": s.value, **({"answer": s.answer} if s.answer is not None else {})}
                for name, s in r.scores.items()
            },
        }
        if r.error is not None:
            sample["error"] = {"message": r.error}
        lines.append(_ONE_LINE.encode(sample))
    header = {k: log.header[k] for k in _HEADER_KEYS if k in log.header}
    text = json.dumps({**header, "samples": []}, indent=1, ensure_ascii=False)
    if lines:  # "samples" is the last key: its empty list closes the text
        text = text.removesuffix("[]\n}") + "[\n  " + ",\n  ".join(lines) + "\n ]\n}"
    return (text + "\n").encode("utf-8")


_ONE_LINE = json.JSONEncoder(ensure_ascii=False)
