"""Tournaments: the director that runs them and the TournamentService that clients call."""
