"""The Foxglove WebSocket protocol next to the page (foxglove-sdk), so Foxglove and
Lichtblick connect to the running system live (``ws://HOST:PORT``).

One channel per out port of a known OpenRTM type, topic ``/<component>/<port>``, JSON
messages with the JSON Schema of the type (``rtcf.tools.values``). A channel is tapped only
while a client subscribes to it, through the same bounded taps as the page's plots (so the
same limits: ``periodic`` at the push rate, newest sample, a bounded queue that drops and
counts); each sample is logged with its own ``tm`` as the log time (the receive time when
the writer leaves it at zero).

Runs in: ``sync`` in the web server's worker thread after a structure refresh; the SDK's
callbacks (on_subscribe / on_unsubscribe) in the SDK's threads, which hand the CORBA work
to the worker pool; ``_sink`` in the worker thread that polls the taps.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import foxglove
from foxglove.websocket import ServerListener

from ..datatypes import type_by_name
from ..tools.values import json_schema, to_json_value
from .system import ActionError

PREFIX = "fox:"


class FoxgloveBridge(ServerListener):
    def __init__(self, web: Any, host: str, port: int):
        self.web = web
        self.channels: dict[str, Any] = {}      # topic -> foxglove.Channel
        self.where: dict[str, tuple[str, str]] = {}   # topic -> (component id, port)
        self.by_id: dict[int, str] = {}         # channel id -> topic
        self.subscribed: set[str] = set()
        self._lock = threading.Lock()
        self.server = foxglove.start_server(name="rtcf", host=host, port=port,
                                            server_listener=self)
        self.port = self.server.port

    # -- channels --------------------------------------------------------------------------
    def sync(self, structure: dict[str, Any]) -> None:
        """Advertise a channel per out port; close those of ports that went away."""
        want: dict[str, tuple[str, str, str]] = {}
        for c in structure["components"]:
            for p in c["ports"]:
                if p["kind"] == "out":
                    want[f"/{c['name']}/{p['name']}"] = (c["id"], p["name"], p["data_type"])
        with self._lock:
            for topic in [t for t in self.channels if t not in want]:
                self.channels.pop(topic).close()
                self.where.pop(topic, None)
            for topic, (cid, port, data_type) in want.items():
                if topic in self.channels:
                    continue
                try:
                    cls = type_by_name(data_type)
                except LookupError:
                    continue
                schema = foxglove.Schema(name=f"RTC::{cls.__name__}", encoding="jsonschema",
                                         data=json.dumps(json_schema(cls)).encode())
                ch = foxglove.Channel(topic, schema=schema, message_encoding="json",
                                      metadata={"data_type": data_type})
                self.channels[topic] = ch
                self.where[topic] = (cid, port)
                self.by_id[ch.id()] = topic

    # -- subscriptions (the SDK's threads) -------------------------------------------------
    def on_subscribe(self, client: Any, channel: Any) -> None:
        topic = self.by_id.get(channel.id)
        if topic is not None and topic not in self.subscribed:
            self.subscribed.add(topic)
            self.web.pool.submit(self._open, topic)

    def on_unsubscribe(self, client: Any, channel: Any) -> None:
        topic = self.by_id.get(channel.id)
        if topic is not None and topic in self.subscribed:
            self.subscribed.discard(topic)
            self.web.pool.submit(self.web.taps.close, PREFIX + topic)

    def _open(self, topic: str) -> None:
        cid, port = self.where[topic]
        try:
            handle = self.web.view.port_handle(cid, port)
            ring = self.web.taps.open(PREFIX + topic, self.web.view.session, handle)
        except (ActionError, Exception) as e:     # the client sees no data; say why here
            self.web.view.errors.append(f"foxglove {topic}: {e}")
            self.subscribed.discard(topic)
            return
        ch = self.channels.get(topic)
        ring.sink = (lambda t_ns, sample, ch=ch: ch.log(to_json_value(sample), log_time=t_ns))

    def stop(self) -> None:
        self.server.stop()
