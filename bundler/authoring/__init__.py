"""An author's side: a bundle source (``bundle.yaml``) -> a checked plan -> a bundle file, verified
at home before it is kept.
"""
