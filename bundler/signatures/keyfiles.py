"""Key files on the signer's disk: a new key pair written safely, a private key read back.

The private key file is created mode 0600 and never replaces an existing file (nor
follows a link in its place); the public key is written beside it (``NAME.pub``, 0644) to
hand to reviewers. ``signing`` stays pure; the reading and writing of key files is here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bundler.errors import UsageError, os_reason
from bundler.signatures.signing import (
    PublicKey,
    SignatureProblem,
    load_private_key,
    new_private_key,
    private_key_is_encrypted,
    private_key_pem,
    public_of,
)

PRIVATE_SUFFIX = ".key"
PUBLIC_SUFFIX = ".pub"
MAX_PRIVATE_KEY_FILE = 64 << 10
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW

# A passphrase, or a function asked for it only once it is needed (after every check, so
# that nobody types a passphrase for a key that would be refused anyway). None: no passphrase.
Passphrase = bytes | Callable[[], bytes | None] | None


@dataclass(frozen=True)
class KeyPair:
    """The files ``write_key_pair`` made, and the public key (its key id, its text)."""

    private_path: Path
    public_path: Path
    public: PublicKey


def key_pair_paths(name: str, out_dir: Path) -> tuple[Path, Path]:
    """``NAME.key`` and ``NAME.pub`` in ``out_dir``. Raises ``UsageError`` for a name that
    is not a plain file name."""
    if not name or "/" in name or name.startswith("."):
        raise UsageError(f"key name {name!r} must be a plain file name")
    return out_dir / f"{name}{PRIVATE_SUFFIX}", out_dir / f"{name}{PUBLIC_SUFFIX}"


def write_key_pair(name: str, out_dir: Path, passphrase: Passphrase) -> KeyPair:
    """A new Ed25519 key pair written to ``out_dir`` (made if missing): the private key
    (encrypted with ``passphrase`` unless None) mode 0600, the public key beside it.
    Refuses to overwrite either file and an empty passphrase. Raises ``UsageError``."""
    out_dir = Path(out_dir)
    private_path, public_path = key_pair_paths(name, out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(
            f"{out_dir} exists and is not a folder; give a folder for the keys"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot make the folder {out_dir}: {os_reason(exc)}") from None
    for path in (private_path, public_path):
        if path.exists() or path.is_symlink():
            raise UsageError(f"{path} exists; refusing to overwrite a key")
    secret = passphrase() if callable(passphrase) else passphrase
    if secret == b"":
        raise UsageError("an empty passphrase; use --no-passphrase to mean no passphrase")
    key = new_private_key()
    public = public_of(key)
    try:
        fd = os.open(private_path, _NEW_FILE, 0o600)
        with os.fdopen(fd, "wb") as stream:
            stream.write(private_key_pem(key, secret))
        fd = os.open(public_path, _NEW_FILE, 0o644)
        with os.fdopen(fd, "w", encoding="ascii") as text:
            text.write(public.pem())
    except FileExistsError as exc:  # made by someone else since the check above
        raise UsageError(f"{exc.filename} exists; refusing to overwrite a key") from None
    except OSError as exc:
        raise UsageError(f"cannot write a key into {out_dir}: {os_reason(exc)}") from None
    return KeyPair(private_path, public_path, public)


def read_private_key(path: Path, passphrase: Passphrase = None) -> Ed25519PrivateKey:
    """The private key in ``path`` (made by ``write_key_pair`` or ``reprobundle keygen``);
    ``passphrase`` is used (or asked for) only when the key is encrypted. Raises
    ``UsageError`` naming the file."""
    from bundler.files import read_bounded  # (a FIFO is refused, not waited on)

    path = Path(path)
    data = read_bounded(path, MAX_PRIVATE_KEY_FILE, "key")
    if len(data) > MAX_PRIVATE_KEY_FILE:
        raise UsageError(f"key {path} is larger than {MAX_PRIVATE_KEY_FILE} bytes")
    secret = None
    if private_key_is_encrypted(data):
        secret = passphrase() if callable(passphrase) else passphrase
    try:
        return load_private_key(data, secret)
    except SignatureProblem as exc:
        raise UsageError(f"cannot use key {path}", [exc.problem(str(path))]) from None
