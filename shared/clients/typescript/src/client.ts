import { randomUUID } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { Connections, type ConnectOptions, type ServiceName } from "./connection.js";
import { refusalOrError, retryable } from "./errors.js";
import { AccountService, type LoginDeviceResponse, type RefreshTokenResponse } from "./gen/stammtisch/v1/accounts_pb.js";
import { ArbiterService } from "./gen/stammtisch/v1/arbiter_pb.js";
import {
  ClubsService,
  FriendState,
  type Club,
  type ClubMessage,
  type Friend,
  type JoinTableByCodeResponse,
  type ListInboxResponse,
  type WatchInboxResponse,
} from "./gen/stammtisch/v1/clubs_pb.js";
import { EngineService } from "./gen/stammtisch/v1/engine_pb.js";
import { HistoryService, type GetReplayResponse } from "./gen/stammtisch/v1/history_pb.js";
import { LobbyService, type GameInfo, type QuickMatchResponse, type Table } from "./gen/stammtisch/v1/lobby_pb.js";
import { ScoringService } from "./gen/stammtisch/v1/scoring_pb.js";
import { TournamentService, type WatchTournamentResponse } from "./gen/stammtisch/v1/tournament_pb.js";
import { PlayStream, type OpenPlay, type PlayReply } from "./play.js";
import { actionMessage, decodeUpdate, type GameAction, type Update } from "./update.js";

/** The metadata header that names the table of a play call: a front door routes tables by it. */
export const TABLE_HEADER = "x-stammtisch-table";

/** The play services by the name the catalogue gives (`GameInfo.service`). */
const PLAY_SERVICES = { [EngineService.typeName]: EngineService, [ArbiterService.typeName]: ArbiterService };
const PLAY_SERVICE_ROOMS: Record<string, ServiceName> = {
  [EngineService.typeName]: "engine",
  [ArbiterService.typeName]: "arbiter",
};

/** The engine's and the arbiter's calls, which take and answer the same fields. */
type PlayClient = Client<typeof EngineService>;

/** A player's connection to every service: logs in, finds tables, plays them. */
export class StammtischClient {
  token = "";
  refreshToken = "";
  playerId = "";
  name = "";
  /** How often the access token was renewed (RefreshToken), by the timer or by refresh(). */
  refreshes = 0;
  private readonly connections: Connections;
  private refreshTimer: NodeJS.Timeout | undefined;
  private catalogue: Map<string, GameInfo> | undefined;
  /** Table id -> its game's catalogue entry name, and where it is played (play_port). */
  private readonly tables = new Map<string, { game: string; address?: string }>();

  constructor(options: ConnectOptions) {
    const auth: Interceptor = (next) => async (request) => {
      if (this.token) request.header.set("authorization", `Bearer ${this.token}`);
      return next(request);
    };
    this.connections = new Connections(options, [auth]);
  }

  private client<S extends Parameters<typeof createClient>[0]>(service: S, room: ServiceName, address?: string) {
    const connection = address ? this.connections.at(address) : this.connections.of(room);
    return createClient(service, connection.transport) as Client<S>;
  }

  get lobby() {
    return this.client(LobbyService, "lobby");
  }
  get accounts() {
    return this.client(AccountService, "lobby");
  }
  get history() {
    return this.client(HistoryService, "lobby");
  }
  get scoring() {
    return this.client(ScoringService, "scoring");
  }
  get tournaments() {
    return this.client(TournamentService, "tournament");
  }
  get clubs() {
    return this.client(ClubsService, "clubs");
  }

  /** Stop the refresh timer and close every connection. */
  close(): void {
    clearTimeout(this.refreshTimer);
    this.connections.close();
  }

  /** Cut every connection as a lost network would; calls and streams open then fail or resume. */
  dropConnections(): void {
    this.connections.dropAll();
  }

  // -- accounts --------------------------------------------------------------------------

  /** Log in as a guest (a fresh player for a day); returns the player id. */
  async login(name: string): Promise<string> {
    const reply = await this.lobby.login({ name });
    [this.token, this.playerId, this.name] = [reply.token, reply.playerId, name];
    return this.playerId;
  }

  /** Log in as this device's lasting player (made on first use); the access token is then renewed
   * with the refresh token at 80 % of its lifetime, for as long as the client is open. */
  async loginDevice(deviceId: string, deviceSecret: string, displayName = ""): Promise<LoginDeviceResponse> {
    const reply = await this.accounts.loginDevice({ deviceId, deviceSecret, displayName });
    [this.token, this.playerId, this.name, this.refreshToken] = [reply.token, reply.playerId, reply.displayName, reply.refreshToken];
    this.keepFresh(reply.expiresAt ? timestampMs(reply.expiresAt) : Date.now());
    return reply;
  }

