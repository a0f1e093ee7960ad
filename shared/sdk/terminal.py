"""`stammtisch play GAME`: a whole game in the terminal against bots (or people).

Ctrl-C (or end of input) leaves the table through the lobby's LeaveTable: a
stand-in bot plays the seat on, or, in games whose rules have their own
``leave``, the seat leaves the game by rule with its total kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import grpc

from shared.games.catalog import entry
from shared.sdk.botplayer import newer_updates
from shared.sdk.client import Endpoints, RefusedAction, StammtischClient, Update
from shared.sdk.device import login_from_file
from shared.sdk.phrases import Seats, ordered_choices
from shared.sdk.render import describe_events, render


class LineReader:
    """Lines typed on stdin, read on the event loop (no thread: Ctrl-C must not wait for Enter).

    One reader serves every game a process plays (a tournament's rounds): lines typed, or
    piped, ahead of a prompt wait in its queue for the next one. It reads the descriptor
    itself, not through ``sys.stdin``'s buffer, whose lines read ahead would wait unseen
    until the descriptor is readable again.
    """

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._partial = b""
        #: The prompt waiting for an answer ("" when none does).
        self.asking = ""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        chunk = os.read(self.fd, 65536)
        if not chunk:  # end of input: a last unterminated line, then EOF
            self._loop.remove_reader(self.fd)
            if self._partial.strip():
                self.lines.put_nowait(self._partial.decode(errors="replace").strip())
            self.lines.put_nowait(None)
            return
        *complete, self._partial = (self._partial + chunk).split(b"\n")
        for line in complete:
            self.lines.put_nowait(line.decode(errors="replace").strip())

    def close(self) -> None:
        self._loop.remove_reader(self.fd)

    def ask(self, prompt: str) -> None:
        """Show a prompt; :meth:`interject` shows it again after news printed meanwhile."""
        self.asking = prompt
        print(prompt, end="", flush=True)

    def interject(self, text: str) -> None:
        """Print news that came while a prompt waits (a tournament's), then that prompt again."""
        if self.asking:
            print()
        print(text, flush=True)
        if self.asking:
            print(self.asking, end="", flush=True)

    async def line(self) -> str:
        """The next line; EOFError once stdin is closed (and at every call after that)."""
        text = await self.lines.get()
        if text is None:
            self.lines.put_nowait(None)
            raise EOFError
        return text


class Session:
    """One player's game at a table: the update stream, the screen and the numbered choices."""

    def __init__(self, client: StammtischClient, table_id: str, seats: Seats, reader: LineReader):
        self.client, self.table_id, self.seats, self.reader = client, table_id, seats, reader
        self._stream: AsyncGenerator[Update, None] | None = None
        #: The update being waited for; never cancelled while playing (that would end the stream).
        self._pending: asyncio.Future[Update] | None = None

    def _news(self) -> asyncio.Future[Update]:
        if self._pending is None:
            assert self._stream is not None
            self._pending = asyncio.ensure_future(anext(self._stream))
        return self._pending

    async def next_update(self) -> Update:
        """The next newer update of the table."""
        update = await self._news()
        self._pending = None
        return update

    def show_events(self, update: Update) -> None:
        print("\n".join(describe_events(update, self.seats, str(update.view.get("game")))), flush=True)

    def show(self, current: Update, fresh_events: bool) -> None:
        print(render(current, self.seats, fresh_events), flush=True)

    def prompt(self, current: Update) -> None:
        count = len(current.view.get("legal", []))
        self.reader.ask(f"your move [1-{count}], Enter to refresh: ")

    async def choose(self, current: Update) -> tuple[dict[str, Any] | None, Update]:
        """Wait for a number typed or for news; returns the chosen action (None: none) and
        the newest update. Other seats' moves are printed as they arrive."""
        self.prompt(current)
        typed = asyncio.ensure_future(self.reader.line())
        try:
            while True:
                waiting: set[asyncio.Future[Any]] = {typed, self._news()}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if typed not in done:
                    newer = await self.next_update()
                    print()
                    self.show_events(newer)
                    changed = newer.view.get("legal") != current.view.get("legal")
                    current = newer
                    if changed or current.finished:
                        return None, current
                    self.prompt(current)
                    continue
                answer = typed.result()
                legal = ordered_choices(str(current.view.get("game")), current.view.get("legal", []))
                if answer.isdigit() and 1 <= int(answer) <= len(legal):
                    return dict(legal[int(answer) - 1]), current
                if not answer:
                    return None, current
                print("  please type one of the numbers shown")
                self.prompt(current)
                typed = asyncio.ensure_future(self.reader.line())
        finally:
            typed.cancel()
            self.reader.asking = ""

    async def send(self, action: dict[str, Any], current: Update) -> int:
        """Send the action; returns the sequence number to catch up to."""
        try:
            return (await self.client.act(self.table_id, action, round_no=current.view.get("round"))).seq
        except RefusedAction as refused:
            print(f"  refused: {refused.code}: {refused.message}")
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            print("  too fast: the server asks to slow down")
            await asyncio.sleep(1.0)
        return (await self.client.view(self.table_id)).seq

    async def play(self) -> Update:
        """Show every commit's events in order; whenever you have choices, ask for one and send it.

        Everything shown comes from the update stream, so the events of other
        seats that happened while you were thinking are never skipped.
        """
        current = await self.client.wait_for_game(self.table_id)
        self.show(current, True)
        self._stream = newer_updates(self.client, self.table_id, current.seq)
        try:
            while not current.finished:
                target = current.seq + 1
                if current.view.get("legal"):
                    action, current = await self.choose(current)
                    if action is None:
                        self.show(current, False)
                        continue
                    target = await self.send(action, current)
                while current.seq < target:
                    current = await self.next_update()
                    self.show_events(current)
                if current.view.get("legal") or current.finished:  # others' moves: a line each
                    self.show(current, False)
        finally:
            if self._pending is not None:
                self._pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await self._pending
            await self._stream.aclose()
        return current


async def _seats(client: StammtischClient, table_id: str, me: str) -> Seats:
    """The table's seat names, and which one is the player's."""
    table = await client.get_table(table_id)
    mine = next((seat.seat for seat in table.seats if seat.player_id == me), None)
    names = [seat.name or f"seat {seat.seat}" for seat in table.seats]
    return Seats([f"{name} #{seat}" if names.count(name) > 1 else name
                  for seat, name in enumerate(names)], mine)


async def leave_seat(client: StammtischClient, table_id: str, game: str) -> None:
    """Hand the seat over (LeaveTable) and say what became of it."""
    try:
        await client.leave(table_id)
    except grpc.aio.AioRpcError as err:
        print(f"\ncould not leave the table cleanly: {err.code().name}: {err.details()}")
        return
    if entry(game).leave_and_chat:
        print("\nyou left the game: your total stays, the others play on")
    else:
        print("\nyou left the table: the stand-in bot plays your seat")


async def play_game(client: StammtischClient, table_id: str, reader: LineReader) -> Update:
    """Play one's seat at a table at the terminal (a tournament's seating, say) until its game ends.

    A tournament's table may be created a moment after its seating is announced: until then
    (NOT_FOUND) this waits; the caller stops waiting when the round ends without it.
    """
    await client.wait_for_game(table_id)
    names = await _seats(client, table_id, client.player_id)
    return await Session(client, table_id, names, reader).play()


async def run(game: str, name: str, seats: int | None, bots: str, table_id: str | None,
              endpoints: Endpoints, turn_seconds: int, device: str | None = None,
              options: Mapping[str, Any] | None = None) -> int:
    """Log in (as a guest, or as the lasting player of a device file), create or join a table,
    fill it with bots, play it to the end. ``options``: the game's options of a new table;
    ``turn_seconds`` 0: the server's default clock."""
    async with StammtischClient(endpoints) as client:
        if device:
            await login_from_file(client, device, name)
        else:
            await client.login(name)
        if table_id is None:
            table = await client.create_table(game, seats or entry(game).default_seats, join=True,
                                              options=options, turn_seconds=turn_seconds or None)
            table_id = table.table_id
            for _ in range(len(table.seats) - 1):
                await client.add_bot(table_id, bots)
            print(f"table {table_id}: you and {len(table.seats) - 1} {bots} bot(s) · Ctrl-C leaves")
        else:
            await client.join(table_id)
        reader = LineReader()
        try:
            await client.ready(table_id)
            names = await _seats(client, table_id, client.player_id)
            final = await Session(client, table_id, names, reader).play()
        except (asyncio.CancelledError, KeyboardInterrupt, EOFError):
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # leave with the loop still running, then end normally
            await leave_seat(client, table_id, game)
            return 130
        finally:
            reader.close()
        if final.closed:
            print(f"the table was closed ({final.closed}): nobody played for too long")
            return 1
        totals = " · ".join(f"{names(s)} {total}" for s, total in enumerate(final.view.get("scores", [])))
        print(f"final totals: {totals}")
        return 0
