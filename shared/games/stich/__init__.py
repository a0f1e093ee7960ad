"""Willi Stich: 19 rounds of calling and taking tricks with two 32-card decks.

The engine is :class:`shared.games.stich.engine.WilliStich`; the rules, every
ruling and the action vocabulary are in ``RULES.md`` beside this file.
"""
