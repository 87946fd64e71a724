"""The HTML page of each example bundle in a real headless Chromium (Playwright driving
the system's browser): claim rows and statuses are visible on a laptop and on a phone
screen, nothing overflows sideways, and the page makes no network request.

Screenshots of the first screen of each page land in test-output/screenshots/ (or
$REPROBUNDLE_SCREENSHOTS); REPROBUNDLE_FULL_SCREENSHOTS=1 takes whole pages instead (a
phone page is ~25,000 pixels tall: about a second each). Without a browser the test is
skipped with the reason, except under CI (CI set), where it fails: CI must always run it
(.ci/run installs Debian's chromium).
"""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.reports.html import to_html
from tests.helpers import REPO

pytestmark = pytest.mark.long

SCREENS = {"laptop": (1366, 768), "phone": (390, 844)}
SHOTS = Path(os.environ.get("REPROBUNDLE_SCREENSHOTS") or REPO / "test-output" / "screenshots")
FULL_PAGE = bool(os.environ.get("REPROBUNDLE_FULL_SCREENSHOTS"))


def find_browser() -> str | None:
    for name in (
        os.environ.get("REPROBUNDLE_CHROMIUM"),
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ):
        if name and (found := shutil.which(name)):
            return found
    return None


def unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser test, but {reason}")
    pytest.skip(f"no browser test: {reason} (install Debian's chromium; CI always runs it)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install -e '.[test]')")
    executable = find_browser()
    if executable is None:
        unavailable("no chromium, chromium-browser or google-chrome on PATH")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


class Page:
    """One page opened from a file, with every request the browser tried to make."""

    def __init__(self, browser: Any, html: str, path: Path, screen: str) -> None:
        path.write_text(html, encoding="utf-8")
        width, height = SCREENS[screen]
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.requests: list[str] = []  # what reached the network layer (the router)
        self.attempts: list[str] = []  # what the page asked for, blocked or not
        self.messages: list[str] = []

        def record(route: Any) -> None:
            self.requests.append(route.request.url)
            if route.request.url.startswith("file:"):
                route.continue_()
            else:
                route.abort()

        self.context.route("**/*", record)
        self.page = self.context.new_page()
        self.page.on("request", lambda request: self.attempts.append(request.url))
        self.page.on("console", lambda message: self.messages.append(message.text))
        self.url = path.as_uri()
        self.page.goto(self.url)  # returns once the page has loaded

    def settle(self) -> Page:
        """Wait until the page has made no request for 500 ms (pages opened together settle
        together: the browser's clocks run side by side)."""
        self.page.wait_for_load_state("networkidle")
        return self

    def screenshot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.evaluate("window.scrollTo(0, 0)")  # the first screen, as a reader opens it
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=FULL_PAGE)
        assert (SHOTS / f"{name}.png").stat().st_size > 0

    def other_requests(self) -> list[str]:
        return sorted({u for u in self.requests if u != self.url})

    def other_attempts(self) -> list[str]:
        return sorted({u for u in self.attempts if u != self.url})

    def overflows_sideways(self) -> bool:
        return bool(
            self.page.evaluate(
                "document.documentElement.scrollWidth > document.documentElement.clientWidth + 1"
            )
        )

    def close(self) -> None:
        self.context.close()


# Each claim row as the browser shows it, read in one round trip. "Shown" is Playwright's
# is_visible(): a non-empty box and no visibility:hidden (display:none gives an empty box).
CLAIM_ROWS = """() => {
  const shown = (e) => {
    if (!e) return false;
    const box = e.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== "hidden";
  };
  return [...document.querySelectorAll("tr.claim")].map((row) => {
    row.scrollIntoView({block: "center"});
    const badge = row.querySelector(".badge");
    return {
      shown: shown(row),
      status: row.getAttribute("data-status"),
      badge: badge ? badge.innerText : null,
      badge_shown: shown(badge),
      text: row.innerText,
    };
  });
}"""


