"""Tokens: standard JWTs, refused when tampered, expired, oddly shaped or of an unknown secret;
rotation; rate limiting."""

from __future__ import annotations

import json
import math
import secrets
import time
from typing import Any

import grpc
import jwt
import pytest
from google.protobuf import descriptor_pool
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.api.stammtisch.v1 import accounts_pb2, lobby_pb2  # noqa: F401 - register the services
from shared.ids import new_player_id
from shared.rpc.auth import TokenSigner, bearer_token, check_secret, key_id
from shared.rpc.errors import ServiceError
from shared.rpc.interceptors import RateLimiter
from shared.rpc.login_limits import LIMITED_PREFIXES, peer_host

SECRET = secrets.token_urlsafe(32)
PLAYER = new_player_id()


def _signed(claims: dict[str, Any], secret: str = SECRET, **headers: Any) -> str:
    """A token signed with ``secret`` and the claims exactly as given (kid: the secret's)."""
    return jwt.encode(claims, secret, algorithm="HS256", headers={"kid": key_id(secret), **headers})


def _refused(signer: TokenSigner, token: str) -> str:
    with pytest.raises(ServiceError) as info:
        signer.verify(token)
    assert info.value.code == grpc.StatusCode.UNAUTHENTICATED
    return info.value.message


def _claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"sub": PLAYER, "name": "Anna", "iat": now, "exp": now + 60, **changes}


def test_issued_token_is_a_standard_jwt_that_verifies_to_the_same_player() -> None:
    signer = TokenSigner(SECRET, 60)
    token, identity = signer.issue(PLAYER, "Anna", now=1000.0)
    assert signer.verify(token, now=1010.0) == identity
    assert identity.expires_at == 1060.0
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "HS256" and header["kid"] == key_id(SECRET)
    claims = jwt.decode(token, SECRET, algorithms=["HS256"], options={"verify_exp": False})
    assert claims == {"sub": PLAYER, "name": "Anna", "iat": 1000, "exp": 1060}


def test_the_kid_is_a_short_fingerprint_not_the_secret() -> None:
    kid = key_id(SECRET)
    assert len(kid) == 16 and SECRET not in kid and kid != key_id(SECRET + "x")


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),
    lambda t: "x" + t,
    lambda t: t.split(".")[0],
    lambda t: "",
    lambda t: "a.b.c",
])
def test_tampered_tokens_are_unauthenticated(mangle: Any) -> None:
    signer = TokenSigner(SECRET, 60)
    token, _ = signer.issue(PLAYER, "Anna")
    _refused(signer, mangle(token))


def test_token_of_another_secret_is_refused_with_or_without_our_kid() -> None:
    signer = TokenSigner(SECRET, 60)
    other = secrets.token_urlsafe(32)
    _refused(signer, _signed(_claims(), other))
    _refused(signer, _signed(_claims(), other, kid=key_id(SECRET)))
    _refused(signer, jwt.encode(_claims(), other, algorithm="HS256"))


def test_expired_token_is_refused_also_after_it_was_verified_once() -> None:
    signer = TokenSigner(SECRET, 60)
    token, _ = signer.issue(PLAYER, "Anna", now=1000.0)
    assert "expired" in _refused(signer, token)
    fresh, identity = signer.issue(PLAYER, "Anna")
    assert signer.verify(fresh) == identity
    with pytest.raises(ServiceError, match="expired"):
        signer.verify(fresh, now=identity.expires_at + 31)


@pytest.mark.parametrize("exp", [math.nan, math.inf, -math.inf, "99999999999", None, True, [1], {}])
def test_exp_must_be_a_finite_number(exp: Any) -> None:
    token = _signed(_claims(exp=exp))
    if isinstance(exp, float) and not math.isfinite(exp):
        assert any(word in token_payload(token) for word in ("NaN", "Infinity"))
    _refused(TokenSigner(SECRET, 60), token)


def token_payload(token: str) -> str:
    """The JSON text of a token's payload."""
    return jwt.api_jws.base64url_decode(token.split(".")[1]).decode()


@pytest.mark.parametrize("missing", ["sub", "exp", "iat"])
def test_sub_exp_and_iat_are_required(missing: str) -> None:
    claims = _claims()
    del claims[missing]
    _refused(TokenSigner(SECRET, 60), _signed(claims))


@pytest.mark.parametrize("sub", ["", " ", "x" * 5000, PLAYER + "\r\n", PLAYER.upper(), "a b", "p1",
                                 PLAYER[:31] + "*", 12345, None])
def test_a_subject_that_is_not_a_player_id_is_refused(sub: Any) -> None:
    _refused(TokenSigner(SECRET, 60), _signed(_claims(sub=sub)))


