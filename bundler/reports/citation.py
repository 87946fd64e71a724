"""What a report attaches to cite a bundle, and the one way a verify command is written.

A citation names the bundle (its identity, the SHA-256 of the file, where it is), who
signed it (only the signers checked against keys the author named: signatures by keys
nobody named are said to be unchecked), and the exact ``reprobundle verify`` line that
checks exactly that bundle: a link with the file's digest, or a file with its identity.
``verify_line`` is also what every report's "verify it" line is made of.

Pure: values in, text out. Text from the bundle (its title) is escaped to one line.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from bundler.errors import one_line

FORMATS = ("text", "markdown", "bibtex", "cff")


def verify_line(
    target: str,
    *,
    sha256: str | None = None,
    identity: str | None = None,
    allow_code: bool = False,
    accept_advisories: Sequence[str] = (),
) -> str:
    """The exact command that verifies the cited bundle: ``target`` (a link or a file
    name) pinned by the file's SHA-256 (``--sha256``, for a link) or by the bundle's
    identity (``--expect-manifest-sha256``); ``--allow-code`` for a bundle whose own
    checker code runs only when allowed."""
    # a file name that starts with "-" would be read as an option (``--trust=k.bundle...``
    # turns the pasted line into another command): the same file, as ./NAME
    words = ["reprobundle", "verify", f"./{target}" if target.startswith("-") else target]
    if allow_code:
        words.append("--allow-code")
    for accepted in accept_advisories:  # the verdict a report shows needs them
        words += ["--accept-advisory", accepted]
    if sha256:
        words += ["--sha256", sha256]
    if identity:
        words += ["--expect-manifest-sha256", identity]
    return shlex.join(words)


@dataclass(frozen=True)
class Citation:
    name: str
    version: str
    title: str
    identity: str  # the SHA-256 of manifest.toml
    file_name: str
    file_sha256: str
    file_bytes: int
    url: str | None = None
    # the names of the trusted keys that signed; None when no key was given to check with
    signers: tuple[str, ...] | None = None
    unchecked_signatures: int = 0  # signatures by keys nobody named, or that do not count
    # why each named key that signed does not count now (revoked, expired, not yet valid,
    # may not sign bundles): the trust rule's words (``trust.standing``)
    not_counted: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    allow_code: bool = False  # the bundle's own checker code runs only when allowed

    @property
    def command(self) -> str:
        if self.url:
            return verify_line(self.url, sha256=self.file_sha256, allow_code=self.allow_code)
        return verify_line(self.file_name, identity=self.identity, allow_code=self.allow_code)

    @property
    def signed_by(self) -> str:
        unchecked = self.unchecked_signatures
        if self.signers is None:
            if not unchecked:
                return "unsigned"
            return f"not checked: {unchecked} signature(s), no key given to check them (--trust)"
        names = ", ".join(one_line(s) for s in self.signers) or "no key you named"
        refused = "".join(
            f"; a signature by a key you named does not count: {one_line(why)}"
            for why in self.not_counted
        )
        others = unchecked - len(self.not_counted)
        extra = f"; {others} other signature(s) by keys not named (not checked)" if others else ""
        return f"{names}{refused}{extra}"


def render(citation: Citation, fmt: str) -> str:
    if fmt == "markdown":
        return _markdown(citation)
    if fmt == "bibtex":
        return _bibtex(citation)
    if fmt == "cff":
        return _cff(citation)
    return _text(citation)


def _text(c: Citation) -> str:
    lines = [
        f"Bundle:   {one_line(c.name)} {one_line(c.version)}: {one_line(c.title)}",
        f"Identity: sha256:{c.identity}",
        f"File:     {one_line(c.file_name)}, SHA-256 {c.file_sha256} ({c.file_bytes} bytes)",
    ]
    if c.url:
        lines.append(f"Link:     {one_line(c.url)}")
    lines += [f"Signed:   {c.signed_by}", f"Verify:   {c.command}"]
    return "\n".join(lines) + "\n"


def _markdown(c: Citation) -> str:
    where = (
        f"[{one_line(c.file_name)}]({one_line(c.url)})" if c.url else f"`{one_line(c.file_name)}`"
    )
    return "\n".join(
        [
            f"**Evidence bundle:** {one_line(c.title)} ({one_line(c.name)} {one_line(c.version)}), "
            f"{where}",
            "",
            f"- identity: `sha256:{c.identity}`",
            f"- file SHA-256: `{c.file_sha256}` ({c.file_bytes} bytes)",
            f"- signed by: {c.signed_by}",
            "",
            "Verify it:",
            "",
            "```sh",
            c.command,
            "```",
            "",
        ]
    )


_BIBTEX_SPECIAL = {c: "\\" + c for c in "{}%&$#_"} | {
    "\\": "\\textbackslash{}",
    "~": "\\~{}",
    "^": "\\^{}",
}


def _bib(text: str) -> str:
    return "".join(_BIBTEX_SPECIAL.get(ch, ch) for ch in one_line(text))


def _bibtex(c: Citation) -> str:
    key = "".join(ch if ch.isalnum() else "-" for ch in f"{c.name}-{c.version}")
    fields = [("title", _bib(c.title)), ("version", _bib(c.version))]
    if c.authors:
        fields.append(("author", " and ".join(_bib(a) for a in c.authors)))
    if c.url:
        fields.append(("howpublished", f"\\url{{{one_line(c.url)}}}"))
    fields.append(
        (
            "note",
            _bib(
                f"reprobundle evidence bundle {c.file_name}; identity sha256:{c.identity}; "
                f"file SHA-256 {c.file_sha256}; signed by: {c.signed_by}; verify with: "
                f"{c.command}"
            ),
        )
    )
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@misc{{{key},\n{body}\n}}\n"


def _cff(c: Citation) -> str:
    def q(text: str) -> str:  # a JSON string is a YAML double-quoted scalar
        return json.dumps(one_line(text), ensure_ascii=True)

    authors = c.authors or ("the bundle's authors (fill in)",)
    lines = [
        "cff-version: 1.2.0",
        f"message: {q('Cite this evidence bundle, and verify it with: ' + c.command)}",
        "type: dataset",
        f"title: {q(c.title)}",
        f"version: {q(c.version)}",
        "authors:",
        *[f"  - name: {q(a)}" for a in authors],
    ]
    if c.url:
        lines.append(f"url: {q(c.url)}")
    lines += [
        "identifiers:",
        "  - type: other",
        f"    value: {q('sha256:' + c.identity)}",
        f"    description: {q('the bundle identity: SHA-256 of its manifest.toml')}",
        "  - type: other",
        f"    value: {q(c.file_sha256)}",
        f"    description: {q('SHA-256 of the bundle file ' + c.file_name)}",
        f"abstract: {q('Signed by: ' + c.signed_by)}",
    ]
    return "\n".join(lines) + "\n"
