/** A small tournament: four entrants register, three check in and play their seats from the
 * seatings WatchTournament announces, the fourth is a no-show that a server bot plays for. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { FirstSeating, NoShow, playTournament, TournamentFormat, TournamentStatus, type YourSeat } from "../src/index.js";
import { closeAll, deviceClient, playToEnd, SHORT_OPTIONS } from "./support.js";

after(closeAll);

test("a two-round series of four entrants, three TypeScript clients and a stand-in bot, plays to its standings", async () => {
  const entrants = await Promise.all([0, 1, 2, 3].map((index) => deviceClient(`entrant ${index}`)));
  const [organizer] = entrants;
  const created = await organizer.tournaments.createTournament({
    settings: {
      name: "TypeScript cup",
      game: "willi-stich",
      format: TournamentFormat.SERIES,
      options: { gameOptions: SHORT_OPTIONS["willi-stich"] },
      capacity: 4,
      rounds: 2,
      gamesPerRound: 1,
      tableSize: 4,
      firstSeating: FirstSeating.RANDOM,
      checkInSeconds: 4,
      noShow: NoShow.BOT,
    },
  });
  const tournamentId = created.tournament!.tournamentId;
  for (const entrant of entrants) await entrant.tournaments.register({ tournamentId });
  const startedAt = await organizer.tournaments.startTournament({ tournamentId });
  assert.equal(startedAt.tournament!.status, TournamentStatus.CHECK_IN);
  const present = entrants.slice(0, 3);
  for (const entrant of present) await entrant.tournaments.checkIn({ tournamentId });

  const played = present.map(() => [] as YourSeat[]);
  const finals = await Promise.all(present.map((entrant, index) =>
    playTournament(entrant, tournamentId, async (seat) => {
      await entrant.waitForGame(seat.tableId);
      const stream = await entrant.play(seat.tableId);
      try {
        const result = await playToEnd(stream);
        assert.equal(result.last.view.over, true);
        played[index].push(seat);
      } finally {
        await stream.close();
      }
    })));

  for (const last of finals) assert.equal(last.change, "finished");
  for (const seats of played) assert.deepEqual(seats.map((seat) => seat.round), [1, 2]);
  const standings = await organizer.tournaments.getStandings({ tournamentId });
  assert.equal(standings.status, TournamentStatus.FINISHED);
  const tournament = (await organizer.tournaments.getTournament({ tournamentId })).tournament!;
  assert.deepEqual(tournament.players.map((player) => player.bot), [false, false, false, true], "the no-show became a bot entry");
  for (const round of tournament.rounds) {
    // One table of four: the three who checked in, and a bot's seat (no player id).
    assert.deepEqual(round.tables.map((table) => new Set(table.playerIds)), [new Set(["", ...present.map((entrant) => entrant.playerId)])]);
  }
  // The standings rank the people; the bot entry played their seat without a line of its own.
  assert.deepEqual(standings.standings.map((line) => line.games), [2, 2, 2]);
  assert.deepEqual(new Set(standings.standings.map((line) => line.playerId)), new Set(present.map((entrant) => entrant.playerId)));
});
