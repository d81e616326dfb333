"""The table's state as a fold over its log: replay the entries, get the table back.

:class:`TableState` is pure. ``TableState.from_entries(entries)`` folds a whole
log and ``state.apply(entry)`` folds one more entry, through the same code, so a
controller that restarts after a crash and a dashboard that follows the table
live agree on every field. An entry the fold cannot use (a gap in the sequence,
a malformed payload) is skipped and kept in ``errors`` with its sequence
number, like a PGN reader's bad moves, instead of stopping the replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from table.rules import (
    Action,
    AuctionPassed,
    BidMade,
    Cards,
    Combination,
    Event,
    HouseRules,
    KittyShown,
    LandlordChosen,
    Ledger,
    Outcome,
    Phase,
    Played,
    PlayPassed,
    Redeal,
    Round,
    RoundEnded,
    RoundState,
    RulesError,
    TrickWon,
    action_from_dict,
    get_variant,
    new_round,
    to_dict,
)
from table.session import entries as kinds
from table.session.entries import LogEntry, SessionInfo, house_rules_from_dict, paused_gc

#: Devices whose health a referee cares about, as the snapshot names them.
DEVICES = ("panel", "camera", "broker")


def show_off(snapshot: dict[str, Any], devices: Iterable[str]) -> None:
    """Shows the devices a table runs without as ``off`` in a snapshot of its session.

    Nothing is logged about a device that is not there, so the log alone leaves it
    ``unknown``; the screens and MQTT say it is off, and the console offers nothing
    that needs it.
    """
    for device in devices:
        snapshot["devices"][device] = {"status": "off", "detail": "not configured"}


class Step:
    """One accepted action of a round, as logged.

    It keeps its log entry and reads the payload only when asked: a rebuild of
    a long session folds thousands of steps of settled rounds that nobody reads.
    """

    __slots__ = ("_action", "_events", "entry", "variant")

    def __init__(self, entry: LogEntry, variant: str) -> None:
        self.entry = entry
        self.variant = variant
        self._action: Action | None = None
        self._events: tuple[Event, ...] | None = None

    def __repr__(self) -> str:
        return f"Step(seq={self.seq}, action={self.action_data})"

    @property
    def seq(self) -> int:
        """Gets the sequence number of the entry that brought the action."""
        return self.entry.seq

    @property
    def at(self) -> datetime:
        """Gets when the action was logged."""
        return self.entry.at

    @property
    def source(self) -> str:
        """Gets where the action came from (``panel``, ``camera``...; ``correction``)."""
        if self.entry.kind == kinds.CORRECTION:
            return "correction"
        return str(self.entry.data.get("source", ""))

    @property
    def action_data(self) -> dict[str, Any]:
        """Gets the action as logged (JSON)."""
        action: dict[str, Any] = self.entry.data["action"]
        return action

    @property
    def event_data(self) -> list[dict[str, Any]]:
        """Gets the events as logged (JSON)."""
        events: list[dict[str, Any]] = self.entry.data["events"]
        return events

    @property
    def action(self) -> Action:
        """Gets the action as a rules value."""
        if self._action is None:
            self._action = action_from_dict(self.action_data)
        return self._action

    @property
    def events(self) -> tuple[Event, ...]:
        """Gets the events the action produced, as rules values.

        :raises: :exc:`ValueError` for a malformed logged event.
        """
        if self._events is None:
            self._events = tuple(event_from_dict(e, self.variant) for e in self.event_data)
        return self._events

    @property
    def outcome(self) -> Outcome | None:
        """Gets the outcome if this action settled the round (its last event says so)."""
        if not self.entry.may_mention("round_end"):
            return None
        events = self.event_data
        if events and events[-1].get("type") == "round_end":
            return outcome_from_dict(events[-1]["outcome"])
        return None


def event_from_dict(data: dict[str, Any], variant: str = "3p") -> Event:
    """Rebuilds an event from its logged form (``table.rules.to_dict``).

    :raises: :exc:`ValueError` for an unknown or malformed event.

    >>> event_from_dict({"type": "trick", "seat": 2})
    TrickWon(seat=2)
    """
    kind = data.get("type")
    try:
        if kind == "bid":
            return BidMade(int(data["seat"]), int(data["amount"]))
        if kind == "auction_pass":
            return AuctionPassed(int(data["seat"]))
        if kind == "landlord":
            kitty = data.get("kitty")
            kitty_cards = None if kitty is None else Cards.from_str(str(kitty))
            return LandlordChosen(int(data["seat"]), int(data["bid"]), kitty_cards)
        if kind == "redeal":
            return Redeal()
        if kind == "kitty":
            return KittyShown(Cards.from_str(str(data["cards"])))
        if kind == "play":
            cards = str(data["combination"]["cards"])
            combination = Combination.from_str(cards, variant)
            return Played(int(data["seat"]), combination, int(data["cards_left"]))
        if kind == "play_pass":
            return PlayPassed(int(data["seat"]))
        if kind == "trick":
            return TrickWon(int(data["seat"]))
        if kind == "round_end":
            return RoundEnded(outcome_from_dict(data["outcome"]))
    except KeyError as missing:
        raise ValueError(f"a {kind} event needs the field {missing}") from None
    raise ValueError(f"unknown event type {kind!r}")


def outcome_from_dict(data: dict[str, Any]) -> Outcome:
    """Rebuilds a round's outcome from its logged form.

    :raises: :exc:`KeyError` or :exc:`ValueError` for a malformed outcome.
    """
    return Outcome(
        landlord=int(data["landlord"]),
        winner=int(data["winner"]),
        landlord_won=bool(data["landlord_won"]),
        bid=int(data["bid"]),
        bombs=int(data["bombs"]),
        rockets=int(data["rockets"]),
        spring=bool(data["spring"]),
        multiplier=int(data["multiplier"]),
        payments=tuple(int(paid) for paid in data["payments"]),
    )


@dataclass
class RoundLog:
    """One deal as the log tells it: how it started and the actions that stand."""

    number: int
    seq: int
    at: datetime
    deal: dict[str, Any]
    variant: str
    house_rules: HouseRules
    steps: list[Step] = field(default_factory=list)
    outcome: Outcome | None = None

    @property
    def dealer(self) -> int:
        """Gets the dealer's seat."""
        return int(self.deal["dealer"])

    @property
    def first_bidder(self) -> int:
        """Gets the seat that bid first."""
        return int(self.deal["first_bidder"])

    @cached_property
    def hands(self) -> tuple[Cards, ...] | None:
        """Gets the dealt hands, when the referee knew them."""
        hands = self.deal.get("hands")
        return None if hands is None else tuple(Cards.from_str(str(hand)) for hand in hands)

    @cached_property
    def kitty(self) -> Cards | None:
        """Gets the dealt kitty, when the referee knew it."""
        kitty = self.deal.get("kitty")
        return None if kitty is None else Cards.from_str(str(kitty))

    @cached_property
    def start(self) -> RoundState:
        """Gets the round's starting state.

        :raises: :exc:`ValueError` for a deal that does not fit the variant.
        """
        return new_round(
            self.variant,
            dealer=self.dealer,
            first_bidder=self.first_bidder,
            hands=self.hands,
            kitty=self.kitty,
            house_rules=self.house_rules,
        )

    @property
    def is_redeal(self) -> bool:
        """Tells whether every seat passed and the cards had to be dealt again."""
        steps = self.steps
        return bool(steps) and any(e.get("type") == "redeal" for e in steps[-1].event_data)

    def event_data(self) -> Iterator[dict[str, Any]]:
        """Iterates over the logged events of the actions that stand, in order."""
        for step in self.steps:
            yield from step.event_data


