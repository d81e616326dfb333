"""The operator console: login, CSRF, validated forms, commands logged with who and why."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from web_helpers import PASSWORD, AuthActions, form_token

from table.controller.eyes import Eyes
from table.controller.loop import Controller
from table.rules import Bid, Cards, Pass, Play
from table.session import SessionLog, TableSession
from tests.controller.test_eyes import CALIBRATION
from tests.controller.test_loop import StillCamera
from web import create_app
from web.access import LocalAccess


def test_console_needs_a_login(client: FlaskClient) -> None:
    response = client.get("/console/t1")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/console/login?next=/console/t1")


def test_wrong_password_is_refused(client: FlaskClient, auth: AuthActions) -> None:
    response = auth.login(password="guess")
    assert response.status_code == 401
    assert "Wrong password." in response.get_data(as_text=True)
    assert client.get("/console/t1").status_code == 302


def test_login_without_csrf_token_is_refused(client: FlaskClient) -> None:
    client.get("/console/login")
    response = client.post("/console/login", data={"name": "Dee", "password": PASSWORD})
    assert response.status_code == 400
    assert "no valid security token (CSRF)" in response.get_data(as_text=True)


def test_login_sets_a_safe_cookie_and_opens_the_console(
    client: FlaskClient, auth: AuthActions
) -> None:
    response = auth.login()
    assert response.status_code == 303
    assert response.headers["Location"] == "/console/"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    page = client.get("/console/t1")
    assert page.status_code == 200
    assert "Console (Dee)" in page.get_data(as_text=True)


def test_login_redirect_stays_in_the_console(client: FlaskClient) -> None:
    html = client.get("/console/login?next=//evil.example/").get_data(as_text=True)
    response = client.post(
        "/console/login?next=//evil.example/",
        data={"name": "Dee", "password": PASSWORD, "csrf_token": form_token(html)},
    )
    assert response.headers["Location"] == "/console/"


def test_console_off_without_a_password_hash(
    app_config: dict[str, object], access: LocalAccess
) -> None:
    client = create_app({**app_config, "PASSWORD_HASH": None}, access).test_client()
    assert "The console is off" in client.get("/console/login").get_data(as_text=True)
    response = AuthActions(client).login()
    assert response.status_code == 403


def test_post_without_csrf_token_is_refused_and_changes_nothing(
    client: FlaskClient, auth: AuthActions, access: LocalAccess
) -> None:
    auth.login()
    before = access.key("t1")
    response = client.post("/console/t1/deal", data={"first_bidder": "0"})
    assert response.status_code == 400
    assert "no valid security token (CSRF)" in response.get_data(as_text=True)
    wrong = client.post("/console/t1/deal", data={"first_bidder": "0", "csrf_token": "x"})
    assert wrong.status_code == 400
    assert access.key("t1") == before


def test_deal_undo_and_correct_log_who_and_why(
    client: FlaskClient,
    auth: AuthActions,
    table_session: TableSession,
    log: SessionLog,
) -> None:
    auth.login()
    token = auth.token()
    response = client.post("/console/t1/deal", data={"first_bidder": "1", "csrf_token": token})
    assert response.status_code == 303
    assert "Round 1 dealt" in client.get("/console/t1").get_data(as_text=True)
    table_session.submit(Bid(1, 3), "panel")
    table_session.submit(Play(1, Cards.from_str("3")), "camera")
    response = client.post(
        "/console/t1/correct",
        data={"seat": "1", "cards": "4", "who": "Dee", "why": "camera read 3", "csrf_token": token},
    )
    assert response.status_code == 303
    correction = log.entries(table_session.session_id)[-1]
    assert correction.kind == "correction"
    assert correction.data["action"]["cards"] == "4"
    assert (correction.data["by"], correction.data["why"]) == ("Dee", "camera read 3")
    response = client.post(
        "/console/t1/undo", data={"who": "Eve", "why": "wrong seat", "csrf_token": token}
    )
    assert response.status_code == 303
    undo = log.entries(table_session.session_id)[-1]
    assert (undo.kind, undo.data["by"], undo.data["why"]) == ("undo", "Eve", "wrong seat")
    response = client.post(
        "/console/t1/play",
        data={"seat": "1", "cards": "5", "who": "Dee", "why": "unreadable", "csrf_token": token},
    )
    assert response.status_code == 303
    typed = log.entries(table_session.session_id)[-1]
    assert typed.kind == "action" and typed.data["source"] == "console"
    assert typed.data["action"] == {"type": "play", "seat": 1, "cards": "5"}
    refused = client.post(
        "/console/t1/play",
        data={"seat": "0", "cards": "6", "who": "Dee", "why": "x", "csrf_token": token},
    )
    assert refused.status_code == 409
    assert "not on turn" in refused.get_data(as_text=True)
    history = client.get(f"/history/{table_session.session_id}").get_data(as_text=True)
    assert "camera read 3" in history and "wrong seat" in history


@pytest.mark.parametrize(
    ("action", "form", "message"),
    [
        ("deal", {"first_bidder": "7"}, "The first bidder must be a seat from 0 to 2."),
        ("deal", {"first_bidder": "x"}, "The first bidder must be a seat from 0 to 2."),
        ("undo", {"who": "Dee", "why": ""}, "Why: this field is required."),
        ("undo", {"who": "", "why": "x"}, "Who: this field is required."),
        ("correct", {"seat": "0", "cards": "3Z", "who": "D", "why": "w"}, "is not a card"),
        (
            "correct",
            {"seat": "0", "cards": "", "who": "D", "why": "w"},
            "Cards: this field is required.",
        ),
        ("end", {}, "Tick the box to confirm that the session should end."),
        ("start", {"name0": "A"}, "Every seat needs a name."),
    ],
)
def test_bad_form_input_gets_one_message(
    client: FlaskClient,
    auth: AuthActions,
    access: LocalAccess,
    action: str,
    form: dict[str, str],
    message: str,
) -> None:
    auth.login()
    before = access.key("t1")
    response = client.post(f"/console/t1/{action}", data={**form, "csrf_token": auth.token()})
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    assert access.key("t1") == before


def test_a_refusal_by_the_table_is_a_409(client: FlaskClient, auth: AuthActions) -> None:
    auth.login()
    response = client.post(
        "/console/t1/undo", data={"who": "Dee", "why": "x", "csrf_token": auth.token()}
    )
    assert response.status_code == 409
    assert "The table refused: there is no action to undo in this round" in response.get_data(
        as_text=True
    )


def test_end_then_start_a_session_with_new_names(
    client: FlaskClient, auth: AuthActions, access: LocalAccess
) -> None:
    auth.login()
    token = auth.token()
    response = client.post("/console/t1/end", data={"confirm": "yes", "csrf_token": token})
    assert response.status_code == 303
    html = client.get("/console/t1").get_data(as_text=True)
    assert "Start a session" in html
    names = {"name0": "Wu", "name1": "Xi", "name2": "Yu", "name3": "Zo", "csrf_token": token}
    response = client.post("/console/t1/start", data=names)
    assert response.status_code == 303
    assert [seat["name"] for seat in access.snapshot("t1")["seats"]] == ["Wu", "Xi", "Yu", "Zo"]
    assert access.snapshot("t1")["variant"] == "4p"


def test_acknowledge_an_alert(
    client: FlaskClient, auth: AuthActions, table_session: TableSession, access: LocalAccess
) -> None:
    auth.login()
    entry = table_session.alert("camera", "lens covered")
    page = client.get("/console/t1").get_data(as_text=True)
    assert 'id="form-acknowledge"' in page
    response = client.post(
        "/console/t1/acknowledge", data={"seq": str(entry.seq), "csrf_token": auth.token()}
    )
    assert response.status_code == 303
    assert access.snapshot("t1")["alert_ack"]["by"] == "Dee"
    assert "seen by Dee" in client.get("/table/t1").get_data(as_text=True)


def test_unknown_command_and_table(client: FlaskClient, auth: AuthActions) -> None:
    auth.login()
    token = auth.token()
    assert client.post("/console/t1/explode", data={"csrf_token": token}).status_code == 404
    assert client.post("/console/zz/undo", data={"csrf_token": token}).status_code == 404


def test_logout(client: FlaskClient, auth: AuthActions) -> None:
    auth.login()
    response = client.post("/console/logout", data={"csrf_token": auth.token()})
    assert response.status_code == 303
    assert client.get("/console/t1").status_code == 302


def test_a_redeal_is_confirmed_by_dealing_again(
    client: FlaskClient, auth: AuthActions, table_session: TableSession, access: LocalAccess
) -> None:
    auth.login()
    token = auth.token()
    table_session.start_round(0)
    refused = client.post("/console/t1/deal", data={"first_bidder": "1", "csrf_token": token})
    assert refused.status_code == 409
    assert "round 1 is still on" in refused.get_data(as_text=True)
    for seat in (0, 1, 2):
        table_session.submit(Pass(seat), "panel")
    assert access.snapshot("t1")["phase"] == "redeal"
    response = client.post("/console/t1/deal", data={"first_bidder": "1", "csrf_token": token})
    assert response.status_code == 303
    assert (access.snapshot("t1")["round"], access.snapshot("t1")["phase"]) == (2, "auction")


def test_guessing_is_stopped_after_five_wrong_passwords(
    client: FlaskClient, auth: AuthActions
) -> None:
    for _ in range(5):
        assert auth.login(password="guess").status_code == 401
    response = auth.login()
    assert response.status_code == 429
    assert "Too many wrong passwords from this address" in response.get_data(as_text=True)
    assert client.get("/console/t1").status_code == 302


def test_a_new_deck_is_told_to_the_camera_or_refused_without_one(
    client: FlaskClient,
    auth: AuthActions,
    app_config: dict[str, object],
    log: SessionLog,
    table_session: TableSession,
) -> None:
    auth.login()
    refused = client.post("/console/t1/deck", data={"csrf_token": auth.token()})
    assert refused.status_code == 409
    assert "table t1 has no camera, so there is no deck to forget" in refused.get_data(as_text=True)
    controller = Controller(
        table_session, eyes=Eyes(StillCamera, CALIBRATION, 3, reader=lambda _frame: [])
    )
    controller.start()
    with_camera = LocalAccess(
        log, [table_session], call=controller.call, deck_hook=controller.new_deck
    )
    try:
        camera_client = create_app(app_config, with_camera).test_client()
        camera_auth = AuthActions(camera_client)
        camera_auth.login()
        assert 'id="form-deck"' in camera_client.get("/console/t1").get_data(as_text=True)
        done = camera_client.post("/console/t1/deck", data={"csrf_token": camera_auth.token()})
        assert done.status_code == 303
        alert = log.entries(table_session.session_id)[-1]
        assert (alert.kind, alert.data["kind"]) == ("alert", "new_deck")
        assert alert.data["message"].startswith("Dee put a new deck on the table")
    finally:
        with_camera.close()
        controller.stop()
