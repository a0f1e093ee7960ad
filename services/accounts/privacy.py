"""One player's data, exported or deleted on request (GDPR articles 15, 17 and 20).

Export: the account record, the devices (ids and times, never secrets or
their hashes), the finished games (summaries from the history index) and
the ratings (scoring's standings), and the friends, clubs, inbox and push devices
(services/clubs/privacy.py). Delete: the account, every device, every
refresh token (revoked), the history index; in each archived game the
player's seats get a pseudonym (a fresh random player id, the same in all of
that player's games so a replay still tells seats apart) and the name
"Deleted player"; friends, clubs, inbox and push tokens go. What stays, without
any name: scoring's standings and results under the old player id, and the results
stream's messages (30 days).
"""

from __future__ import annotations

from typing import Any

from services.accounts.devices import Accounts
from services.accounts.sessions import Sessions
from services.clubs.privacy import ClubsData
from services.history.store import ArchiveStore
from services.scoring.store import ScoreStore
from shared.ids import new_player_id


class PlayerData:
    """Export and deletion across accounts, sessions, history and scoring."""

    def __init__(self, accounts: Accounts, sessions: Sessions, archive: ArchiveStore,
                 scores: ScoreStore, clubs: ClubsData) -> None:
        self.accounts = accounts
        self.sessions = sessions
        self.archive = archive
        self.scores = scores
        self.clubs = clubs

    async def export(self, player_id: str) -> dict[str, Any]:
        """Everything kept about the player, as JSON data."""
        entries = await self.archive.all_entries(player_id)
        ratings = [{"game": game, **standing.fields(), "rating": standing.rating.conservative()}
                   for game, standing in await self.scores.player_stats(player_id)]
        return {"player_id": player_id,
                "account": await self.accounts.account(player_id),
                "devices": await self.accounts.devices(player_id),
                "games": await self.archive.summaries(entries),
                "ratings": ratings,
                "clubs": await self.clubs.export(player_id)}

    async def delete(self, player_id: str) -> int:
        """Delete the player's account and pseudonymise its archived seats; returns how many
        games were pseudonymised."""
        await self.sessions.revoke_all(player_id)
        pseudonym = new_player_id()
        changed = 0
        for item in await self.archive.all_entries(player_id):
            _ended, table_id, game_no = item.split("|")
            found = await self.archive.get(table_id, int(game_no))
            if found is not None and found[0].pseudonymise(player_id, pseudonym):
                await self.archive.rewrite(*found)
                changed += 1
        await self.archive.forget(player_id)
        await self.clubs.delete(player_id)
        await self.accounts.delete(player_id)
        return changed
