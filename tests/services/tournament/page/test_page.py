"""The tournament page in a real browser (Debian's chromium driven by Playwright): live
standings that equal GetStandings without a reload, the organizer's controls, escaping."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest

from shared.api.stammtisch.v1 import tournament_pb2
from shared.config import SERVICE_NAMES, Settings
from shared.sdk import tournament as sdk
from shared.sdk.client import StammtischClient

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, bot_delay_seconds=0.01)


@pytest.fixture
async def site(settings: Settings) -> AsyncIterator[tuple[dict[str, str], str]]:
    """Every service in this process; yields their addresses and the page's base URL."""
    from services.host.runner import running_services

    async with running_services(settings, SERVICE_NAMES) as running:
        page_port = next(item.service.page.port for item in running  # type: ignore[attr-defined]
                         if item.service.name == "tournament")
        yield ({item.service.name: f"127.0.0.1:{item.port}" for item in running},
               f"http://127.0.0.1:{page_port}")


@pytest.fixture
async def browser() -> AsyncIterator[object]:
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip("chromium is not installed (make chromium: apt-get install chromium)")
    from playwright.async_api import async_playwright

    async with async_playwright() as driver:
        launched = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


async def logged_in(stack: dict[str, str], names: list[str]) -> list[StammtischClient]:
    from tests.services.tournament.test_tournament import endpoints

    clients = [StammtischClient(endpoints(stack)) for _ in names]
    for client, name in zip(clients, names, strict=True):
        await client.login(name)
    return clients


async def until(what: str, probe: Callable[[], Awaitable[bool]], timeout: float = 90.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await probe():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)


async def page_standings(page: object) -> list[tuple[str, str]]:
    rows = await page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#standings tbody tr", "rows => rows.map(r => [r.cells[1].textContent, r.cells[2].textContent])")
    return [(name, points) for name, points in rows]


async def api_standings(client: StammtischClient, tid: str) -> list[tuple[str, str]]:
    return [(line.name, line.points_exact) for line in (await sdk.standings(client, tid)).standings]


