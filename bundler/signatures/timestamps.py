"""RFC 3161 time-stamps: a time-stamping authority's signed word that some bytes existed
at a time, checked against the authority's root certificates the caller trusts.

An archive's log shows that a pre-registration existed no later than its entry, on the
archive's own clock; a time-stamp token over the pre-registration's bytes shows it on a
third party's. Reading and checking use ``rfc3161-client`` (the optional ``timestamps``
extra: compiled, maintained, used by sigstore's Python client), imported only here and
only when a token is given. Pure: bytes in, a ``Stamp`` or ``TimestampProblem`` out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_TOKEN = 64 << 10  # a response with its certificates is a few KiB


class TimestampProblem(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Stamp:
    """What a checked token says: the time, the authority, the token's serial number."""

    time: str  # ISO 8601, UTC
    authority: str
    serial: int


def check(response: bytes, message: bytes, roots_pem: Sequence[bytes]) -> Stamp:
    """Check a time-stamp response (a ``.tsr`` file) over ``message`` against the root
    certificates in ``roots_pem``. Raises ``TimestampProblem``."""
    try:
        import rfc3161_client as tsp
        from cryptography import x509
    except ImportError:  # pragma: no cover (the test extra installs it)
        raise TimestampProblem(
            "timestamp.unavailable",
            "checking a time-stamp needs the optional rfc3161-client: "
            "pip install 'reprobundle[timestamps]'",
        ) from None
    if len(response) > MAX_TOKEN:
        raise TimestampProblem("timestamp.format", f"larger than {MAX_TOKEN} bytes")
    if not roots_pem:
        raise TimestampProblem(
            "timestamp.untrusted", "give the time-stamping authority's root certificate"
        )
    try:
        roots = [x509.load_pem_x509_certificate(pem) for pem in roots_pem]
    except ValueError as exc:
        raise TimestampProblem("timestamp.root", f"not a PEM certificate: {exc}") from None
    try:
        decoded = tsp.decode_timestamp_response(response)
    except Exception as exc:  # the decoder's errors are not one documented type
        raise TimestampProblem(
            "timestamp.format", f"not an RFC 3161 response: {str(exc)[:200]}"
        ) from None
    builder = tsp.VerifierBuilder()
    for root in roots:
        builder = builder.add_root_certificate(root)
    try:
        builder.build().verify_message(decoded, message)
    except tsp.VerificationError as exc:
        raise TimestampProblem("timestamp.invalid", str(exc)[:300]) from None
    except Exception as exc:  # malformed inside: never a traceback
        raise TimestampProblem(
            "timestamp.invalid", f"cannot be checked: {str(exc)[:200]}"
        ) from None
    info = decoded.tst_info
    when = info.gen_time
    named = getattr(info.name, "value", info.name)
    authority = named.rfc4514_string() if hasattr(named, "rfc4514_string") else str(named or "")
    return Stamp(
        when.strftime("%Y-%m-%dT%H:%M:%SZ") if when.tzinfo is None else when.isoformat(),
        authority,
        int(info.serial_number),
    )