  /** Renew the access token now (the refresh token sent is used up and replaced). */
  async refresh(): Promise<RefreshTokenResponse> {
    const reply = await this.accounts.refreshToken({ refreshToken: this.refreshToken });
    [this.token, this.refreshToken] = [reply.token, reply.refreshToken];
    this.refreshes += 1;
    return reply;
  }

  private keepFresh(expiresAtMs: number): void {
    clearTimeout(this.refreshTimer);
    const wait = Math.max(1000, (expiresAtMs - Date.now()) * 0.8);
    this.refreshTimer = setTimeout(() => {
      this.refresh().then(
        (reply) => this.keepFresh(reply.expiresAt ? timestampMs(reply.expiresAt) : Date.now()),
        (error) => {
          if (ConnectError.from(error).code !== Code.Unauthenticated) this.keepFresh(Date.now() + 10_000);
        },
      );
    }, wait);
    this.refreshTimer.unref();
  }

  // -- lobby -----------------------------------------------------------------------------

  /** The server's catalogue, by name (no login needed): the truth about which games it hosts. */
  async games(): Promise<Map<string, GameInfo>> {
    if (this.catalogue === undefined) {
      const reply = await this.lobby.listGames({});
      this.catalogue = new Map(reply.games.map((game) => [game.name, game]));
    }
    return this.catalogue;
  }

  async game(name: string): Promise<GameInfo> {
    const game = (await this.games()).get(name);
    if (game === undefined) throw new Error(`the server hosts no game ${name}`);
    return game;
  }

  /** A new table of `game` with its options by name (turnSeconds: the clock of a decision). */
  async createTable(game: string, seats: number, options: { join?: boolean; gameOptions?: JsonObject; turnSeconds?: number } = {}): Promise<Table> {
    const reply = await this.lobby.createTable({
      game,
      seats,
      join: options.join ?? true,
      options: { gameOptions: options.gameOptions ?? {}, turnSeconds: options.turnSeconds },
    });
    return this.remember(reply.table);
  }

  async join(tableId: string, seat?: number, spectator = false): Promise<{ table: Table; seat: number }> {
    const reply = await this.lobby.joinTable({ tableId, seat, spectator });
    return { table: await this.remember(reply.table), seat: reply.seat };
  }

  async ready(tableId: string, ready = true): Promise<Table> {
    return (await this.lobby.setReady({ tableId, ready })).table!;
  }

  /** A private table (not listed; guests come by invitation or its code): the table and its code. */
  async createPrivateTable(game: string, seats: number, options: { gameOptions?: JsonObject; turnSeconds?: number } = {}): Promise<{ table: Table; code: string }> {
    const reply = await this.lobby.createTable({
      game,
      seats,
      join: true,
      private: true,
      options: { gameOptions: options.gameOptions ?? {}, turnSeconds: options.turnSeconds },
    });
    return { table: await this.remember(reply.table), code: reply.code };
  }

  async addBot(tableId: string, level = ""): Promise<Table> {
    return (await this.lobby.addBot({ tableId, level })).table!;
  }

  async getTable(tableId: string): Promise<Table> {
    return this.remember((await this.lobby.getTable({ tableId })).table);
  }

  /** Queue for a game of `seats` (QuickMatch stream); the table and seat once matched. */
  async quickMatch(game: string, seats: number, onQueued?: (reply: QuickMatchResponse) => void): Promise<{ table: Table; seat: number }> {
    const cancel = new AbortController();
    try {
      for await (const reply of this.lobby.quickMatch({ game, seats }, { signal: cancel.signal })) {
        if (reply.table) return { table: await this.remember(reply.table), seat: reply.seat };
        onQueued?.(reply);
      }
    } finally {
      cancel.abort();
    }
    throw new Error("quick match ended without a table");
  }

  /** Note a table's game, and with `play_port` (several server processes, no door) the process
   * that holds it, on the host of the game's service. */
  private async remember(table: Table | undefined): Promise<Table> {
    if (table === undefined) throw new Error("the server answered without a table");
    let address: string | undefined;
    if (table.playPort && !this.connections.behindDoor) {
      const room = PLAY_SERVICE_ROOMS[(await this.game(table.game)).service];
      const host = this.connections.addressOf(room).replace(/:\d+$/, "");
      address = `${host}:${table.playPort}`;
    }
    this.tables.set(table.tableId, { game: table.game, address });
    return table;
  }

