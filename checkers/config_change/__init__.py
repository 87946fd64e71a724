"""Config change (seed 000): acceptance checks for "change one rule's description, keep
everything else, get the server's checks, hand them to the user; do not save, do not
activate". "The API accepted it" answers none of these, so each criterion is a checker
with its own evidence, one module each (both versions in it):

- ``merge.py``: merge-reconstruct (content), ``state.py``: state-unchanged (state),
  ``writes.py``: no-write-attempts (behaviour), ``review.py``: review-matches-submission
  (review), ``call_args.py``: call-args-schema (diagnosis);
- ``model.py``: what they share, reading the evidence strictly.
"""

from .call_args import call_args_schema, call_args_schema_v2
from .merge import merge_reconstruct, merge_reconstruct_v2
from .review import review_matches_submission, review_matches_submission_v2
from .state import state_unchanged, state_unchanged_v2
from .writes import no_write_attempts, no_write_attempts_v2

__all__ = [
    "call_args_schema",
    "call_args_schema_v2",
    "merge_reconstruct",
    "merge_reconstruct_v2",
    "no_write_attempts",
    "no_write_attempts_v2",
    "review_matches_submission",
    "review_matches_submission_v2",
    "state_unchanged",
    "state_unchanged_v2",
]
