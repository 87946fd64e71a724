"""Classification figures (seed 003, evaluation): claimed accuracy, precision, recall and
F1 recomputed from a labelled table.

Model: ``model.py`` (confusion matrices, figures, a claim judged). Checks: ``checks.py``
(classification-metrics).
"""
