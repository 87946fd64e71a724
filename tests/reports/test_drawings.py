"""The trajectory skeleton drawn on the HTML page: reached states solid, missing ones red."""

from __future__ import annotations

from typing import Any

from bundler.reports.drawings import DETAILS_RENDERERS, trajectory_skeleton


def case(positions: list[dict[str, Any]]) -> dict[str, Any]:
    matched = sum(1 for p in positions if p["step"] is not None)
    return {
        "id": "t<1>",
        "checker": "trajectory-skeleton@1",
        "details": {
            "positions": positions,
            "coverage": {"essential": len(positions), "matched": matched},
        },
    }


def test_skeleton_drawing_marks_the_missing_state() -> None:
    svg = trajectory_skeleton(
        case(
            [
                {"state": "a", "label": "search view", "step": 2},
                {"state": "b", "label": "search results", "step": None},
            ]
        )
    )
    assert svg is not None and svg.startswith("<svg")
    assert "step 2" in svg and "never reached" in svg
    assert 'stroke-dasharray="5 4"' in svg  # only the missing one is dashed
    assert svg.count("stroke-dasharray") == 1
    assert "1 of 2 essential states reached in order" in svg


def test_skeleton_drawing_escapes_labels_from_the_bundle() -> None:
    svg = trajectory_skeleton(
        case([{"state": "x", "label": "<script>alert(1)</script>", "step": 1}])
    )
    assert svg is not None
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "t&lt;1&gt;" in svg


def test_nothing_to_draw_without_positions() -> None:
    assert trajectory_skeleton({"id": "x", "details": {}}) is None
    assert trajectory_skeleton({"id": "x", "details": {"positions": ["not a record"]}}) is None


def test_drawing_is_registered_for_the_checker() -> None:
    import bundler.reports.drawings  # noqa: F401

    assert DETAILS_RENDERERS["trajectory-skeleton"] is trajectory_skeleton
