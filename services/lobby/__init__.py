"""Lobby: players and sessions, tables and seats, ready/start, quick match, chat."""
