"""Pure rules engines of the four games: no I/O, no clocks, no network.

Services wrap these; the uniform interface is :class:`shared.games.base.Game`, built
on :class:`shared.games.engine.Engine`; :mod:`shared.games.catalog` lists the games.
"""
