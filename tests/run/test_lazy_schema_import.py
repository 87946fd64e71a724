"""The tool-call schema checker loads ``jsonschema`` only when a case checks a schema
(issue 33, fixed cost): importing its module, as listing or looking up checkers does,
costs no JSON Schema library. Checked in a fresh interpreter (in this one, other tests
have imported everything): no timing, only which modules were loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

LOAD_AND_LIST = """
import json, sys
import checkers
checkers.get("call-args-schema@2")
before = sorted(sys.modules)
from checkers.config_change import call_args
call_args._schemas({"tools": [{"name": "t", "input_schema": {"type": "object"}}]})
print(json.dumps({"before": before, "after": sorted(sys.modules)}))
"""


def test_looking_up_the_call_args_checker_imports_no_json_schema_library() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_LIST], capture_output=True, text=True, env=env,
        check=True, timeout=120,
    )  # fmt: skip
    found = json.loads(done.stdout)
    assert "checkers.config_change.call_args" in found["before"]
    assert not {"jsonschema", "referencing", "checkers.jsonschemas"} & set(found["before"])
    assert {"jsonschema", "checkers.jsonschemas"} <= set(found["after"])  # once a schema is checked
