"""Public pages: venue, table screen, JSON snapshot, the SSE stream and kiosk options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from table.rules import Bid, Cards, Play, RulesError
from table.session import SessionLog, TableSession
from web import create_app
from web.access import LocalAccess
from web.display import card_faces


def _events(response: object, wanted: int) -> list[dict[str, str]]:
    """Reads server-sent events from a streaming response until ``wanted`` have come.

    Keepalives come every 0.05 s in the tests, so 100 chunks without enough events
    mean the event never came.
    """
    found: list[dict[str, str]] = []
    buffer = ""
    for count, chunk in enumerate(response.response):  # type: ignore[attr-defined]
        assert count < 100, f"only {len(found)} of {wanted} events came"
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            fields = dict(
                line.split(": ", 1) for line in block.splitlines() if not line.startswith(":")
            )
            if "data" in fields:
                found.append(fields)
        if len(found) >= wanted:
            response.close()  # type: ignore[attr-defined]
            return found
    raise AssertionError("the stream ended early")


@pytest.mark.parametrize("path", ["/", "/table/t1", "/history/", "/history/players"])
def test_public_pages_render(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert "Content-Security-Policy" in response.headers


def test_a_table_without_a_session_renders(client: FlaskClient, access: LocalAccess) -> None:
    access.add_table("t2")
    assert "Waiting for a deal" in client.get("/table/t2").get_data(as_text=True)
    assert 'id="venue-t2"' in client.get("/").get_data(as_text=True)


def test_table_screen_shows_seats_turn_and_trick(
    client: FlaskClient, table_session: TableSession
) -> None:
    table_session.start_round(0)
    table_session.submit(Bid(0, 3), "panel")
    table_session.submit(Play(0, Cards.from_str("3334")), "camera")
    html = client.get("/table/t1").get_data(as_text=True)
    assert 'id="seat-0"' in html and "♛ Landlord" in html
    assert 'class="seat pos-right on-turn"' in html
    assert 'data-cards="3334"' in html
    assert "three 3s with a single" in html
    assert "<b>16</b> cards" in html


def test_rejection_and_its_reason_are_shown(
    client: FlaskClient, table_session: TableSession
) -> None:
    table_session.start_round(0)
    with pytest.raises(RulesError):
        table_session.submit(Bid(2, 1), "panel")
    html = client.get("/table/t1").get_data(as_text=True)
    assert "Not accepted" in html
    assert "Cy is not on turn; Ann is" in html


def test_unknown_table_is_a_404_with_a_message(client: FlaskClient) -> None:
    response = client.get("/table/nope")
    assert response.status_code == 404
    assert "there is no table &#39;nope&#39; here" in response.get_data(as_text=True)
    assert client.get("/stream?table=nope").status_code == 404


def test_json_snapshot(client: FlaskClient, table_session: TableSession) -> None:
    data = client.get("/api/table/t1").get_json()
    assert data["session"] == table_session.session_id
    assert data["table"] == "t1"
    assert [seat["name"] for seat in data["seats"]] == ["Ann", "Bo", "Cy"]


def test_stream_sends_the_current_screen_then_each_change(
    client: FlaskClient, access: LocalAccess, table_session: TableSession
) -> None:
    response = client.get("/stream?table=t1", buffered=False)
    assert response.mimetype == "text/event-stream"
    first = json.loads(_events(response, 1)[0]["data"])
    assert first["table"] == "t1" and 'data-phase="waiting"' in first["html"]

    response = client.get("/stream?table=t1", buffered=False)
    chunks = iter(response.response)
    assert next(chunks).startswith(b"retry: 200")
    assert f"id: {access.key('t1')}".encode() in next(chunks)
    table_session.start_round(2)
    change = next(chunk for chunk in chunks if not chunk.startswith(b":"))
    response.close()
    assert f"id: {access.key('t1')}".encode() in change
    assert b'data-phase=\\"auction\\"' in change


def test_stream_resumes_with_last_event_id(
    client: FlaskClient, access: LocalAccess, table_session: TableSession
) -> None:
    key = access.key("t1")
    response = client.get("/stream?table=t1", headers={"Last-Event-ID": key}, buffered=False)
    table_session.start_round(1)
    events = _events(response, 1)
    assert events[0]["id"] == access.key("t1") != key

    old = client.get("/stream?table=t1", headers={"Last-Event-ID": key}, buffered=False)
    assert _events(old, 1)[0]["id"] == access.key("t1")


def test_venue_stream_covers_every_table(client: FlaskClient, table_session: TableSession) -> None:
    events = _events(client.get("/stream", buffered=False), 1)
    data = json.loads(events[0]["data"])
    assert data["table"] == "t1" and 'id="venue-t1"' in data["html"]


def test_kiosk_options(client: FlaskClient) -> None:
    html = client.get("/table/t1?dark=1&zoom=1.5&standings=0&rotate=10").get_data(as_text=True)
    assert '<html lang="en" class="dark no-standings" data-zoom="1.5">' in html
    assert 'data-rotate="10" data-rotation="t1"' in html


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("zoom=big", "zoom must be a number from 0.5 to 3"),
        ("rotate=1", "rotate must be a whole number of seconds from 5 to 3600"),
        ("dark=maybe", "dark must be 1 or 0"),
        ("tables=t1,zz", "unknown tables: zz"),
    ],
)
def test_bad_kiosk_options_get_one_message(client: FlaskClient, query: str, message: str) -> None:
    response = client.get(f"/table/t1?{query}")
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)


def test_jokers_differ_by_more_than_colour() -> None:
    black, red = card_faces("BR")
    assert (black.mark, red.mark) == ("B", "R")
    assert "joker-black" in black.css and "joker-red" in red.css


def test_without_an_accessor_the_app_follows_the_configured_log(tmp_path: Path) -> None:
    path = tmp_path / "venue.sqlite3"
    with SessionLog.open(str(path)) as log:
        session = TableSession.start(log, "club-2", "3p", ["Ann", "Bo", "Cy"])
    app = create_app({"TESTING": True, "DATABASE": str(path), "TABLES": ["club-2"]})
    access = app.extensions["ddz_access"]
    try:
        html = app.test_client().get("/table/club-2").get_data(as_text=True)
        assert "Ann" in html
        assert access.snapshot("club-2")["session"] == session.session_id
    finally:
        access.close()
        access.log.close()
