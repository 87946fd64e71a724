"""Built-in drawings for the HTML page, one per checker family that has a picture.

A drawing takes a case's report data (``id``, ``checker``, ``verdict``, ``reasons``,
``details`` ...) and returns inline SVG markup, or None when it has nothing to draw.
It must escape every text it takes from the data (``html.escape``). To add one:

    from .html import register_details_renderer

    @register_details_renderer("trajectory-skeleton")
    def skeleton(case: Mapping[str, Any]) -> str | None:
        ...

The trajectory skeleton's drawing plugs in here once that checker exists.
"""

from __future__ import annotations
