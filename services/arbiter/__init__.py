"""Arbiter: real-time Wie Waldi tables."""
