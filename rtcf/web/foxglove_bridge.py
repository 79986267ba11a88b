"""The Foxglove WebSocket protocol next to the page, so Foxglove and Lichtblick connect to the
running system live (``ws://HOST:PORT``).

The protocol's read side, served by the web view's own aiohttp on its own port: the server
sends ``serverInfo`` and ``advertise`` (then ``advertise`` / ``unadvertise`` as ports come and
go), a client sends ``subscribe`` / ``unsubscribe``, and each sample goes out as a binary
Message Data frame (opcode 1, subscription id u32, time u64 [ns], payload; little endian).
The messages are those of Foxglove's specification (foxglove/ws-protocol, docs/spec.md); no
capability beyond that is advertised (no client publishing, parameters or services).
Both subprotocols are accepted: ``foxglove.sdk.v1`` (Foxglove today) and
``foxglove.websocket.v1`` (the specification's, older Foxglove and Lichtblick).

It is served here rather than by the ``foxglove-sdk`` package because that server checks
neither ``Host`` nor ``Origin``: any page open in the user's browser could open
``ws://127.0.0.1:PORT`` and read every port of the robot. This one admits a handshake under
the same rules as the page (:mod:`rtcf.web.hosts`: the configured names only, and a
browser's ``Origin`` only when it is ``http://`` + that name).

One channel per out port of a known OpenRTM type, topic ``/<component>/<port>``, JSON
messages with the JSON Schema of the type (``rtcf.tools.values``). A channel is tapped only
while a client subscribes to it, through the same bounded taps as the page's plots (so the
same limits: ``periodic`` at the push rate, newest sample, a bounded queue that drops and
counts); each sample is sent with its own ``tm`` as its time (the receive time when the
writer leaves it at zero). A client that reads too slowly loses messages (its queue holds
``BACKLOG``), never the server's memory.

Runs in: ``sync`` in the web server's worker thread after a structure refresh; the sink in
the worker thread that polls the taps; everything else in the event loop.
"""

from __future__ import annotations

import asyncio
import json
import struct
import time
from typing import Any

from aiohttp import WSMsgType, web

from ..datatypes import type_by_name
from ..tools.values import json_schema, json_text, to_json_value

PREFIX = "fox:"
SUBPROTOCOLS = ("foxglove.sdk.v1", "foxglove.websocket.v1")
BACKLOG = 1024                 # messages queued per client before it loses them
MESSAGE_DATA = 1               # binary opcode of Message Data
STATUS_ERROR = 2


class Client:
    """One connected client: its subscriptions and its outgoing queue."""

    def __init__(self, ws: web.WebSocketResponse):
        self.ws = ws
        self.subs: dict[int, int] = {}          # subscription id -> channel id
        self.queue: asyncio.Queue = asyncio.Queue(BACKLOG)
        self.dropped = 0

    def put(self, item: str | bytes) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.dropped += 1

    async def pump(self) -> None:
        while True:
            item = await self.queue.get()
            try:
                if isinstance(item, bytes):
                    await self.ws.send_bytes(item)
                else:
                    await self.ws.send_str(item)
            except (ConnectionError, RuntimeError):
                return


