"""The tar format as bundles use it: a strict streaming reader, and the header writer.

Only what a bundle may hold is understood: POSIX ustar headers (GNU's variant too), pax
extended headers and GNU long names for the member that follows. Every byte of the stream
passes through here once, in order: the padding after each member and everything after
the end-of-archive marker must be zero, so nothing can hide between members. Nothing is
written; the caller decides what to do with each member.

The stream comes from a ``pull`` function handing out decompressed pieces (``b""`` at
the end), so limits on decompressed bytes stay with the caller.

Headers are written here rather than by ``tarfile`` so that the bytes of a bundle do not
depend on the Python version (``tarfile`` changed how it fills device fields) and cost a
few microseconds a member: POSIX ustar, mode 0644, owner 0, no user names, and a pax
``path`` or ``size`` record only where ustar cannot hold the value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from zlib import adler32

BLOCK = 512
MAX_HEADER_DATA = 1 << 20  # pax and GNU long-name data are read into memory whole

REGULAR = (b"0", b"\0")
FOLDER = b"5"
PAX = b"x"
PAX_GLOBAL = b"g"
GNU_LONG_NAME = b"L"
GNU_LONG_LINK = b"K"
GNU_SPARSE = b"S"
NO_DATA = frozenset((b"1", b"2", b"3", b"4", b"5", b"6"))  # links, devices, folders, FIFOs
TYPE_NAMES = {
    b"1": "a hard link",
    b"2": "a symbolic link",
    b"3": "a device file",
    b"4": "a device file",
    b"6": "a FIFO",
    b"7": "a contiguous file",
}
USTAR_MAGICS = (b"ustar\x0000", b"ustar  \x00")
LINKS = (b"1", b"2")
_SPECIAL = frozenset((PAX, GNU_LONG_NAME, GNU_LONG_LINK, PAX_GLOBAL, GNU_SPARSE))  # not members
ZERO_BLOCK = bytes(BLOCK)
RECORD = 20 * BLOCK  # tar pads the archive to a whole record
MAX_USTAR_SIZE = 8**11 - 1


class TarError(Exception):
    """The stream cannot be read further: ``code`` is the problem code, ``where`` the member."""

    def __init__(self, code: str, where: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.where = where
        self.message = message


class Header:
    """One member: its name (pax or GNU long name applied), type flag and data size.
    (A plain class: a dataclass costs a verification about a millisecond to build.)"""

    __slots__ = ("linkname", "name", "pax", "size", "type")

    def __init__(
        self,
        name: str,
        type: bytes,
        size: int,
        linkname: str = "",
        pax: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.size = size
        self.linkname = linkname
        self.pax: dict[str, str] = {} if pax is None else pax

    @property
    def is_file(self) -> bool:
        return self.type in REGULAR

    @property
    def is_folder(self) -> bool:
        return self.type == FOLDER


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _number(raw: bytes, what: str) -> int:
    if raw[:1] in (b"\x80", b"\xff"):  # GNU base-256 (sizes of 8 GiB and more)
        if raw[0] == 0xFF:
            raise TarError("archive.corrupt", "(archive)", f"a tar header has a negative {what}")
        return int.from_bytes(raw[1:], "big")
    digits = raw.split(b"\0", 1)[0].strip(b" ")
    if not digits.strip(b"01234567"):
        return int(digits, 8) if digits else 0
    raise TarError("archive.corrupt", "(archive)", f"a tar header has an invalid {what} {raw!r}")


def _byte_sum(block: bytes) -> int:
    """The sum of a header block's bytes, in C: Adler-32's low half is 1 + the sum of the
    bytes modulo 65,521, exact for 256 bytes (at most 65,280)."""
    return (adler32(block[:256]) & 0xFFFF) + (adler32(block[256:]) & 0xFFFF) - 2


def _checksum_ok(block: bytes) -> bool:
    field = block[148:156]
    stored = field.split(b"\0", 1)[0].strip(b" ")
    if not stored or stored.strip(b"01234567"):
        return False
    want = int(stored, 8)
    # the field counts as spaces; the sum of its 8 bytes is Adler-32's low half less 1
    unsigned = _byte_sum(block) - (adler32(field) & 0xFFFF) + 257
    if want == unsigned:
        return True
    return want == unsigned - 256 * sum(1 for b in block[:148] + block[156:] if b > 127)


def _pax_records(data: bytes, where: str) -> dict[str, str]:
    """``LENGTH KEY=VALUE\\n`` records, each length counting its whole record."""
    records: dict[str, str] = {}
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos, pos + 20)
        length_text = data[pos:space] if space > pos else b""
        if not length_text.isdigit() or not length_text.isascii():
            raise TarError("archive.corrupt", where, "a pax header record has no valid length")
        end = pos + int(length_text)
        record = data[space + 1 : end]
        if end > len(data) or not record.endswith(b"\n") or b"=" not in record:
            raise TarError("archive.corrupt", where, "a pax header record is malformed")
        key, _, value = record[:-1].partition(b"=")
        try:
            records[key.decode("utf-8")] = value.decode("utf-8", "surrogateescape")
        except UnicodeDecodeError:
            raise TarError("archive.corrupt", where, "a pax header key is not UTF-8") from None
        pos = end
    return records


class TarReader:
    """Members of a tar stream, one header at a time; read or skip each one's data."""

    def __init__(self, pull: Callable[[], bytes]) -> None:
        self._pull = pull
        self._buffer = b""
        self._pos = 0
        self._owed = 0  # data and padding of the current member not yet consumed
        self._padding = 0
        self._current = ""
        self.headers = 0

    # -- the byte stream -----------------------------------------------------------

    def _fill(self) -> bool:
        chunk = self._pull()
        if not chunk:
            return False
        rest = self._buffer[self._pos :]
        self._buffer = rest + chunk if rest else chunk
        self._pos = 0
        return True

    def _take(self, n: int, where: str) -> bytes:
        while len(self._buffer) - self._pos < n:
            if not self._fill():
                raise TarError("archive.truncated", where, "the archive ends inside this member")
        out = self._buffer[self._pos : self._pos + n]
        self._pos += n
        return out

    def _pieces(self, n: int) -> Iterator[memoryview]:
        """The next ``n`` bytes in the pieces they arrive in (views of immutable bytes)."""
        while n:
            if self._pos == len(self._buffer) and not self._fill():
                raise TarError(
                    "archive.truncated", self._current, "the archive ends inside this member"
                )
            take = min(n, len(self._buffer) - self._pos)
            yield memoryview(self._buffer)[self._pos : self._pos + take]
            self._pos += take
            n -= take

    # -- members -------------------------------------------------------------------

    def data(self) -> Iterable[memoryview]:
        """The current member's data (views that stay valid), then its padding checked to
        be zero. A member already in the buffer whole comes as one view, at once."""
        end = self._pos + self._owed
        if end + self._padding <= len(self._buffer):
            view = memoryview(self._buffer)[self._pos : end]
            self._pos, self._owed = end, 0
            self._check_padding()
            return (view,)
        return self._streamed()

    def _streamed(self) -> Iterator[memoryview]:
        size, self._owed = self._owed, 0
        yield from self._pieces(size)
        self._check_padding()

    def _skip_rest(self) -> None:
        if self._owed or self._padding:
            for _ in self.data():
                pass

    def _check_padding(self) -> None:
        padding, self._padding = self._padding, 0
        if padding and self._take(padding, self._current).count(0) != padding:
            raise TarError(
                "archive.hidden_data",
                self._current,
                "non-zero bytes hide in the padding after this member's data "
                "(a member larger than its declared size?)",
            )

    def _small_data(self, header: Header, what: str) -> bytes:
        if header.size > MAX_HEADER_DATA:
            raise TarError(
                "limit.header_size",
                "(archive)",
                f"{what} of {header.size} bytes (at most {MAX_HEADER_DATA})",
            )
        self._owed, self._padding = header.size, -header.size % BLOCK
        return b"".join(bytes(piece) for piece in self.data())

    def next(self) -> Header | None:
        """The next member's header (any data of the one before is skipped), or None at the
        end-of-archive marker, once every byte after it was checked to be zero."""
        if self._owed or self._padding:
            self._skip_rest()
        pax: dict[str, str] = {}
        long_name: str | None = None
        while True:
            pos = self._pos
            if len(self._buffer) - pos >= BLOCK:  # (the usual case of _take_header)
                self._pos = pos + BLOCK
                block: bytes | None = self._buffer[pos : pos + BLOCK]
                if block == ZERO_BLOCK:
                    block = None
            else:
                block = self._take_header()
            if block is None:
                self._check_tail()
                return None
            header = self._parse(block)
            kind = header.type
            if kind in _SPECIAL:
                if kind == PAX:
                    pax.update(_pax_records(self._small_data(header, "a pax header"), header.name))
                    continue
                if kind == GNU_LONG_NAME:
                    long_name = _text(self._small_data(header, "a GNU long name"))
                    continue
                if kind == GNU_LONG_LINK:
                    self._small_data(header, "a GNU long link name")
                    continue
                if kind == PAX_GLOBAL:
                    raise TarError(
                        "archive.global_header",
                        header.name,
                        "a pax global header; bundles have none",
                    )
                raise TarError("member.type", header.name, "is a sparse file")  # GNU_SPARSE
            if long_name is not None:
                header.name = long_name
            if "path" in pax:
                header.name = pax["path"]
            if kind == FOLDER:
                header.name = header.name.removesuffix("/")  # tar writes folders as "NAME/"
            if pax:
                if "size" in pax:
                    if not pax["size"].isdigit() or not pax["size"].isascii():
                        raise TarError(
                            "archive.corrupt", header.name, "the pax size is not a number"
                        )
                    header.size = int(pax["size"])
                header.pax = pax
            self._current = header.name
            self._owed = owed = header.size if kind not in NO_DATA else 0
            self._padding = -owed % BLOCK
            return header

    def _take_header(self) -> bytes | None:
        if self._pos == len(self._buffer) and not self._fill():
            raise TarError(
                "archive.truncated",
                "(archive)",
                "the archive ends without its end-of-archive marker",
            )
        block = self._take(BLOCK, "(archive)")
        return None if block == ZERO_BLOCK else block

    def _parse(self, block: bytes) -> Header:
        first = self.headers == 0
        self.headers += 1
        if not _checksum_ok(block) or block[257:265] not in USTAR_MAGICS:
            if first:
                raise TarError("archive.not_tar", "(archive)", "the stream is not a tar archive")
            raise TarError(
                "archive.corrupt",
                "(archive)",
                "a tar header is corrupt (bad checksum or not ustar)",
            )
        name = _text(block[0:100])
        if block[257:263] == b"ustar\x00" and block[345] != 0:
            name = _text(block[345:500]) + "/" + name
        kind = block[156:157]
        return Header(
            name,
            kind,
            _number(block[124:136], "size"),
            _text(block[157:257]) if kind in LINKS else "",  # only a link's is ever shown
        )

    def _check_tail(self) -> None:
        """After the first zero block: only zeros until the stream ends."""
        while True:
            rest = self._buffer[self._pos :]
            if rest.strip(b"\0"):
                raise TarError(
                    "archive.trailing_data",
                    "(archive)",
                    "there are bytes after the tar end-of-archive marker",
                )
            self._buffer, self._pos = b"", 0
            if not self._fill():
                return


