"""A local HTTP server on 127.0.0.1 that serves a bundle, and misbehaves on request.

Paths: ``/b/NAME`` serves the bundle; ``/longer`` declares more bytes than it sends (and
closes); ``/shorter`` declares fewer than it sends; ``/to-https`` and ``/to-file`` redirect
to another scheme; ``/loop`` redirects to itself; ``/hop`` redirects to ``/b/NAME``;
``/stall`` never answers (until the server stops: bounded, it ends by itself);
``/huge-declared`` declares a length past any small cap; ``/huge`` streams ``huge_bytes``
bytes with no length; ``/missing`` is a 404. Every request is counted (``hits``), so a
test can show that a second verification did not reach the network.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

STALL_BOUND = 60.0  # a stalled answer ends when the server stops, or after this at most


@dataclass
class Served:
    bundle: bytes
    name: str
    huge_bytes: int = 1 << 20
    hits: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    scheme: str = "http"

    def url(self, path: str = "") -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path or '/b/' + self.name}"


def _handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes, length: int | None, **headers: str) -> None:
            self.send_response(status)
            if length is not None:
                self.send_header("Content-Length", str(length))
            for key, value in headers.items():
                self.send_header(key.replace("_", "-"), value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def _redirect(self, target: str) -> None:
            self._send(302, b"", 0, Location=target)

        def do_GET(self) -> None:
            served.hits.append(self.path)
            bundle = served.bundle
            path = self.path
            if path == f"/b/{served.name}":
                self._send(200, bundle, len(bundle))
            elif path == "/longer":
                self._send(200, bundle, len(bundle) + 100)
            elif path == "/shorter":
                self._send(200, bundle, len(bundle) - 100)
            elif path == "/to-https":
                self._redirect(f"https://127.0.0.1:{served.port}/b/{served.name}")
            elif path == "/to-file":
                self._redirect("file:///etc/passwd")
            elif path == "/loop":
                self._redirect("/loop")
            elif path == "/hop":
                self._redirect(f"/b/{served.name}")
            elif path == "/stall":
                served.release.wait(STALL_BOUND)
            elif path == "/huge-declared":
                self._send(200, b"", 1 << 40)
            elif path == "/huge":
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                piece = bytes(1 << 16)
                for _ in range(served.huge_bytes // len(piece) + 1):
                    self.wfile.write(piece)
                self.close_connection = True
            else:
                self._send(404, b"not here", 8)

    return Handler


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that no machine trusts, and its key (PEM files)."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "server.pem", folder / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@contextmanager
def serving(bundle: bytes, name: str, tls: tuple[Path, Path] | None = None) -> Iterator[Served]:
    """The server, running on a thread until the block ends (https with ``tls``: a
    certificate and key)."""
    served = Served(bundle, name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    server.daemon_threads = True
    if tls is not None:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        served.scheme = "https"
    served.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="bundle-server", daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.release.set()
        server.shutdown()
        server.server_close()
        thread.join(STALL_BOUND)
