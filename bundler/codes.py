"""Every problem code reprobundle itself gives, with what it means and how it ends a run.

Codes are part of the format: bundles name them in ``expect_reasons``, scripts match on
them, reports print them. This table is the one place they are listed; the reference in
``manifests/CODES.md`` is generated from it (``python -m bundler.generate``), and a test fails
on a code the code base uses that is not here, or one listed here that nothing uses.
A checker's own reason codes are declared beside the checker (``reprobundle checkers``).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from checkers.api import COMMON_ERRORS


class Ends(enum.Enum):
    """How a problem with this code ends the command that meets it: the exit code (None
    where the command goes on, or where it depends on the command) and what follows.
    The error types (``bundler/errors.py``, ``bundler/store/errors.py``) and the results
    of a run (``EXIT_CODES``) take their exit codes from here."""

    USAGE = (2, "the command, its arguments or the bundle source are refused")
    REJECTED = (3, "the bundle (or archive record) is rejected; nothing ran")
    CASE = (4, "the case is inconclusive, unless a claim is contradicted")
    CLAIM = (None, "the claim is not supported (build refuses it; verify reports it)")
    BUILD = (1, "build keeps no file, the bundle is not supported at home")
    ARCHIVE = (2, "the archive could not do what was asked; nothing was changed")
    TAMPERED = (3, "the archive's index, log or store does not reconcile")
    NOTE = (None, "a note or warning; the command goes on")

    def __init__(self, exit: int | None, follows: str) -> None:
        self.exit = exit
        self.follows = follows

    @property
    def exit_code(self) -> int:
        """The exit code; raises for a way of ending that has none of its own."""
        if self.exit is None:
            raise ValueError(f"{self.name} does not end a command with an exit code")
        return self.exit

    @property
    def words(self) -> str:
        """What follows, with the exit code where the command ends with one of its own."""
        if self.exit is None:
            return self.follows
        return f"exit {self.exit}: {self.follows}"


class Code(NamedTuple):
    meaning: str
    ends: Ends


# Codes spelt like a file name (``manifest.toml``: the manifest is not valid TOML): a scan
# for codes cannot tell them from the names, so they are listed but not searched for.
FILE_LIKE = frozenset(
    {"toml", "yaml", "yml", "json", "md", "py", "txt", "html", "xml", "zst", "gz"}
)

_U, _R, _C, _L, _B = Ends.USAGE, Ends.REJECTED, Ends.CASE, Ends.CLAIM, Ends.BUILD
_A, _T, _N = Ends.ARCHIVE, Ends.TAMPERED, Ends.NOTE

# Codes made from a variable part: the prefix, then any word.
PREFIXES: dict[str, Code] = {
    "os.": Code("the operating system refused a file operation (the errno name follows)", _A),
    "case.": Code("build: a case did not reproduce at home (its outcome follows)", _B),
    "claim.": Code("build: a claim is not supported at home (its status follows)", _B),
}

CODES: dict[str, Code] = {
    # -- the container: reading the compressed tar ------------------------------------
    "archive.unreadable": Code("the bundle file cannot be read", _R),
    "archive.not_compressed_tar": Code("the file is neither gzip- nor zstd-compressed", _R),
    "archive.corrupt": Code("the compressed stream or a tar header is damaged", _R),
    "archive.truncated": Code("the file ends before its stream does", _R),
    "archive.trailing_data": Code("bytes follow the end of the compressed stream", _R),
    "archive.not_tar": Code("the stream decompresses but is not a tar archive", _R),
    "archive.hidden_data": Code("non-zero bytes in padding or after the end marker", _R),
    "archive.global_header": Code("a pax global header (bundles have none)", _R),
    "archive.empty": Code("the archive holds no manifest", _R),
    "bundle.rejected": Code("a rejection with no more specific code", _R),
    "archive.layout": Code("the first member is not NAME-VERSION/manifest.toml", _R),
    "archive.write": Code("the work folder cannot be written", _R),
    "limit.archive_size": Code("the file is larger than --max-archive-bytes", _R),
    "limit.members": Code("more members than --max-members", _R),
    "limit.file_size": Code("a member is larger than --max-file-bytes", _R),
    "limit.total_size": Code("the payload decompresses past --max-total-bytes", _R),
    "limit.ratio": Code("the stream decompresses past the bomb ratio", _R),
    "limit.header_size": Code("a pax or long-name header is too large", _R),
    "limit.manifest_size": Code("the manifest is larger than the limit", _R),
    "limit.signature_size": Code("a signature file is larger than the limit", _R),
    "member.name": Code("a member name is absolute, escapes, or is not portable", _R),
    "member.type": Code("a member is a link, device, FIFO or other non-file", _R),
    "member.outside_top": Code("a member is not inside the bundle's top folder", _R),
    "member.duplicate": Code("two members with one name (also after case folding)", _R),
    "member.file_and_folder": Code("one name is both a file and a folder", _R),
    "member.unlisted": Code("a member the manifest does not list", _R),
    "member.size": Code("a member's size differs from the manifest's", _R),
    "file.missing": Code("a file the manifest lists is not in the archive", _R),
    "file.hash": Code("a file's SHA-256 differs from the manifest's", _R),
    # -- a redacted bundle's withheld record (withheld.json) ------------------------------
    "withheld.format": Code("the withheld record is not valid, or of an unknown format", _R),
    "withheld.reserved": Code("the record withholds the manifest, a signature or itself", _R),
    "withheld.unlisted": Code("the record withholds a path the manifest does not list", _R),
    "withheld.digest": Code("a withheld file's digest or size differs from the manifest's", _R),
    "withheld.unread": Code("the record withholds a file no case reads", _R),
    "withheld.duplicate": Code("the record names one file twice", _R),
    "withheld.present": Code("a file the record says is withheld is in the archive", _R),
    "withheld.disclosed": Code("a disclosed file is missing or differs from its digest", _R),
    "input.withheld": Code("the case reads a withheld file and is not run", _C),
    # -- the manifest ------------------------------------------------------------------
    "manifest.bom": Code("the manifest starts with a byte-order mark", _R),
    "manifest.encoding": Code("the manifest is not UTF-8", _R),
    "manifest.toml": Code("the manifest is not valid TOML", _R),
    "manifest.too_deep": Code("the manifest is nested too deeply to read", _R),
    "manifest.format": Code("the format line is not reprobundle/MAJOR[.MINOR]", _R),
    "manifest.unsupported_major": Code("a format major version this verifier cannot read", _R),
    "manifest.schema": Code("the manifest does not follow the format's schema", _R),
    "manifest.type": Code("a TOML value of a type the format does not allow", _R),
    "manifest.size": Code("a listed size is not a whole number of bytes", _R),
    "manifest.epoch": Code("source_date_epoch is not a time a tar header can hold", _R),
    "manifest.not_finite": Code("NaN or infinity in the manifest", _R),
    "path.invalid": Code("a listed path is not a safe relative path", _R),
    "path.reserved": Code("a listed path uses a reserved name", _R),
    "path.duplicate": Code("two listed paths collide (also after case folding)", _R),
    "path.file_and_folder": Code("a listed path is both a file and a folder", _R),
    "path.not_regular": Code("build: a source file is a link or not a regular file", _U),
    "id.duplicate": Code("a case or code id is used twice", _R),
    "claim.unknown_case": Code("a claim names a case that does not exist", _R),
    "code.format": Code("bundled code needs a newer format minor", _R),
    "code.unknown": Code("a case names a bundled checker no code entry defines", _R),
    "code.unlisted": Code("a code entry's file is not one of the bundle's files", _R),
    "identity.mismatch": Code("the manifest is not the one --expect-identity names", _R),
    # -- a bundle from a link, or pinned by its file digest (verify URL, --sha256) ------
    "bundle.sha256": Code("the bundle file's SHA-256 is not the one --sha256 names", _R),
    "download.pin": Code("a link to verify without --sha256, --identity or TOFU", _U),
    "download.scheme": Code("a link that is not https (http only on loopback)", _U),
    "download.redirect": Code("a redirect to another scheme, or with no target", _R),
    "download.redirects": Code("more redirects than the download follows (a loop?)", _R),
    "download.timeout": Code("the server sent nothing within --download-timeout", _R),
    "download.incomplete": Code("the body ended before its declared length", _R),
    "download.failed": Code("the server answered other than 200, or cannot be reached", _R),
    # -- signatures and keys -----------------------------------------------------------
    "signature.format": Code("a signature file is not valid", _R),
    "signature.payload_type": Code("a signature does not sign a reprobundle manifest", _R),
    "signature.bad": Code("a signature does not match the manifest bytes", _R),
    "signature.duplicate": Code("two signatures by one key", _R),
    "signature.revoked": Code("a signature by a key the trust store revokes", _R),
    "signature.required": Code("no signature by a trusted key, and one is required", _R),
    # -- attestations of a verification (reprobundle attestation verify) -------------------
    "attestation.format": Code("an attestation is not a strict DSSE envelope", _R),
    "attestation.too_large": Code("an attestation larger than the reader takes", _R),
    "attestation.payload_type": Code("an envelope that does not hold an in-toto Statement", _R),
    "attestation.unsigned": Code("an envelope with no signature", _R),
    "attestation.untrusted": Code(
        "no signature on the attestation by a trusted key that counts now", _R
    ),
    "attestation.bad_signature": Code(
        "a signature naming a trusted key does not verify (the attestation was altered)", _R
    ),
    "attestation.statement": Code("the Statement breaks in-toto's or its predicate's rules", _R),
    "attestation.predicate_type": Code("a predicate type reprobundle does not attest", _R),
    "attestation.subject": Code("the bundle given is not the attestation's subject", _R),
    "attestation.too_old": Code(
        "an attestation older than --max-age, in the future, or that says no time", _R
    ),
    # -- pre-registrations (preregister, build --preregistration, verify) ------------------
    "preregistration.format": Code("a pre-registration that does not read strictly", _U),
    "preregistration.too_large": Code("a pre-registration larger than the reader takes", _U),
    "preregistration.payload_type": Code("an envelope that holds no pre-registration", _U),
    "preregistration.other_bundle": Code("a pre-registration of another bundle name", _U),
    "preregistration.fix": Code(
        "a file to fix in a pre-registration is not a case's input, or cannot be read", _U
    ),
    "preregistration.bad_signature": Code(
        "a signature naming a trusted key does not verify (the pre-registration was altered)", _U
    ),
    # -- RFC 3161 time-stamps (archive preregister --timestamp) ---------------------------
    "timestamp.format": Code("a time-stamp response that cannot be read", _R),
    "timestamp.invalid": Code("a time-stamp that is not over these bytes or not signed", _R),
    "timestamp.untrusted": Code("no root certificate to check a time-stamp against", _R),
    "timestamp.root": Code("a --tsa-cert that is not a PEM certificate", _R),
    "timestamp.unavailable": Code("rfc3161-client is not installed", _R),
    "key.format": Code("a key file is not an Ed25519 key in a known form", _U),
    "key.algorithm": Code("a key of another algorithm than Ed25519", _U),
    "key.passphrase": Code("the key needs a passphrase (or another one)", _U),
    "key.weak": Code("a public key that is not a usable Ed25519 point", _U),
    "trust.format": Code("a trust store entry is not valid", _U),
    "trust.duplicate": Code("a trust store lists one key twice", _U),
    # -- the bundle source (build) -----------------------------------------------------
    "source.schema": Code("bundle.yaml does not follow the source schema", _U),
    "source.unknown_key": Code("bundle.yaml has a key the schema does not know", _U),
    "source.preregistration": Code("the source's preregistration is not a file of its own", _U),
    "source.files": Code("the files patterns are missing, empty or match nothing", _U),
    "case.unknown_checker": Code("a case names a checker this tool does not have", _U),
    "case.advised_checker": Code(
        "a case names a checker version with an advisory; change it to the fixing version "
        "(or give --accept-advisory ID)",
        _U,
    ),
    "case.unknown_role": Code("a case names an input role its checker lacks", _U),
    "case.missing_role": Code("a case lacks an input its checker needs", _U),
    "case.role_shape": Code("one path where the role takes a list, or the reverse", _U),
    "case.unlisted_input": Code("a case input is not one of the bundle's files", _U),
    "case.params": Code("a case's params do not fit its checker", _U),
    "case.params_out_of_range": Code("a number param outside its documented range", _U),
    "case.no_expect_reasons": Code(
        "a case expected to fail names no expect_reasons (the line to add is given)", _U
    ),
    "case.expect_reasons": Code("expect_reasons on a case that does not expect fail", _U),
    "case.unknown_reason": Code("expect_reasons names a code the checker never gives", _U),
    "claim.no_negative_control": Code("a claim rests on checks never shown able to fail", _L),
    "claim.nothing_claimed": Code(
        "a claim names only planted controls: no passing case, no finding", _L
    ),
    "build.rejected": Code("the new bundle was rejected at home", _B),
    # -- running cases -----------------------------------------------------------------
    # the errors every checker may return, as checkers/api.py words them
    **{code: Code(meaning, _C) for code, meaning in COMMON_ERRORS.items()},
    "code.not_allowed": Code("bundled code was not allowed to run (no --allow-code)", _C),
    "code.timeout": Code("the bundled checker did not answer in time", _C),
    "code.processes": Code("the bundled checker ran more processes than --code-processes", _C),
    "code.crashed": Code("the bundled checker's process died", _C),
    "code.raised": Code("the bundled checker raised an exception", _C),
    "workdir.kept": Code("the work folder was kept where the note says", _N),
    "report.json": Code("a stored JSON report is not valid JSON", _U),
    "report.schema": Code("a stored JSON report does not follow the report schema", _U),
    "report.unknown_case": Code("a stored report's claim names a case it lacks", _U),
    "report.inconsistent": Code(
        "a stored report's headline or counts contradict its claims and cases", _U
    ),
    # -- the archive -------------------------------------------------------------------
    "add.not_a_file": Code("a path given to add is not a file", _U),
    "add.version_reused": Code("NAME@VERSION is stored already with other bytes", _R),
    "add.rollback": Code("a version lower than the highest stored was added", _N),
    "add.partial": Code("the bundles stored before the add stopped", _N),
    "add.duplicate": Code("the same bytes were added again (logged, not stored twice)", _N),
    "store.missing": Code("a stored object is missing", _T),
    "store.object": Code(
        "a stored object is not a regular file of its recorded size, or its bytes do not "
        "match its digest",
        _T,
    ),
    "store.partial": Code("a non-object file in the store", _T),
    "store.rotted": Code("a stored object rotted (its digest no longer matches)", _T),
    "index.open": Code("the index cannot be opened", _A),
    "index.corrupt": Code("the index file is not a readable SQLite database", _A),
    "index.readonly": Code("the index cannot be written", _A),
    "index.busy": Code("the index stayed locked by another process", _A),
    "index.full": Code("the disk is full", _A),
    "index.error": Code("another SQLite error", _A),
    "index.altered": Code("an index fact differs from what the log says", _T),
    "index.unlogged": Code("an index row the log never recorded", _T),
    "index.missing": Code("a row the log describes is missing from the index", _T),
    "rebuild.object": Code("rebuild: a stored object is unreadable or not the logged one", _T),
    "rebuild.manifest": Code("rebuild: a stored manifest does not parse", _T),
    "trust.unlogged": Code("the archive's trust store holds a key the log never added", _T),
    "trust.altered": Code("a trusted key's permissions differ from what the log says", _T),
    "trust.missing": Code("a key the log says is trusted is missing from the trust store", _T),
    "log.record": Code("an audit log record cannot be read", _T),
    "log.edited": Code("a record's hash differs from the stored one", _T),
    "log.chain": Code("a record does not link to the hash of the one before", _T),
    "log.gap": Code("records were removed or inserted", _T),
    "log.reordered": Code("a record is stored at another position than it says", _T),
    "log.rewritten": Code("the log up to a checkpoint was rewritten", _T),
    "log.truncated": Code("records were removed from the end of the log", _T),
    "log.checkpoint_mismatch": Code("the last checkpoint does not match the log", _T),
    "log.checkpoint_record": Code("the record of the last checkpoint is damaged", _T),
    "checkpoint.format": Code("a checkpoint file is not valid", _U),
    "checkpoint.archive": Code("a checkpoint issued by another archive", _U),
    "checkpoint.signature": Code("a checkpoint altered after signing", _T),
    "checkpoint.key": Code("the checkpoint key cannot be read or made", _A),
}


# What the sandbox may answer for bundled code, besides COMMON_ERRORS.
CODE_ERRORS = {
    code: entry.meaning
    for code, entry in CODES.items()
    if code.startswith("code.") and entry.ends is Ends.CASE
}


# The exit code a run ends with, by its result: verify's overall status, or what a
# re-verification of a stored bundle recorded (archive verify ends with the worst one).
EXIT_CODES: dict[str, int] = {
    "supported": 0,
    "contradicted": 1,
    "inconclusive": Ends.CASE.exit_code,
    "rejected": Ends.REJECTED.exit_code,
    "missing": CODES["store.missing"].ends.exit_code,
    "rotted": CODES["store.rotted"].ends.exit_code,
    "error": 5,  # the verifier failed: an internal error
}

# How a command ends on its own account, outside a result of a run: a check it was asked
# for failed, nothing was there to verify, or it was stopped. Every exit code the command
# line gives is in EXIT_CODES or here (a test refuses a literal exit code anywhere else).
COMMAND_EXITS: dict[str, int] = {
    "failed": EXIT_CODES["contradicted"],  # the comparison or check asked for did not hold
    "nothing_verified": EXIT_CODES["inconclusive"],  # a batch with no bundle in it
    "usage": Ends.USAGE.exit_code,  # an OS error naming the path the user gave
    "interrupted": 128 + 2,  # Ctrl-C (SIGINT), as a shell reports it
    "broken_pipe": 128 + 13,  # the reader went away (SIGPIPE), as a shell reports it
}


def lookup(code: str) -> Code | None:
    """The table's entry for ``code``, also for codes with a variable part."""
    if code in CODES:
        return CODES[code]
    return next((entry for prefix, entry in PREFIXES.items() if code.startswith(prefix)), None)


def reference() -> str:
    """The Markdown reference of every code (``manifests/CODES.md``)."""
    lines = [
        "# Problem codes",
        "",
        "Generated from `bundler/codes.py` by `python -m bundler.generate`; do not edit by hand.",
        "A checker's own reason codes are listed by `reprobundle checkers NAME`.",
        "",
        "| code | meaning | what follows |",
        "| --- | --- | --- |",
    ]
    rows = sorted(CODES.items()) + sorted((f"{p}*", c) for p, c in PREFIXES.items())
    lines += [f"| `{code}` | {entry.meaning} | {entry.ends.words} |" for code, entry in rows]
    return "\n".join(lines) + "\n"
