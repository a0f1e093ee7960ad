import { randomUUID } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import type { PlayAnswer, TableUpdate } from "./gen/stammtisch/v1/common_pb.js";
import { RefusedAction, retryable, ruleCodeName } from "./errors.js";
import { AsyncQueue } from "./queue.js";
import { actionMessage, decodeUpdate, type GameAction, type Update } from "./update.js";

/** While catching up, commits come in batches of this many (proto/README.md, Subscribe). */
export const CATCH_UP_BATCH = 500;

/** One message of a Play stream, the engine's and the arbiter's alike. */
export interface PlayMessage {
  tableId: string;
  afterSeq?: bigint;
  actionId?: string;
  action?: { type: string; fieldsJson: string };
  round?: number;
  maxBatch?: number;
  answersWithUpdates?: boolean;
}

/** One response of a Play stream (engine or arbiter). */
export interface PlayReply {
  kind:
    | { case: "update"; value: TableUpdate }
    | { case: "answer"; value: PlayAnswer }
    | { case: "updates"; value: { updates: TableUpdate[] } }
    | { case: undefined; value?: undefined };
  answers: PlayAnswer[];
}

/** Opens one Play call: the requests to send, and an abort signal for the call. */
export type OpenPlay = (requests: AsyncIterable<PlayMessage>, signal: AbortSignal) => AsyncIterable<PlayReply>;

interface Pending {
  request: PlayMessage;
  resolve: (seq: number) => void;
  reject: (error: unknown) => void;
}

/** A table over a bidirectional Play stream: actions go out with client action ids, answers and
 * updates come in. After a drop (UNAVAILABLE, a cut connection) it opens the stream again with
 * `after_seq` = the last seq seen and sends every unanswered action again with its id: the
 * updates go on with no gap and no duplicate, and each action is applied and answered once. */
export class PlayStream {
  lastSeq: number;
  /** How often the stream was opened again after a drop. */
  resumes = 0;
  private readonly updates = new AsyncQueue<Update>();
  private readonly pending = new Map<string, Pending>();
  private requests: AsyncQueue<PlayMessage> | undefined;
  private call: AbortController | undefined;
  private closed = false;
  private readonly done: Promise<void>;

  constructor(
    readonly tableId: string,
    afterSeq: number,
    private readonly open: OpenPlay,
    private readonly beforeRetry: (error: unknown) => void = () => {},
  ) {
    this.lastSeq = afterSeq;
    this.done = this.run();
  }

  /** Send an action (one of the view's `legal`, verbatim) and wait for its answer: the seq of the
   * commit that applied it (that update is then already queued). A refusal throws RefusedAction.
   * `round`: the view's round, so that an action that arrives after its round is STALE. */
  act(action: GameAction, options: { actionId?: string; round?: number } = {}): Promise<number> {
    if (this.closed) return Promise.reject(new Error("the Play stream has ended"));
    const actionId = options.actionId ?? randomUUID();
    const request: PlayMessage = { tableId: this.tableId, actionId, action: actionMessage(action), round: options.round };
    return new Promise<number>((resolve, reject) => {
      this.pending.set(actionId, { request, resolve, reject });
      this.requests?.push(request); // no call open: the reconnect sends it
    });
  }

  /** The next update in seq order; throws once the stream has failed for good. */
  async nextUpdate(): Promise<Update> {
    const update = await this.updates.next();
    if (update === undefined) throw new Error("the Play stream has ended");
    return update;
  }

  /** How many updates have arrived and wait to be read. */
  get waiting(): number {
    return this.updates.size;
  }

  /** The next update, or the newest one already received if several are waiting. */
  async newestUpdate(): Promise<Update> {
    const first = await this.nextUpdate();
    return this.updates.drain().at(-1) ?? first;
  }

  /** Cut the current call as a lost connection would (the stream resumes by itself). */
  dropCall(): void {
    this.call?.abort(new Error("dropped"));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.call?.abort();
    this.requests?.end();
    await this.done;
  }

  private async run(): Promise<void> {
    try {
      while (!this.closed) {
        try {
          await this.follow();
          if (!this.closed) throw new Error("the Play stream ended");
        } catch (error) {
          if (this.closed) break;
          const dropped = this.call?.signal.aborted || retryable(error);
          if (!dropped) throw error;
          this.beforeRetry(error);
          this.resumes += 1;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      this.updates.end();
    } catch (error) {
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
      this.updates.fail(error);
    }
    for (const { reject } of this.pending.values()) reject(new Error("the Play stream was closed"));
  }

  /** One call: open it after the last seq seen, send the unanswered actions again, then read. */
  private async follow(): Promise<void> {
    const requests = new AsyncQueue<PlayMessage>();
    const call = new AbortController();
    this.requests = requests;
    this.call = call;
    requests.push({
      tableId: this.tableId,
      afterSeq: BigInt(this.lastSeq),
      maxBatch: CATCH_UP_BATCH,
      answersWithUpdates: true,
    });
    for (const { request } of this.pending.values()) requests.push(request);
    try {
      for await (const reply of this.open(requests, call.signal)) {
        if (reply.kind.case === "answer") {
          this.settle(reply.kind.value);
          continue;
        }
        const batch =
          reply.kind.case === "update" ? [reply.kind.value] : reply.kind.case === "updates" ? reply.kind.value.updates : [];
        for (const proto of batch) {
          const update = decodeUpdate(proto);
          if (update.seq > this.lastSeq) {
            this.lastSeq = update.seq;
            this.updates.push(update);
          }
        }
        for (const answer of reply.answers) this.settle(answer); // after the updates they ride on
      }
    } catch (error) {
      throw call.signal.aborted && !this.closed ? ConnectError.from(error) : error;
    } finally {
      requests.end();
      this.requests = undefined;
    }
  }

  private settle(answer: PlayAnswer): void {
    const pending = this.pending.get(answer.actionId);
    if (pending === undefined) return; // answered already (an action sent again after a drop)
    this.pending.delete(answer.actionId);
    if (answer.outcome.case === "refused") {
      pending.reject(new RefusedAction(ruleCodeName(answer.outcome.value), answer.outcome.value.message));
    } else {
      pending.resolve(Number(answer.outcome.value ?? 0n));
    }
  }
}
