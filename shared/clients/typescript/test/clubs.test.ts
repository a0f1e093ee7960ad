/** Friends, a club and a private table through ClubsService: two TypeScript clients become friends
 * (and see each other online while the inbox stream is open), one makes a club the other joins by
 * its code and both chat, and the invitee hears of the private table in its inbox, live and listed,
 * and sits down by the table's code. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { ClubJoinPolicy, FriendState, NotificationKind, Presence, type WatchInboxResponse } from "../src/index.js";
import { closeAll, deviceClient } from "./support.js";

after(closeAll);

/** The next message of a live inbox, failing after `ms`. */
async function next(inbox: AsyncIterator<WatchInboxResponse>, ms = 10_000): Promise<WatchInboxResponse> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no inbox news in time")), ms);
  });
  try {
    const step = await Promise.race([inbox.next(), late]);
    assert.equal(step.done, false, "the inbox stream ended");
    return step.value as WatchInboxResponse;
  } finally {
    clearTimeout(timer);
  }
}

test("two clients become friends, share a club and a private table by invitation and code", async () => {
  const [anna, bruno] = await Promise.all([deviceClient("Anna"), deviceClient("Bruno")]);
  const closing = new AbortController();
  const brunosApp = bruno.watchInbox(closing.signal);
  try {
    assert.equal((await next(brunosApp)).unreadCount, 0);

    const asked = await anna.requestFriend(bruno.playerId);
    assert.equal(asked.state, FriendState.REQUEST_SENT);
    const request = await next(brunosApp);
    assert.equal(request.notification!.kind, NotificationKind.FRIEND_REQUEST);
    assert.equal(request.notification!.fromPlayerId, anna.playerId);
    assert.deepEqual((await bruno.friends(FriendState.REQUEST_RECEIVED)).map((f) => f.playerId), [anna.playerId]);
    await bruno.answerFriendRequest(anna.playerId, true);
    const [annasFriend] = await anna.friends();
    assert.equal(annasFriend.playerId, bruno.playerId);
    assert.equal(annasFriend.presence, Presence.ONLINE, "Bruno's open inbox shows him online");
    assert.deepEqual((await bruno.friends()).map((f) => f.playerId), [anna.playerId]);

    const club = await anna.createClub("Stammtisch Anker", { joinPolicy: ClubJoinPolicy.INVITATION, timeZone: "Europe/Berlin" });
    assert.match(club.code, /^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/);
    assert.equal((await bruno.joinClub({ code: club.code })).memberCount, 2);
    await anna.sendClubMessage(club.clubId, "Donnerstag um acht?");
    await bruno.sendClubMessage(club.clubId, "Bin dabei");
    const lines = await anna.clubMessages(club.clubId);
    assert.deepEqual(new Set(lines.map((line) => line.text)), new Set(["Donnerstag um acht?", "Bin dabei"]));

    const { table, code } = await anna.createPrivateTable("willi-stich", 3);
    assert.equal((await bruno.lobby.listTables({})).tables.some((t) => t.tableId === table.tableId), false, "private tables are not listed");
    await anna.inviteToTable(table.tableId, bruno.playerId);
    let invitation = await next(brunosApp);
    while (invitation.notification!.kind !== NotificationKind.TABLE_INVITATION) invitation = await next(brunosApp);
    assert.equal(invitation.notification!.tableId, table.tableId);
    assert.equal(invitation.notification!.fromPlayerId, anna.playerId);

    const listed = await bruno.inbox({ unreadOnly: true });
    const kinds = listed.notifications.map((note) => note.kind);
    assert.ok(kinds.includes(NotificationKind.TABLE_INVITATION) && kinds.includes(NotificationKind.FRIEND_REQUEST));
    assert.equal(listed.unreadCount, await bruno.unreadCount());
    const invitationId = listed.notifications.find((note) => note.kind === NotificationKind.TABLE_INVITATION)!.notificationId;
    assert.equal(await bruno.markRead([invitationId]), listed.unreadCount - 1);
    assert.equal((await bruno.inbox()).notifications.find((note) => note.notificationId === invitationId)!.read, true);

    const joined = await bruno.joinTableByCode(code);
    assert.equal(joined.tableId, table.tableId);
    const seated = await bruno.getTable(table.tableId);
    assert.ok(seated.seats.some((seat) => seat.playerId === bruno.playerId), "Bruno sits at the private table");
    assert.equal(await bruno.markRead("all"), 0);
  } finally {
    closing.abort();
    await brunosApp.return(undefined);
  }
});
