"""What the real panel driver and the simulated panel share: a queue of notices.

The controller reads both the same way (``get`` with a timeout) and both stop
when used as a context manager, so neither can be told from the other.
"""

from __future__ import annotations

import abc
import queue
from types import TracebackType
from typing import Self

from table.devices.events import PanelNotice


class NoticeQueue(abc.ABC):
    """Holds notices until the controller takes them; subclasses put and stop."""

    def __init__(self) -> None:
        self._notices: queue.Queue[PanelNotice] = queue.Queue()

    @abc.abstractmethod
    def stop(self) -> None:
        """Stops the panel; what is queued can still be read."""

    def get(self, timeout: float | None = None) -> PanelNotice:
        """Returns the next notice, waiting up to ``timeout`` seconds.

        :raises queue.Empty: if none arrives in time.
        """
        return self._notices.get(timeout=timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
