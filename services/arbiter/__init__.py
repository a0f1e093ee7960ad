"""Arbiter: real-time play (the catalogue's simultaneous games)."""
