"""Drawings and summaries of a learned skeleton, for a report (pure: text in, text out).

Every text taken from the traces (a label, a trace name, a message that holds them) goes
through ``show``, the caller's escaping rule (the command line's is ``one_line``: no
control, bidirectional or line-breaking character reaches a terminal); the default shows
text as it is.

Essential states are drawn bold, optional ones dashed; a state kept essential by the
merge guard is bold with a red border, so a reader sees which states the dominators
alone would have lost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from .skeleton import START, SUCCESS, Model


def _as_is(text: str) -> str:
    return text


def render_text(model: Model, show: Callable[[str], str] = _as_is) -> str:
    """What was learned, in a few lines a tester reads."""
    tree = model.prefix_tree
    lines = [
        f"skeleton learned from {len(model.sources)} reference traces "
        f"({tree['observations']} observed states, {tree['nodes']} prefix-tree nodes, "
        f"merged into {tree['states']} states; identity: "
        f"{show(', '.join(model.equivalence.identity))}):",
    ]
    for i, state in enumerate(model.skeleton, start=1):
        why = model.state(state).why
        how = "dominates success" if why == "dominator" else "kept essential by the merge guard"
        lines.append(f"  {i}. {show(model.label(state))}  ({how})")
    unordered = _unordered(model, show)
    if unordered:
        lines.append("  in any order relative to each other: " + "; ".join(unordered))
    optional = [show(model.label(s)) for s in model.optional]
    lines.append(f"optional: {', '.join(optional) if optional else '(none)'}")
    merged = [m for m in model.merges if m["merged"]]
    lines.append(f"merges: {len(merged)} state(s) merged from several prefix-tree nodes")
    for kept in model.kept_apart:
        lines.append(f"kept apart: '{show(kept['label'])}' ({show(kept['decision'])})")
    if model.guard:
        for entry in model.guard:
            lines.append(f"merge guard: {show(entry['message'])}")
    else:
        lines.append("merge guard: no state was hidden by merging")
    return "\n".join(lines)


def _unordered(model: Model, show: Callable[[str], str]) -> list[str]:
    """The pairs of essential states in no order relative to each other, in skeleton
    order: each state's predecessors are a bit set made from its immediate ones, and only
    the pairs printed are visited (a walk of every pair is quadratic in a long skeleton)."""
    at = {state: i for i, state in enumerate(model.skeleton)}
    direct: dict[str, list[str]] = {}
    for p, q in model.precedence:
        direct.setdefault(q, []).append(p)
    below: dict[str, int] = {}  # bit i: skeleton[i] must come before
    pending = list(model.skeleton)
    while pending:  # (the skeleton respects precedence: one pass, else a few)
        later = []
        for q in pending:
            preds = direct.get(q, ())
            if any(p in at and p not in below for p in preds):
                later.append(q)
                continue
            mask = 0
            for p in preds:
                if p in at:
                    mask |= below[p] | (1 << at[p])
            below[q] = mask
        if len(later) == len(pending):  # a cycle (a model written by hand): none below
            below.update(dict.fromkeys(later, 0))
            break
        pending = later
    found = []
    for j, q in enumerate(model.skeleton):
        free = ((1 << j) - 1) & ~below[q]  # the earlier states not known to precede q
        while free:
            low = free & -free
            i = low.bit_length() - 1
            if not (below[model.skeleton[i]] >> j) & 1:
                found.append((i, j))
            free ^= low
    pairs = []
    for i, j in sorted(found):
        p, q = model.skeleton[i], model.skeleton[j]
        pairs.append(f"'{show(model.label(p))}' and '{show(model.label(q))}'")
    return pairs


def _mermaid_id(state: str) -> str:
    return "s_" + re.sub(r"\W", "_", state)


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;")


def render_mermaid(model: Model, show: Callable[[str], str] = _as_is) -> str:
    """A Mermaid flowchart of the merged graph."""
    lines = [
        "flowchart TD",
        f"  {_mermaid_id(START)}(((start)))",
        f"  {_mermaid_id(SUCCESS)}(((success)))",
    ]
    for state in model.states:
        lines.append(f'  {_mermaid_id(state.id)}["{_mermaid_text(show(state.label))}"]')
    for edge in model.edges:
        runs = len(edge["traces"])
        lines.append(f"  {_mermaid_id(edge['from'])} -->|{runs}| {_mermaid_id(edge['to'])}")
    for state in model.states:
        kind = (
            "guarded" if state.why == "guard" else ("essential" if state.essential else "optional")
        )
        lines.append(f"  class {_mermaid_id(state.id)} {kind}")
    lines += [
        "  classDef essential font-weight:bold,stroke-width:3px",
        "  classDef guarded font-weight:bold,stroke-width:3px,stroke:#c00",
        "  classDef optional stroke-dasharray:5 5",
    ]
    return "\n".join(lines)


def _dot(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a valid DOT quoted string


def render_dot(model: Model, show: Callable[[str], str] = _as_is) -> str:
    """A Graphviz DOT digraph of the merged graph."""
    lines = [
        "digraph skeleton {",
        "  rankdir=TB;",
        "  node [shape=box];",
        f"  {_dot(START)} [shape=circle];",
        f"  {_dot(SUCCESS)} [shape=doublecircle];",
    ]
    for state in model.states:
        if state.why == "guard":
            style = 'style=bold, penwidth=3, color="#cc0000"'
        elif state.essential:
            style = "style=bold, penwidth=3"
        else:
            style = "style=dashed"
        lines.append(f"  {_dot(state.id)} [label={_dot(show(state.label))}, {style}];")
    for edge in model.edges:
        lines.append(
            f"  {_dot(edge['from'])} -> {_dot(edge['to'])} "
            f"[label={_dot(str(len(edge['traces'])))}];"
        )
    lines.append("}")
    return "\n".join(lines)


RENDERERS = {"text": render_text, "mermaid": render_mermaid, "dot": render_dot}
