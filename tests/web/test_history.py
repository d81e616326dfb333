"""History pages: sessions, rounds, the move-by-move replay and player statistics."""

from __future__ import annotations

import random

import pytest
from flask.testing import FlaskClient

from table.rules import Bid, Cards, Play, get_variant
from table.rules.simulate import deal, random_action
from table.session import TableSession
from table.session.sim import play_on


@pytest.fixture
def played(table_session: TableSession) -> TableSession:
    """Plays two random rounds at t1 and ends the session."""
    play_on(table_session, rounds=2, seed=5)
    return table_session


def test_sessions_list(client: FlaskClient, played: TableSession) -> None:
    html = client.get("/history/").get_data(as_text=True)
    assert played.session_id in html
    assert "Ann, Bo, Cy" in html
    assert played.session_id in client.get("/history/?table=t1").get_data(as_text=True)
    assert played.session_id not in client.get("/history/?table=t2").get_data(as_text=True)


def test_session_page_lists_rounds_and_totals(client: FlaskClient, played: TableSession) -> None:
    html = client.get(f"/history/{played.session_id}").get_data(as_text=True)
    settled = [r for r in played.state.rounds if r.outcome is not None]
    assert html.count(">replay</a>") == len(played.state.rounds)
    assert len(settled) == 2
    ledger = played.state.ledger
    assert ledger is not None
    # The random game (seeded by the session id) may end all square: then no one leads.
    best = max(ledger.totals)
    for name, total in zip(ledger.players, ledger.totals, strict=True):
        assert (f"★ {name}" in html) == (total == best != 0), (name, ledger.totals)


def test_replay_steps_move_by_move(client: FlaskClient, table_session: TableSession) -> None:
    table_session.start_round(0)
    table_session.submit(Bid(0, 3), "panel")
    table_session.submit(Play(0, Cards.from_str("3")), "camera")
    table_session.correct(0, "4", "Dee", "misread")
    table_session.submit(Play(1, Cards.from_str("5")), "camera")
    url = f"/history/{table_session.session_id}/round/1"
    deal = client.get(url).get_data(as_text=True)
    assert 'data-phase="auction"' in deal and "move 0 of 3" in deal
    second = client.get(f"{url}?step=2").get_data(as_text=True)
    assert 'data-cards="4"' in second and "(corrected)" in second
    assert 'rel="prev"' in second and 'rel="next"' in second
    last = client.get(f"{url}?step=3").get_data(as_text=True)
    assert 'data-cards="5"' in last and 'rel="next"' not in last


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/history/nope", 404, "no session &#39;nope&#39;"),
        ("/history/{sid}/round/9", 404, "has no round 9"),
        ("/history/{sid}/round/1?step=99", 400, "step must be a whole number from 0 to"),
        ("/history/{sid}/round/1?step=-1", 400, "step must be a whole number from 0 to"),
    ],
)
def test_bad_history_requests(
    client: FlaskClient, played: TableSession, path: str, status: int, message: str
) -> None:
    response = client.get(path.format(sid=played.session_id))
    assert response.status_code == status
    assert message in response.get_data(as_text=True)


def test_player_stats(client: FlaskClient, played: TableSession) -> None:
    html = client.get("/history/players").get_data(as_text=True)
    for name in ("Ann", "Bo", "Cy"):
        assert f'<td>{name}</td><td class="num">2</td>' in html


def test_replay_shows_the_deal_only_after_the_round(
    client: FlaskClient, table_session: TableSession
) -> None:
    rng = random.Random(1)

    hands, kitty = deal(rng, get_variant("3p"))
    table_session.start_round(0, hands, kitty)
    url = f"/history/{table_session.session_id}/round/1"
    assert "The deal</h2>" not in client.get(url).get_data(as_text=True)
    played = table_session.state.round
    assert played is not None
    while not played.state.is_over:
        table_session.submit(random_action(played, rng), "sim")
    html = client.get(url).get_data(as_text=True)
    assert "The deal</h2>" in html
    assert f'data-cards="{hands[0]}"' in html
