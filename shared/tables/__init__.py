"""Live tables in Redis: atomic commits, the event log, live fan-out, clocks, results.

Used by the engine (turn-based games) and the arbiter (simultaneous games). The
commit order in Redis is the table's order; NATS only carries the news.
"""
