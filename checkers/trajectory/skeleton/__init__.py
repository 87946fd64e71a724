"""Trajectory skeletons: the model behind trajectory-skeleton@1 and @2 (in ``learning``
until it is split along its seams)."""

from .learning import (
    MODEL_FORMAT,
    MODEL_FORMAT_2,
    MODEL_FORMATS,
    START,
    SUCCESS,
    Equivalence,
    Match,
    Model,
    Trace,
    canonical_text,
    learn,
    match,
    parse_trace,
    read_back,
)

__all__ = [
    "MODEL_FORMAT",
    "MODEL_FORMATS",
    "MODEL_FORMAT_2",
    "START",
    "SUCCESS",
    "Equivalence",
    "Match",
    "Model",
    "Trace",
    "canonical_text",
    "learn",
    "match",
    "parse_trace",
    "read_back",
]
