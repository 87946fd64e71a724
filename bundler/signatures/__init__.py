"""Signatures and keys: signing the exact manifest bytes, signature files, and which keys a
reviewer trusts.
"""
