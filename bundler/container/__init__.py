"""The bundle file itself: the tar container and its compression, read strictly and written
deterministically, and the work folder it is read into.
"""
