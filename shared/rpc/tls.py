"""TLS for the door and the services: a development CA made on first use, and gRPC credentials.

`stammtisch up` makes a CA and a server certificate for localhost, 127.0.0.1 and its bind host
in its data folder (kept across restarts, keys readable by their owner only), so a phone or the
SDK can trust one file during development. Production passes its own certificate and key files.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: How long the development certificates last (a server cert is made again when it lacks a host).
DEV_VALIDITY = datetime.timedelta(days=825)


@dataclass(frozen=True)
class CertificateFiles:
    """A server certificate chain and its key (PEM files), and the CA certificate clients trust."""

    cert: Path
    key: Path
    ca: Path


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to a file only its owner may read (created so, never widened)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as sink:
        sink.write(data)
    os.chmod(path, 0o600)


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Stammtisch development"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(hosts: Iterable[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def _make_ca(folder: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(_name("Stammtisch development CA"))
            .issuer_name(_name("Stammtisch development CA")).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + DEV_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                           critical=True)
            .sign(key, hashes.SHA256()))
    _write_private(folder / "ca.key", _key_pem(key))
    (folder / "ca.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def issue_server_cert(ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
                      hosts: Iterable[str], cert_path: Path, key_path: Path) -> None:
    """Sign a new server certificate (and key) for ``hosts`` with the CA into the two files."""
    key = _new_key()
    now = datetime.datetime.now(datetime.UTC)
    hosts = list(hosts)
    cert = (x509.CertificateBuilder().subject_name(_name(hosts[0])).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + DEV_VALIDITY)
            .add_extension(x509.SubjectAlternativeName(_san(hosts)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write_private(key_path, _key_pem(key))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _covers(cert_path: Path, hosts: Iterable[str]) -> bool:
    """The certificate exists, is valid for a while yet and names every host."""
    if not cert_path.exists():
        return False
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    if cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC) < datetime.timedelta(days=7):
        return False
    names = set(cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    return set(_san(hosts)) <= names


def development_certificates(folder: Path, hosts: Iterable[str]) -> CertificateFiles:
    """The development CA and a server certificate for localhost, 127.0.0.1 and ``hosts`` in
    ``folder``: made on first use, reused after (the CA a phone trusts stays the same); a server
    certificate that lacks a host or is about to expire is issued again."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    files = CertificateFiles(folder / "server.crt", folder / "server.key", folder / "ca.crt")
    if (folder / "ca.crt").exists() and (folder / "ca.key").exists():
        ca_cert = x509.load_pem_x509_certificate(files.ca.read_bytes())
        ca_key = serialization.load_pem_private_key((folder / "ca.key").read_bytes(), None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    else:
        ca_cert, ca_key = _make_ca(folder)
    wanted = ["localhost", "127.0.0.1", *(host for host in hosts if host not in ("0.0.0.0", "::"))]
    if not _covers(files.cert, wanted) or not files.key.exists():
        issue_server_cert(ca_cert, ca_key, wanted, files.cert, files.key)
    return files


def certificate_name(cert: Path) -> str:
    """The first host name a certificate is for (its first DNS name, else its common name)."""
    loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    with contextlib.suppress(x509.ExtensionNotFound):
        names = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns = names.get_values_for_type(x509.DNSName)
        if dns:
            return dns[0]
    common = loaded.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(common[0].value) if common else "localhost"


def file_stamps(*paths: Path) -> tuple[tuple[int, int], ...]:
    """When and how large each file is now (a renewal changes it)."""
    stamps = []
    for path in paths:
        try:
            found = path.stat()
            stamps.append((found.st_mtime_ns, found.st_size))
        except OSError:
            stamps.append((0, 0))
    return tuple(stamps)


def server_credentials(cert: Path, key: Path) -> grpc.ServerCredentials:
    """Credentials of a gRPC server that answers over TLS with this certificate chain and key; a
    renewed pair of files is used from the next handshake on (open connections keep theirs)."""
    seen = [file_stamps(cert, key)]

    def configuration() -> grpc.ServerCertificateConfiguration:
        return grpc.ssl_server_certificate_configuration([(key.read_bytes(), cert.read_bytes())])

    def renewed() -> grpc.ServerCertificateConfiguration | None:
        now = file_stamps(cert, key)
        if now == seen[0] or not all(size for _, size in now):
            return None
        try:
            fresh = configuration()
        except OSError:  # half-written: next handshake
            return None
        seen[0] = now
        return fresh

    return grpc.dynamic_ssl_server_credentials(configuration(), renewed)


def channel_credentials(ca: Path | bytes | None = None) -> grpc.ChannelCredentials:
    """Credentials of a TLS channel that trusts ``ca`` (a PEM file or its bytes; None: the
    system's roots, for a certificate from a public CA)."""
    roots = ca.read_bytes() if isinstance(ca, Path) else ca
    return grpc.ssl_channel_credentials(root_certificates=roots)
