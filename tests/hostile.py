"""Hostile bundles, case inputs and reports, and the one check every one must pass:
``reprobundle`` run on it in every output format ends in a verdict or a refusal, never
an internal error (exit 5) or a traceback. Shared by the property tests and the fuzzer
(``fuzz/fuzz_verify.py``)."""

from __future__ import annotations

import json
import random
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bundler.cli import main
from bundler.errors import UNSAFE_ABOVE_C0
from tests.helpers import compress, decompress

# What verify and report may exit with; 5 (internal error) never.
VERDICTS = {0, 1, 2, 3, 4}
OUTPUTS = ("--json", "--markdown", "--junit", "--html")
INPUTS = ("inputs/candidate-reformatted.json", "inputs/candidate-dropped-rule.yaml")
# the two containers a bundle comes in: zstd (the default of ``build``) and gzip
SUFFIXES = (".tar.zst", ".tar.gz")


def run(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    output = result.output if result.stdout_bytes is not None else ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: raised {result.exception!r}") from result.exception
    return result.exit_code, output


def verify_every_way(bundle: Path) -> set[int]:
    """Verify ``bundle`` as text, quietly, and with every output format to files and to
    stdout; then render its JSON report again with ``report``. Raises AssertionError
    on an internal error or a traceback; returns the exit codes seen."""
    seen = set()
    with tempfile.TemporaryDirectory(prefix="reprobundle-hostile-") as tmp:
        out = Path(tmp)
        for args in ([], ["--json", "-"]):
            code, text = run("verify", bundle, *args)
            _no_bug(code, text, args)
            seen.add(code)
        files = [a for flag in OUTPUTS for a in (flag, out / flag.strip("-"))]
        code, text = run("verify", bundle, *files, "-v")
        _no_bug(code, text, files)
        for flag in OUTPUTS:
            text = (out / flag.strip("-")).read_bytes().decode("utf-8")  # always valid UTF-8
            _nothing_hidden(text, flag)
        json.loads((out / "json").read_text(), parse_constant=_not_json)  # finite numbers only
        for fmt in ("markdown", "html", "junit", "json"):
            code, text = run("report", out / "json", "-f", fmt, "-o", out / f"again.{fmt}")
            _no_bug(code, text, ["report", fmt])
    return seen


# what no report format may carry raw (bundler.errors: control and bidirectional
# characters), but the newlines, carriage returns and tabs of the format itself
_HIDDEN = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{UNSAFE_ABOVE_C0}]")


def _nothing_hidden(text: str, where: object) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in _HIDDEN.findall(text)})
    assert not found, f"{where} carries {found} raw"


def _not_json(name: str) -> Any:
    raise AssertionError(f"{name} in a JSON report: not JSON")


def _no_bug(code: int, text: str, args: object) -> None:
    assert code in VERDICTS, f"{args}: exit {code}\n{text[-2000:]}"
    assert "Traceback" not in text and "internal error" not in text, f"{args}: {text[-2000:]}"


# -- hostile data ------------------------------------------------------------------------

SURROGATE = '"\\ud800"'


def hostile_text(rng: random.Random, kind: int | None = None, depth: int | None = None) -> bytes:
    """A case input that is broken in one of the ways evidence can be (``kind`` of
    ``HOSTILE_KINDS``, else one drawn from ``rng``)."""
    depth = depth or rng.choice([1, 199, 200, 201, 5000, 100_000])
    choices: list[Callable[[], bytes]] = [
        lambda: b"[" * depth + b"]" * depth,
        lambda: b"{" + b'"a":{' * depth + b"}" * (depth + 1),
        lambda: ("- " * depth + "a\n").encode(),
        lambda: ("- a\n" * rng.choice([10, 200_001])).encode(),
        lambda: ('{"a": ' + SURROGATE + "}").encode(),
        lambda: b'{"a": NaN}',
        lambda: b'{"a": 1, "a": 2}',
        lambda: b"a: &x 1\nb: *x\n",
        lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(64))),
        lambda: b"\xef\xbb\xbf{}",
        lambda: b"\xff\xfe",
        lambda: ("[" + ",".join(["1e999999"] * 3) + "]").encode(),
        lambda: json.dumps({"x" * 300: ["\u202e\x1b[2J" * 10]}).encode(),
    ]
    return (choices[kind] if kind is not None else rng.choice(choices))()


HOSTILE_KINDS = 13


def hostile_report(rng: random.Random, report: dict[str, Any]) -> bytes:
    """A JSON report, changed the way a hand (or an attacker) edits a stored one."""
    data = json.loads(json.dumps(report))
    for _ in range(rng.randint(1, 4)):
        target: Any = data
        key: Any = None
        parent: Any = None
        for _ in range(rng.randint(1, 4)):
            if isinstance(target, dict) and target:
                parent, key = target, rng.choice(sorted(target))
            elif isinstance(target, list) and target:
                parent, key = target, rng.randrange(len(target))
            else:
                break
            target = parent[key]
        if parent is None:
            continue
        parent[key] = rng.choice(
            [
                None,
                0,
                -1,
                1.5,
                True,
                "",
                "\ud800",
                "\x1b]0;owned\x07",
                [],
                {},
                [[[[1]]]],
                "x" * 5000,
            ]
        )
    text = json.dumps(data, ensure_ascii=rng.random() < 0.5)
    return text.encode("utf-8", "backslashreplace")


def zstd_mutant(seed: bytes, rng: random.Random) -> bytes:
    """A zstd bundle whose tar stream (or frame) is changed."""
    raw = bytearray(decompress(seed))
    choice = rng.randrange(4)
    if choice == 0:
        frame = bytearray(seed)
        for _ in range(rng.randint(1, 8)):
            frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
        return bytes(frame)
    if choice == 1:
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    elif choice == 2:
        raw = raw[: rng.randrange(len(raw))] + bytes(rng.randrange(2048))
    else:
        a, b = rng.randrange(0, len(raw), 512), rng.randrange(0, len(raw), 512)
        raw[a : a + 512] = raw[b : b + 512]
    return compress(bytes(raw), zstd=True)
