"""The terminal experience: rich tables with colours on a terminal only, never with
NO_COLOR; plain text when piped; a progress bar only on a terminal; --quiet and
--verbose."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from rich.console import Console

from bundler.cli import main
from bundler.cli._shared import ProgressDisplay
from tests.helpers import REPO, edit_manifest

# SGR colour parameters: 30-37, 90-97 (foreground), 40-47 (background), 38;... / 48;...
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|4[0-7]|38|48)(?:;[0-9;]*)?m")


def in_terminal(*args: str, **env: str) -> str:
    """Run reprobundle with stdin, stdout and stderr on a new pseudo-terminal."""
    master, slave = pty.openpty()
    environment = {
        **{k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")},
        "TERM": "xterm-256color",
        "COLUMNS": "110",
        "PYTHONPATH": str(REPO),
        **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "bundler", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=environment,
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    process.wait()
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_terminal_gets_a_coloured_claims_table(quickstart_bundle: Path) -> None:
    screen = in_terminal("verify", str(quickstart_bundle))
    assert COLOUR.search(screen), "no colour on a terminal"
    assert "┃ STATUS" in re.sub(r"\x1b\[[0-9;]*m", "", screen)
    assert "accepts-equivalent-content" in screen


def test_no_color_means_no_colour_on_a_terminal(quickstart_bundle: Path) -> None:
    screen = in_terminal("verify", str(quickstart_bundle), NO_COLOR="1")
    assert not COLOUR.search(screen)
    assert "supported" in screen and "STATUS" in screen


def test_diff_flip_is_red_on_a_terminal_and_plain_with_no_color(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def flip(doc: dict) -> None:  # type: ignore[type-arg]
        doc["cases"][0]["expect"] = "fail"

    new = edit_manifest(quickstart_bundle, tmp_path / "n.bundle.tar.gz", flip)
    loud = in_terminal("diff", str(quickstart_bundle), str(new))
    assert re.search(r"\x1b\[[0-9;]*31m\s*!! FLIPPED", loud)
    assert not COLOUR.search(in_terminal("diff", str(quickstart_bundle), str(new), NO_COLOR="1"))


def test_piped_output_is_plain_text(quickstart_bundle: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "verify", str(quickstart_bundle)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert "\x1b[" not in done.stdout + done.stderr
    assert "supported     accepts-equivalent-content" in done.stdout


def test_quiet_prints_only_the_verdict_line_even_on_a_terminal(quickstart_bundle: Path) -> None:
    screen = in_terminal("verify", str(quickstart_bundle), "--quiet")
    assert screen.strip() == "Result: every claim supported (2 of 2 claims supported); unsigned"


def test_verbose_shows_every_case(quickstart_bundle: Path) -> None:
    result = CliRunner().invoke(main, ["verify", str(quickstart_bundle), "--verbose"])
    assert result.exit_code == 0
    assert re.search(r"\[ok\] reproduced +reformatted-candidate-passes +pass +pass", result.stdout)
    assert "content.removed:" in result.stdout


def test_progress_bar_draws_on_a_terminal() -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=100)
    with ProgressDisplay(enabled=True, console=console, delay=3600) as progress:
        progress.cases(1, 4, "dropped-rule-is-caught")
        progress.show()
    assert "verifying: case dropped-rule-is-caught" in stream.getvalue()
    assert "1/4" in stream.getvalue()


def test_progress_bar_stays_silent_off_a_terminal_or_when_quiet() -> None:
    for enabled, terminal in ((True, False), (False, True)):
        stream = io.StringIO()
        console = Console(file=stream, force_terminal=terminal, width=100)
        with ProgressDisplay(enabled=enabled, console=console, delay=0) as progress:
            progress.step("packing")
            progress.show()
        assert stream.getvalue() == ""


def test_escape_sequences_in_a_bundle_are_shown_not_obeyed(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    def inject(doc: dict) -> None:  # type: ignore[type-arg]
        doc["claims"][0]["statement"] = "clears\x1b[2J the screen\x1b]0;pwned\x07"

    bad = edit_manifest(quickstart_bundle, tmp_path / "esc.bundle.tar.gz", inject)
    screen = in_terminal("verify", str(bad), NO_COLOR="1")
    assert "\x1b[2J" not in screen and "\x1b]0;" not in screen
    assert "clears\\x1b[2J the screen\\x1b]0;pwned\\x07" in screen
    piped = CliRunner().invoke(main, ["verify", str(bad)])
    assert "\x1b" not in piped.stdout and "clears\\x1b[2J" in piped.stdout


LONG = "A statement of about four hundred and seventy characters, " * 8


def long_statement_bundle(quickstart_bundle: Path, tmp_path: Path) -> Path:
    def lengthen(doc: dict[str, Any]) -> None:
        doc["claims"][0]["statement"] = LONG.strip()

    return edit_manifest(quickstart_bundle, tmp_path / "long.bundle.tar.gz", lengthen)


def test_piped_text_wraps_at_the_terminal_width(quickstart_bundle: Path, tmp_path: Path) -> None:
    bundle = long_statement_bundle(quickstart_bundle, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "verify", str(bundle)],
        env={**os.environ, "COLUMNS": "60", "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    long_lines = [
        line
        for line in done.stdout.splitlines()
        if len(line) > 60
        and " " in line.strip()
        and not re.search(r"sha256:[0-9a-f]{64}|Linux|Built", line)
    ]
    assert long_lines == []
    assert "A statement of about four hundred" in done.stdout


def test_terminal_tables_wrap_at_the_terminal_width(
    quickstart_bundle: Path, tmp_path: Path
) -> None:
    bundle = long_statement_bundle(quickstart_bundle, tmp_path)
    screen = in_terminal("verify", str(bundle), COLUMNS="70", NO_COLOR="1")
    lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line) for line in screen.splitlines()]
    assert "A statement of about four" in screen
    assert max(len(line.rstrip("\r")) for line in lines if "sha256:" not in line) <= 70


def folded_codes(text: str, codes: set[str]) -> list[str]:
    """Tokens of table cells that are a code cut short (a proper prefix of a code)."""
    cut = []
    for line in text.splitlines():
        for cell in re.split(r"[│┃]", line):
            for token in cell.split():
                word = token.strip("[],:")
                cut_short = word not in codes and any(c.startswith(word) for c in codes)
                if cut_short and ("." in word or "_" in word):  # not a word such as "content"
                    cut.append(word)
    return cut


def test_terminal_table_at_80_columns_never_cuts_a_reason_code() -> None:
    """Friction 10 of issue 43: at 80 columns the EXPECTED cell broke ``[content.removed]``
    into ``[content.`` and ``removed]``."""
    import json

    from bundler.reports.terminal import render

    report = json.loads((REPO / "tests/golden/config-change/report.json").read_text("utf-8"))
    codes = {r for c in report["cases"] for r in c["expect_reasons"]}
    codes |= {r["code"] for c in report["cases"] for r in c["reasons"]}
    out = io.StringIO()
    render(report, Console(file=out, width=80, force_terminal=False, color_system=None))
    assert "┃ OUTCOME" in out.getvalue() and "reproduced │" in out.getvalue()
    assert folded_codes(out.getvalue(), codes) == []


def test_piped_case_columns_stay_in_line_for_long_ids() -> None:
    """Friction 10 of issue 43: piped, an id longer than the column pushed its row's
    expected and observed verdicts out of line."""
    import json

    from bundler.reports.text import to_text

    report = json.loads((REPO / "tests/golden/config-change/report.json").read_text("utf-8"))
    for width in (0, 100):
        rows = [
            line
            for line in to_text(report, width=width).splitlines()
            if " pass " in line and ("[ok]" in line or line.startswith(" " * 18))
        ]
        starts = {line.index(" pass ", 20) for line in rows}
        assert len(rows) >= 5 and len(starts) == 1, rows
