"""Fixtures for the vision tests: a private cache for rendered theme sheets.

The aisleriot themes come from Debian's ``gnome-cards-data`` and are rendered with
``rsvg-convert`` (``librsvg2-bin``); the test command installs both when missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from table.vision.faces import THEME_DIR, load_deck


@pytest.fixture(scope="session", autouse=True)
def theme_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Points the sheet cache at a per-run directory so tests render their own art."""
    if shutil.which("rsvg-convert") is None or not (THEME_DIR / "anglo.svgz").exists():
        pytest.fail("vision tests need gnome-cards-data and librsvg2-bin (apt-get install them)")
    path = tmp_path_factory.mktemp("ddz-cache")
    old = os.environ.get("DDZ_TABLE_CACHE")
    os.environ["DDZ_TABLE_CACHE"] = str(path)
    load_deck.cache_clear()
    try:
        yield path
    finally:
        load_deck.cache_clear()
        if old is None:
            del os.environ["DDZ_TABLE_CACHE"]
        else:
            os.environ["DDZ_TABLE_CACHE"] = old
