"""The rules of reading an untrusted bundle, as one object with no I/O.

``ReadRules`` is fed what the archive shows, in order (each member's header, the bytes
of the manifest and of each signature, the SHA-256 of each payload file, the counts of
compressed and decompressed bytes) and answers with what to do next or with problems.
It decides everything ``extract`` enforces: member names and types, the order manifest ->
signatures -> payload, every limit, and the final reconciliation with the manifest
(nothing missing, nothing unlisted, every hash right). ``extract`` is the read loop
around it: it moves bytes, and never decides.

A problem that stops the read at once (a limit, a layout that cannot be read further)
raises ``Stop``; every other one is collected, and ``finish`` returns them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from bundler.container.tarstream import FOLDER, REGULAR, TYPE_NAMES, Header
from bundler.errors import Problem
from bundler.format.arguments import count
from bundler.format.manifest import MANIFEST_NAME, SIGNATURES_DIR, Manifest, parse
from bundler.format.paths import MAX_PATH_BYTES, fold, folders_of, path_problem
from bundler.format.withheld import RECORD_NAME, RecordError, Withheld, read_by_cases
from bundler.format.withheld import parse as parse_withheld

# pax keywords this reader understands; any other (GNU sparse maps, charsets, ...) rejects
PAX_KEYS = frozenset({"path", "size", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname"})


@dataclass(frozen=True)
class Limits:
    """What a verifier accepts before it refuses to read further. Raise them by flag."""

    archive_bytes: int = 16 << 30
    members: int = 200_000
    file_bytes: int = 8 << 30
    total_bytes: int = 32 << 30
    manifest_bytes: int = 16 << 20
    ratio: int = 200  # decompressed / compressed, checked once past ``ratio_floor``
    ratio_floor: int = 64 << 20

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            count(f"Limits.{name}", getattr(self, name))


class Stop(Exception):
    """Stop reading at once (a limit, a layout that cannot be read further)."""

    def __init__(self, code: str, where: str, message: str) -> None:
        super().__init__(message)
        self.problem = Problem(where, code, message)


class Action(Enum):
    """What the read loop does with a member's data."""

    SKIP = "skip"  # nothing (a folder, or a member with a problem): its bytes pass unread
    MANIFEST = "manifest"  # read it whole and hand it to ``manifest``
    SIGNATURE = "signature"  # read it whole and hand it to ``signature``
    FILE = "file"  # hash it (and write it when wanted), then hand the digest to ``hashed``
    WITHHELD = "withheld"  # read it whole and hand it to ``withheld_read``


class Step(NamedTuple):
    """The answer to one header: the action, the path below the top folder, and whether the
    payload starts here (signatures are judged, and the files to write chosen, first).
    A tuple: one is made per member, and a tuple is made several times faster than a
    frozen dataclass."""

    action: Action
    rel: str = ""
    starts_payload: bool = False


SKIP = Step(Action.SKIP)
_FILE = Action.FILE
_SIGNATURES = SIGNATURES_DIR + "/"


