"""Tokens: issued, verified, refused when tampered or expired; rate limiting."""

from __future__ import annotations

import grpc
import pytest

from shared.rpc.auth import TokenSigner, bearer_token
from shared.rpc.errors import ServiceError
from shared.rpc.interceptors import RateLimiter


def test_issued_token_verifies_to_the_same_player() -> None:
    signer = TokenSigner("s3cret", 60)
    token, identity = signer.issue("p1", "Anna", now=1000.0)
    assert signer.verify(token, now=1010.0) == identity
    assert identity.expires_at == 1060.0


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),
    lambda t: "x" + t,
    lambda t: t.split(".")[0],
    lambda t: "",
])
def test_tampered_tokens_are_unauthenticated(mangle: object) -> None:
    signer = TokenSigner("s3cret", 60)
    token, _ = signer.issue("p1", "Anna")
    with pytest.raises(ServiceError) as info:
        signer.verify(mangle(token))  # type: ignore[operator]
    assert info.value.code == grpc.StatusCode.UNAUTHENTICATED


def test_token_of_another_secret_is_refused() -> None:
    token, _ = TokenSigner("a", 60).issue("p1", "Anna")
    with pytest.raises(ServiceError):
        TokenSigner("b", 60).verify(token)


def test_expired_token_is_refused() -> None:
    signer = TokenSigner("s3cret", 60)
    token, _ = signer.issue("p1", "Anna", now=1000.0)
    with pytest.raises(ServiceError, match="expired"):
        signer.verify(token, now=1061.0)


def test_bearer_token_reads_authorization_metadata() -> None:
    assert bearer_token((("x", "y"), ("authorization", "Bearer abc"))) == "abc"
    assert bearer_token((("authorization", "Basic abc"),)) is None
    assert bearer_token(None) is None


def test_rate_limiter_allows_bursts_then_refills() -> None:
    limiter = RateLimiter(rate=2.0, burst=3.0)
    assert [limiter.allow("p", now=0.0) for _ in range(4)] == [True, True, True, False]
    assert limiter.allow("p", now=0.5)
    assert not limiter.allow("p", now=0.5)
    assert limiter.allow("other", now=0.5)