def _octal(value: int, width: int) -> bytes:
    return b"%0*o\0" % (width - 1, value)


def _ustar(name: bytes, kind: bytes, size: int, mtime: int, mode: int) -> bytes:
    block = b"".join(
        (
            name.ljust(100, b"\0"),
            _octal(mode, 8),
            _octal(0, 8),  # uid
            _octal(0, 8),  # gid
            _octal(size, 12),
            _octal(mtime, 12),
            b" " * 8,  # checksum, counted as spaces
            kind,
            bytes(100),  # link name
            b"ustar\x0000",
            bytes(32 + 32 + 8 + 8 + 155 + 12),  # user, group, device numbers, prefix, pad
        )
    )
    checksum = b"%06o\0 " % _byte_sum(block)
    return block[:148] + checksum + block[156:]


def _pax_record(key: str, value: str) -> bytes:
    body = f" {key}={value}\n".encode()
    length = len(body) + len(str(len(body)))
    if len(str(length)) != len(str(len(body))):
        length += 1
    return str(length).encode() + body


# The fields of a regular file's ustar header around its name, size and time stamp: mode
# 0644, owner and group 0 (before the size), then the type, no link name, the magic and
# zeros; with their byte sums (the checksum counts its own field as eight spaces).
_FILE_MODE = _octal(0o644, 8) + _octal(0, 8) + _octal(0, 8)
_FILE_TAIL = REGULAR[0] + bytes(100) + b"ustar\x0000" + bytes(32 + 32 + 8 + 8 + 155 + 12)
_FILE_FIXED_SUM = sum(_FILE_MODE) + sum(b" " * 8) + sum(_FILE_TAIL)


