"""Finished games: the durable archive, each player's history, replays (HistoryService)."""