class ReadRules:
    """Every rule of ``reprobundle/1``'s archive layout, fed one member at a time."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.problems: list[Problem] = []
        self.manifest: Manifest | None = None
        self.manifest_bytes = b""
        self.top = ""
        self._prefix = "/"  # the top folder's name and a slash
        self.signatures: dict[str, bytes] = {}
        self.total = 0  # payload bytes
        self.payload_started = False
        self._expected: dict[str, tuple[str, int]] = {}
        self._folders: set[str] = set()
        self._hashed: dict[str, str] = {}
        self._count = 0
        self._seen: dict[str, str] = {}
        self._folded_files: dict[str, str] = {}
        self._folded_folders: dict[str, str] = {}
        self.withheld: Withheld | None = None  # the record of a redacted bundle

    # -- the stream ----------------------------------------------------------------

    def stream(self, decompressed: int, compressed: int) -> None:
        """Bytes decompressed so far, against the compressed bytes read (bombs)."""
        limits = self.limits
        if decompressed > limits.total_bytes + (1 << 20):
            raise Stop(
                "limit.total_size",
                "(archive)",
                f"decompresses to more than {limits.total_bytes} bytes "
                "(raise with --max-total-bytes)",
            )
        if decompressed > limits.ratio_floor and decompressed > limits.ratio * max(compressed, 1):
            raise Stop(
                "limit.ratio",
                "(archive)",
                f"decompresses more than {limits.ratio}:1 (a compression bomb?); "
                "raise with --max-ratio",
            )

    # -- members -------------------------------------------------------------------

    def member(self, member: Header) -> Step:
        """What to do with the member whose header this is."""
        self._count += 1
        if self._count > self.limits.members:
            raise Stop(
                "limit.members",
                "(archive)",
                f"more than {self.limits.members} members (raise with --max-members)",
            )
        name = member.name
        prefix = self._prefix
        rel = name[len(prefix) :]
        expected = self._expected.get(rel)
        if not self._name_ok(member, expected is not None and name.startswith(prefix)):
            return SKIP
        if self.manifest is None:
            return self._first(member)
        if not name.startswith(prefix):
            return self._problem(name, "member.outside_top", f"is not inside {self.top}/")
        if member.type == FOLDER:
            if rel not in self._folders:
                return self._problem(
                    name, "member.unlisted", "is a folder the manifest does not list"
                )
            return SKIP
        if rel.startswith(_SIGNATURES) and rel.count("/") == 1:
            return self._signature(member, rel)
        if rel == RECORD_NAME and expected is None and member.type in REGULAR:
            return self._record(member)
        starts = not self.payload_started
        self.payload_started = True
        if expected is None:
            self.problems.append(Problem(name, "member.unlisted", "is not listed in the manifest"))
            return Step(Action.SKIP, starts_payload=starts)
        want_size = expected[1]
        size = member.size
        if size != want_size:
            self.problems.append(
                Problem(
                    name,
                    "member.size",
                    f"observed {size} bytes, the manifest says {want_size}",
                )
            )
            return Step(Action.SKIP, starts_payload=starts)
        limits = self.limits
        if size > limits.file_bytes:
            raise Stop(
                "limit.file_size",
                name,
                f"larger than {limits.file_bytes} bytes (raise with --max-file-bytes)",
            )
        self.total += size
        if self.total > limits.total_bytes:
            raise Stop(
                "limit.total_size",
                name,
                f"the files add up to more than {limits.total_bytes} bytes "
                "(raise with --max-total-bytes)",
            )
        return Step(_FILE, rel, starts)

    def _problem(self, where: str, code: str, message: str) -> Step:
        self.problems.append(Problem(where, code, message))
        return SKIP

    def _name_ok(self, member: Header, listed_name: bool) -> bool:
        """The name and type rules; False (with the problem noted) if the member breaks one.
        ``listed_name``: the name is the top folder's and a path the manifest lists."""
        name = member.name
        # The name of a file the manifest lists is portable: its top folder came with the
        # manifest's own name, the rest was checked when the manifest was read (so it
        # encodes, and an ASCII one has as many bytes as characters).
        listed = (
            listed_name
            and member.type in REGULAR
            and (not member.pax or PAX_KEYS.issuperset(member.pax))
            and (len(name) if name.isascii() else len(name.encode())) <= MAX_PATH_BYTES
        )
        if not listed:
            bad_name = path_problem(name)
            why = bad_name or _member_problem(member)
            if why:
                self._problem(name, "member.name" if bad_name else "member.type", why)
                return False
        key = fold(name)
        earlier = self._seen.get(key)
        if earlier is not None:
            same = "appears twice" if earlier == name else f"collides with {earlier!r}"
            message = same if earlier == name else f"{same} (case or Unicode folding)"
            self._problem(name, "member.duplicate", message)
            return False
        self._seen[key] = name
        is_file = member.type in REGULAR
        clash = _clash(key, name, is_file, self._folded_files, self._folded_folders)
        if clash:
            self._problem(name, "member.file_and_folder", clash)
            return False
        return True

    def _first(self, member: Header) -> Step:
        name = member.name
        if not name.endswith("/" + MANIFEST_NAME) or name.count("/") != 1 or not member.is_file:
            raise Stop(
                "archive.layout", name, f"the first member must be NAME-VERSION/{MANIFEST_NAME}"
            )
        if member.size > self.limits.manifest_bytes:
            raise Stop(
                "limit.manifest_size",
                name,
                f"the manifest is larger than {self.limits.manifest_bytes} bytes "
                "(raise with --max-manifest-bytes)",
            )
        self.top = name.split("/")[0]
        self._prefix = self.top + "/"
        return Step(Action.MANIFEST, MANIFEST_NAME)

    def manifest_read(self, data: bytes) -> Manifest:
        """The manifest's bytes: parsed strictly (``BundleRejected`` if not valid)."""
        manifest = parse(data)
        if self.top != manifest.top:
            raise Stop(
                "archive.layout",
                f"{self.top}/{MANIFEST_NAME}",
                f"the top folder is {self.top!r} but the manifest names {manifest.top!r}",
            )
        self.manifest, self.manifest_bytes = manifest, data
        self._expected = {f.path: (f.sha256, f.size) for f in manifest.files}
        self._folders = folders_of(self._expected)
        return manifest

    def _signature(self, member: Header, rel: str) -> Step:
        name = member.name
        if self.payload_started:
            raise Stop(
                "archive.layout",
                name,
                "a signature after the payload began; signatures/*.json come right after "
                "the manifest",
            )
        if not rel.endswith(".json"):
            return self._problem(name, "member.unlisted", "signature files are named *.json")
        if member.size > self.limits.manifest_bytes:
            raise Stop(
                "limit.signature_size",
                name,
                f"the signature file is larger than {self.limits.manifest_bytes} bytes",
            )
        return Step(Action.SIGNATURE, rel)

    def _record(self, member: Header) -> Step:
        """The withheld record: once, right after the signatures, before the payload."""
        name = member.name
        if self.payload_started or self.withheld is not None:
            raise Stop(
                "archive.layout",
                name,
                f"a withheld record after the payload began; {RECORD_NAME} comes right "
                "after the manifest and the signatures",
            )
        if member.size > self.limits.manifest_bytes:
            raise Stop(
                "limit.manifest_size",
                name,
                f"the withheld record is larger than {self.limits.manifest_bytes} bytes",
            )
        return Step(Action.WITHHELD, RECORD_NAME)

    def withheld_read(self, data: bytes) -> None:
        """The withheld record's bytes: read strictly against the manifest. A record that
        does not hold stops the read (nothing of the bundle can be judged without it)."""
        assert self.manifest is not None
        where = f"{self.top}/{RECORD_NAME}"
        try:
            self.withheld = parse_withheld(data, self.manifest, read_by_cases(self.manifest), where)
        except RecordError as exc:
            first = exc.problems[0]
            raise Stop(first.code, where, "; ".join(p.message for p in exc.problems)) from None

    def signature_read(self, rel: str, data: bytes) -> None:
        self.signatures[rel] = data

    def hashed(self, rel: str, sha256: str) -> None:
        """The SHA-256 (hex) of a payload file's bytes as they streamed."""
        self._hashed[rel] = sha256

    # -- the end -------------------------------------------------------------------

    def end(self) -> bool:
        """The archive ended; whether the payload starts only now (it held none)."""
        if self.manifest is None:
            raise Stop("archive.empty", "(archive)", "the archive holds no manifest")
        starts = not self.payload_started
        self.payload_started = True
        return starts

    def finish(self) -> list[Problem]:
        """Every problem, once the manifest is reconciled with what the archive held."""
        problems = self.problems
        named = {p.where for p in problems}
        hashed = self._hashed
        withheld = self.withheld.paths if self.withheld is not None else frozenset()
        for rel, (want, _) in self._expected.items():
            got = hashed.get(rel)
            if withheld and rel in withheld:
                where = f"{self.top}/{rel}"
                if got is not None or where in named:
                    problems.append(
                        Problem(
                            where,
                            "withheld.present",
                            f"is in the archive but {RECORD_NAME} says it is withheld",
                        )
                    )
                continue
            if got == want:
                continue
            where = f"{self.top}/{rel}"
            if got is None:
                if where not in named:
                    problems.append(
                        Problem(where, "file.missing", "is listed in the manifest but missing")
                    )
            else:
                problems.append(
                    Problem(where, "file.hash", f"SHA-256 is {got}, the manifest says {want}")
                )
        return problems


