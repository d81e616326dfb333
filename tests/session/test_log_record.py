"""The hand record: export and import round-trip; a bad line is named and nothing imported."""

from __future__ import annotations

import csv
import io
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_helpers import play_messy

from table.rules import Bid
from table.session.record import (
    FORMAT,
    plan_import,
    read_records,
    session_records,
    write_csv,
    write_records,
)
from table.session.state import TableState
from table.session.store import SessionLog
from table.session.table import TableSession


def _session(log: SessionLog, seed: int, variant: str, rounds: int) -> TableSession:
    names = ["Ann", "Bo", "Cy", "Di"][: 3 if variant == "3p" else 4]
    session = TableSession.start(log, f"t{seed}", variant, names)
    play_messy(session, rounds, random.Random(seed))
    return session


def _records(log: SessionLog, session_id: str) -> list[dict[str, Any]]:
    return session_records(TableState.from_entries(log.entries(session_id)))


def _text(records: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    write_records(records, out)
    return out.getvalue()


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(["3p", "4p"]), unfinished=st.booleans())
def test_export_then_import_gives_the_same_record(
    log: SessionLog, seed: int, variant: str, unfinished: bool
) -> None:
    session = _session(log, seed, variant, rounds=2)
    if unfinished:
        session.start_round(first_bidder=1)
        session.submit(Bid(1, 1), "panel")
    exported = _records(log, session.session_id)
    found = read_records(io.StringIO(_text(exported)))
    assert found.errors == []
    (imported,) = log.import_sessions(plan_import(found))
    assert found.errors == []
    again = _records(log, imported.id)
    assert [{**r, "session": None} for r in again] == [{**r, "session": None} for r in exported]
    assert not imported.is_open
    start = log.entries(imported.id)[0]
    assert start.data["imported_from"] == session.session_id


@pytest.fixture(scope="module")
def good_lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Gets the record lines of a short real session (made once: the tests only read them)."""
    with SessionLog.open(str(tmp_path_factory.mktemp("record") / "log.sqlite3")) as log:
        session = _session(log, 5, "3p", rounds=3)
        return _text(_records(log, session.session_id)).splitlines()


def _break(line: str, change: Any) -> str:
    record = json.loads(line)
    change(record)
    return json.dumps(record)


def _swap_first_plays(record: dict[str, Any]) -> None:
    plays = record["plays"]
    plays[0], plays[1] = plays[1], plays[0]


BREAKS = [
    (lambda line: line[:-5], "not JSON"),
    (lambda line: "[1, 2]", "must be a JSON object"),
    (lambda line: _break(line, lambda r: r.update(format="pgn")), "format must be 'ddz-hand/1'"),
    (lambda line: _break(line, lambda r: r.pop("dealer")), "the field 'dealer' is missing"),
    (lambda line: _break(line, lambda r: r.update(players=["A"])), "3p record names 3 players"),
    (lambda line: _break(line, _swap_first_plays), "breaks the rules"),
    (lambda line: _break(line, lambda r: r.update(payments=[9, 9, -18])), "payments is"),
    (lambda line: _break(line, lambda r: r.update(started="soon")), "Invalid isoformat"),
    (lambda line: _break(line, lambda r: r["plays"][0].update(kind="bomb")), "not a bomb"),
    (lambda line: _break(line, lambda r: r["plays"][0].update(left=99)), "not 99"),
]


@pytest.mark.parametrize(("damage", "reason"), BREAKS)
def test_a_bad_line_is_named_with_its_number(
    good_lines: list[str], damage: Any, reason: str
) -> None:
    lines = [*good_lines]
    lines[1] = damage(lines[1])
    found = read_records(io.StringIO("\n".join(lines) + "\n"))
    assert len(found.errors) == 1
    number, message = found.errors[0]
    assert number == 2 and reason in message
    assert [n for n, _ in found.records] == [1, 3]


def test_lines_of_one_session_must_agree(good_lines: list[str]) -> None:
    lines = [good_lines[0], _break(good_lines[1], lambda r: r.update(table="elsewhere"))]
    lines.append(good_lines[0])
    found = read_records(io.StringIO("\n".join(lines)))
    plan_import(found)
    assert found.errors == [
        (2, f"table differs from the earlier lines of session {json.loads(lines[0])['session']}"),
        (3, "round 1 comes after round 1"),
    ]


def test_records_are_plain_json_lines(good_lines: list[str]) -> None:
    record = json.loads(good_lines[0])
    assert record["format"] == FORMAT
    assert record["players"] == ["Ann", "Bo", "Cy"]
    assert record["result"] in ("landlord", "farmers", "redeal")
    assert all(
        set(play) in ({"seat", "cards", "kind", "left"}, {"seat", "pass"})
        for play in record["plays"]
    )


def test_csv_has_a_row_per_round(good_lines: list[str]) -> None:
    records = [json.loads(line) for line in good_lines]
    out = io.StringIO()
    assert write_csv(records, out) == len(records)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [int(row["round"]) for row in rows] == [r["round"] for r in records]
    settled = [row for row in rows if row["payment0"]]
    assert all(sum(int(row[f"payment{s}"]) for s in range(3)) == 0 for row in settled)
    assert all(row["player3"] == "" for row in rows)
