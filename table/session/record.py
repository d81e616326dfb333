"""The hand record: one round per JSON line, readable without ddz-table (docs/record-format.md).

It is to Dou Dizhu what PGN is to chess: the record of what stood (bids, plays,
result), kept apart from the state that replaying it rebuilds. Writers and
readers take handles the caller opened. :func:`read_records` checks every line
(JSON, fields, and a replay through the rules) and gathers bad lines in
``errors`` with their line numbers instead of stopping at the first.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, TextIO

from table.rules import (
    Action,
    Bid,
    Cards,
    Pass,
    Played,
    Round,
    RoundEnded,
    RulesError,
    ShowKitty,
    action_from_dict,
    classify,
    get_variant,
    new_round,
    to_dict,
)
from table.session import entries as kinds
from table.session.entries import house_rules_from_dict, parse_time, time_text
from table.session.state import RoundLog, TableState
from table.session.store import NewSession
from table.session.table import public_event

FORMAT: Final = "ddz-hand/1"

Record = dict[str, Any]


def _result(log: RoundLog) -> str:
    if log.outcome is not None:
        return "landlord" if log.outcome.landlord_won else "farmers"
    return "redeal" if log.is_redeal else "unfinished"


def round_record(state: TableState, log: RoundLog) -> Record:
    """Turns one deal of a folded session into its record line (a dict)."""
    info = state.info
    assert info is not None
    bids: list[dict[str, Any]] = []
    plays: list[dict[str, Any]] = []
    shown: str | None = None
    left = [get_variant(info.variant).hand_size] * len(info.players)
    landlord: int | None = None
    bid = 0
    ended: datetime | None = None
    for step in log.steps:
        action = step.action
        if isinstance(action, Bid):
            bids.append({"seat": action.seat, "bid": action.amount})
        elif isinstance(action, Pass) and landlord is None:
            bids.append({"seat": action.seat, "bid": "pass"})
        elif isinstance(action, Pass):
            plays.append({"seat": action.seat, "pass": True})
        elif isinstance(action, ShowKitty):
            shown = str(action.cards)
        else:
            combination = classify(action.cards, info.variant)
            assert combination is not None
            left[action.seat] -= action.cards.size
            plays.append(
                {
                    "seat": action.seat,
                    "cards": str(action.cards),
                    "kind": combination.kind.value,
                    "left": left[action.seat],
                }
            )
        for event in step.event_data:
            if event.get("type") == "landlord":
                landlord, bid = int(event["seat"]), int(event["bid"])
                left[landlord] += get_variant(info.variant).kitty_size
            if event.get("type") == "round_end":
                ended = step.at
    outcome = log.outcome
    deal = None
    if log.hands is not None or log.kitty is not None:
        deal = {
            "hands": None if log.hands is None else [str(hand) for hand in log.hands],
            "kitty": None if log.kitty is None else str(log.kitty),
        }
    return {
        "format": FORMAT,
        "session": info.id,
        "table": info.table,
        "variant": info.variant,
        "house_rules": info.house_rules,
        "session_started": time_text(info.started_at),
        "players": list(info.players),
        "round": log.number,
        "started": time_text(log.at),
        "ended": None if ended is None else time_text(ended),
        "dealer": log.dealer,
        "first_bidder": log.first_bidder,
        "deal": deal,
        "bids": bids,
        "landlord": landlord,
        "bid": bid,
        "kitty": shown,
        "plays": plays,
        "result": _result(log),
        "winner": None if outcome is None else outcome.winner,
        "bombs": sum(p.get("kind") == "bomb" for p in plays),
        "rockets": sum(p.get("kind") == "rocket" for p in plays),
        "spring": False if outcome is None else outcome.spring,
        "multiplier": None if outcome is None else outcome.multiplier,
        "payments": None if outcome is None else list(outcome.payments),
    }


def session_records(state: TableState) -> list[Record]:
    """Lists the record lines of every deal of a folded session."""
    return [round_record(state, log) for log in state.rounds]


def write_records(records: Iterable[Record], handle: TextIO) -> int:
    """Writes records as JSON Lines to an open handle; returns how many."""
    count = 0
    for record in records:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count


CSV_FIELDS: Final = (
    *("session", "table", "variant", "round", "started", "ended", "dealer", "landlord", "bid"),
    *("result", "winner", "multiplier", "bombs", "rockets", "spring"),
)


def write_csv(records: Iterable[Record], handle: TextIO) -> int:
    """Writes one CSV row per round (names and payments per seat) to an open handle."""
    seats = 4
    columns = [*CSV_FIELDS]
    for seat in range(seats):
        columns += [f"player{seat}", f"payment{seat}"]
    writer = csv.DictWriter(handle, columns, lineterminator="\n")
    writer.writeheader()
    count = 0
    for record in records:
        row = {name: record[name] for name in CSV_FIELDS}
        payments = record["payments"] or [None] * len(record["players"])
        for seat, (name, paid) in enumerate(zip(record["players"], payments, strict=True)):
            row[f"player{seat}"] = name
            row[f"payment{seat}"] = paid
        writer.writerow(row)
        count += 1
    return count


@dataclass
class HandFile:
    """What :func:`read_records` found: the good records and each bad line's reason."""

    records: list[tuple[int, Record]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)