async def test_live_standings_and_the_organizers_controls(site: tuple[dict[str, str], str],
                                                          browser: object) -> None:
    stack, base = site
    clients = await logged_in(stack, ["Orga", "Anna", "Ben", "Cleo", "Dora", "Emil"])
    organizer, emil = clients[0], clients[5]
    created = await sdk.create_tournament(
        organizer, "Page night", "willi-stich", "series", capacity=6, rounds=2, games_per_round=1,
        table_size=3, options={"start_round": 19}, manual_rounds=True, tie_breaks=["wins", "game_points"])
    tid = created.tournament_id
    for client in clients:
        await sdk.register(client, tid)
    players = [asyncio.create_task(sdk.play_tournament(c, tid, sdk.bot_player("willi-stich", i)))
               for i, c in enumerate(clients)]

    viewer = await browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    await viewer.goto(f"{base}/tournaments/{tid}")
    await viewer.wait_for_selector("#standings tbody tr")
    assert await viewer.text_content("#name") == "Page night"
    assert await viewer.is_hidden("#controls")
    await viewer.evaluate("window.notReloaded = true")
    organizer_page = await browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    await organizer_page.goto(f"{base}/tournaments/{tid}#token={organizer.token}")
    await organizer_page.wait_for_selector("#controls:not([hidden])")
    assert "token" not in organizer_page.url  # taken out of the address bar

    await organizer_page.click("button[data-action=start]")  # the organizer starts from the page
    await until("round 1 over, waiting for the organizer",
                lambda: _awaiting(organizer, tid))
    await until("the page's standings equal GetStandings",
                lambda: _same(viewer, organizer, tid))
    assert (await api_standings(organizer, tid))[0][1] != "0"
    header = await viewer.eval_on_selector_all("#standings thead th",
                                                "cells => cells.map(c => c.textContent)")
    assert header[3:5] == ["Wins", "Game pts"]
    await until("the page says it waits",
                lambda: _text(viewer, "#status", "running · waiting for the next round"))
    await screenshot(organizer_page, "tournament-page-running.png")

    # Pause and resume from the page, remove a player, then start round 2 by hand.
    await organizer_page.click("button[data-action=pause]")
    await until("paused on the viewer's page",
                lambda: _text(viewer, "#status", "paused · waiting for the next round"))
    assert (await sdk.get(organizer, tid)).status == tournament_pb2.TOURNAMENT_STATUS_PAUSED
    await organizer_page.wait_for_selector("button[data-action=resume]:not([disabled])")
    await organizer_page.click("button[data-action=resume]")
    await until("running again", lambda: _text(viewer, "#status", "running · waiting for the next round"))
    organizer_page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await organizer_page.click(f"button[data-remove='{emil.player_id}']")
    await until("Emil removed", lambda: _removed(organizer, tid, emil.player_id))
    await organizer_page.wait_for_selector("button[data-action=next_round]:not([disabled])")
    await organizer_page.click("button[data-action=next_round]")
    await asyncio.wait_for(asyncio.gather(*players), timeout=120)
    await until("the final standings on the page", lambda: _same(viewer, organizer, tid))
    await until("finished on the page",
                lambda: _text(viewer, "#status", "finished"))
    assert await viewer.evaluate("window.notReloaded") is True
    link = await viewer.get_attribute("#export-json", "href")
    assert link == f"/tournaments/{tid}/export/results.json"
    async with aiohttp.ClientSession() as http, http.get(base + link) as exported:
        document = await exported.json(content_type=None)
    assert [(row["name"], row["points_exact"]) for row in document["standings"]] == \
        await api_standings(organizer, tid)
    tournament = await sdk.get(organizer, tid)
    assert len(tournament.rounds) == 2
    assert emil.player_id not in {p for t in tournament.rounds[1].tables for p in t.player_ids}
    tables = await viewer.eval_on_selector_all(".table a", "links => links.map(a => a.getAttribute('href'))")
    seated = [table for round_ in reversed(tournament.rounds) for table in round_.tables]
    assert tables == [f"/tournaments/{tid}/tables/{table.table_id}" for table in seated]
    spectate = await browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    await spectate.goto(base + tables[0])
    await spectate.wait_for_selector("#games tbody tr")
    seats = await spectate.eval_on_selector_all("#seats li", "items => items.length")
    assert seats == len(seated[0].player_ids)
    await screenshot(organizer_page, "tournament-page.png")
    await screenshot(organizer_page, "tournament-page-full.png", full_page=True)
    await organizer_page.goto(f"{base}/tournaments")
    await screenshot(organizer_page, "tournaments.png")
    for client in clients:
        await client.close()


