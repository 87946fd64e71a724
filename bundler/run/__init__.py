"""Running the evidence: every case's inputs loaded and checked, bundled code in limited processes,
and ``verify`` which ties reading, running and judging together.
"""
