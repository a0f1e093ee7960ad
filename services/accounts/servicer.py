"""AccountService: device logins, refresh tokens, display names, and a player's own data.

The player id is the identity; a display name is only a label (not unique,
changeable). Device logins get short access tokens (``STAMMTISCH_TOKEN_TTL``,
15 minutes by default) and a refresh token; guests keep the lobby's Login.
"""

from __future__ import annotations

import json

import grpc

from services.accounts.devices import Accounts
from services.accounts.privacy import PlayerData
from services.accounts.sessions import Refresh, Sessions
from shared.api.stammtisch.v1 import accounts_pb2, accounts_pb2_grpc
from shared.infra.runtime import Runtime
from shared.rpc.auth import TokenSigner, caller
from shared.rpc.errors import ServiceError, invalid, precondition
from shared.rpc.times import timestamp

MAX_NAME = 24
DEFAULT_NAME = "Player"


def check_display_name(name: str) -> str:
    """A display name of 1 to 24 printable characters (surrounding space removed)."""
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise invalid(f"display_name must be 1 to {MAX_NAME} printable characters")
    return name


def _printable_ascii(value: str, what: str, low: int, high: int) -> str:
    if not low <= len(value) <= high or not all("!" <= ch <= "~" for ch in value):
        raise invalid(f"{what} must be {low} to {high} printable ASCII characters without spaces")
    return value


class AccountServicer(accounts_pb2_grpc.AccountServiceServicer):
    """The accounts side of the lobby (served on its port)."""

    def __init__(self, runtime: Runtime, data: PlayerData) -> None:
        settings = runtime.settings
        self.signer = TokenSigner.from_settings(settings)
        self.accounts: Accounts = data.accounts
        self.sessions: Sessions = data.sessions
        self.data = data
        self.guest_ttl = settings.guest_token_ttl_seconds

    async def LoginDevice(self, request: accounts_pb2.LoginDeviceRequest,
                          context: grpc.aio.ServicerContext) -> accounts_pb2.LoginDeviceResponse:
        """The device's player (made on first use), an access token and a refresh token."""
        device_id = _printable_ascii(request.device_id, "device_id", 8, 128)
        secret = _printable_ascii(request.device_secret, "device_secret", 16, 256)
        name = check_display_name(request.display_name) if request.display_name.strip() else DEFAULT_NAME
        login = await self.accounts.login(device_id, secret, name)
        token, identity = self.signer.issue(login.player_id, login.name)
        refresh = await self.sessions.open(login.player_id)
        return accounts_pb2.LoginDeviceResponse(
            token=token, player_id=login.player_id, expires_at=timestamp(identity.expires_at),
            refresh_token=refresh.token, refresh_expires_at=timestamp(refresh.expires_at),
            display_name=login.name, created=login.created)

    async def RefreshToken(self, request: accounts_pb2.RefreshTokenRequest,
                           context: grpc.aio.ServicerContext) -> accounts_pb2.RefreshTokenResponse:
        """Use up a refresh token for a new access token and the next refresh token."""
        refresh = await self.sessions.rotate(request.refresh_token)
        token, expires_at = await self._access(refresh)
        return accounts_pb2.RefreshTokenResponse(
            token=token, player_id=refresh.player_id, expires_at=timestamp(expires_at),
            refresh_token=refresh.token, refresh_expires_at=timestamp(refresh.expires_at))

    async def _access(self, refresh: Refresh) -> tuple[str, float]:
        name = await self.accounts.name(refresh.player_id)
        if not name:  # the account was deleted after the token was made
            raise ServiceError(grpc.StatusCode.UNAUTHENTICATED, "this account no longer exists")
        token, identity = self.signer.issue(refresh.player_id, name)
        return token, identity.expires_at

    async def Logout(self, request: accounts_pb2.LogoutRequest,
                     context: grpc.aio.ServicerContext) -> accounts_pb2.LogoutResponse:
        """Revoke the login of a refresh token (or all of its player's); access tokens made
        before run out by themselves (at most STAMMTISCH_TOKEN_TTL later)."""
        await self.sessions.revoke(request.refresh_token, request.everywhere)
        return accounts_pb2.LogoutResponse()

    async def SetDisplayName(self, request: accounts_pb2.SetDisplayNameRequest,
                             context: grpc.aio.ServicerContext) -> accounts_pb2.SetDisplayNameResponse:
        """Rename the caller; the new token carries the name to the tables it joins from now on."""
        who = caller()
        name = check_display_name(request.display_name)
        if not await self.accounts.exists(who.player_id):
            raise precondition("this login has expired or its account was deleted; log in again")
        await self.accounts.rename(who.player_id, name)
        device = await self.accounts.is_device(who.player_id)
        token, identity = self.signer.issue(who.player_id, name,
                                            ttl_seconds=None if device else self.guest_ttl)
        return accounts_pb2.SetDisplayNameResponse(token=token, expires_at=timestamp(identity.expires_at))

    async def ExportMyData(self, request: accounts_pb2.ExportMyDataRequest,
                           context: grpc.aio.ServicerContext) -> accounts_pb2.ExportMyDataResponse:
        """Everything kept about the caller."""
        return accounts_pb2.ExportMyDataResponse(
            data_json=json.dumps(await self.data.export(caller().player_id), indent=2))

    async def DeleteMyAccount(self, request: accounts_pb2.DeleteMyAccountRequest,
                              context: grpc.aio.ServicerContext) -> accounts_pb2.DeleteMyAccountResponse:
        """Delete the caller's account; its seats in archived games are pseudonymised."""
        if not request.confirm:
            raise invalid("set confirm to delete the account")
        games = await self.data.delete(caller().player_id)
        return accounts_pb2.DeleteMyAccountResponse(games_pseudonymised=games)
