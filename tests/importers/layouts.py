"""The two layouts an importer writes (issue 45 item 5): the split layout, the default
(the log with its transcripts under ``inputs/transcripts/``, the figures checked on a
scores file without them), and the whole log (``--whole-log``: one input every case
reads). The behaviour tests run on both, so the split layout gets the same scrutiny."""

from __future__ import annotations

import pytest

from bundler.importers.inspect_plan import SPLIT_VERSIONS

LAYOUTS = pytest.mark.parametrize("split", [True, False], ids=["split", "whole-log"])


def folder(split: bool) -> str:
    """Where an importer puts the log it copies unchanged."""
    return "inputs/transcripts" if split else "inputs"


def flag(split: bool) -> str:
    """The command line's word for the layout."""
    return "--split" if split else "--whole-log"


def inspect_version(key: str, split: bool) -> str:
    """The Inspect checker version a layout uses where the whole log uses ``key``."""
    return SPLIT_VERSIONS.get(key, key) if split else key


def read_log(inputs: dict[str, str]) -> str:
    """The log (or scores file) a case of an Inspect import reads."""
    return inputs.get("scores") or inputs["log"]
