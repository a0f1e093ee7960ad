"""Logins in server URLs, the login variables of the environment, and `up`'s credentials file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.config import Settings
from shared.infra.credentials import FILE_NAME, Login, local_logins, login_of, with_login, without_login


def test_a_login_rides_in_each_url_and_leaves_none_behind() -> None:
    login = Login("stamm tisch", "p@ss:w/rd%")
    urls = with_login("nats://a:4222, nats://old:pw@b:4222", login)
    assert login_of(urls) == login
    assert [login_of(one) for one in urls.split(",")] == [login, login]
    assert without_login(urls) == "nats://a:4222,nats://b:4222"
    assert "p@ss" not in without_login(urls)
    assert login_of("redis://127.0.0.1:6379/0") is None
    assert with_login("redis://h:1/0", Login("", "pw")) == "redis://:pw@h:1/0"


def test_the_login_variables_go_into_the_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://user:old@redis:6379/0")
    monkeypatch.setenv("STAMMTISCH_REDIS_PASSWORD", "from-a-secret")
    monkeypatch.setenv("NATS_URL", "nats://a:4222,nats://b:4222")
    monkeypatch.setenv("STAMMTISCH_NATS_USER", "stammtisch")
    monkeypatch.setenv("STAMMTISCH_NATS_PASSWORD", "n@ts")
    settings = Settings.from_env()
    assert login_of(settings.redis_url) == Login("", "from-a-secret")  # the variables win
    assert without_login(settings.redis_url) == "redis://redis:6379/0"
    assert [login_of(url) for url in settings.nats_servers] == [Login("stammtisch", "n@ts")] * 2


def test_a_url_keeps_its_own_login_when_no_variable_gives_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://app:secret@redis:6379/0")
    for name in ("STAMMTISCH_REDIS_USERNAME", "STAMMTISCH_REDIS_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    assert login_of(Settings.from_env().redis_url) == Login("app", "secret")


def test_a_user_without_a_password_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAMMTISCH_NATS_USER", "stammtisch")
    monkeypatch.delenv("STAMMTISCH_NATS_PASSWORD", raising=False)
    with pytest.raises(ValueError, match="STAMMTISCH_NATS_PASSWORD is not"):
        Settings.from_env()


def test_up_makes_its_credentials_once_owner_only(tmp_path: Path) -> None:
    first = local_logins(tmp_path)
    path = tmp_path / FILE_NAME
    assert path.stat().st_mode & 0o777 == 0o600
    assert local_logins(tmp_path) == first  # reused, not made again
    assert first.redis.password != first.nats.password and len(first.nats.password) >= 32
    assert json.loads(path.read_text())["nats"]["username"] == first.nats.username