def file_header(name: str, size: int, mtime: int) -> bytes:
    """The header block(s) of a regular file: plain ustar when the name is ASCII and fits
    in 100 bytes and the size below 8 GiB, else preceded by a pax header."""
    if size <= MAX_USTAR_SIZE and len(name) <= 100 and name.isascii():
        # the usual member, in one join: what ``_ustar`` writes for it (sums in C: a
        # field of at most 100 bytes sums below Adler-32's modulus)
        raw = name.encode("ascii")
        size_field, time_field = _octal(size, 12), _octal(mtime, 12)
        checksum = (
            _FILE_FIXED_SUM
            + (adler32(raw) & 0xFFFF)
            + (adler32(size_field) & 0xFFFF)
            + (adler32(time_field) & 0xFFFF)
            - 3
        )
        return b"".join(
            (
                raw.ljust(100, b"\0"),
                _FILE_MODE,
                size_field,
                time_field,
                b"%06o\0 " % checksum,
                _FILE_TAIL,
            )
        )
    records = b""
    ascii_name = name.encode("ascii", "replace")
    if not name.isascii() or len(ascii_name) > 100:
        records += _pax_record("path", name)
    if size > MAX_USTAR_SIZE:
        records += _pax_record("size", str(size))
    head = _ustar(ascii_name[:100], REGULAR[0], size if size <= MAX_USTAR_SIZE else 0, mtime, 0o644)
    if not records:
        return head
    pax = _ustar(b"././@PaxHeader", PAX, len(records), 0, 0)
    return pax + records + bytes(-len(records) % BLOCK) + head


def end_of_archive(written: int) -> bytes:
    """Two zero blocks, then zeros up to the next whole record, after ``written`` bytes."""
    return bytes(2 * BLOCK + -(written + 2 * BLOCK) % RECORD)