class TableState:
    """The fold of a session's log: session, ledger, current round, history, health.

    Settled rounds are taken from the log as written (their logged events give
    the ledger and the history); only the round in progress is replayed through
    the rules, when :attr:`round` is first asked for. That keeps a rebuild of a
    long session fast and makes the incremental and the full fold the same
    computation. A logged action of the current round that the rules refuse on
    replay is left out of :attr:`round` and reported in :attr:`round_errors`.

    >>> from table.session.entries import parse_time
    >>> at = parse_time("2026-11-30T10:20:00Z")
    >>> log = [
    ...     LogEntry("s1", 1, at, "session_start", {"table": "t1", "variant": "3p",
    ...              "players": ["Ann", "Bo", "Cy"], "house_rules": {}}),
    ...     LogEntry("s1", 2, at, "round_start", {"round": 1, "dealer": 0, "first_bidder": 1}),
    ...     LogEntry("s1", 3, at, "action", {"action": {"type": "bid", "seat": 1, "amount": 3},
    ...              "source": "panel", "events": []}),
    ... ]
    >>> state = TableState.from_entries(log)
    >>> state.snapshot()["landlord"], state.snapshot()["phase"], state.seq
    (1, 'play', 3)
    """

    def __init__(self) -> None:
        self.info: SessionInfo | None = None
        self.house_rules = HouseRules()
        self.ledger: Ledger | None = None
        self.rounds: list[RoundLog] = []
        self.last_rejection: dict[str, Any] | None = None
        self.last_alert: dict[str, Any] | None = None
        self.devices: dict[str, dict[str, Any]] = {
            name: {"status": "unknown", "detail": ""} for name in DEVICES
        }
        self.end: dict[str, Any] | None = None
        self.seq = 0
        self.errors: list[tuple[int, str]] = []
        self.round_errors: list[tuple[int, str]] = []
        self._round: Round | None = None

    @classmethod
    def from_entries(cls, entries: Iterable[LogEntry]) -> TableState:
        """Folds a whole log, oldest entry first."""
        state = cls()
        with paused_gc():
            for entry in entries:
                state.apply(entry)
        return state

    @property
    def current(self) -> RoundLog | None:
        """Gets the latest deal, finished or not."""
        return self.rounds[-1] if self.rounds else None

    @property
    def round(self) -> Round | None:
        """Gets the current round replayed through the rules (``None`` before the first deal)."""
        log = self.current
        if log is None:
            return None
        if self._round is None:
            self.round_errors = []
            try:
                played = Round(log.start)
            except (RulesError, ValueError) as error:
                self.round_errors.append((log.seq, f"the deal does not fit: {error}"))
                return None
            for step in log.steps:
                try:
                    played.push(step.action)
                except (RulesError, ValueError, KeyError, TypeError) as error:
                    self.round_errors.append((step.seq, f"the rules refuse it: {error}"))
            self._round = played
        return self._round

    @property
    def is_ended(self) -> bool:
        """Tells whether the session has ended."""
        return self.end is not None

    @property
    def outcomes(self) -> list[Outcome]:
        """Lists the outcomes of the settled rounds, in order."""
        return [r.outcome for r in self.rounds if r.outcome is not None]

    def apply(self, entry: LogEntry) -> None:
        """Folds one more entry; a full fold is these calls in sequence order.

        An entry out of sequence or a malformed one is kept in ``errors`` and
        changes nothing else.
        """
        if entry.seq != self.seq + 1:
            self.errors.append((entry.seq, f"expected entry {self.seq + 1}, got {entry.seq}"))
            if entry.seq <= self.seq:
                return
        self.seq = entry.seq
        if self.info is None and entry.kind != kinds.SESSION_START:
            self.errors.append((entry.seq, "the log does not begin with session_start"))
            return
        try:
            self._fold(entry)
        except (RulesError, ValueError, KeyError, TypeError) as error:
            self.errors.append((entry.seq, f"{entry.kind}: {error}"))

    def _fold(self, entry: LogEntry) -> None:
        kind = entry.kind
        if kind == kinds.ACTION:  # most entries: their payload is read only when needed
            self._push(entry)
            return
        data = entry.data
        if kind == kinds.SESSION_START:
            self._start_session(entry)
        elif kind == kinds.ROUND_START:
            self._start_round(entry)
        elif kind == kinds.REJECTED:
            self._reject(data)
        elif kind == kinds.UNDO:
            self._pop(int(data["undone_seq"]))
        elif kind == kinds.CORRECTION:
            self._pop(int(data["replaces_seq"]))
            self._push(entry)
        elif kind == kinds.DEVICE:
            self.devices[str(data["device"])] = {
                "status": str(data["status"]),
                "detail": str(data.get("detail", "")),
            }
        elif kind == kinds.ALERT:
            self.last_alert = {"kind": data["kind"], "message": data["message"], "seq": entry.seq}
        elif kind == kinds.SESSION_END:
            self.end = dict(data)
        else:
            raise ValueError(f"unknown entry kind {kind!r}")

    def _start_session(self, entry: LogEntry) -> None:
        if self.info is not None:
            raise ValueError("the session has already started")
        data = entry.data
        players = tuple(str(name) for name in data["players"])
        variant = get_variant(str(data["variant"]))
        if len(players) != variant.players:
            raise ValueError(f"a {variant} session needs {variant.players} players")
        self.house_rules = house_rules_from_dict(dict(data.get("house_rules") or {}))
        self.info = SessionInfo(
            id=entry.session_id,
            table=str(data["table"]),
            variant=variant.name,
            players=players,
            house_rules=dict(data.get("house_rules") or {}),
            started_at=entry.at,
        )
        self.ledger = Ledger(players)

    def _start_round(self, entry: LogEntry) -> None:
        assert self.info is not None
        data = entry.data
        players = len(self.info.players)
        for name in ("dealer", "first_bidder"):
            if not 0 <= int(data[name]) < players:
                raise ValueError(f"{name} {data[name]} is no seat at a {players}-player table")
        self._round = None
        self.round_errors = []
        self.last_rejection = None
        number = int(data.get("round", len(self.rounds) + 1))
        log = RoundLog(number, entry.seq, entry.at, data, self.info.variant, self.house_rules)
        self.rounds.append(log)

    def _round_log(self) -> RoundLog:
        if not self.rounds:
            raise ValueError("no round has started")
        return self.rounds[-1]

    def _push(self, entry: LogEntry) -> None:
        log = self._round_log()
        assert self.ledger is not None
        step = Step(entry, log.variant)
        outcome = step.outcome
        if self._round is not None:
            try:
                self._round.push(step.action)
            except (RulesError, ValueError, KeyError, TypeError):
                self._round = None  # replayed again, with the refusal noted, when asked for
        log.steps.append(step)
        if outcome is not None:
            log.outcome = outcome
            self.ledger.record(outcome)
        self.last_rejection = None

    def _pop(self, seq: int) -> None:
        log = self._round_log()
        assert self.ledger is not None
        if not log.steps:
            raise ValueError("nothing to take back in this round")
        if log.steps[-1].seq != seq:
            raise ValueError(f"entry {seq} is not the last action of the round")
        step = log.steps.pop()
        if self._round is not None and not self.round_errors:
            self._round.pop()
        else:
            self._round = None
        outcome = step.outcome
        if outcome is not None:
            _unrecord(self.ledger, outcome)
            log.outcome = None

    def _reject(self, data: dict[str, Any]) -> None:
        action = dict(data.get("action") or {})
        self.last_rejection = {
            "seat": action.get("seat"),
            "action": action,
            "reason": str(data["reason"]),
        }

    def snapshot(self) -> dict[str, Any]:
        """Gets the public view for MQTT and the dashboard: never a hand or an unshown kitty."""
        info = self.info
        if info is None or self.ledger is None:
            return {"session": None, "seq": self.seq, "phase": "waiting"}
        players = len(info.players)
        log = self.current
        played = self.round
        state = played.state if played is not None else None
        bids: list[int | str | None] = [None] * players
        trick_plays: list[dict[str, Any] | str | None] = [None] * players
        kitty_shown: str | None = None
        if log is not None:
            for event in log.event_data():
                kind = event.get("type")
                if kind == "bid":
                    bids[event["seat"]] = event["amount"]
                elif kind == "auction_pass":
                    bids[event["seat"]] = "pass"
                elif kind == "kitty":
                    kitty_shown = event["cards"]
            trick_plays = _trick_plays(log, players)
        phase = "waiting" if state is None else state.phase.value
        if self.is_ended:
            phase = "ended"
        seats = [
            {
                "seat": seat,
                "name": name,
                "cards_left": state.cards_left[seat] if state is not None else None,
                "is_landlord": state is not None and state.landlord == seat,
                "is_dealer": state is not None and state.dealer == seat,
                "bid": bids[seat],
                "score": self.ledger.totals[seat],
            }
            for seat, name in enumerate(info.players)
        ]
        on_turn = state is not None and state.phase in (Phase.AUCTION, Phase.PLAY)
        trick = None
        if state is not None and state.trick is not None:
            trick = {
                "cards": str(state.trick.cards),
                "kind": state.trick.kind.value,
                "description": state.trick.describe(),
                "seat": state.trick_seat,
            }
        return {
            "table": info.table,
            "session": info.id,
            "seq": self.seq,
            "variant": info.variant,
            "phase": phase,
            "round": log.number if log is not None else 0,
            "seats": seats,
            "turn": state.turn if on_turn and state is not None else None,
            "highest_bid": state.highest_bid if state is not None else 0,
            "landlord": state.landlord if state is not None else None,
            "kitty": kitty_shown,
            "trick": trick,
            "trick_plays": trick_plays,
            "multiplier": self._multiplier(),
            "bombs": state.bombs if state is not None else 0,
            "rockets": state.rockets if state is not None else 0,
            "doublings": state.doublings if state is not None else 0,
            "winner": state.winner if state is not None else None,
            "history": [_history_row(r) for r in self.rounds if r.outcome is not None],
            "totals": list(self.ledger.totals),
            "rounds_settled": self.ledger.rounds,
            "last_rejection": self.last_rejection,
            "last_alert": self.last_alert,
            "devices": {name: dict(health) for name, health in self.devices.items()},
            "leaders": list(self.end.get("leaders", [])) if self.end is not None else None,
        }

    def _multiplier(self) -> int:
        log = self.current
        if log is not None and log.outcome is not None:
            return log.outcome.multiplier
        played = self.round
        if played is None:
            return 1
        multiplier = played.state.multiplier
        cap = self.house_rules.multiplier_cap
        return min(multiplier, cap) if cap is not None else multiplier


