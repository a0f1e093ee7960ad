"""Production certificates: the door serves the configured files and picks up a renewal without
dropping live streams; the services can answer over TLS themselves, the door in front of them."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import ssl
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from services.host.healthcheck import check
from shared.config import Settings
from shared.rpc.tls import development_certificates, issue_server_cert
from shared.sdk.client import Endpoints, StammtischClient
from tests.support.door import door_in_front
from tests.support.stack import close_all, play_one, seated_players

pytestmark = pytest.mark.integration


def _renew(ca_folder: Path, cert: Path, key: Path) -> None:
    """Issue a new certificate for 127.0.0.1 with the CA and put it in place as a renewal tool
    does (written aside, then renamed over the old files)."""
    ca_cert = x509.load_pem_x509_certificate((ca_folder / "ca.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((ca_folder / "ca.key").read_bytes(), None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    issue_server_cert(ca_cert, ca_key, ["127.0.0.1", "localhost"], cert.with_suffix(".new-crt"),
                      key.with_suffix(".new-key"))
    os.replace(key.with_suffix(".new-key"), key)
    os.replace(cert.with_suffix(".new-crt"), cert)


def _served_certificate(address: str, ca: str) -> bytes:
    host, port = address.rsplit(":", 1)
    pem = ssl.get_server_certificate((host, int(port)), ca_certs=ca)
    return x509.load_pem_x509_certificate(pem.encode()).public_bytes(serialization.Encoding.DER)


def _der(path: Path) -> bytes:
    return x509.load_pem_x509_certificate(path.read_bytes()).public_bytes(serialization.Encoding.DER)


async def test_a_renewed_certificate_is_served_and_open_streams_go_on(
        settings: Settings, tmp_path: Path) -> None:
    issued = development_certificates(tmp_path / "ca", ["127.0.0.1"])
    live = tmp_path / "live"
    live.mkdir()
    cert, key = live / "server.crt", live / "server.key"
    cert.write_bytes(issued.cert.read_bytes())
    key.write_bytes(issued.key.read_bytes())
    async with door_in_front(settings, tmp_path / "stack", tls_cert=str(cert), tls_key=str(key),
                             tls_ca=str(issued.ca)) as opened:
        assert opened.door.ca == str(issued.ca)
        before = _served_certificate(opened.address, opened.door.ca)
        assert before == _der(cert)
        clients, table_id = await seated_players(opened.endpoints, "willi", 4, turn_seconds=0)
        try:
            # Subscribe without resuming: a stream the reload dropped would end this test.
            stream = clients[0].updates(table_id, reconnect=False)
            first = await asyncio.wait_for(anext(stream), 10)
            _renew(tmp_path / "ca", cert, key)
            for _ in range(100):
                if opened.door.reloads and _served_certificate(opened.address, opened.door.ca) != before:
                    break
                await asyncio.sleep(0.1)
            assert _served_certificate(opened.address, opened.door.ca) == _der(cert) != before
            seq, *_ = await play_one(clients, table_id, "willi", random.Random(1))
            later = await asyncio.wait_for(anext(stream), 10)
            while later.seq < seq:
                later = await asyncio.wait_for(anext(stream), 10)
            assert later.seq == seq > first.seq
            await stream.aclose()
            async with StammtischClient(opened.endpoints) as newcomer:
                assert await newcomer.games()
        finally:
            await close_all(clients)


async def test_the_services_answer_over_tls_and_the_door_talks_tls_to_them(
        settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with door_in_front(settings, tmp_path, service_tls=True) as opened:
        conf = (tmp_path / "door" / "conf" / "nginx.conf").read_text()
        assert "grpc_pass grpcs://lobby;" in conf
        clients, table_id = await seated_players(opened.endpoints, "willi", 4, turn_seconds=0)
        try:
            await play_one(clients, table_id, "willi", random.Random(2))
        finally:
            await close_all(clients)
        ports = {item.service.name: item.port for item in opened.running}
        plain = Endpoints.on_host("127.0.0.1", ports)
        async with StammtischClient(plain) as stranger:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await asyncio.wait_for(stranger.games(), 10)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        direct = dataclasses.replace(plain, tls=True, root_certificates=Path(opened.door.ca).read_bytes())
        async with StammtischClient(direct) as client:
            assert await client.games()
        lobby = f"127.0.0.1:{ports['lobby']}"
        assert not await asyncio.to_thread(check, "lobby", lobby), "a plaintext probe gets no answer"
        monkeypatch.setenv("STAMMTISCH_SERVICE_TLS", "1")
        monkeypatch.setenv("STAMMTISCH_TLS_CERT", opened.settings.tls_cert)
        monkeypatch.setenv("STAMMTISCH_TLS_CA", opened.door.ca)
        assert await asyncio.to_thread(check, "lobby", lobby)
