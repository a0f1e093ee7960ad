/** What the tests share: clients connected as the environment says (the harness's contract,
 * src/connection.ts optionsFromEnv), device logins, and a seat played to the end by a client that
 * picks a random legal action from its view. */
import { randomBytes, randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { optionsFromEnv, RefusedAction, StammtischClient, finished, legalActions, type GameAction, type PlayStream, type Update } from "../src/index.js";

/** Short games where the test knows the game; any other game plays with its defaults. */
export const SHORT_OPTIONS: Record<string, JsonObject> = {
  "willi-stich": { start_round: 17 },
  "willi-wacker": { target: 50, max_rounds: 1 },
  "wie-waldi": { round_seconds: 30 },
  "mau-mau": { hand_size: 3 },
};

const clients: StammtischClient[] = [];

/** A client logged in with a fresh device (LoginDevice); closed by closeAll(). */
export async function deviceClient(name: string): Promise<StammtischClient> {
  const client = new StammtischClient(optionsFromEnv());
  clients.push(client);
  await client.loginDevice(randomUUID(), randomBytes(32).toString("base64url"), name);
  return client;
}

export function closeAll(): void {
  for (const client of clients.splice(0)) client.close();
}

/** Types a test player never sends: leaving the table or chatting would not finish a game. */
const NOT_PLAYED = new Set(["leave", "chat"]);

export interface PlayedSeat {
  last: Update;
  seqs: number[];
  actions: number;
  refusals: string[];
}

/** Play a seat to the end of its game over `stream`: a random legal action (sent verbatim, with
 * the view's round) whenever the view offers one, at most one per `paceMs` (a quick person; the
 * server limits each player to 50 calls a second); refusals (a lost race in a real-time game) are
 * noted and the seat decides again on the next view. `onUpdate` sees every update in order. */
export async function playToEnd(stream: PlayStream, onUpdate: (update: Update) => void = () => {},
                                paceMs = 60): Promise<PlayedSeat> {
  const played: PlayedSeat = { last: await stream.nextUpdate(), seqs: [], actions: 0, refusals: [] };
  const see = (update: Update) => {
    played.seqs.push(update.seq);
    onUpdate(update);
    played.last = update;
  };
  see(played.last);
  while (!finished(played.last)) {
    const choices = legalActions(played.last.view).filter((action) => !NOT_PLAYED.has(action.type));
    if (choices.length > 0) {
      const choice = pick(choices);
      const round = typeof played.last.view.round === "number" ? played.last.view.round : undefined;
      try {
        await new Promise((resolve) => setTimeout(resolve, paceMs));
        await stream.act(choice, { round });
        played.actions += 1;
      } catch (error) {
        if (!(error instanceof RefusedAction)) throw error;
        played.refusals.push(error.code);
      }
    }
    see(await stream.nextUpdate());
    while (!finished(played.last) && stream.waiting > 0) see(await stream.nextUpdate());
  }
  return played;
}

/** A random legal action, mostly one that plays something (has fields: a card, a pile, a dog)
 * over one that does not (draw, pass): random players then finish a game in fewer moves. */
function pick(choices: GameAction[]): GameAction {
  const playing = choices.filter((action) => Object.keys(action).length > 1);
  const from = playing.length > 0 && Math.random() < 0.8 ? playing : choices;
  return from[Math.floor(Math.random() * from.length)];
}

/** The first update of a table's game, once the lobby has started it. */
export async function started(client: StammtischClient, tableId: string): Promise<Update> {
  return client.waitForGame(tableId);
}

/** Seqs that follow each other without a gap or a repeat. */
export function contiguous(seqs: number[]): boolean {
  return seqs.every((seq, index) => index === 0 || seq === seqs[index - 1] + 1);
}