def _unrecord(ledger: Ledger, outcome: Outcome) -> None:
    """Takes a settled round back out of the ledger (an undo of its last play)."""
    for seat, amount in enumerate(outcome.payments):
        ledger.totals[seat] -= amount
    ledger.rounds -= 1
    ledger.dealer = (ledger.dealer - 1) % len(ledger.players)


def _trick_plays(log: RoundLog, players: int) -> list[dict[str, Any] | str | None]:
    """Gets each seat's latest play or pass in the current (or final) trick."""
    plays: list[dict[str, Any] | str | None] = [None] * players
    done = [False] * players
    for step in reversed(log.steps):
        for event in reversed(step.event_data):
            kind = event.get("type")
            if kind in ("trick", "landlord"):
                return plays
            seat = event.get("seat")
            if kind not in ("play", "play_pass") or not isinstance(seat, int) or done[seat]:
                continue
            done[seat] = True
            if kind == "play_pass":
                plays[seat] = "pass"
            else:
                combination = event["combination"]
                plays[seat] = {"cards": combination["cards"], "kind": combination["kind"]}
    return plays


def _history_row(log: RoundLog) -> dict[str, Any]:
    outcome = log.outcome
    assert outcome is not None
    row = to_dict(outcome)
    del row["type"]
    return {"round": log.number, **row}
