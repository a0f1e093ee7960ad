"""Willi (Hans im Glück, 1999): lowest card takes the trick, "Meinz!" claims it.

The engine is :class:`shared.games.willi.engine.Willi`; the rules as this
project plays them are in ``RULES.md`` beside this file.
"""
