"""Clubs and friends: the ClubsService over gRPC and the push outbox's deliverer.

Any number of replicas: every state is in Redis, and each replica's deliverer claims due
push jobs with a lease, so a killed replica's jobs go out from another.
"""

from __future__ import annotations

import grpc

from services.clubs.chat import Chat
from services.clubs.clubs import Clubs
from services.clubs.evenings import ClubEvenings
from services.clubs.friends import Friends
from services.clubs.inbox import Inbox
from services.clubs.keys import Keys
from services.clubs.limits import Limits
from services.clubs.push import Devices, Outbox
from services.clubs.ratings import ClubRatings, ClubResults
from services.clubs.servicer import ClubServicer
from services.clubs.tournament_news import TournamentNews
from services.clubs.turns import TurnNotifier
from services.host.base import Service
from services.lobby.players import PlayerNames
from services.lobby.tables import Lobby
from services.tournament.store import TournamentStore
from shared.api.stammtisch.v1 import clubs_pb2, clubs_pb2_grpc
from shared.infra.runtime import Runtime
from shared.obs.metrics import FRIEND_REQUESTS, NOTIFICATIONS_CREATED, PUSH_FAILED, PUSH_SENT, count_from_zero


class ClubsService(Service):
    """Friends, clubs, invitations, the inbox and push delivery."""

    name = "clubs"
    full_name = "stammtisch.v1.ClubsService"

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        keys = Keys(runtime)
        self.devices = Devices(keys)
        self.outbox = Outbox(keys, self.devices, runtime.settings.push_gateway_url)
        self.inbox = Inbox(keys, self.outbox)
        self.friends = Friends(keys)
        self.clubs = Clubs(keys)
        settings = runtime.settings
        self.turns = TurnNotifier(keys, self.inbox, settings.your_turn_delay_seconds,
                                  settings.notify_turn_seconds)
        names = PlayerNames(runtime)
        ratings = ClubRatings(keys)
        self.results = ClubResults(keys, ratings, self.clubs.season_of)
        self.tournament_news = TournamentNews(keys, self.inbox)
        self.evenings = ClubEvenings(keys, self.clubs, self.inbox, self.tournament_news, names, ratings,
                                     TournamentStore(runtime),
                                     settings.turn_seconds, settings.club_evening_notice_seconds)
        self.servicer = ClubServicer(self.friends, self.clubs, Chat(keys), self.inbox, self.devices,
                                     Limits(keys), names, Lobby(runtime), self.turns, self.evenings, ratings)

    def register(self, server: grpc.aio.Server) -> None:
        clubs_pb2_grpc.add_ClubsServiceServicer_to_server(self.servicer, server)

    async def start(self) -> None:
        """Follow the tables' and tournaments' news for reminders and inboxes, send them, and
        deliver push jobs (when a gateway is configured)."""
        kinds = [(name.removeprefix("NOTIFICATION_KIND_"),)
                 for name, value in clubs_pb2.NotificationKind.items()
                 if value != clubs_pb2.NOTIFICATION_KIND_UNSPECIFIED]
        count_from_zero(FRIEND_REQUESTS, [("sent",), ("accepted",), ("declined",)])
        count_from_zero(NOTIFICATIONS_CREATED, kinds)
        count_from_zero(PUSH_SENT, kinds)
        count_from_zero(PUSH_FAILED, [("gave_up",)])
        await self.turns.start()
        await self.tournament_news.start()
        await self.results.start()
        self.spawn(self.turns.send_forever(), "turns")
        self.spawn(self.turns.catch_up(), "turns-catch-up")
        self.spawn(self.evenings.run_forever(), "evenings")
        if self.outbox.gateway is not None:
            self.spawn(self.outbox.deliver_forever(), "push")

    async def stop(self) -> None:
        """Stop following news, then the background work."""
        await self.turns.stop()
        await self.tournament_news.stop()
        await super().stop()
        await self.results.stop()


def create(runtime: Runtime) -> Service:
    """Entry point for the runner."""
    return ClubsService(runtime)