def read_records(handle: TextIO) -> HandFile:
    """Reads and checks a JSON Lines hand record from an open handle.

    Every line is parsed, checked field by field and replayed through the rules;
    a bad line lands in ``errors`` as ``(line number, reason)``. Blank lines are
    skipped.
    """
    found = HandFile()
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            check_record(record)
        except json.JSONDecodeError as error:
            found.errors.append((number, f"not JSON ({error.msg} at column {error.colno})"))
        except (ValueError, KeyError, TypeError) as error:
            found.errors.append((number, _reason(error)))
        else:
            found.records.append((number, record))
    return found


def _reason(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"the field {error} is missing"
    return str(error)


def _require(
    record: Record, name: str, kind: type | tuple[type, ...], nullable: bool = False
) -> Any:
    if name not in record:
        raise KeyError(name)
    value = record[name]
    if value is None and nullable:
        return None
    if isinstance(value, bool) and kind is int:
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    if not isinstance(value, kind):
        raise ValueError(f"{name} has the wrong type: {value!r}")
    return value


def record_actions(record: Record) -> list[Action]:
    """Lists a record's actions in the order they were made: bids, kitty shown, plays.

    :raises: :exc:`ValueError` for a malformed bid or play.
    """
    actions: list[Action] = []
    for bid in _require(record, "bids", list):
        if not isinstance(bid, dict):
            raise ValueError(f"a bid must be an object, not {bid!r}")
        seat = int(bid["seat"])
        amount = bid["bid"]
        if amount == "pass":
            actions.append(Pass(seat))
        elif isinstance(amount, int) and not isinstance(amount, bool):
            actions.append(Bid(seat, amount))
        else:
            raise ValueError(f'a bid is 1, 2, 3 or "pass", not {amount!r}')
    kitty = _require(record, "kitty", str, nullable=True)
    if kitty is not None:
        actions.append(ShowKitty(Cards.from_str(kitty)))
    for play in _require(record, "plays", list):
        if not isinstance(play, dict):
            raise ValueError(f"a play must be an object, not {play!r}")
        if play.get("pass") is True:
            actions.append(Pass(int(play["seat"])))
        else:
            actions.append(action_from_dict({"type": "play", **play}))
    return actions


def _deal(record: Record) -> tuple[list[Cards] | None, Cards | None]:
    deal = _require(record, "deal", dict, nullable=True)
    if deal is None:
        return None, None
    hands = deal.get("hands")
    kitty = deal.get("kitty")
    return (
        None if hands is None else [Cards.from_str(str(hand)) for hand in hands],
        None if kitty is None else Cards.from_str(str(kitty)),
    )


def check_record(record: Any) -> Round:
    """Checks one record and replays it; returns the replayed round.

    :raises: :exc:`ValueError` (or :exc:`KeyError` for a missing field) saying
        what is wrong, including a play the rules refuse or a result that does
        not follow from the plays.
    """
    if not isinstance(record, dict):
        raise ValueError("a record line must be a JSON object")
    if record.get("format") != FORMAT:
        raise ValueError(f"the format must be {FORMAT!r}, not {record.get('format')!r}")
    for name in ("session", "table", "variant", "session_started", "started", "result"):
        _require(record, name, str)
    _require(record, "ended", str, nullable=True)
    parse_time(record["session_started"])
    parse_time(record["started"])
    if record["ended"] is not None:
        parse_time(record["ended"])
    variant = get_variant(record["variant"])
    players = _require(record, "players", list)
    if len(players) != variant.players or not all(isinstance(p, str) for p in players):
        raise ValueError(f"a {variant} record names {variant.players} players")
    _require(record, "round", int)
    rules = house_rules_from_dict(_require(record, "house_rules", dict))
    hands, kitty = _deal(record)
    try:
        start = new_round(
            variant,
            dealer=_require(record, "dealer", int),
            first_bidder=_require(record, "first_bidder", int),
            hands=hands,
            kitty=kitty,
            house_rules=rules,
        )
        played = Round(start)
        outcome = None
        shown = iter(p for p in record["plays"] if p.get("pass") is not True)
        for number, action in enumerate(record_actions(record), start=1):
            try:
                events = played.push(action)
            except RulesError as error:
                raise ValueError(f"action {number} ({action}) breaks the rules: {error}") from None
            for event in events:
                if isinstance(event, Played):
                    _check_play(next(shown), event)
                if isinstance(event, RoundEnded):
                    outcome = event.outcome
    except RulesError as error:
        raise ValueError(str(error)) from None
    _check_result(record, played, outcome)
    return played


def _check_play(play: dict[str, Any], event: Played) -> None:
    """Checks a play's optional ``kind`` and ``left`` against the rules' reading."""
    kind = event.combination.kind.value
    if "kind" in play and play["kind"] != kind:
        raise ValueError(f"{play['cards']} is a {kind}, not a {play['kind']}")
    if "left" in play and play["left"] != event.cards_left:
        raise ValueError(
            f"after playing {play['cards']} seat {event.seat} has {event.cards_left} cards"
            f" left, not {play['left']}"
        )


def _check_result(record: Record, played: Round, outcome: Any) -> None:
    """Checks the result fields against what the replay gives."""
    state = played.state
    if outcome is not None:
        result = "landlord" if outcome.landlord_won else "farmers"
    else:
        result = "redeal" if state.phase.value == "redeal" else "unfinished"
    expected = {
        "result": result,
        "landlord": state.landlord,
        "bid": state.highest_bid if state.landlord is not None else 0,
        "winner": None if outcome is None else outcome.winner,
        "multiplier": None if outcome is None else outcome.multiplier,
        "payments": None if outcome is None else list(outcome.payments),
        "bombs": state.bombs,
        "rockets": state.rockets,
        "spring": False if outcome is None else outcome.spring,
    }
    for name, value in expected.items():
        if name not in record:
            raise KeyError(name)
        if record[name] != value:
            raise ValueError(f"{name} is {record[name]!r} but the plays give {value!r}")


def _same_session(first: Record, record: Record) -> str | None:
    for name in ("table", "variant", "players", "house_rules", "session_started"):
        if record[name] != first[name]:
            return f"{name} differs from the earlier lines of session {first['session']}"
    return None


def plan_import(found: HandFile) -> list[NewSession]:
    """Groups checked records into sessions to write; adds cross-line errors to ``found``.

    An imported session is an archive: it ends after its last round.
    """
    groups: dict[str, list[tuple[int, Record]]] = {}
    for number, record in found.records:
        group = groups.setdefault(record["session"], [])
        if group:
            first = group[0][1]
            problem = _same_session(first, record)
            if problem is None and record["round"] <= group[-1][1]["round"]:
                problem = f"round {record['round']} comes after round {group[-1][1]['round']}"
            if problem is not None:
                found.errors.append((number, problem))
                continue
        group.append((number, record))
    found.errors.sort()
    return [_session(source, lines) for source, lines in groups.items()]


def _session(source: str, lines: Sequence[tuple[int, Record]]) -> NewSession:
    first = lines[0][1]
    new = NewSession(
        table=first["table"],
        variant=first["variant"],
        players=tuple(first["players"]),
        house_rules=dict(first["house_rules"]),
        started_at=parse_time(first["session_started"]),
        extra={"imported_from": source},
    )
    totals = [0] * len(first["players"])
    at = new.started_at
    for _, record in lines:
        at = parse_time(record["started"])
        hands, kitty = _deal(record)
        start: dict[str, Any] = {
            "round": record["round"],
            "dealer": record["dealer"],
            "first_bidder": record["first_bidder"],
        }
        if hands is not None:
            start["hands"] = [str(hand) for hand in hands]
        if kitty is not None:
            start["kitty"] = str(kitty)
        new.entries.append((kinds.ROUND_START, start, at))
        played = Round(
            new_round(
                first["variant"],
                dealer=record["dealer"],
                first_bidder=record["first_bidder"],
                hands=hands,
                kitty=kitty,
                house_rules=house_rules_from_dict(first["house_rules"]),
            )
        )
        actions = record_actions(record)
        for number, action in enumerate(actions, start=1):
            events = played.push(action)
            when = parse_time(record["ended"]) if number == len(actions) and record["ended"] else at
            data = {
                "action": to_dict(action),
                "source": "import",
                "events": [public_event(event) for event in events],
            }
            new.entries.append((kinds.ACTION, data, when))
        for seat, paid in enumerate(record["payments"] or ()):
            totals[seat] += paid
    best = max(totals)
    leaders = [name for name, total in zip(first["players"], totals, strict=True) if total == best]
    settled = sum(1 for _, record in lines if record["payments"] is not None)
    end = {"totals": totals, "leaders": leaders, "rounds": settled}
    new.entries.append((kinds.SESSION_END, end, at))
    return new
