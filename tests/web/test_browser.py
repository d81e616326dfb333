"""The dashboard in a real headless Chromium: pages follow the table live, the console works.

Every assertion auto-waits on the DOM (Playwright's ``expect``); nothing sleeps.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask, request
from playwright.sync_api import expect
from web_helpers import PASSWORD, PLAYERS, screenshot

from table.rules import Bid, Cards, Pass, Play, RulesError, get_variant
from table.rules.simulate import deal, random_action
from table.session import SessionLog, TableSession
from web import create_app
from web.access import LocalAccess, TableAccess
from web.cli import DashboardServer
from web.display import reason_text

pytestmark = pytest.mark.browser

Serve = Callable[[Flask, TableAccess], DashboardServer]


def _expect_screen_matches(page: Any, access: LocalAccess, table: str = "t1") -> None:
    """Waits until the screen shows the table's latest snapshot, then checks what it says."""
    snapshot = access.snapshot(table)
    screen = page.locator(".table-screen")
    expect(screen).to_have_attribute("data-seq", str(snapshot["seq"]))
    expect(screen).to_have_attribute("data-phase", snapshot["phase"])
    for seat in snapshot["seats"]:
        box = page.locator(f"#seat-{seat['seat']}")
        expect(box.locator(".cards-left b")).to_have_text(str(seat["cards_left"]))
        if snapshot["turn"] == seat["seat"]:
            expect(box).to_have_class(re.compile(r"\bon-turn\b"))
        else:
            expect(box).not_to_have_class(re.compile(r"\bon-turn\b"))
    trick = snapshot["trick"]
    if trick is not None:
        expect(page.locator("#trick .cards")).to_have_attribute("data-cards", trick["cards"])
    expect(page.locator("#multiplier .times")).to_have_text(f"×{snapshot['multiplier']}")


def test_table_screen_follows_a_round(
    page: Any, app: Flask, access: LocalAccess, table_session: TableSession, serve: Serve
) -> None:
    server = serve(app, access)
    page.goto(f"{server.url}/table/t1")
    expect(page.locator(".table-screen")).to_have_attribute("data-phase", "waiting")
    rng = random.Random(7)
    hands, kitty = deal(rng, get_variant("3p"))
    table_session.start_round(0, hands, kitty)
    _expect_screen_matches(page, access)
    played = table_session.state.round
    assert played is not None
    moves = 0
    rejected = False
    while not played.state.is_over:
        table_session.submit(random_action(played, rng), "sim")
        moves += 1
        _expect_screen_matches(page, access)
        if not rejected and moves >= 8 and played.state.trick is not None:
            rejected = True
            wrong = (played.state.turn + 1) % 3
            with pytest.raises(RulesError) as refused:
                table_session.submit(Pass(wrong), "panel")
            reason = reason_text(access.snapshot("t1"), str(refused.value))
            assert f"{PLAYERS[wrong]} is not on turn" in reason
            expect(page.locator("#rejection")).to_contain_text(reason)
            expect(page.locator("#rejection")).to_contain_text(f"{PLAYERS[wrong]} passes")
            screenshot(page, "table-mid-round")
    assert rejected
    outcome = table_session.state.rounds[-1].outcome
    assert outcome is not None
    winner = "Landlord" if outcome.landlord_won else "Farmers win"
    expect(page.locator("#result")).to_contain_text(winner)
    leader = max(range(3), key=lambda seat: (table_session.state.ledger.totals[seat], -seat))
    expect(page.locator("#standings li").first).to_contain_text(PLAYERS[leader])
    expect(page.locator("#history tbody tr")).to_have_count(1)
    screenshot(page, "table-round-over")


def test_page_resumes_with_last_event_id_after_the_stream_drops(
    page: Any, app: Flask, access: LocalAccess, table_session: TableSession, serve: Serve
) -> None:
    resumed: list[str] = []

    @app.before_request
    def _record_last_event_id() -> None:
        if request.path == "/stream" and "Last-Event-ID" in request.headers:
            resumed.append(request.headers["Last-Event-ID"])

    server = serve(app, access)
    page.goto(f"{server.url}/table/t1")
    table_session.start_round(1)
    _expect_screen_matches(page, access)
    seen = access.key("t1")
    access.hub.close()  # every stream ends, as when the server drops a slow screen
    table_session.submit(Pass(1), "panel")
    _expect_screen_matches(page, access)
    expect(page.locator("#link-state")).to_be_hidden()
    assert resumed[0] == seen


def test_console_login_csrf_and_an_undo(
    page: Any,
    app: Flask,
    access: LocalAccess,
    table_session: TableSession,
    log: SessionLog,
    serve: Serve,
) -> None:
    server = serve(app, access)
    page.goto(f"{server.url}/console/t1")
    expect(page).to_have_url(re.compile(r"/console/login\?next=/console/t1$"))
    page.fill("#name", "Dee")
    page.fill("#password", "not the password")
    page.click("button[type=submit]")
    expect(page.locator(".flash.error")).to_have_text("Wrong password.")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/console/t1$"))

    page.select_option("#first_bidder", "0")
    page.click("#form-deal button")
    expect(page.locator(".flash.ok")).to_contain_text("Round 1 dealt")
    expect(page.locator(".table-screen")).to_have_attribute("data-phase", "auction")

    table_session.submit(Bid(0, 1), "panel")
    page.evaluate("document.querySelector('#form-undo input[name=csrf_token]').remove()")
    page.fill("#undo-why", "wrong button")
    page.click("#form-undo button")
    expect(page.locator(".flash.error")).to_contain_text("no valid security token (CSRF)")
    assert log.entries(table_session.session_id)[-1].kind == "action"

    page.goto(f"{server.url}/console/t1")
    page.fill("#undo-why", "wrong button")
    page.click("#form-undo button")
    expect(page.locator(".flash.ok")).to_contain_text("Took back: Ann bids 1.")
    undo = log.entries(table_session.session_id)[-1]
    assert (undo.kind, undo.data["by"], undo.data["why"]) == ("undo", "Dee", "wrong button")
    screenshot(page, "console")


