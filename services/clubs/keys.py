"""The Redis keys of clubs and friends. A player's keys carry the tag of the player's shard
(shared/infra/shards.py), like that shard's part of the push outbox, so a notification and its
push job are written in one transaction; a club's keys share the tag ``{c<id>}``."""

from __future__ import annotations

from shared.infra.runtime import Runtime


class Keys:
    """Key names of the clubs room in one deployment's namespace."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def player(self, player_id: str, what: str) -> str:
        """One of a player's keys (relations, presence, inbox, devices, preferences)."""
        return self.runtime.shard_key("clubs", self.shard_of(player_id), "p", player_id, what)

    def shard_of(self, player_id: str) -> int:
        """The shard of a player's keys and push jobs."""
        return self.runtime.shards.of(player_id)

    def club(self, club_id: str, what: str) -> str:
        """One of a club's keys (document, members, chat)."""
        return self.runtime.key("clubs", "{c" + club_id + "}", what)

    def global_(self, *parts: str) -> str:
        """A key over every player or club (the code index, rate limits)."""
        return self.runtime.key("clubs", *parts)

    def outbox(self, shard: int) -> str:
        """One shard of the push outbox (scanned by every replica's deliverer)."""
        return self.runtime.shard_key("clubs", shard, "outbox")

    def outbox_jobs(self, shard: int) -> str:
        """The jobs of one outbox shard, by job id."""
        return self.runtime.shard_key("clubs", shard, "outbox-jobs")
