/** A finished game's replay over the client's default 4 MB receive limit: fetched in pages,
 * put together, and its seed checked against the commitment the game started with. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, test } from "node:test";
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { DEFAULT_READ_MAX_BYTES, GetReplayResponseSchema, type GetReplayResponse, type StammtischClient } from "../src/index.js";
import { closeAll, deviceClient, playToEnd, SHORT_OPTIONS, started } from "./support.js";

after(closeAll);

/** The replay once the finished game is archived (UNAVAILABLE until then). */
async function archived<T>(fetch: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch();
    } catch (error) {
      if (ConnectError.from(error).code !== Code.Unavailable || attempt > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}

/** A finished 4-seat Wie Waldi game (the longest replays): one client and three server bots. */
async function finishedGame(client: StammtischClient): Promise<string> {
  const table = await client.createTable("wie-waldi", 4, { gameOptions: SHORT_OPTIONS["wie-waldi"] });
  for (let seat = 1; seat < 4; seat++) await client.addBot(table.tableId);
  await client.ready(table.tableId);
  await started(client, table.tableId);
  const stream = await client.play(table.tableId);
  try {
    assert.equal((await playToEnd(stream)).last.view.over, true);
  } finally {
    await stream.close();
  }
  return table.tableId;
}

test("a finished game's replay comes in pages under the default 4 MB limit and its seed matches the commitment", async () => {
  const client = await deviceClient("viewer");
  const tableId = await finishedGame(client);
  const whole: GetReplayResponse = await archived(() => client.replay(tableId));
  assert.equal(whole.complete, true);
  assert.equal(whole.summary?.game, "wie-waldi");
  const seqs = whole.commits.map((commit) => commit.seq);
  assert.deepEqual(seqs, seqs.map((_, index) => seqs[0] + index), "every commit once, in order");
  const started = JSON.parse(whole.commits[0].events[0].dataJson) as { type: string; commitment: string };
  assert.equal(started.type, "game_started");
  const digest = createHash("sha256").update(Buffer.concat([Buffer.from(whole.seed, "ascii"), Buffer.from(whole.salt, "hex")])).digest("hex");
  assert.equal(digest, whole.commitment);
  assert.equal(digest, started.commitment);
  assert.ok(whole.commits.at(-1)!.events.some((event) => event.type === "game_over"));

  const pageBytes = 64 * 1024;
  const sizes: number[] = [];
  const paged: number[] = [];
  for await (const page of client.replayPages(tableId, 0, pageBytes)) {
    sizes.push(toBinary(GetReplayResponseSchema, page).length);
    paged.push(...page.commits.map((commit) => commit.seq));
  }
  assert.ok(sizes.length > 1, `pages: ${sizes}`);
  assert.ok(Math.max(...sizes) <= pageBytes, `page sizes ${sizes}`);
  assert.ok(Math.max(...sizes) < DEFAULT_READ_MAX_BYTES);
  assert.deepEqual(paged, seqs);
});