  // -- play ------------------------------------------------------------------------------

  /** The client of the service that plays the table's game (as the catalogue names it). */
  private async playClient(tableId: string): Promise<PlayClient> {
    if (!this.tables.has(tableId)) await this.getTable(tableId);
    const place = this.tables.get(tableId)!;
    const name = (await this.game(place.game)).service;
    const service = PLAY_SERVICES[name];
    if (service === undefined) throw new Error(`unknown play service ${name}`);
    return this.client(service, PLAY_SERVICE_ROOMS[name], place.address) as unknown as PlayClient;
  }

  /** After UNAVAILABLE from the process that holds a table, play it through the service's port. */
  private unplace(tableId: string, error: unknown): void {
    const place = this.tables.get(tableId);
    if (place?.address && ConnectError.from(error).code === Code.Unavailable) place.address = undefined;
  }

  /** Call options of a play call: the table header that a door routes by. */
  private static tableCall(tableId: string, signal?: AbortSignal) {
    return { headers: { [TABLE_HEADER]: tableId }, signal };
  }

  /** The newest state of the table as this player sees it. */
  async view(tableId: string): Promise<Update> {
    const reply = await (await this.playClient(tableId)).getView({ tableId }, StammtischClient.tableCall(tableId));
    return decodeUpdate(reply.update!);
  }

