"""What a bundle says, independent of how it is stored: the manifest, its claims rules, paths,
digests, and the strict readers of the data formats it holds.
"""