async def screenshot(page: object, name: str, full_page: bool = False) -> None:
    """With STAMMTISCH_SCREENSHOT_DIR set (`make screenshot`), the page as a phone shows it."""
    folder = os.environ.get("STAMMTISCH_SCREENSHOT_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        await page.screenshot(path=os.path.join(folder, name), full_page=full_page)  # type: ignore[attr-defined]


async def _awaiting(client: StammtischClient, tid: str) -> bool:
    return (await sdk.get(client, tid)).awaiting_next_round


async def _removed(client: StammtischClient, tid: str, player_id: str) -> bool:
    players = (await sdk.get(client, tid)).players
    return any(p.player_id == player_id and p.last_round for p in players)


async def _same(page: object, client: StammtischClient, tid: str) -> bool:
    return await page_standings(page) == await api_standings(client, tid)


async def _text(page: object, selector: str, text: str) -> bool:
    return await page.text_content(selector) == text  # type: ignore[attr-defined]


async def test_names_are_escaped_and_controls_need_the_organizer(site: tuple[dict[str, str], str],
                                                                 browser: object) -> None:
    stack, base = site
    evil = "<svg onload=pwned=1>"
    organizer, mallory = await logged_in(stack, ["Orga", evil])
    created = await sdk.create_tournament(organizer, "<b>Bold</b> & co", "willi-stich", "series", capacity=4,
                                          table_size=3)
    tid = created.tournament_id
    await sdk.register(mallory, tid)
    page = await browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    await page.goto(f"{base}/tournaments/{tid}#token={mallory.token}")
    await page.wait_for_selector("#standings tbody tr")
    assert await page.text_content("#name") == "<b>Bold</b> & co"
    assert await page.text_content("#standings tbody td.name") == evil
    assert await page.evaluate("window.pwned") is None
    assert await page.is_hidden("#controls")  # a player's token shows no controls
    listing = await browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    await listing.goto(f"{base}/tournaments")
    assert await listing.text_content(".list a") == "<b>Bold</b> & co"
    weekly = tournament_pb2.TournamentSchedule(
        settings=tournament_pb2.TournamentSettings(
            name="<i>Skat</i> weekly", game="willi-stich", format=tournament_pb2.TOURNAMENT_FORMAT_SERIES,
            capacity=8, rounds=1, games_per_round=1, table_size=3),
        recurrence=tournament_pb2.RECURRENCE_WEEKLY, weekday=5, time_of_day="19:30",
        time_zone="Europe/Berlin")
    await organizer.tournaments.CreateSchedule(tournament_pb2.CreateScheduleRequest(schedule=weekly),
                                               metadata=organizer.auth)
    await listing.reload()
    scheduled = await listing.text_content("#scheduled li")
    assert scheduled is not None
    assert scheduled.startswith("<i>Skat</i> weekly Fridays at 19:30 (Europe/Berlin)")
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/tournaments/{tid}/control/start") as anonymous:
            assert anonymous.status == 401
        async with http.post(f"{base}/tournaments/{tid}/control/start",
                             headers={"Authorization": f"Bearer {mallory.token}"}) as stranger:
            assert stranger.status == 403 and (await stranger.json())["code"] == "PERMISSION_DENIED"
        async with http.post(f"{base}/tournaments/{tid}/control/remove", data="not json",
                             headers={"Authorization": f"Bearer {organizer.token}"}) as garbled:
            assert garbled.status == 400 and (await garbled.json())["code"] == "INVALID_ARGUMENT"
        async with http.post(f"{base}/tournaments/{tid}/control/pause",
                             headers={"Authorization": f"Bearer {organizer.token}"}) as early:
            assert early.status == 409 and (await early.json())["code"] == "FAILED_PRECONDITION"
        async with http.get(f"{base}/tournaments/{tid}/export/standings.csv") as exported:
            assert exported.status == 200 and exported.headers["Content-Type"].startswith("text/csv")
            assert (await exported.text()).splitlines()[0].endswith("game_points,wins")
        async with http.get(f"{base}/tournaments/not-an-id") as bad:
            assert bad.status in (400, 404)
        async with http.get(f"{base}/tournaments/{'0' * 32}/state") as missing:
            assert missing.status == 404
    status = (await sdk.get(organizer, tid)).status
    assert status == tournament_pb2.TOURNAMENT_STATUS_REGISTRATION
    # The organizer cancels from the page (after confirming); the stranger's page follows.
    organizer_page = await browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    await organizer_page.goto(f"{base}/tournaments/{tid}#token={organizer.token}")
    await organizer_page.wait_for_selector("#controls:not([hidden])")
    organizer_page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await organizer_page.click("button[data-action=cancel]")
    await until("cancelled on the other page", lambda: _text(page, "#status", "cancelled"))
    assert (await sdk.get(organizer, tid)).status == tournament_pb2.TOURNAMENT_STATUS_CANCELLED
    for client in (organizer, mallory):
        await client.close()
