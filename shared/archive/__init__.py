"""Finished games as documents: the archive format, the seed commitment and its check (pure)."""