  /** The first view once the table's game exists (NOT_FOUND until it starts). */
  async waitForGame(tableId: string, pollMs = 300): Promise<Update> {
    for (;;) {
      try {
        return await this.view(tableId);
      } catch (error) {
        if (ConnectError.from(error).code !== Code.NotFound) throw error;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    }
  }

  /** One action by unary Act, retried with the same action id on UNAVAILABLE (applied once);
   * a rules refusal throws RefusedAction with the code from the status details. */
  async act(tableId: string, action: GameAction, options: { actionId?: string; round?: number; attempts?: number } = {}): Promise<Update> {
    const actionId = options.actionId ?? randomUUID();
    const attempts = options.attempts ?? 5;
    for (let attempt = 0; ; attempt++) {
      try {
        const client = await this.playClient(tableId);
        const request = { tableId, actionId, action: actionMessage(action), round: options.round };
        return decodeUpdate((await client.act(request, StammtischClient.tableCall(tableId))).update!);
      } catch (error) {
        const refused = refusalOrError(error);
        if (refused !== error || !retryable(error) || attempt + 1 >= attempts) throw refused;
        this.unplace(tableId, error);
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
      }
    }
  }

  /** Every update after `afterSeq` by Subscribe, resumed after the last one seen on a drop. */
  async *updates(tableId: string, afterSeq = 0, signal?: AbortSignal): AsyncGenerator<Update> {
    let last = afterSeq;
    for (;;) {
      try {
        const client = await this.playClient(tableId);
        const request = { tableId, afterSeq: BigInt(last), maxBatch: 500 };
        for await (const reply of client.subscribe(request, StammtischClient.tableCall(tableId, signal))) {
          for (const proto of reply.update ? [reply.update] : reply.updates) {
            const update = decodeUpdate(proto);
            last = update.seq;
            yield update;
            signal?.throwIfAborted(); // also within a batch already received
          }
        }
        return;
      } catch (error) {
        if (signal?.aborted || !retryable(error)) throw error;
        this.unplace(tableId, error);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /** A Play stream on the table: every update after `afterSeq`, and actions with their answers. */
  async play(tableId: string, afterSeq = 0): Promise<PlayStream> {
    await this.playClient(tableId); // learn the table's game before the stream opens
    const open: OpenPlay = (requests, signal) => {
      const reading = this.playClient(tableId).then((client) =>
        client.play(requests as AsyncIterable<never>, StammtischClient.tableCall(tableId, signal)),
      );
      return (async function* () {
        yield* (await reading) as AsyncIterable<PlayReply>;
      })();
    };
    return new PlayStream(tableId, afterSeq, open, (error) => this.unplace(tableId, error));
  }

  // -- history ---------------------------------------------------------------------------

  /** A finished game's replay page by page (each well under the 4 MB receive limit): the first
   * page after seq 0, then each after the previous one's next_after_seq, until one is complete. */
  async *replayPages(tableId: string, gameNo = 0, pageBytes = 0): AsyncGenerator<GetReplayResponse> {
    let page = await this.history.getReplay({ tableId, gameNo, pageBytes });
    yield page;
    const game = page.summary?.gameNo ?? gameNo; // later pages: the same game, whatever ends meanwhile
    while (!page.complete) {
      const afterSeq = page.nextAfterSeq;
      page = await this.history.getReplay({ tableId, gameNo: game, afterSeq, pageBytes });
      if (page.commits.length === 0 && !page.complete) throw new Error("an empty replay page that is not the last");
      yield page;
    }
  }

  /** A finished game's whole replay, put together from its pages (0: the table's newest game). */
  async replay(tableId: string, gameNo = 0, pageBytes = 0): Promise<GetReplayResponse> {
    let whole: GetReplayResponse | undefined;
    for await (const page of this.replayPages(tableId, gameNo, pageBytes)) {
      if (whole === undefined) whole = page;
      else whole.commits.push(...page.commits);
      [whole.complete, whole.nextAfterSeq] = [page.complete, page.nextAfterSeq];
    }
    return whole!;
  }

  // -- friends, clubs, invitations, inbox (ClubsService) --------------------------------

  /** Ask a player to be friends (accepting theirs when they asked first). */
  async requestFriend(playerId: string): Promise<Friend> {
    return (await this.clubs.requestFriend({ playerId })).friend!;
  }

  /** Accept (or decline) a player's friend request. */
  async answerFriendRequest(playerId: string, accept = true): Promise<Friend | undefined> {
    return (await this.clubs.answerFriendRequest({ playerId, accept })).friend;
  }

  /** Every relation in `state` (friends by default) with presence, all pages. */
  async friends(state: FriendState = FriendState.FRIEND): Promise<Friend[]> {
    const found: Friend[] = [];
    let pageToken = "";
    do {
      const reply = await this.clubs.listFriends({ state, pageToken, pageSize: 200 });
      found.push(...reply.friends);
      pageToken = reply.nextPageToken;
    } while (pageToken);
    return found;
  }

  async createClub(name: string, options: { description?: string; joinPolicy?: number; timeZone?: string } = {}): Promise<Club> {
    return (await this.clubs.createClub({ name, ...options })).club!;
  }

  /** Join a club by its 6-character code (a club that needs an invitation), or a public one by id. */
  async joinClub(by: { code: string } | { clubId: string }): Promise<Club> {
    return (await this.clubs.joinClub(by)).club!;
  }

  async sendClubMessage(clubId: string, text: string): Promise<ClubMessage> {
    return (await this.clubs.sendClubMessage({ clubId, text })).message!;
  }

  /** The club's newest chat lines (up to `limit`, before message `beforeId` when given). */
  async clubMessages(clubId: string, limit = 50, beforeId = 0n): Promise<ClubMessage[]> {
    return (await this.clubs.listClubMessages({ clubId, limit, beforeId })).messages;
  }

  /** Invite a friend or fellow member to a private table, optionally holding a seat for them. */
  async inviteToTable(tableId: string, playerId: string, options: { holdSeat?: boolean; holdSeconds?: number } = {}): Promise<void> {
    await this.clubs.inviteToTable({ tableId, playerId, ...options });
  }

  /** Sit down at a private table by its code (a seat, or the first free one). */
  async joinTableByCode(code: string, seat?: number): Promise<JoinTableByCodeResponse> {
    const reply = await this.clubs.joinTableByCode({ code, seat });
    await this.getTable(reply.tableId);
    return reply;
  }

  /** One page of the inbox, newest first, with the unread count. */
  async inbox(options: { pageSize?: number; pageToken?: string; unreadOnly?: boolean } = {}): Promise<ListInboxResponse> {
    return this.clubs.listInbox(options);
  }

  async unreadCount(): Promise<number> {
    return (await this.clubs.listInbox({ pageSize: 1 })).unreadCount;
  }

  /** Mark notifications read (`"all"`: every one); the unread count after. */
  async markRead(ids: string[] | "all"): Promise<number> {
    const request = ids === "all" ? { all: true } : { notificationIds: ids };
    return (await this.clubs.markRead(request)).unreadCount;
  }

  /** The live inbox (WatchInbox): first the unread count, then each new notification; the
   * player shows as online to friends while it is open. Ends when `signal` aborts. */
  async *watchInbox(signal?: AbortSignal): AsyncGenerator<WatchInboxResponse> {
    yield* this.clubs.watchInbox({}, { signal });
  }

  // -- tournaments -----------------------------------------------------------------------

  /** The tournament's history from `afterSeq`, then live, until it finishes or is cancelled. */
  async *watchTournament(tournamentId: string, afterSeq = 0, signal?: AbortSignal): AsyncGenerator<WatchTournamentResponse> {
    yield* this.tournaments.watchTournament({ tournamentId, afterSeq: BigInt(afterSeq) }, { signal });
  }
}
