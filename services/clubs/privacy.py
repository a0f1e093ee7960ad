"""A player's friends, clubs, inbox and push tokens, for ExportMyData and DeleteMyAccount
(services/accounts/privacy.py).

Deleting removes the player from both sides of every relation, from every club (an owner's club
goes to its longest-standing admin, else member, and is deleted when nobody is left), and
deletes the inbox, tokens, preferences, delivery records and waiting games. Chat lines the player
wrote stay in their clubs' chats under the old player id, shown as "Player" once the name is gone.
"""

from __future__ import annotations

from typing import Any

from services.clubs.clubs import ADMIN, OWNER, Clubs
from services.clubs.friends import Friends
from services.clubs.inbox import Inbox
from services.clubs.keys import Keys
from services.clubs.push import Devices, Outbox, token_hash
from shared.infra.runtime import Runtime


class ClubsData:
    """Export and deletion of the clubs room's data about one player."""

    def __init__(self, runtime: Runtime) -> None:
        self.keys = Keys(runtime)
        self.friends = Friends(self.keys)
        self.clubs = Clubs(self.keys)
        self.devices = Devices(self.keys)
        self.inbox = Inbox(self.keys, Outbox(self.keys, self.devices, ""))

    async def export(self, player_id: str) -> dict[str, Any]:
        """Relations, clubs with roles, the inbox, devices (never the token itself) and preferences."""
        clubs = []
        for club_id in await self.clubs.of_player(player_id):
            member = await self.clubs.member(club_id, player_id)
            try:
                club = await self.clubs.get(club_id)
            except Exception:  # noqa: BLE001 (deleted meanwhile)
                continue
            clubs.append({"club_id": club_id, "name": club.name, "role": member.role if member else 0,
                          "joined_at": member.joined_at if member else None})
        devices = [{"platform": d["platform"], "app_id": d["app_id"], "device": token_hash(d["token"]),
                    "registered_at": d["at"]} for d in await self.devices.all(player_id)]
        prefs = await self.devices.preferences(player_id)
        return {"relations": [{"player_id": r.other, "state": r.state, "since": r.since}
                              for r in await self.friends.all(player_id)],
                "clubs": clubs, "inbox": await self.inbox.export(player_id), "push_devices": devices,
                "notification_preferences": {"muted": list(prefs.muted), "quiet_start": prefs.quiet_start,
                                             "quiet_end": prefs.quiet_end, "time_zone": prefs.time_zone}}

    async def delete(self, player_id: str) -> None:
        """Remove every trace listed in the module's docstring."""
        await self.friends.forget(player_id)
        for club_id in await self.clubs.of_player(player_id):
            member = await self.clubs.member(club_id, player_id)
            if member is not None and member.role == OWNER:
                await self._hand_over(club_id, player_id)
            await self.clubs.remove_member(club_id, player_id)
        await self.inbox.forget(player_id)
        await self.devices.forget(player_id)
        await self.keys.runtime.redis.delete(self.keys.player(player_id, "waiting"),
                                             self.keys.player(player_id, "clubs"))

    async def _hand_over(self, club_id: str, owner: str) -> None:
        others = [m for m in await self.clubs.members(club_id) if m.player_id != owner]
        if not others:
            await self.clubs.delete(await self.clubs.get(club_id))
            return
        heir = min(others, key=lambda m: (m.role != ADMIN, m.joined_at))
        heir.role = OWNER
        await self.clubs.put_member(club_id, heir)
        club = await self.clubs.get(club_id)
        club.owner_id = heir.player_id
        await self.clubs.save(club)
