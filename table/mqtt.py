"""The one module that talks to paho-mqtt: broker URLs, connecting, publishing, subscribing.

:class:`MqttLink` owns a paho client (callback API version 2) and its network
thread. It speaks MQTT 5 and falls back to 3.1.1 when the broker refuses 5,
sets the retained last will, reconnects with backoff, reports each QoS 1
publish when the broker acknowledges it, and re-subscribes after every
reconnect. It never queues while the broker is away: :meth:`MqttLink.publish`
returns ``None`` then, and the caller replays from the session log.
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from table.errors import UserError
from table.mqtt_messages import Message

logger = logging.getLogger(__name__)

#: The environment variable that names the broker when no ``--mqtt`` is given.
ENV_VAR: Final = "DDZ_TABLE_MQTT"
DEFAULT_URL: Final = "mqtt://127.0.0.1:1883"
_SCHEMES: Final = {"mqtt": (False, 1883), "mqtts": (True, 8883)}

#: MQTT 5 CONNACK reason for a broker that speaks only 3.1.1 (paho maps its refusal to it).
_UNSUPPORTED_PROTOCOL: Final = 132
#: Refusals that retrying will not cure: fix the password file or the ACL.
_AUTH_FAILURES: Final = {"Bad user name or password", "Not authorized"}

PROTOCOLS: Final = ("auto", "5", "3.1.1")


class MqttError(UserError):
    """The broker cannot be used: bad URL, unreachable, or it refused us."""


@dataclass(frozen=True)
class Broker:
    """Where the broker is and how to log in; the password never shows in ``repr``."""

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None

    @classmethod
    def from_url(cls, url: str, ca_file: str | None = None) -> Broker:
        """Reads ``mqtt[s]://[user[:password]@]host[:port][?ca=/path/ca.pem]``.

        :raises: :exc:`MqttError` naming what is wrong with the URL.

        >>> Broker.from_url("mqtts://desk:s3cret@broker.club")
        Broker(host='broker.club', port=8883, tls=True, username='desk', ca_file=None)
        """
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as error:
            raise MqttError(f"bad MQTT broker URL {_hide_password(url)!r}: {error}") from None
        scheme = _SCHEMES.get(parts.scheme)
        if scheme is None or not parts.hostname:
            raise MqttError(
                f"bad MQTT broker URL {_hide_password(url)!r}: "
                "expected mqtt://host[:port] or mqtts://host[:port]"
            )
        if parts.path not in ("", "/"):
            raise MqttError(f"bad MQTT broker URL {_hide_password(url)!r}: it has no path")
        query = parse_qs(parts.query)
        unknown = sorted(set(query) - {"ca"})
        if unknown:
            raise MqttError(f"bad MQTT broker URL: unknown option {unknown[0]!r}; only ca= is read")
        ca = ca_file or (query["ca"][-1] if "ca" in query else None)
        tls, default_port = scheme
        if ca is not None:
            if not tls:
                raise MqttError("a CA file is given but the URL is mqtt://; use mqtts:// for TLS")
            if not Path(ca).is_file():
                raise MqttError(f"the CA file {ca} does not exist")
        return cls(
            host=parts.hostname,
            port=port or default_port,
            tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            ca_file=ca,
        )

    def describe(self) -> str:
        """Names the broker for messages, without the password.

        >>> Broker("h", 1883, username="u", password="p").describe()
        'mqtt://u@h:1883'
        """
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


def _hide_password(url: str) -> str:
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, userinfo = head.partition("//")
    return f"{scheme}//{userinfo.split(':', 1)[0]}:***@{tail}"


def broker_url(explicit: str | None = None) -> str:
    """Picks the broker URL: the given one, else ``$DDZ_TABLE_MQTT``, else the local broker."""
    return explicit or os.environ.get(ENV_VAR) or DEFAULT_URL


@dataclass(frozen=True)
class Received:
    """One message that arrived on a subscription, with its MQTT 5 request properties."""

    topic: str
    payload: bytes
    retain: bool
    response_topic: str | None = None
    correlation_data: bytes | None = None


class Delivery:
    """Tells when the broker acknowledged one publish, and whether it refused it."""

    def __init__(self, message: Message) -> None:
        self.message = message
        self.refused: str | None = None
        self._done = threading.Event()

    def wait(self, timeout: float) -> bool:
        """Waits for the broker's answer; ``False`` if none came in time."""
        return self._done.wait(timeout)

    def settle(self, refused: str | None) -> None:
        """Records the broker's answer; called by the link only."""
        self.refused = refused
        self._done.set()


