"""Accounts' wiring: the AccountService, hosted by the lobby process (see services/lobby/service.py)."""

from __future__ import annotations

import grpc

from services.accounts.devices import Accounts
from services.accounts.privacy import PlayerData
from services.accounts.servicer import AccountServicer
from services.accounts.sessions import Sessions
from services.clubs.privacy import ClubsData
from services.history.store import ArchiveStore
from services.host.base import Part
from services.scoring.store import ScoreStore
from shared.api.stammtisch.v1 import accounts_pb2_grpc
from shared.infra.runtime import Runtime


class AccountsPart(Part):
    """Device logins, refresh tokens and names; a player's data export and deletion reach into
    history's archive and scoring's standings."""

    full_name = "stammtisch.v1.AccountService"

    def __init__(self, runtime: Runtime, archive: ArchiveStore) -> None:
        self.runtime = runtime
        self.archive = archive

    def register(self, server: grpc.aio.Server) -> None:
        sessions = Sessions(self.runtime, self.runtime.settings.refresh_ttl_seconds)
        data = PlayerData(Accounts(self.runtime), sessions, self.archive, ScoreStore(self.runtime),
                          ClubsData(self.runtime))
        accounts_pb2_grpc.add_AccountServiceServicer_to_server(AccountServicer(self.runtime, data), server)
