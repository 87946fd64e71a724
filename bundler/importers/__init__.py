"""Importers: eval-harness logs -> bundle sources (one module per harness).

An importer reads a log people already have, copies it unchanged into a new bundle
source, and writes the cases, claims, limits and negative controls that let
``reprobundle build`` turn it into a bundle. It writes files and never prints.
"""
