"""Log entries round-trip as JSON and hide the deal when published."""

from __future__ import annotations

import gc
import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from table.session.entries import KINDS, LogEntry, paused_gc

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@given(
    seq=st.integers(1, 10**6),
    at=st.datetimes(
        min_value=datetime(2000, 1, 1),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=8))]),
    ),
    kind=st.sampled_from(KINDS),
    data=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
)
def test_entries_round_trip_through_json(
    seq: int, at: datetime, kind: str, data: dict[str, object]
) -> None:
    entry = LogEntry("20261130-abcde", seq, at.astimezone(UTC), kind, data)
    again = LogEntry.from_dict(json.loads(json.dumps(entry.to_dict())))
    assert again == entry
    assert again.at.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"seq": 1, "at": "2026-11-30T10:00:00Z", "kind": "alert", "data": {}}, "'session'"),
        (
            {"session": "s", "seq": "x", "at": "2026-11-30T10:00:00Z", "kind": "alert", "data": {}},
            "bad log entry",
        ),
        (
            {"session": "s", "seq": 1, "at": "yesterday", "kind": "alert", "data": {}},
            "bad log entry",
        ),
        (
            {"session": "s", "seq": 1, "at": "2026-11-30T10:00:00Z", "kind": "chat", "data": {}},
            "unknown entry kind 'chat'",
        ),
    ],
)
def test_bad_entries_say_what_is_wrong(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LogEntry.from_dict(data)


def test_public_entries_keep_everything_but_the_deal() -> None:
    at = datetime(2026, 11, 30, tzinfo=UTC)
    action = LogEntry("s", 3, at, "action", {"action": {"type": "pass", "seat": 0}})
    assert action.public() is action
    start = LogEntry("s", 2, at, "round_start", {"round": 1, "hands": ["3"], "kitty": "BR3"})
    assert start.public().data == {"round": 1}
    assert start.data["kitty"] == "BR3"


@pytest.mark.parametrize("enabled", [True, False])
def test_a_paused_collector_is_left_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        with paused_gc():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
