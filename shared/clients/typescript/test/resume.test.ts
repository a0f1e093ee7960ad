/** A dropped connection mid-game: the Play stream opens again with after_seq = the last seq seen
 * and the game goes on with no gap and no duplicate; Subscribe resumes the same way. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { StammtischClient, Update } from "../src/index.js";
import { closeAll, contiguous, deviceClient, playToEnd, SHORT_OPTIONS, started } from "./support.js";

after(closeAll);

/** A 3-seat Willi Stich table: the client and two server bots, its game started. */
async function tableWithBots(client: StammtischClient): Promise<string> {
  const table = await client.createTable("willi-stich", 3, { gameOptions: SHORT_OPTIONS["willi-stich"] });
  await client.addBot(table.tableId);
  await client.addBot(table.tableId);
  await client.ready(table.tableId);
  await started(client, table.tableId);
  return table.tableId;
}

async function everySeq(client: StammtischClient, tableId: string, last: number): Promise<number[]> {
  const seqs: number[] = [];
  for await (const update of client.updates(tableId, 0)) {
    seqs.push(update.seq);
    if (update.seq >= last) break;
  }
  return seqs;
}

test("the connection drops twice mid-game; the Play stream resumes after the last seq without gap or duplicate", async () => {
  const client = await deviceClient("dropped");
  const tableId = await tableWithBots(client);
  const stream = await client.play(tableId);
  const drops = new Set([5, 12]);
  try {
    const played = await playToEnd(stream, (update: Update) => {
      if (drops.delete(update.seq)) client.dropConnections(); // the whole HTTP/2 connection goes
    });
    assert.equal(played.last.view.over, true);
    assert.ok(stream.resumes >= 2, `resumed ${stream.resumes} times`);
    assert.equal(played.seqs[0], 1);
    assert.ok(contiguous(played.seqs), `seqs: ${played.seqs}`);
    assert.deepEqual(played.seqs, await everySeq(client, tableId, played.last.seq), "the stream saw every commit once");
  } finally {
    await stream.close();
  }
});

test("a Play call cut with an action in flight resumes; the action is answered once", async () => {
  const client = await deviceClient("cut");
  const tableId = await tableWithBots(client);
  const stream = await client.play(tableId);
  let cut = false;
  try {
    const played = await playToEnd(stream, (update: Update) => {
      if (!cut && update.seq >= 3) {
        cut = true;
        setTimeout(() => stream.dropCall(), 60); // while the next action is on its way
      }
    });
    assert.equal(played.last.view.over, true);
    assert.ok(stream.resumes >= 1);
    assert.ok(contiguous(played.seqs), `seqs: ${played.seqs}`);
  } finally {
    await stream.close();
  }
});

test("Subscribe after a drop with after_seq gets the missing commits, then the live tail", async () => {
  const client = await deviceClient("subscriber");
  const tableId = await tableWithBots(client);
  const stream = await client.play(tableId);
  const played = await playToEnd(stream);
  await stream.close();
  const all = await everySeq(client, tableId, played.last.seq);
  const cut = new AbortController();
  const first: number[] = [];
  await assert.rejects(async () => {
    for await (const update of client.updates(tableId, 0, cut.signal)) {
      first.push(update.seq);
      if (first.length === 4) cut.abort();
    }
  });
  const rest = await everySeq(client, tableId, played.last.seq).then((seqs) => seqs.filter((seq) => seq > 4));
  const resumed: number[] = [];
  for await (const update of client.updates(tableId, first.at(-1)!)) {
    resumed.push(update.seq);
    if (update.seq >= played.last.seq) break;
  }
  assert.deepEqual([...first, ...resumed], all);
  assert.deepEqual(resumed, rest);
});