class FoxgloveBridge:
    """The channels (out ports), the clients and their subscriptions."""

    def __init__(self, web_view: Any, host: str, port: int):
        self.web = web_view
        self.host = host
        self.port = port                        # the bound one once started
        self.hosts: Any = None                  # rtcf.web.hosts.HostPolicy, once bound
        self.channels: dict[str, dict[str, Any]] = {}     # topic -> advertised channel
        self.where: dict[int, tuple[str, str, str]] = {}  # channel id -> (topic, cid, port)
        self.clients: set[Client] = set()
        self.tapped: dict[int, str] = {}        # channel id -> topic, tapped
        self.session_id = str(time.time_ns())
        self._next_id = 1
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- the server ----------------------------------------------------------------------
    def app(self, middleware: Any) -> web.Application:
        app = web.Application(middlewares=[middleware])
        app.router.add_get("/", self.websocket)
        return app

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Runs in: the event loop, before the first sync."""
        self._loop = loop

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(protocols=SUBPROTOCOLS, heartbeat=10.0,
                                   max_msg_size=1 << 20)
        ready = ws.can_prepare(request)
        if not ready.ok:
            raise web.HTTPBadRequest(text="expected a WebSocket upgrade (the Foxglove "
                                          "WebSocket protocol)")
        if ready.protocol is None:
            raise web.HTTPBadRequest(text=f"expected the subprotocol "
                                          f"{' or '.join(SUBPROTOCOLS)}")
        await ws.prepare(request)
        client = Client(ws)
        self.clients.add(client)
        pump = asyncio.ensure_future(client.pump())
        client.put(json.dumps({"op": "serverInfo", "name": "rtcf", "capabilities": [],
                               "metadata": {}, "sessionId": self.session_id}))
        client.put(json.dumps({"op": "advertise",
                               "channels": list(self.channels.values())}))
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    try:
                        self._handle(client, msg.data)
                    except ValueError as e:
                        client.put(json.dumps({"op": "status", "level": STATUS_ERROR,
                                               "message": str(e)}))
                elif msg.type == WSMsgType.BINARY:
                    client.put(json.dumps({"op": "status", "level": STATUS_ERROR,
                                           "message": "this server takes no client data"}))
        finally:
            self.clients.discard(client)
            pump.cancel()
            self._retap()
        return ws

    def _handle(self, client: Client, text: str) -> None:
        from .server import parse_json
        req = parse_json(text)
        if not isinstance(req, dict):
            raise ValueError("expected a JSON object with \"op\"")
        op = req.get("op")
        if op == "subscribe":
            subs = req.get("subscriptions")
            if not isinstance(subs, list):
                raise ValueError("subscribe: expected \"subscriptions\": [{id, channelId}]")
            for s in subs:
                sid = s.get("id") if isinstance(s, dict) else None
                cid = s.get("channelId") if isinstance(s, dict) else None
                if not isinstance(sid, int) or not isinstance(cid, int):
                    raise ValueError(f"subscribe: expected {{id, channelId}} numbers, got "
                                     f"{json.dumps(s)[:80]}")
                if cid not in self.where:
                    raise ValueError(f"subscribe: no channel {cid}")
                if sid in client.subs:
                    raise ValueError(f"subscribe: subscription id {sid} is in use")
                client.subs[sid] = cid
        elif op == "unsubscribe":
            ids = req.get("subscriptionIds")
            if not isinstance(ids, list):
                raise ValueError("unsubscribe: expected \"subscriptionIds\": [...]")
            for sid in ids:
                client.subs.pop(sid, None) if isinstance(sid, int) else None
        else:
            raise ValueError(f"unsupported op {str(op)[:40]!r} (this server supports "
                             f"subscribe and unsubscribe)")
        self._retap()

    def _retap(self) -> None:
        """Open the taps of channels someone subscribes to, close the others."""
        wanted = {cid for c in self.clients for cid in c.subs.values()}
        try:
            for cid in wanted - set(self.tapped):
                self.tapped[cid] = self.where[cid][0]
                self.web.pool.submit(self._open, cid)
            for cid in set(self.tapped) - wanted:
                topic = self.tapped.pop(cid)
                self.web.pool.submit(self.web.taps.close, PREFIX + topic)
        except RuntimeError:          # the server is stopping: its taps close with it
            pass

    # -- channels (a worker thread) -----------------------------------------------------------
    def sync(self, structure: dict[str, Any]) -> None:
        """Advertise a channel per out port; unadvertise those of ports that went away."""
        want: dict[str, tuple[str, str, str]] = {}
        for c in structure["components"]:
            for p in c["ports"]:
                if p["kind"] == "out":
                    want[f"/{c['name']}/{p['name']}"] = (c["id"], p["name"], p["data_type"])
        gone = [self.channels[t]["id"] for t in self.channels if t not in want]
        new = []
        for topic, (cid, port, data_type) in want.items():
            if topic in self.channels:
                continue
            try:
                cls = type_by_name(data_type)
            except LookupError:
                continue
            ch = {"id": self._next_id, "topic": topic, "encoding": "json",
                  "schemaName": f"RTC::{cls.__name__}",
                  "schema": json.dumps(json_schema(cls)), "schemaEncoding": "jsonschema"}
            self._next_id += 1
            new.append(ch)
        if (gone or new) and self._loop is not None:
            self._loop.call_soon_threadsafe(self._update, gone, new, want)

    def _update(self, gone: list[int], new: list[dict], want: dict) -> None:
        """Apply a sync's result and tell the clients. Runs in: the event loop."""
        gone = [cid for cid in gone if cid in self.where]
        new = [ch for ch in new if ch["topic"] not in self.channels]
        for cid in gone:
            topic = self.where.pop(cid)[0]
            self.channels.pop(topic, None)
            for c in self.clients:
                for sid in [s for s, ch in c.subs.items() if ch == cid]:
                    del c.subs[sid]
        for ch in new:
            self.channels[ch["topic"]] = ch
            comp, port, _ = want[ch["topic"]]
            self.where[ch["id"]] = (ch["topic"], comp, port)
        for c in self.clients:
            if gone:
                c.put(json.dumps({"op": "unadvertise", "channelIds": gone}))
            if new:
                c.put(json.dumps({"op": "advertise", "channels": new}))
        if gone:
            self._retap()

    def _open(self, cid: int) -> None:
        """Tap the channel's port. Runs in: a worker thread."""
        topic, comp, port = self.where.get(cid, ("", "", ""))
        if not topic:
            return
        try:
            handle = self.web.view.port_handle(comp, port)
            ring = self.web.taps.open(PREFIX + topic, self.web.view.session, handle)
        except Exception as e:           # the client sees no data; say why here
            self.web.view.errors.append(f"foxglove {topic}: {e}")
            return
        if self.tapped.get(cid) != topic:    # unsubscribed meanwhile (its close came first)
            self.web.taps.close(PREFIX + topic)
            return
        loop = self._loop

        def sink(t_ns: int, sample: Any, cid: int = cid) -> None:
            payload = json_text(to_json_value(sample), compact=True).encode()
            if loop is not None:
                loop.call_soon_threadsafe(self._send, cid, t_ns, payload)
        ring.sink = sink

    def _send(self, cid: int, t_ns: int, payload: bytes) -> None:
        for c in self.clients:
            for sid, ch in c.subs.items():
                if ch == cid:
                    c.put(struct.pack("<BIQ", MESSAGE_DATA, sid, max(t_ns, 0)) + payload)

    async def close(self) -> None:
        for c in list(self.clients):
            await c.ws.close()
