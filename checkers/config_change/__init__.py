"""Config change (seed 000): acceptance checks for "change one rule's description, keep
everything else, get the server's checks, hand them to the user; do not save, do not
activate". "The API accepted it" answers none of these, so each criterion is a checker
with its own evidence, one module each (every version in it):

- ``merge.py``: merge-reconstruct (content), ``state.py``: state-unchanged (state),
  ``writes.py``: no-write-attempts (behaviour), ``review.py``: review-matches-submission
  (review), ``call_args.py``: call-args-schema (diagnosis);
- ``model.py``: what they share, reading the evidence strictly.
"""
