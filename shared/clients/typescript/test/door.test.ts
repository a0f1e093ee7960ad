/** One TLS front door for every service, trusted through a private CA (the constructor's `door` +
 * `ca`): a stand-in door made here (HTTP/2 with TLS, a certificate of a CA made here with openssl)
 * passes each call to the service its path names, as the real door does, and notes the table
 * header of each play call. A game played through it carries `x-stammtisch-table` on every play
 * call; a client that does not trust the CA gets no answer. */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { optionsFromEnv, StammtischClient, TABLE_HEADER, type ServiceName } from "../src/index.js";
import { playToEnd, SHORT_OPTIONS } from "./support.js";

const ROOMS: Record<string, ServiceName> = {
  LobbyService: "lobby", AccountService: "lobby", HistoryService: "lobby",
  EngineService: "engine", ArbiterService: "arbiter", ScoringService: "scoring", TournamentService: "tournament",
};
const PLAY = new Set(["EngineService", "ArbiterService"]);

/** A CA and a certificate for 127.0.0.1 that it signed, in a fresh folder. */
function certificates(folder: string): { ca: string; key: Buffer; cert: Buffer } {
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: folder, stdio: "pipe" });
  run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test door CA", "-keyout", "ca.key", "-out", "ca.pem");
  run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "door.key", "-out", "door.csr");
  writeFileSync(join(folder, "door.ext"), "subjectAltName = IP:127.0.0.1\n");
  run("x509", "-req", "-in", "door.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1",
    "-extfile", "door.ext", "-out", "door.pem");
  return { ca: join(folder, "ca.pem"), key: readFileSync(join(folder, "door.key")), cert: readFileSync(join(folder, "door.pem")) };
}

/** Why these tests cannot run here: the harness points at a real door already (the stand-in
 * relays to each service's own port), or there is no openssl to make the certificates. */
const skip = process.env.STAMMTISCH_DOOR ? "the harness connects through a real door"
  : spawnSync("openssl", ["version"]).status !== 0 ? "openssl is missing" : false;

const folder = mkdtempSync(join(tmpdir(), "stammtisch-door-"));
const upstreams = optionsFromEnv();
const sessions = new Map<string, http2.ClientHttp2Session>();
/** Per play call: its method and the table header it carried ("" when none). */
const playCalls: Array<{ method: string; table: string }> = [];
let server: http2.Http2SecureServer;
/** The door's side of its clients' connections: closed at the end, or the server never closes. */
const doorSessions = new Set<http2.ServerHttp2Session>();
let door = "";
let ca = "";

function upstream(room: ServiceName): http2.ClientHttp2Session {
  const address = "endpoints" in upstreams ? upstreams.endpoints[room] : upstreams.door;
  let session = sessions.get(address);
  if (session === undefined || session.closed || session.destroyed) {
    session = http2.connect(`http://${address}`);
    session.on("error", () => sessions.delete(address));
    sessions.set(address, session);
  }
  return session;
}

/** Pass one call on to its service: request headers and body out, headers, body and trailers back. */
function relay(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  const path = String(headers[":path"]);
  const service = path.split("/")[1]?.split(".").pop() ?? "";
  const room = ROOMS[service];
  if (room === undefined) {
    stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": String(Code.Unimplemented) }, { endStream: true });
    return;
  }
  if (PLAY.has(service)) playCalls.push({ method: path, table: String(headers[TABLE_HEADER] ?? "") });
  const forwarded: http2.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(":") || name === ":method" || name === ":path") forwarded[name] = value;
  }
  const call = upstream(room).request(forwarded);
  let trailers: http2.OutgoingHttpHeaders = {};
  call.on("response", (answer) => {
    const head = Object.fromEntries(Object.entries(answer).filter(([name]) => !name.startsWith(":") || name === ":status"));
    if ("grpc-status" in answer) stream.respond(head, { endStream: true }); // trailers-only
    else stream.respond(head, { waitForTrailers: true });
  });
  call.on("trailers", (received) => (trailers = { ...received }));
  stream.on("wantTrailers", () => stream.sendTrailers(trailers));
  call.on("error", () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  stream.on("error", () => call.close(http2.constants.NGHTTP2_CANCEL));
  stream.on("close", () => call.close(http2.constants.NGHTTP2_CANCEL));
  stream.pipe(call);
  call.pipe(stream);
}

before(async () => {
  if (skip) return;
  const made = certificates(folder);
  ca = made.ca;
  server = http2.createSecureServer({ key: made.key, cert: made.cert, allowHTTP1: false });
  server.on("stream", relay);
  server.on("session", (session) => {
    doorSessions.add(session);
    session.on("error", () => {}); // a client that goes away (a cut connection) is no failure here
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  door = `grpcs://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  rmSync(folder, { recursive: true, force: true });
  if (skip) return;
  for (const session of sessions.values()) session.destroy();
  for (const session of doorSessions) session.destroy();
  await new Promise((resolve) => server.close(resolve));
});

test("a game through one TLS door trusted by its CA, every play call naming its table", { skip }, async () => {
  const client = new StammtischClient({ door, ca });
  try {
    await client.login("through the door");
    const table = await client.createTable("willi-stich", 3, { gameOptions: SHORT_OPTIONS["willi-stich"] });
    await client.addBot(table.tableId);
    await client.addBot(table.tableId);
    await client.ready(table.tableId);
    await client.waitForGame(table.tableId);
    const stream = await client.play(table.tableId);
    try {
      assert.equal((await playToEnd(stream)).last.view.over, true);
    } finally {
      await stream.close();
    }
  } finally {
    client.close();
  }
  assert.ok(playCalls.some((call) => call.method.endsWith("/Play")), JSON.stringify(playCalls));
  assert.ok(playCalls.some((call) => call.method.endsWith("/GetView")));
  assert.deepEqual(playCalls.filter((call) => call.table === ""), [], "every play call names its table");
});

test("a client that does not trust the door's CA gets no answer", { skip }, async () => {
  const stranger = new StammtischClient({ door });
  try {
    const error = await stranger.games().catch((e: unknown) => ConnectError.from(e));
    assert.ok(error instanceof ConnectError, "refused");
    assert.match(error.message, /certificate/); // the TLS handshake failed: nothing reached a service
  } finally {
    stranger.close();
  }
});
