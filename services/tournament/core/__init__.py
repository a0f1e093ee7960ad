"""The pure core of tournaments: table splits, seating, rotation, scores and standings.

No I/O here (no grpc, redis or nats): the director feeds in the players and the
results it read, and stores what these functions decide. Every function is
deterministic for its inputs (seeded randomness only), so a director that
replaces a dead one recomputes exactly the same seating and standings.

The scoring rule (the same text is in proto/stammtisch/v1/tournament.proto and README.md):

* **Placement points.** In a game at a table of n seats, a seat's place is 1 + the
  number of seats with a higher final total; seats with equal totals share the mean
  of the places they cover. The seat earns (n - place) / (n - 1): 1 for first, 0 for
  last, whatever the table size, so scores are comparable across table sizes.
* **Duplicate deals** (an option): every table of a round plays the same seeds, so seat
  i of every table of the same size holds the same cards in game g. A seat then earns
  the share of those other seats it beat by final total (a tie counts half) instead of
  its placement points; a seat with no counterpart keeps its placement points.
* **Late entry.** A player who enters late is credited 1/2 point (the mean of a
  game's points) and 0 game points for each game of the rounds they missed.
* **Wins.** A game is won by every seat with the highest final total at its table (a
  shared first place is a win for each of them).
* **Table order** (a knockout's cut and its final places): the people of one table of a
  round by their points in the round's games there, then their game points there, then
  games won there, then the seeding order. The first ``keep`` go on.
* **Standings** sort a series by points, then the organizer's tie-breaks (by default game
  points, the sum of the player's final totals, then games won; standings.TIE_BREAKS), then
  the seeding order (rating, then registration). A knockout
  sorts by the last round reached, then the place in the table order of the last table
  played (so the final table's winner is first), then as a series. Bots have no standing.
"""
