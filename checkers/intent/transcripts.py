"""The Intent-Router runner's persisted transcripts, read back into runs (seed 004, @2).

The runner writes every run of a case to ``reports/raw/<harness>/<case>-<n>.txt``: one
block per session, ``$ <command>``, ``[exit <code>]``, the harness's stdout, ``[stderr]``
and its stderr. Its ``--rescore`` re-judges those files with no session. This module
does the same reading with our own code (rules restated from ``evals/run.py`` at commit
0843d82: ``parse_transcript``, ``harness_texts``, ``json_strings``, ``is_tool_payload``,
``extract_spec``, ``classify_turn``), so a bundle can hold the transcripts themselves
instead of records. The spec is the last ``yaml`` fence of the last assistant text that
has one (tool output is never a candidate: it echoes the skill's own examples), and a
turn is a ``timeout`` (exit 124, no stdout), a ``harness_error`` (a failing exit with a
rate-limit or login message) or what the fence gave (``ok``, ``no_fence``,
``degraded_output``). Pure: loaded bytes in, turns out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import yaml

from .cases import input_invalid
from .repo import RepoCase, Turn

_BLOCK_START = re.compile(r"(?m)^(?=\$ )")
_BLOCK = re.compile(r"^\$ (.*)\n\[exit (-?\d+)\]\n(.*?)\n\[stderr\]\n?(.*)$", re.DOTALL)
_FENCE = re.compile(r"```ya?ml[^\n]*\n(.*?)```", re.DOTALL)
_RATE_LIMIT = re.compile(r"\b429\b|rate[\s_-]?limit|quota|overloaded", re.IGNORECASE)
_TEXT_KEYS = ("result", "text", "content", "message", "output")


def _strings(node: Any) -> list[str]:
    """Non-blank strings under the transcript keys, outermost first (depth-first, in
    document order); a matching key's string is taken, anything else is searched."""
    found: list[str] = []
    stack: list[Any] = [node]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            children = []
            for key, child in value.items():
                if key in _TEXT_KEYS and isinstance(child, str) and child.strip():
                    children.append(("text", child))
                else:
                    children.append(("node", child))
            for kind, child in reversed(children):
                stack.append(_Found(child) if kind == "text" else child)
        elif isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, _Found):
            found.append(value.text)
    return found


class _Found:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _tool_event(event: Any) -> bool:
    part = event.get("part") if isinstance(event, Mapping) else None
    return isinstance(part, Mapping) and part.get("type") == "tool"


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise input_invalid("transcript: a JSON event is nested too deeply to read") from None


def candidates(stdout: str) -> list[str]:
    """The texts a spec may come from, in event order, the raw stdout last."""
    texts: list[str] = []
    try:
        single = _json(stdout)
    except json.JSONDecodeError:
        for line in stdout.splitlines():  # JSON Lines
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                event = _json(line)
            except json.JSONDecodeError:
                continue
            if not _tool_event(event):
                texts.extend(_strings(event))
    else:
        if not _tool_event(single):
            texts.extend(_strings(single))
    ordered = list(dict.fromkeys(t for t in texts if t))
    raw = stdout.strip()
    if raw and raw not in ordered:
        ordered.append(raw)
    return ordered


def _load_fence(text: str) -> Any:
    """``yaml.safe_load`` as the runner applies it, without expanding aliases (a fence
    with an alias is refused: expanding one can take unbounded memory)."""
    try:
        if any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=yaml.SafeLoader)):
            raise input_invalid("transcript: a spec fence uses a YAML alias (*name); refused")
        return yaml.safe_load(text)
    except RecursionError:
        raise input_invalid("transcript: a spec fence is nested too deeply to read") from None


def extract(texts: list[str]) -> tuple[Mapping[str, Any] | None, str, str]:
    """``(spec, status, text)``: the last fence of the last candidate holding one."""
    for text in reversed([t for t in texts if t]):
        if text.lstrip().startswith("{"):  # the raw JSON stdout is never a candidate
            continue
        fences = _FENCE.findall(text)
        if not fences:
            continue
        try:
            loaded = _load_fence(fences[-1])
        except yaml.YAMLError:
            return None, "degraded_output", text
        if not isinstance(loaded, dict):
            return None, "degraded_output", text
        return loaded, "ok", text
    return None, "no_fence", next((t for t in texts if t), "")


def status_of(code: int, stdout: str, stderr: str, spec_status: str) -> str:
    if code == 124 and not stdout.strip():
        return "timeout"
    if code != 0 and (_RATE_LIMIT.search(stderr) or "Not logged in" in stderr):
        return "harness_error"
    return spec_status


def parse_transcript(text: str, where: str) -> list[Turn]:
    """The turns of one persisted transcript; blocks that do not parse are skipped, as
    the runner's reader skips them, but a transcript with no block at all is refused."""
    turns: list[Turn] = []
    for block in _BLOCK_START.split(text):
        match = _BLOCK.match(block) if block.strip() else None
        if match is None:
            continue
        code, stdout, stderr = int(match[2]), match[3], match[4]
        spec, status, reply = extract(candidates(stdout))
        turns.append(Turn(spec, status_of(code, stdout, stderr, status), reply))
    if not turns:
        raise input_invalid(f"{where}: no '$ command' / '[exit N]' / '[stderr]' turn block")
    return turns


def transcript_runs(tree: Any, cases: list[RepoCase]) -> dict[str, list[Any]]:
    """``{case id: [raw turn dicts, one list per run]}`` from a folder of
    ``<case>-<n>.txt``; the case id is the name before the last ``-`` (as ``--rescore``)."""
    if not isinstance(tree, Mapping) or not tree:
        raise input_invalid("transcripts: no transcript in the folder: nothing to judge")
    known = {c.id for c in cases}
    runs: dict[str, list[Any]] = {}
    for name in sorted(tree):
        if "/" in name or not name.endswith(".txt") or "-" not in name:
            raise input_invalid(
                f"transcripts: {name!r} is not a transcript <case>-<n>.txt at the folder's top"
            )
        cid = name[: -len(".txt")].rsplit("-", 1)[0]
        if cid not in known:
            raise input_invalid(f"transcripts: {name}: case {cid!r} is not in cases.yaml")
        data = tree[name]
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else None
        except UnicodeDecodeError as exc:
            raise input_invalid(f"transcripts: {name} is not UTF-8 (byte {exc.start})") from None
        if text is None:
            raise input_invalid(f"transcripts: {name} is not a file")
        runs.setdefault(cid, []).append(parse_transcript(text, f"transcripts/{name}"))
    return runs