Handler = Callable[[Received], None]
DoneCallback = Callable[[Delivery], None]


class MqttLink:
    """A connection to one broker that keeps itself up until :meth:`close`.

    ``birth`` is published (retained) on every connect, ``will`` is the last
    will; ``connect handlers`` run in the network thread after each connect and
    must only hand work to another thread.
    """

    def __init__(
        self,
        broker: Broker,
        client_id: str,
        *,
        will: Message | None = None,
        birth: Message | None = None,
        protocol: str = "auto",
        keepalive: int = 30,
        reconnect_delay: tuple[int, int] = (1, 30),
        session_expiry: int = 0,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise MqttError(f"unknown MQTT protocol {protocol!r}; expected one of {PROTOCOLS}")
        self.broker = broker
        self.client_id = client_id
        self.will = will
        self.birth = birth
        self.keepalive = keepalive
        self.reconnect_delay = reconnect_delay
        self.session_expiry = session_expiry
        self._fallback = protocol == "auto"
        self._protocol = (
            MQTTProtocolVersion.MQTTv311 if protocol == "3.1.1" else MQTTProtocolVersion.MQTTv5
        )
        self._lock = threading.Lock()
        self._connected = threading.Event()
        self._ready = threading.Event()
        self._closing = False
        self.generation = 0
        self.last_refusal: str | None = None
        self._pending: dict[int, tuple[Delivery, DoneCallback | None]] = {}
        self._early: dict[int, tuple[float, str | None]] = {}
        self._subscriptions: dict[str, tuple[int, bool, list[Handler]]] = {}
        self._suback_waiting: set[int] = set()
        self._connect_handlers: list[Callable[[], None]] = []
        self._disconnect_handlers: list[Callable[[], None]] = []
        self._client = self._make_client()

    # -- set-up ---------------------------------------------------------------

    def _make_client(self) -> paho.Client:
        is_v5 = self._protocol is MQTTProtocolVersion.MQTTv5
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=self._protocol,
            clean_session=None if is_v5 else self.session_expiry == 0,
        )
        client.reconnect_delay_set(*self.reconnect_delay)
        if self.broker.username:
            client.username_pw_set(self.broker.username, self.broker.password)
        if self.broker.tls:
            try:
                client.tls_set(ca_certs=self.broker.ca_file)
            except (OSError, ssl.SSLError) as error:
                raise MqttError(f"cannot use the CA file {self.broker.ca_file}: {error}") from None
        if self.will is not None:
            client.will_set(self.will.topic, self.will.payload, self.will.qos, self.will.retain)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        return client

    @property
    def protocol(self) -> str:
        """Names the MQTT version in use: ``5`` or ``3.1.1``."""
        return "5" if self._protocol is MQTTProtocolVersion.MQTTv5 else "3.1.1"

    @property
    def is_connected(self) -> bool:
        """Tells whether the broker has accepted us and not dropped us since."""
        return self._connected.is_set()

    def add_connect_handler(self, handler: Callable[[], None]) -> None:
        """Runs ``handler`` in the network thread after each connect (and after the birth)."""
        self._connect_handlers.append(handler)

    def add_disconnect_handler(self, handler: Callable[[], None]) -> None:
        """Runs ``handler`` in the network thread when the broker drops us (not on close)."""
        self._disconnect_handlers.append(handler)

    def subscribe(
        self, topic_filter: str, handler: Handler, qos: int = 1, *, live_only: bool = False
    ) -> None:
        """Calls ``handler`` for each message matching ``topic_filter``, across reconnects.

        ``live_only`` asks an MQTT 5 broker not to send retained messages on
        subscribing (commands must not run again because someone retained one).
        """
        with self._lock:
            entry = self._subscriptions.setdefault(topic_filter, (qos, live_only, []))
            entry[2].append(handler)
            if not self.is_connected:
                return
            self._ready.clear()
            result, mid = self._client.subscribe([self._subscription(topic_filter)])
            if result == MQTTErrorCode.MQTT_ERR_SUCCESS and mid is not None:
                self._suback_waiting.add(mid)

    def _subscription(self, topic_filter: str) -> tuple[str, Any]:
        """Builds one subscription request, with MQTT 5 options where the broker has them."""
        qos, live_only, _ = self._subscriptions[topic_filter]
        if self._protocol is not MQTTProtocolVersion.MQTTv5:
            return topic_filter, qos
        retain = (
            SubscribeOptions.RETAIN_DO_NOT_SEND
            if live_only
            else SubscribeOptions.RETAIN_SEND_ON_SUBSCRIBE
        )
        return topic_filter, SubscribeOptions(qos=qos, retainHandling=retain)

    def start(self) -> None:
        """Starts connecting in the background; an absent broker is retried, not fatal."""
        self._connect(self._client)

    def _connect(self, client: paho.Client) -> None:
        properties = None
        clean_start: paho.CleanStartOption = paho.MQTT_CLEAN_START_FIRST_ONLY
        if self._protocol is MQTTProtocolVersion.MQTTv5 and self.session_expiry:
            properties = Properties(PacketTypes.CONNECT)
            properties.SessionExpiryInterval = self.session_expiry
            clean_start = False
        try:
            client.connect_async(
                self.broker.host,
                self.broker.port,
                keepalive=self.keepalive,
                clean_start=clean_start,
                properties=properties,
            )
        except ValueError as error:
            raise MqttError(f"cannot connect to {self.broker.describe()}: {error}") from None
        client.loop_start()

    def wait_connected(self, timeout: float) -> None:
        """Waits until connected and every subscription is acknowledged.

        :raises: :exc:`MqttError` saying why the broker could not be used.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._ready.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                return
            if self.last_refusal in _AUTH_FAILURES:
                raise MqttError(self._why_unreachable(timeout))
        raise MqttError(self._why_unreachable(timeout))

    def _why_unreachable(self, timeout: float) -> str:
        where = self.broker.describe()
        if self.last_refusal is not None:
            return f"the broker at {where} refused us: {self.last_refusal}"
        try:
            with socket.create_connection((self.broker.host, self.broker.port), timeout=2) as sock:
                if self.broker.tls:
                    context = ssl.create_default_context(cafile=self.broker.ca_file)
                    context.wrap_socket(sock, server_hostname=self.broker.host).close()
        except ssl.SSLError as error:
            return f"TLS with the MQTT broker at {where} failed: {error.reason or error}"
        except OSError as error:
            reason = error.strerror or str(error)
            return f"cannot reach the MQTT broker at {where}: {reason}"
        return f"the MQTT broker at {where} did not accept us within {timeout:g} s"

    # -- publishing -----------------------------------------------------------

    def publish(self, message: Message, on_done: DoneCallback | None = None) -> Delivery | None:
        """Sends one message; ``None`` (and nothing queued) while the broker is away.

        ``on_done`` runs in the network thread when the broker acknowledges it.
        """
        if not self.is_connected:
            return None
        properties = None
        if self._protocol is MQTTProtocolVersion.MQTTv5 and (
            message.response_topic or message.correlation_data
        ):
            properties = Properties(PacketTypes.PUBLISH)
            if message.response_topic:
                properties.ResponseTopic = message.response_topic
            if message.correlation_data is not None:
                properties.CorrelationData = message.correlation_data
        delivery = Delivery(message)
        info = self._client.publish(
            message.topic, message.payload, message.qos, message.retain, properties
        )
        if info.rc == MQTTErrorCode.MQTT_ERR_NO_CONN:
            return None
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            raise MqttError(f"cannot publish to {message.topic}: {paho.error_string(info.rc)}")
        with self._lock:
            early = self._early.pop(info.mid, None)
            if early is None:
                self._pending[info.mid] = (delivery, on_done)
        if early is not None:
            self._finish(delivery, on_done, early[1])
        return delivery

    def _finish(
        self, delivery: Delivery, on_done: DoneCallback | None, refused: str | None
    ) -> None:
        if refused is not None:
            logger.warning(
                "the broker refused the publish to %s: %s", delivery.message.topic, refused
            )
        delivery.settle(refused)
        if on_done is not None:
            on_done(delivery)

    def close(self, final: Message | None = None, timeout: float = 5.0) -> None:
        """Publishes ``final`` (the ``offline`` status) if connected, then disconnects cleanly."""
        self._closing = True
        if final is not None:
            delivery = self.publish(final)
            if delivery is not None and not delivery.wait(timeout):
                logger.warning("the broker did not acknowledge %s before closing", final.topic)
        self._client.disconnect()
        self._client.loop_stop()
        self._connected.clear()

    # -- paho callbacks (network thread) --------------------------------------

    @contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """Keeps a bug in a callback from killing paho's network thread."""
        try:
            yield
        except Exception:
            logger.exception("MQTT %s handler failed", what)

    def _on_connect(
        self, client: paho.Client, _userdata: Any, _flags: Any, reason: ReasonCode, _props: Any
    ) -> None:
        with self._guard("connect"):
            if reason.is_failure:
                self._refused(client, reason)
                return
            self.last_refusal = None
            with self._lock:
                self.generation += 1
                filters = [self._subscription(f) for f in self._subscriptions]
                self._suback_waiting.clear()
            if filters:
                result, mid = client.subscribe(filters)
                if result == MQTTErrorCode.MQTT_ERR_SUCCESS and mid is not None:
                    with self._lock:
                        self._suback_waiting.add(mid)
            self._connected.set()
            if not filters:
                self._ready.set()
            logger.info("connected to %s (MQTT %s)", self.broker.describe(), self.protocol)
            if self.birth is not None:
                self.publish(self.birth)
            for handler in self._connect_handlers:
                handler()

    def _refused(self, client: paho.Client, reason: ReasonCode) -> None:
        if reason.value == _UNSUPPORTED_PROTOCOL and self._fallback:
            self._fallback = False
            logger.info("%s does not speak MQTT 5; using 3.1.1", self.broker.describe())
            client.disconnect()
            threading.Thread(target=self._fall_back, args=(client,), daemon=True).start()
            return
        refusal = reason.getName()
        if refusal != self.last_refusal:
            logger.warning("%s refused the connection: %s", self.broker.describe(), refusal)
        self.last_refusal = refusal

    def _fall_back(self, old: paho.Client) -> None:
        """Swaps in a 3.1.1 client; runs outside the old client's thread so it can stop it."""
        old.loop_stop()
        if self._closing:
            return
        self._protocol = MQTTProtocolVersion.MQTTv311
        self._client = self._make_client()
        self._connect(self._client)

    def _on_disconnect(
        self, _client: Any, _userdata: Any, _flags: Any, reason: ReasonCode, _props: Any
    ) -> None:
        with self._guard("disconnect"):
            was_connected = self._connected.is_set()
            self._connected.clear()
            self._ready.clear()
            if was_connected and not self._closing:
                logger.warning("lost the broker %s: %s", self.broker.describe(), reason.getName())
                for handler in self._disconnect_handlers:
                    handler()

    def _on_publish(
        self, _client: Any, _userdata: Any, mid: int, reason: ReasonCode, _props: Any
    ) -> None:
        with self._guard("publish"):
            refused = reason.getName() if reason.is_failure else None
            with self._lock:
                pending = self._pending.pop(mid, None)
                if pending is None:
                    now = time.monotonic()
                    self._early = {m: e for m, e in self._early.items() if now - e[0] < 60}
                    self._early[mid] = (now, refused)
            if pending is not None:
                self._finish(pending[0], pending[1], refused)

    def _on_subscribe(
        self, _client: Any, _userdata: Any, mid: int, reasons: list[ReasonCode], _props: Any
    ) -> None:
        with self._guard("subscribe"):
            for reason in reasons:
                if reason.is_failure:
                    logger.warning("the broker refused a subscription: %s", reason.getName())
            with self._lock:
                self._suback_waiting.discard(mid)
                done = not self._suback_waiting
            if done and self._connected.is_set():
                self._ready.set()

    def _on_message(self, _client: Any, _userdata: Any, message: paho.MQTTMessage) -> None:
        with self._guard("message"):
            props = message.properties
            received = Received(
                topic=message.topic,
                payload=bytes(message.payload),
                retain=bool(message.retain),
                response_topic=getattr(props, "ResponseTopic", None),
                correlation_data=getattr(props, "CorrelationData", None),
            )
            with self._lock:
                handlers = [
                    handler
                    for topic_filter, (_, _, handlers) in self._subscriptions.items()
                    if paho.topic_matches_sub(topic_filter, message.topic)
                    for handler in handlers
                ]
            for handler in handlers:
                handler(received)
