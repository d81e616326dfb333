"""The demo's seat pages with a fake seat host: local only, CSRF, the seat's token, refusals."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import form_token

from web import create_app
from web.access import CommandError, LocalAccess
from web.seats import LOCAL_ONLY, SeatView


class FakeSeats:
    """Lends seat 1 of table t1 with the token "tok"; remembers the moves it was given."""

    def __init__(self) -> None:
        self.held: int | None = None
        self.moves: list[str] = []

    def free_seats(self, table: str) -> list[int]:
        return [seat for seat in (0, 1, 2) if seat != self.held]

    def take(self, table: str, seat: int) -> str:
        if seat == self.held:
            raise CommandError(f"seat {seat} is not free; a person plays it already")
        self.held = seat
        return "tok"

    def _check(self, seat: int, token: str) -> None:
        if seat != self.held or token != "tok":
            raise CommandError(f"you do not hold seat {seat}; take a free seat first")

    def give_back(self, table: str, seat: int, token: str) -> None:
        self._check(seat, token)
        self.held = None

    def view(self, table: str, seat: int, token: str) -> SeatView:
        self._check(seat, token)
        return SeatView(seat, "33B", "your turn to lead", True, "play", ("seat 0 plays 4",))

    def act(self, table: str, seat: int, token: str, move: str) -> str:
        self._check(seat, token)
        if move == "play B":
            raise CommandError("not your turn yet: seat 2 is on turn")
        self.moves.append(move)
        return "sent"


@pytest.fixture
def host() -> FakeSeats:
    return FakeSeats()


@pytest.fixture
def seat_app(app_config: dict[str, Any], access: LocalAccess, host: FakeSeats) -> Flask:
    return create_app(app_config, access, host)


@pytest.fixture
def seat_client(seat_app: Flask) -> FlaskClient:
    return seat_app.test_client()


def _take(client: FlaskClient, seat: int = 1) -> Any:
    token = form_token(client.get("/demo/t1").get_data(as_text=True))
    return client.post("/demo/t1/take", data={"seat": str(seat), "csrf_token": token})


def test_seat_pages_exist_only_in_the_demo(client: FlaskClient, seat_client: FlaskClient) -> None:
    assert client.get("/demo/t1").status_code == 404
    assert "Play a seat" not in client.get("/table/t1").get_data(as_text=True)
    assert "Play a seat" in seat_client.get("/table/t1").get_data(as_text=True)


def test_seat_pages_answer_only_this_machine(seat_client: FlaskClient) -> None:
    away = {"REMOTE_ADDR": "192.168.1.20"}
    response = seat_client.get("/demo/t1", environ_base=away)
    assert response.status_code == 403
    assert LOCAL_ONLY in response.get_data(as_text=True)
    assert (
        seat_client.post("/demo/t1/take", data={"seat": "1"}, environ_base=away).status_code == 403
    )


def test_taking_needs_the_forms_token(seat_client: FlaskClient, host: FakeSeats) -> None:
    assert seat_client.post("/demo/t1/take", data={"seat": "1"}).status_code == 400
    assert host.held is None


def test_a_person_takes_a_seat_plays_and_gives_it_back(
    seat_client: FlaskClient, host: FakeSeats
) -> None:
    page = seat_client.get("/demo/t1").get_data(as_text=True)
    assert 'id="take-1"' in page and "Take Bo (seat 1)" in page
    assert seat_client.get("/demo/t1/panel").status_code == 204
    assert _take(seat_client).status_code == 303
    page = seat_client.get("/demo/t1").get_data(as_text=True)
    assert 'data-hand="33B"' in page and "Ann plays 4" in page and "your turn to lead" in page
    token = form_token(page)
    moved = seat_client.post(
        "/demo/t1/act", data={"move": "play", "card": ["3", "3"], "csrf_token": token}
    )
    assert moved.status_code == 303
    assert (
        seat_client.post("/demo/t1/act", data={"move": "bid2", "csrf_token": token}).status_code
        == 303
    )
    assert host.moves == ["play 33", "bid 2"]
    refused = seat_client.post(
        "/demo/t1/act", data={"move": "play", "card": "B", "csrf_token": token}
    )
    assert refused.status_code == 409
    assert "Not your turn yet: Cy is on turn." in refused.get_data(as_text=True)
    empty = seat_client.post("/demo/t1/act", data={"move": "play", "csrf_token": token})
    assert empty.status_code == 400
    assert "Tick the cards to play first." in empty.get_data(as_text=True)
    assert seat_client.get("/demo/t1/panel").status_code == 200
    left = seat_client.post("/demo/t1/leave", data={"csrf_token": token})
    assert left.status_code == 303 and host.held is None
    assert seat_client.get("/demo/t1/panel").status_code == 204


def test_a_second_browser_cannot_act_for_the_seat(
    seat_app: Flask, seat_client: FlaskClient, host: FakeSeats
) -> None:
    _take(seat_client)
    other = seat_app.test_client()
    token = form_token(other.get("/demo/t1").get_data(as_text=True))
    response = other.post("/demo/t1/act", data={"move": "pass", "csrf_token": token})
    assert response.status_code == 409
    assert "Take a seat first." in response.get_data(as_text=True)
    taken = other.post("/demo/t1/take", data={"seat": "1", "csrf_token": token})
    assert taken.status_code == 409 and "not free" in taken.get_data(as_text=True)
    assert host.moves == []
