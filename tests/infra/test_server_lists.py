"""NATS_URL may list the servers of a NATS cluster, comma-separated."""

from __future__ import annotations

import socket

from shared.config import Settings
from shared.infra.local import answers, free_port


def test_nats_url_lists_every_server() -> None:
    settings = Settings(nats_url="nats://a:4222, nats://b:4222,nats://c:4222")
    assert settings.nats_servers == ["nats://a:4222", "nats://b:4222", "nats://c:4222"]
    assert Settings().nats_servers == [Settings.nats_url]


def test_a_server_list_answers_when_any_server_does() -> None:
    dead = f"nats://127.0.0.1:{free_port()}"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        live = f"nats://127.0.0.1:{listener.getsockname()[1]}"
        assert answers(f"{dead},{live}")
    assert not answers(f"{dead},{dead}")
