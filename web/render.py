"""Renders the live fragments (table screen, venue card) once per snapshot, for every screen.

The server renders HTML and the browser swaps it in, so there is one way to draw
a table (Jinja), no front-end build, and a page the Flask test client can read.
Fifty screens on one table cost one render per update: fragments are cached by
view, table and snapshot key.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Final

from flask import Flask, render_template

from web import display

#: The fragment template of each live view.
VIEWS: Final = {"table": "tables/_table.html", "venue": "tables/_venue_card.html"}
CACHE_SIZE: Final = 256


class FragmentCache:
    """A small thread-safe LRU of rendered fragments and encoded events."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str]) -> str | None:
        """Gets a fragment, marking it recently used."""
        with self._lock:
            html = self._items.get(key)
            if html is not None:
                self._items.move_to_end(key)
            return html

    def put(self, key: tuple[str, str, str], html: str) -> None:
        """Keeps a fragment, forgetting the least recently used beyond the size."""
        with self._lock:
            self._items[key] = html
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def fragment(app: Flask, view: str, table: str, key: str, snapshot: dict[str, Any]) -> str:
    """Renders (or reuses) one view of a table's snapshot; needs an app context."""
    cache: FragmentCache = app.extensions["ddz_fragments"]
    cache_key = (view, table, key)
    html = cache.get(cache_key)
    if html is None:
        html = render_template(VIEWS[view], s=snapshot, table=table)
        cache.put(cache_key, html)
    return html


def event(app: Flask, view: str, table: str, key: str, snapshot: dict[str, Any]) -> str:
    """Gets (or builds once for every screen) the server-sent event of one view of a snapshot."""
    cache: FragmentCache = app.extensions["ddz_fragments"]
    cache_key = (f"event:{view}", table, key)
    text = cache.get(cache_key)
    if text is None:
        text = sse_event(table, key, fragment(app, view, table, key, snapshot))
        cache.put(cache_key, text)
    return text


def sse_event(table: str, key: str, html: str) -> str:
    """Formats one server-sent event carrying a fragment; ``id`` is the snapshot key.

    >>> sse_event("t1", "s/3/0", "<b>x</b>")
    'id: s/3/0\\nevent: table\\ndata: {"table": "t1", "key": "s/3/0", "html": "<b>x</b>"}\\n\\n'
    """
    data = json.dumps({"table": table, "key": key, "html": html})
    return f"id: {key}\nevent: table\ndata: {data}\n\n"


def register_template_helpers(app: Flask) -> None:
    """Gives the templates the display helpers and the app its fragment cache."""
    app.extensions["ddz_fragments"] = FragmentCache()
    app.jinja_env.globals.update(
        card_faces=display.card_faces,
        positions=display.positions,
        seat_name=display.seat_name,
        phase_label=display.phase_label,
        multiplier_parts=display.multiplier_parts,
        standings=display.standings,
        leader_text=display.leader_text,
        action_text=display.action_text,
        reason_text=display.reason_text,
        device_state=display.device_state,
        signed=display.signed,
    )