def _round(session: TableSession) -> Any:
    played = session.state.round
    assert played is not None
    return played


@pytest.fixture
def venue(log: SessionLog) -> LocalAccess:
    """Serves three tables: two with sessions, one waiting for its first."""
    sessions = [
        TableSession.start(log, "hall-1", "3p", ["Ann", "Bo", "Cy"]),
        TableSession.start(log, "hall-2", "4p", ["Di", "Ed", "Fay", "Gus"]),
    ]
    access = LocalAccess(log, sessions)
    access.add_table("hall-3")
    return access


def test_venue_shows_every_table_live(
    page: Any, app_config: dict[str, Any], venue: LocalAccess, serve: Serve
) -> None:
    server = serve(create_app(app_config, venue), venue)
    page.goto(f"{server.url}/?dark=1")
    expect(page.locator(".venue-card")).to_have_count(3)
    expect(page.locator("#venue-hall-3 .phase")).to_have_text("Waiting for a deal")
    hall2 = venue.session("hall-2")
    assert hall2 is not None
    hall2.start_round(1)
    hall2.submit(Bid(1, 2), "panel")
    hall2.submit(Pass(2), "panel")
    hall2.submit(Pass(3), "panel")
    hall2.submit(Pass(0), "panel")
    expect(page.locator("#venue-hall-2 .landlord")).to_have_text("Ed")
    expect(page.locator("#venue-hall-2 .phase")).to_have_text("Round 1 · Playing")
    screenshot(page, "venue")
    page.click("#venue-hall-2")
    expect(page).to_have_url(re.compile(r"/table/hall-2\?dark=1$"))
    expect(page.locator(".seat")).to_have_count(4)
    expect(page.locator("#seat-1")).to_have_class(re.compile(r"\blandlord\b"))


def test_kiosk_options_and_rotation(
    page: Any, app_config: dict[str, Any], venue: LocalAccess, serve: Serve
) -> None:
    server = serve(create_app(app_config, venue), venue)
    page.goto(
        f"{server.url}/table/hall-1?dark=1&zoom=1.5&standings=0&rotate=5&tables=hall-1,hall-2"
    )
    expect(page.locator("html")).to_have_class("dark no-standings")
    expect(page.locator(".standings")).to_be_hidden()
    font = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--zoom')")
    assert font.strip() == "1.5"
    expect(page.locator(".table-screen")).to_have_attribute("data-table", "hall-1")
    expect(page.locator(".table-screen")).to_have_attribute("data-table", "hall-2", timeout=9000)
    expect(page).to_have_url(re.compile(r"/table/hall-2\?dark=1"))
    session = venue.session("hall-2")
    assert session is not None
    session.start_round(3)
    expect(page.locator("#seat-3")).to_have_class(re.compile(r"\bon-turn\b"))


def test_jokers_are_drawn_distinctly(
    page: Any, app: Flask, access: LocalAccess, table_session: TableSession, serve: Serve
) -> None:
    server = serve(app, access)
    table_session.start_round(2)
    table_session.submit(Bid(2, 3), "panel")
    table_session.submit(Play(2, Cards.from_str("BR")), "camera")
    page.goto(f"{server.url}/table/t1")
    black = page.locator("#trick .joker-black")
    red = page.locator("#trick .joker-red")
    expect(black.locator(".mark")).to_have_text("B")
    expect(red.locator(".mark")).to_have_text("R")
    # to_have_css retries: a live update may swap the trick's DOM between two reads
    expect(black).to_have_css("background-color", "rgb(17, 17, 17)")
    expect(red).to_have_css("background-image", re.compile("repeating-linear-gradient"))
    expect(page.locator("#multiplier .why")).to_have_text("bid 3 · 1 rocket")


def test_replay_steps_with_the_arrow_keys(
    page: Any, app: Flask, access: LocalAccess, table_session: TableSession, serve: Serve
) -> None:
    table_session.start_round(0)
    table_session.submit(Bid(0, 3), "panel")
    table_session.submit(Play(0, Cards.from_str("3")), "camera")
    table_session.submit(Play(1, Cards.from_str("5")), "camera")
    server = serve(app, access)
    page.goto(f"{server.url}/history/{table_session.session_id}/round/1")
    expect(page.locator("#step")).to_have_text("move 0 of 3")
    expect(page.locator(".table-screen")).to_have_attribute("data-phase", "auction")

    def press(key: str, step: str) -> None:
        page.wait_for_load_state("load")  # the key handler comes with the deferred script
        page.keyboard.press(key)
        expect(page.locator("#step")).to_have_text(step)

    press("ArrowRight", "move 1 of 3")
    expect(page.locator("#seat-0")).to_have_class(re.compile(r"\blandlord\b"))
    press("ArrowRight", "move 2 of 3")
    expect(page.locator("#trick .cards")).to_have_attribute("data-cards", "3")
    expect(page.locator("#moves li.current")).to_have_text("Ann plays 3")
    press("ArrowLeft", "move 1 of 3")
    expect(page.locator("#trick .cards")).to_have_count(0)