def _member_problem(member: Header) -> str | None:
    kind = TYPE_NAMES.get(member.type)
    if member.type in (b"1", b"2"):
        return f"is {kind} (to {member.linkname!r}); bundles hold regular files only"
    if kind:
        return f"is {kind}"
    if not (member.is_file or member.is_folder):
        return f"has an unsupported member type {member.type.decode('latin-1')!r}"
    unknown = sorted(set(member.pax) - PAX_KEYS)
    if unknown:
        return f"has pax header fields this reader does not support: {unknown}"
    return None


def _clash(
    key: str, name: str, is_file: bool, files: dict[str, str], folders: dict[str, str]
) -> str | None:
    """Why a (folded) name is a file where another needs a folder, or the reverse.

    Every folder in ``folders`` has all its ancestors there too and none in ``files``, so
    the walk up the name's path stops at the first known folder (as in ``folders_of``)."""
    new = []
    parent = key.rpartition("/")[0]
    while parent and parent not in folders:
        if parent in files:
            return f"needs a folder where {files[parent]!r} is a file"
        new.append(parent)
        parent = parent.rpartition("/")[0]
    if is_file and key in folders:
        return f"is a file, but {folders[key]!r} needs it as a folder"
    for folder in new:
        folders[folder] = name
    if is_file:
        files[key] = name
    else:
        folders.setdefault(key, name)
    return None
