import type { StammtischClient } from "./client.js";
import type { WatchTournamentResponse, YourSeat } from "./gen/stammtisch/v1/tournament_pb.js";

/** Plays one round at the seat the director gave (its `tableId` and `seat`): every game of it. */
export type SeatPlayer = (seat: YourSeat) => Promise<void>;

/** Follow a tournament (WatchTournament) and play each seating it gives this player, until it
 * finishes or is cancelled; returns the last news. Tables are played like any other (no SetReady:
 * the director starts their games). A seat's failure ends the whole play with its error. */
export async function playTournament(client: StammtischClient, tournamentId: string, player: SeatPlayer,
                                     onNews: (news: WatchTournamentResponse) => void = () => {}): Promise<WatchTournamentResponse> {
  const seats: Promise<void>[] = [];
  let failure: unknown;
  let last: WatchTournamentResponse | undefined;
  const stop = new AbortController();
  try {
    for await (const news of client.watchTournament(tournamentId, 0, stop.signal)) {
      last = news;
      onNews(news);
      if (news.change === "seated" && news.yourSeat) {
        seats.push(player(news.yourSeat).catch((error: unknown) => {
          failure ??= error;
          stop.abort();
        }));
      }
      if (news.change === "finished" || news.change === "cancelled") break;
    }
  } catch (error) {
    if (failure === undefined) throw error;
  } finally {
    stop.abort();
  }
  await Promise.all(seats);
  if (failure !== undefined) throw failure;
  if (last === undefined) throw new Error("the tournament stream ended without news");
  return last;
}
