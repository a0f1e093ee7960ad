"""Scoring: results, leaderboards and ratings from JetStream."""
