"""Willi Wacker: lay trays of beer, drink them, and steal or smash everyone else's.

The engine is :class:`shared.games.wacker.engine.WilliWacker`; the rules and
rulings it implements are in ``RULES.md`` beside this file.
"""
