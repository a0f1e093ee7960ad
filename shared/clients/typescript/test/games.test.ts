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
