"""shared/rpc/tls.py: the development CA is made once and kept; the server certificate names
every host it must and is made again when one is missing; private keys are the owner's alone."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509

from shared.rpc.tls import certificate_name, development_certificates


def _names(cert: Path) -> set[str]:
    loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    names = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {*names.get_values_for_type(x509.DNSName),
            *(str(ip) for ip in names.get_values_for_type(x509.IPAddress))}


def test_the_ca_is_kept_and_a_new_host_gets_a_new_server_certificate(tmp_path: Path) -> None:
    first = development_certificates(tmp_path, ["127.0.0.1"])
    ca, cert = first.ca.read_bytes(), first.cert.read_bytes()
    again = development_certificates(tmp_path, ["127.0.0.1"])
    assert again.ca.read_bytes() == ca and again.cert.read_bytes() == cert
    assert _names(first.cert) == {"localhost", "127.0.0.1"}
    wider = development_certificates(tmp_path, ["10.1.2.3", "0.0.0.0"])
    assert wider.ca.read_bytes() == ca and wider.cert.read_bytes() != cert
    assert _names(wider.cert) == {"localhost", "127.0.0.1", "10.1.2.3"}
    issuer = x509.load_pem_x509_certificate(wider.cert.read_bytes()).issuer
    assert issuer == x509.load_pem_x509_certificate(ca).subject
    assert certificate_name(wider.cert) == "localhost"


def test_private_keys_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    files = development_certificates(tmp_path / "tls", ["127.0.0.1"])
    for key in (files.key, tmp_path / "tls" / "ca.key"):
        assert key.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "tls").stat().st_mode & 0o777 == 0o700
