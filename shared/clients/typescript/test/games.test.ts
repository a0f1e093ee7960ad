/** Every game of the server's catalogue played to its end by TypeScript clients through the Play
 * stream (engine or arbiter, as the catalogue names it), with client action ids; seats beyond two
 * filled with server bots. Nothing here needs types for the game: the catalogue is the truth. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { closeAll, contiguous, deviceClient, playToEnd, SHORT_OPTIONS, started } from "./support.js";

after(closeAll);

const lister = await deviceClient("lister");
const catalogue = [...(await lister.games()).values()];

test("the catalogue names each game's play service", () => {
  assert.ok(catalogue.length >= 4, `games: ${catalogue.map((game) => game.name)}`);
  for (const game of catalogue) {
    assert.match(game.service, /^stammtisch\.v1\.(Engine|Arbiter)Service$/, game.name);
    assert.ok(game.schemasJson.view, `${game.name} has a view schema`);
  }
});

for (const game of catalogue) {
  test(`${game.name}: two TypeScript clients and ${Math.max(0, game.minSeats - 2)} server bots play a game to the end`, async () => {
    const host = await deviceClient(`${game.name} host`);
    const guest = await deviceClient(`${game.name} guest`);
    const seats = Math.max(2, game.minSeats);
    const table = await host.createTable(game.name, seats, { gameOptions: SHORT_OPTIONS[game.name] ?? {} });
    await guest.join(table.tableId);
    for (let seat = 2; seat < seats; seat++) await host.addBot(table.tableId);
    await Promise.all([host.ready(table.tableId), guest.ready(table.tableId)]);
    await started(host, table.tableId);

    const streams = [await host.play(table.tableId), await guest.play(table.tableId)];
    try {
      const [first, second] = await Promise.all(streams.map((stream) => playToEnd(stream)));
      for (const played of [first, second]) {
        assert.equal(played.last.view.over, true, `${game.name} ended: ${JSON.stringify(played.last.events)}`);
        assert.ok(Array.isArray(played.last.view.winners));
        assert.equal(played.seqs[0], 1);
        assert.ok(contiguous(played.seqs), `seqs without gap: ${played.seqs}`);
      }
      assert.ok(first.actions + second.actions > 0, "the TypeScript clients acted");
      assert.deepEqual(first.last.view.scores, second.last.view.scores);
    } finally {
      await Promise.all(streams.map((stream) => stream.close()));
    }
  });
}

test("quick match seats TypeScript clients at one table, whose game they play to the end", async () => {
  const game = catalogue.filter((entry) => !entry.simultaneous).sort((a, b) => a.minSeats - b.minSeats)[0];
  const people = await Promise.all(Array.from({ length: game.minSeats }, (_, index) => deviceClient(`matched ${index}`)));
  const queued: number[] = [];
  const matched = await Promise.all(people.map((person) => person.quickMatch(game.name, game.minSeats, (reply) => queued.push(reply.queued))));
  const tableId = matched[0].table.tableId;
  assert.deepEqual(new Set(matched.map((match) => match.table.tableId)), new Set([tableId]));
  assert.deepEqual(matched.map((match) => match.seat).sort(), Array.from({ length: game.minSeats }, (_, seat) => seat));
  await started(people[0], tableId);
  const streams = await Promise.all(people.map((person) => person.play(tableId)));
  try {
    const results = await Promise.all(streams.map((stream) => playToEnd(stream)));
    for (const result of results) assert.equal(result.last.view.over, true);
  } finally {
    await Promise.all(streams.map((stream) => stream.close()));
  }
});
