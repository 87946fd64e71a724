"""Trajectory skeletons (seed 003): what a successful run must pass through.

An agent that drives a user interface reaches the same result by different paths: a
loading screen shows up or not, a run opens the search through the command palette,
a notification pops up in between. Comparing a new run step by step with a recorded
one fails on that noise. This package learns, from a few successful *reference traces*,
the states every successful run must reach and in which order (the *skeleton*), and
checks a new trace against it. It is pure: data in, data out; no I/O, no printing.

The steps, each one inspectable in the model file it produces:

1. **State equivalence** (:class:`Equivalence`). A state's identity is the value of a
   declared list of fields (``label`` and/or attribute names) after declared
   normalisers (regular expressions that strip timestamps, counters, ids). Two
   observations are the same state only when their normalised identities are equal:
   conservative and deterministic, no model is called.
2. **Prefix-tree acceptor**. The reference traces are inserted into a tree whose
   nodes are prefixes of observed identities.
3. **Merging**. Prefix-tree nodes with equal identity are merged into one state,
   which gives a graph with one ``start`` and one ``success`` node (every reference
   trace ends in ``success``). Every merge decision is recorded in the model.
4. **Dominators**. A state is essential when it dominates ``success``: every path from
   ``start`` to ``success`` passes through it (the immediate dominators as
   ``networkx.immediate_dominators`` gives them, computed in :mod:`.graphs`).
5. **Merge guard**. Merging creates paths no reference trace took; then a state that
   every reference passed through can drop out of the dominators, and a run that skips
   it would pass. Such a state is kept essential, and the model names the path that
   would have hidden it. (Every reference trace is a path of the merged graph, so the
   dominators are always among the states all references passed through; with the
   guard the essential states are exactly those, and the dominator tree explains why.)
6. **Order**. Essential state ``p`` must precede ``q`` when ``p`` is first reached
   before ``q`` in every reference trace (for dominators this is the dominator
   chain). The skeleton is the essential states in an order that respects this.

A trace passes when its states contain the skeleton as an ordered subsequence: extra
states anywhere are noise. It fails with ``trajectory.missing`` (an essential state is
never reached) or ``trajectory.order`` (it is reached only before a state that must
precede it).

Model format 2 (``trajectory-model/2``, learned with ``format=MODEL_FORMAT_2``; format 1
is learned and matched exactly as before) adds three rules:

- identity text is canonicalised before the declared normalisers: Unicode NFC, no-break
  and other Unicode spaces as spaces, whitespace trimmed and collapsed;
- state ids are unique by construction: a clash of slugs gets ``--2``, ``--3`` (a slug
  never holds ``--``), so two labels that slug alike never share an id;
- repeated essential steps: when every reference reaches essential state ``q`` at some
  point after it first reaches essential state ``p`` although ``p`` does not always come
  first (save after "edit title", save again after "edit body"), the pair is recorded in
  ``repeats`` and a trace must too (``trajectory.repeat_missing``).
"""

from __future__ import annotations

from .equivalence import Equivalence, Normaliser, canonical_text
from .learning import learn
from .matching import Match, Problem, match
from .model import (
    MODEL_FORMAT,
    MODEL_FORMAT_2,
    MODEL_FORMATS,
    START,
    SUCCESS,
    Model,
    State,
    read_back,
)
from .traces import Observed, Step, Trace, observe, parse_trace

__all__ = [
    "MODEL_FORMAT",
    "MODEL_FORMATS",
    "MODEL_FORMAT_2",
    "START",
    "SUCCESS",
    "Equivalence",
    "Match",
    "Model",
    "Normaliser",
    "Observed",
    "Problem",
    "State",
    "Step",
    "Trace",
    "canonical_text",
    "learn",
    "match",
    "observe",
    "parse_trace",
    "read_back",
]
