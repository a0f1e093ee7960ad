import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { TableUpdate } from "./gen/stammtisch/v1/common_pb.js";

/** A JSON object as the server sends it (a view, an event, an action). */
export type Json = Record<string, unknown>;

/** An action as a view's `legal` lists it: its `type` plus its fields (any object with a `type`,
 * so a game's generated action types fit). */
export interface GameAction {
  type: string;
}

/** One commit of a table as this player sees it, its JSON decoded. */
export interface Update {
  tableId: string;
  seq: number;
  events: Json[];
  /** The view after the commit ({} when the server left it out: `last_view_only`). */
  view: Json;
  seat: number;
  /** Seat -> when the server answers for it (ms since the epoch); seat -1: the round's time limit. */
  deadlines: Map<number, number>;
}

export function decodeUpdate(update: TableUpdate): Update {
  return {
    tableId: update.tableId,
    seq: Number(update.seq),
    events: update.events.map((event) => JSON.parse(event.dataJson) as Json),
    view: update.viewJson ? (JSON.parse(update.viewJson) as Json) : {},
    seat: update.seat,
    deadlines: new Map(update.deadlines.map((d) => [d.seat, d.expiresAt ? timestampMs(d.expiresAt) : 0])),
  };
}

/** Why the table was closed before its game ended ("" while open). */
export function closedReason(update: Update): string {
  const closed = update.events.find((event) => event.type === "table_closed");
  return closed ? String(closed.reason ?? "") : "";
}

/** Nothing more happens in this game: it is over, or its table was closed. */
export function finished(update: Update): boolean {
  return Boolean(update.view.over) || closedReason(update) !== "";
}

/** The legal actions of a view (empty when this seat owes nothing). */
export function legalActions(view: Json): GameAction[] {
  return Array.isArray(view.legal) ? (view.legal as GameAction[]) : [];
}

/** An action for the wire: `type` and its other fields as one JSON object. */
export function actionMessage(action: GameAction): { type: string; fieldsJson: string } {
  const { type, ...fields } = action;
  return { type, fieldsJson: Object.keys(fields).length ? JSON.stringify(fields) : "" };
}
