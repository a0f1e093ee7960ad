/** Refused actions: the rules code from the gRPC status details (unary Act) and from a Play
 * stream's answer (which keeps the stream open). */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { games, legalActions, RefusedAction, ruleViolationOf, type StammtischClient } from "../src/index.js";
import { closeAll, deviceClient, SHORT_OPTIONS, started } from "./support.js";

after(closeAll);

/** Three people at a Willi Stich table, its game started; who is to act and who is not. */
async function threePeople(): Promise<{ tableId: string; actor: StammtischClient; other: StammtischClient }> {
  const people = [await deviceClient("p0"), await deviceClient("p1"), await deviceClient("p2")];
  const table = await people[0].createTable("willi-stich", 3, { gameOptions: SHORT_OPTIONS["willi-stich"] });
  for (const person of people.slice(1)) await person.join(table.tableId);
  await Promise.all(people.map((person) => person.ready(table.tableId)));
  await started(people[0], table.tableId);
  const views = await Promise.all(people.map((person) => person.view(table.tableId)));
  const actor = views.findIndex((update) => legalActions(update.view).length > 0);
  assert.ok(actor >= 0, "someone is to act");
  return { tableId: table.tableId, actor: people[actor], other: people[(actor + 1) % 3] };
}

test("Act out of turn: FAILED_PRECONDITION with the rules code NOT_YOUR_TURN in the status details", async () => {
  const { tableId, actor, other } = await threePeople();
  // The view through the type generated from the game's JSON Schema (a convenience: untyped works too).
  const view = (await actor.view(tableId)).view as unknown as games.williStichView.WilliStichView;
  assert.ok(["choose_trump", "call", "play"].includes(view.phase), view.phase);
  const action: games.williStichActions.WilliStichAction = view.legal[0];
  const raw = await other.view(tableId).then(() => other.act(tableId, action)).catch((error: unknown) => error);
  assert.ok(raw instanceof RefusedAction, `refused: ${raw}`);
  assert.equal(raw.code, "NOT_YOUR_TURN");
  assert.equal(raw.status, Code.FailedPrecondition);
  const seq = (await actor.act(tableId, action)).seq; // the refusal changed nothing: the actor still may
  assert.ok(seq > 1);
});

test("a malformed action: INVALID_ARGUMENT with the rules code INVALID_ACTION; a failure without details has none", async () => {
  const { tableId, actor } = await threePeople();
  const error = await actor.act(tableId, { type: "no-such-action" }, { attempts: 1 }).catch((e: unknown) => e);
  assert.ok(error instanceof RefusedAction);
  assert.equal(error.code, "INVALID_ACTION");
  assert.equal(error.status, Code.InvalidArgument);
  // A failure without details (a lobby rule, a transport error) carries no rules code.
  assert.equal(ruleViolationOf(new ConnectError("seat taken", Code.FailedPrecondition)), undefined);
  assert.equal(ruleViolationOf(new Error("not a call")), undefined);
});

test("a refusal on the Play stream comes as the action's answer and the stream goes on", async () => {
  const { tableId, actor, other } = await threePeople();
  const action = legalActions((await actor.view(tableId)).view)[0];
  const stream = await other.play(tableId);
  try {
    const first = await stream.nextUpdate();
    await assert.rejects(stream.act(action), (error: unknown) => error instanceof RefusedAction && error.code === "NOT_YOUR_TURN");
    const applied = await actor.act(tableId, action);
    let update = first;
    while (update.seq < applied.seq) update = await stream.nextUpdate();
    assert.equal(update.seq, applied.seq, "the refused seat's stream still delivers the next commit");
  } finally {
    await stream.close();
  }
});