def test_tokens_from_the_future_and_odd_names_are_refused() -> None:
    signer = TokenSigner(SECRET, 60)
    _refused(signer, _signed(_claims(iat=int(time.time()) + 3600)))
    _refused(signer, _signed(_claims(name=["Anna"])))


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
def test_other_algorithms_are_refused_even_with_the_right_secret() -> None:
    signer = TokenSigner(SECRET, 60)
    _refused(signer, jwt.encode(_claims(), SECRET, algorithm="HS512", headers={"kid": key_id(SECRET)}))
    unsigned = jwt.encode(_claims(), None, algorithm="none", headers={"kid": key_id(SECRET)})
    _refused(signer, unsigned)


def test_rotation_accepts_the_previous_secret_until_it_is_rotated_out() -> None:
    old, new, newest = (secrets.token_urlsafe(32) for _ in range(3))
    token, identity = TokenSigner(old, 60).issue(PLAYER, "Anna")
    rotated = TokenSigner(new, 60, previous=old)
    assert rotated.verify(token) == identity
    fresh, _ = rotated.issue(PLAYER, "Anna")
    assert jwt.get_unverified_header(fresh)["kid"] == key_id(new)
    again = TokenSigner(newest, 60, previous=new)
    _refused(again, token)
    assert again.verify(fresh).player_id == PLAYER


@pytest.mark.parametrize("secret", ["", "short", "x" * 31])
def test_short_secrets_are_refused(secret: str) -> None:
    with pytest.raises(ValueError, match="STAMMTISCH_TOKEN_SECRET must be at least 32 bytes"):
        check_secret(secret)
    with pytest.raises(ValueError, match="STAMMTISCH_TOKEN_SECRET_PREVIOUS"):
        TokenSigner(SECRET, 60, previous=secret or "x")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_as_a_token_is_unauthenticated(text: str) -> None:
    _refused(TokenSigner(SECRET, 60), text)


_JSON = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=40),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                  max_size=3),
                     max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["sub", "exp", "iat", "name", "nbf", "aud", "iss", "jti"]), _JSON),
       st.dictionaries(st.sampled_from(["kid", "alg", "typ", "crit", "b64"]), _JSON))
@pytest.mark.slow
def test_validly_signed_odd_claims_and_headers_give_an_identity_or_unauthenticated(
        claims: dict[str, Any], headers: dict[str, Any]) -> None:
    try:
        token = jwt.encode(claims, SECRET, algorithm="HS256", headers={"kid": key_id(SECRET), **headers})
    except (jwt.PyJWTError, TypeError, ValueError, NotImplementedError):
        return  # PyJWT would not make this token; nothing to verify
    signer = TokenSigner(SECRET, 60)
    try:
        identity = signer.verify(token)
    except ServiceError as err:
        assert err.code == grpc.StatusCode.UNAUTHENTICATED
    else:
        assert identity.player_id == claims["sub"] and math.isfinite(json.loads(json.dumps(claims["exp"])))


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


def test_rate_limiter_forgets_players_whose_bucket_has_refilled() -> None:
    limiter = RateLimiter(rate=2.0, burst=3.0)
    for index in range(1000):
        assert limiter.allow(f"p{index}", now=index / 1000)
    assert len(limiter) <= 501, "a bucket is full again 0.5 s after its last call"
    limiter.allow("late", now=10.0)  # 1.5 s after the last, every old bucket is full again
    assert len(limiter) == 1


def test_rate_limiter_keeps_at_most_capacity_buckets_and_still_limits_the_busy_one() -> None:
    limiter = RateLimiter(rate=1.0, burst=2.0, capacity=10)
    for index in range(500):
        limiter.allow(f"p{index}", now=0.0)
        assert len(limiter) <= 10
    assert [limiter.allow("busy", now=0.0) for _ in range(3)] == [True, True, False]


def test_a_peer_is_its_address_without_the_port() -> None:
    assert peer_host("ipv4:10.0.0.7:51234") == "ipv4:10.0.0.7"
    assert peer_host("ipv6:[::1]:51234") == "ipv6:[::1]"
    assert peer_host("ipv6:%5B::1%5D:51234") == "ipv6:%5B::1%5D"
    assert peer_host("unix:/tmp/sock") == "unix:/tmp/sock"
    assert peer_host("") == ""


def test_the_login_limit_covers_exactly_the_token_less_stammtisch_calls_and_they_are_unary() -> None:
    """The limiter wraps unary handlers only; a token-less stream would need its own check."""
    pool = descriptor_pool.Default()
    limited = [(service.full_name, method) for prefix in LIMITED_PREFIXES
               for service in [pool.FindServiceByName(prefix.split("/")[1])]
               for method in service.methods if f"/{service.full_name}/{method.name}".startswith(prefix)]
    assert {f"{name}/{method.name}" for name, method in limited} == {
        "stammtisch.v1.LobbyService/Login", "stammtisch.v1.LobbyService/ListGames",
        "stammtisch.v1.AccountService/LoginDevice",
        "stammtisch.v1.AccountService/RefreshToken", "stammtisch.v1.AccountService/Logout"}
    assert not any(method.client_streaming or method.server_streaming for _, method in limited)