def check_claims_visible(page: Page, report: dict[str, Any]) -> None:
    rows = page.page.evaluate(CLAIM_ROWS)
    assert len(rows) == len(report["claims"])
    for row, claim in zip(rows, report["claims"], strict=True):
        assert row["shown"], claim["id"]
        assert row["status"] == claim["status"]
        assert row["badge_shown"] and row["badge"] == claim["status"]
        assert claim["id"] in row["text"]
    banner = page.page.locator("header#summary .verdict")
    assert banner.is_visible() and report["result"] in banner.inner_text().replace(
        "every claim supported", "supported"
    )


def test_example_pages_show_claims_with_no_network_request(
    browser: Any, example_reports: dict[str, Any], tmp_path: Path
) -> None:
    """Each page is opened once and shown on every screen in turn (a resize lays it out
    again, as a new window of that size would); every request it tried, on any screen, is
    looked at after the last."""
    pages = {}
    try:
        for name, report in example_reports.items():
            pages[name] = Page(browser, to_html(report), tmp_path / f"{name}.html", "laptop")
        for screen, (width, height) in SCREENS.items():
            for name, report in example_reports.items():
                page = pages[name]
                page.page.set_viewport_size({"width": width, "height": height})
                page.settle()
                check_claims_visible(page, report)
                assert not page.overflows_sideways(), f"{name} scrolls sideways on a {screen}"
                page.screenshot(f"{name}-{screen}")
        for name, page in pages.items():
            assert page.other_requests() == [] and page.other_attempts() == [], name
    finally:
        for page in pages.values():
            page.close()


@pytest.mark.parametrize(
    "hiding", ["tr.claim:last-child { display: none }", "tr.claim .badge { visibility: hidden }"]
)
def test_a_hidden_claim_row_or_badge_fails_the_visibility_check(
    browser: Any, example_reports: dict[str, Any], hiding: str, tmp_path: Path
) -> None:
    report = example_reports["quickstart"]
    html = to_html(report).replace("<style>", f"<style>{hiding}\n", 1)
    page = Page(browser, html, tmp_path / "hidden.html", "laptop")
    try:
        with pytest.raises(AssertionError):
            check_claims_visible(page, report)
    finally:
        page.close()


def test_contradicted_page_shows_the_failing_claim_and_case(
    browser: Any, example_reports: dict[str, Any], tmp_path: Path
) -> None:
    report = copy.deepcopy(example_reports["quickstart"])
    report["result"], report["exit_code"] = "contradicted", 1
    claim = report["claims"][0]
    claim.update(
        status="contradicted",
        reproduced=1,
        diverged=1,
        why="1 of 2 cases reproduced; 1 diverged (dropped-rule-is-caught)",
    )
    case = next(c for c in report["cases"] if c["id"] == "dropped-rule-is-caught")
    case.update(outcome="diverged", expect="pass", expect_reasons=[], kind=None)
    page = Page(browser, to_html(report), tmp_path / "contradicted.html", "phone").settle()
    try:
        check_claims_visible(page, report)
        diverged = page.page.locator("article.case.diverged")
        assert diverged.count() == 1 and diverged.is_visible()
        text = diverged.inner_text()
        assert "diverged: the author expects pass, the checker gave fail [content.removed]" in text
        colour = page.page.evaluate(
            "getComputedStyle(document.querySelector('header#summary')).backgroundColor"
        )
        assert colour == "rgb(253, 228, 225)"  # the red banner
        page.screenshot("quickstart-contradicted-phone")
    finally:
        page.close()


def test_a_drawing_that_points_outside_cannot_fetch(
    browser: Any, example_reports: dict[str, Any], tmp_path: Path
) -> None:
    """The page's Content-Security-Policy stops every fetch before it reaches the
    network; without the policy the router sees the fetch (so the router would catch one)."""

    def leaky(case: dict[str, Any]) -> str:
        return '<img src="http://127.0.0.1:9/pixel.png" alt="">'

    html = to_html(example_reports["quickstart"], renderers={"structured-equal": leaky})
    page = Page(browser, html, tmp_path / "leaky.html", "laptop").settle()
    try:
        assert page.other_requests() == []
        assert page.other_attempts() == ["http://127.0.0.1:9/pixel.png"]
        assert any("Content Security Policy" in m for m in page.messages)
    finally:
        page.close()
    without_policy = html.replace('http-equiv="Content-Security-Policy"', 'name="x-no-policy"')
    page = Page(browser, without_policy, tmp_path / "no-policy.html", "laptop").settle()
    try:
        assert page.other_requests() == ["http://127.0.0.1:9/pixel.png"]
    finally:
        page.close()


