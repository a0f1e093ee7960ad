/** Device logins: the same player every time, and an access token renewed with the refresh token
 * before it expires (the harness gives access tokens a short life). */
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { optionsFromEnv, StammtischClient } from "../src/index.js";

const clients: StammtischClient[] = [];
after(() => clients.forEach((client) => client.close()));

function connect(): StammtischClient {
  const client = new StammtischClient(optionsFromEnv());
  clients.push(client);
  return client;
}

test("a device logs in as the same player; its token is renewed before expiry and keeps working", async () => {
  const [device, secret] = [randomUUID(), randomBytes(32).toString("base64url")];
  const client = connect();
  const first = await client.loginDevice(device, secret, "phone");
  assert.equal(first.created, true);
  const lifetimeMs = Number(first.expiresAt!.seconds) * 1000 - Date.now();
  const usedUp = client.refreshToken;
  const deadline = Date.now() + lifetimeMs * 2;
  while (client.refreshes < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  assert.ok(client.refreshes >= 1, "renewed by itself");
  assert.notEqual(client.refreshToken, usedUp);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(first.expiresAt!.seconds) * 1000 - Date.now() + 1000)));
  const table = await client.createTable("willi-stich", 3); // after the first token expired
  assert.ok(table.tableId);

  const again = connect();
  const second = await again.loginDevice(device, secret);
  assert.equal(second.playerId, first.playerId);
  assert.equal(second.created, false);
});

test("a used refresh token is refused as UNAUTHENTICATED", async () => {
  const client = connect();
  await client.loginDevice(randomUUID(), randomBytes(32).toString("base64url"));
  const usedUp = client.refreshToken;
  await client.refresh();
  const thief = connect();
  thief.refreshToken = usedUp;
  const error = await thief.refresh().catch((e: unknown) => ConnectError.from(e));
  assert.ok(error instanceof ConnectError);
  assert.equal(error.code, Code.Unauthenticated);
});
