"""Loaded by every Python process whose PYTHONPATH holds this folder, which only
``tests/kill_at.py --child`` puts there: arms its point in the child it started."""

import os
import sys

if os.environ.get("REPROBUNDLE_TEST_KILL_AT"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    from tests.kill_at import arm_in_child

    arm_in_child()