# Every text node between two break opportunities (<wbr>) of these elements must stay on
# one line: a hash wraps only between its groups of 16 digits, an environment key or value
# only after punctuation, never in the middle of a word.
UNBROKEN = """(selector) => {
  const broken = [];
  for (const element of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.split(/\\s+/)) {
        if (!word) continue;
        const start = node.textContent.indexOf(word);
        const range = document.createRange();
        range.setStart(node, start);
        range.setEnd(node, start + word.length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) broken.push(word);
      }
    }
  }
  return broken;
}"""


def test_phone_page_never_breaks_a_token_mid_word(
    browser: Any, example_reports: dict[str, Any], tmp_path: Path
) -> None:
    report = example_reports["config-edits"]
    page = Page(browser, to_html(report, expect_identity=True), tmp_path / "edits.html", "phone")
    page.settle()
    try:
        assert not page.overflows_sideways()
        for selector in (
            "dd.digest",
            "table.env th",
            "table.env td",
            "article.case h3 .mono",
            "p.controls",  # a reason code is never cut in two (issue 43)
        ):
            assert page.page.evaluate(UNBROKEN, selector) == [], selector
        identity = page.page.locator("dd.digest").inner_text().replace("\n", "")
        assert identity == f"sha256:{report['bundle']['identity']}"  # copies whole
        command = page.page.locator("#bundle pre")
        lines = command.inner_text().splitlines()
        assert lines[0].startswith("reprobundle verify ") and lines[0].endswith("\\")
        assert lines[1].strip() == f"--expect-manifest-sha256 {report['bundle']['identity']}"
        # the command scrolls inside its own box; the page itself does not
        assert page.page.evaluate("(e) => e.scrollWidth > e.clientWidth", command.element_handle())
        finding = page.page.locator("article.case.finding")
        assert finding.count() == 1 and "finding" in finding.locator(".badge.kind").inner_text()
        assert page.page.locator("section#findings").is_visible()
        page.screenshot("config-edits-phone-check")
    finally:
        page.close()


def test_reproduced_passing_cases_fold_while_the_rest_stay_open(
    browser: Any, example_reports: dict[str, Any], tmp_path: Path
) -> None:
    """Issue 43 (the HTML report): a page of 70 full cards is long to scan. A reproduced
    pass folds to its heading; a diverged or inconclusive case, a finding and a control
    stay open."""
    report = copy.deepcopy(example_reports["config-edits"])
    report["result"], report["exit_code"] = "contradicted", 1
    case = next(c for c in report["cases"] if c["id"] == "run-2")
    case.update(outcome="diverged", verdict="fail")
    claim = next(c for c in report["claims"] if "run-2" in c["cases"])
    claim.update(status="contradicted", reproduced=claim["reproduced"] - 1, diverged=1)
    page = Page(browser, to_html(report), tmp_path / "folded.html", "laptop").settle()
    try:
        state = page.page.evaluate(
            """() => [...document.querySelectorAll("article.case")].map((a) => {
                return [a.id, a.querySelector(".cols").checkVisibility(),
                        a.querySelector("h3").checkVisibility()];
            })"""
        )
        shown = {case_id.removeprefix("case-"): open_ for case_id, open_, _ in state}
        assert all(heading for _, _, heading in state)  # every card's heading is on the page
        assert shown == {
            "run-1": False,
            "run-2": True,  # diverged
            "run-3": False,
            "run-4": False,
            "run-5": False,
            "run-6": True,  # a finding
            "unedited-config-is-caught": True,  # a control
        }
        page.page.locator("#case-run-1 summary").click()
        assert page.page.locator("#case-run-1 .cols").is_visible()
    finally:
        page.close()
