#!/usr/bin/env python3
"""The NATS e2e tests' second client (nats-py, not the NATS C client the relay uses): makes and reads streams.

  nats_tool.py URL add-stream NAME SUBJECT [SUBJECT...] [--duplicate-window-s S] [--max-msg-size N] [--max-msgs N]
                                      (--max-msgs: a full stream refuses new messages, discard policy new)
  nats_tool.py URL set-max-msgs NAME N   change a stream's message limit (-1: none)
  nats_tool.py URL delete-stream NAME
  nats_tool.py URL read NAME          every message of the stream, one JSON object a line:
                                      {"seq", "subject", "headers": {name: value}, "data": text (latin-1 escaped)}
  nats_tool.py URL count NAME         the stream's message count

A tls:// URL connects with TLS, trusting the CA file in NATS_TOOL_CA (the system's CAs when unset), and presents the
client.crt/client.key beside that CA file when they exist (for a server with mutual TLS).
"""
import asyncio
import json
import logging
import os
import socket
import ssl
import sys
from urllib.parse import urlparse

import nats
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, DiscardPolicy, StreamConfig
from nats.js.errors import NotFoundError


async def main(argv):
    url, cmd, name = argv[0], argv[1], argv[2]
    # nats-py retries a refused connection on its own: a server that is down fails at once here instead.
    hostport = urlparse(url)
    socket.create_connection((hostport.hostname, hostport.port), timeout=5).close()

    async def quiet(_):
        pass

    tls = None
    if hostport.scheme == "tls":
        # asyncio warns on stderr at each close of a TLS connection; the tests parse this tool's output.
        logging.getLogger("asyncio").setLevel(logging.ERROR)
        ca = os.environ.get("NATS_TOOL_CA") or None
        tls = ssl.create_default_context(cafile=ca)
        # A client certificate beside the CA (scripts/lib.sh make_test_certs) is presented: a server with mutual
        # TLS asks for it, the others ignore it.
        client = os.path.join(os.path.dirname(ca), "client") if ca else None
        if client and os.path.exists(client + ".crt"):
            tls.load_cert_chain(client + ".crt", client + ".key")
    nc = await nats.connect(url, connect_timeout=5, allow_reconnect=False, max_reconnect_attempts=0, error_cb=quiet,
                            tls=tls)
    js = nc.jetstream()
    try:
        if cmd == "add-stream":
            subjects, window, max_msg, max_msgs = [], 120.0, -1, -1
            rest = argv[3:]
            i = 0
            while i < len(rest):
                if rest[i] == "--duplicate-window-s":
                    window = float(rest[i + 1]); i += 2
                elif rest[i] == "--max-msg-size":
                    max_msg = int(rest[i + 1]); i += 2
                elif rest[i] == "--max-msgs":
                    max_msgs = int(rest[i + 1]); i += 2
                else:
                    subjects.append(rest[i]); i += 1
            try:
                await js.delete_stream(name)
            except NotFoundError:
                pass
            await js.add_stream(StreamConfig(name=name, subjects=subjects, duplicate_window=window,
                                             max_msg_size=max_msg, max_msgs=max_msgs, discard=DiscardPolicy.NEW))
        elif cmd == "set-max-msgs":
            config = (await js.stream_info(name)).config
            config.max_msgs = int(argv[3])
            await js.update_stream(config)
        elif cmd == "delete-stream":
            try:
                await js.delete_stream(name)
            except NotFoundError:
                pass
        elif cmd == "count":
            info = await js.stream_info(name)
            print(info.state.messages)
        elif cmd == "read":
            # Every message in stream order, through an ephemeral pull consumer fetching a thousand at a time (a
            # request per message, as get_msg makes, took longer than the tool's bound for a chaos test's thousands
            # of messages on a loaded machine).
            info = await js.stream_info(name)
            left = info.state.messages
            out = sys.stdout
            if left:
                sub = await js.pull_subscribe("", stream=name, config=ConsumerConfig(
                    ack_policy=AckPolicy.NONE, deliver_policy=DeliverPolicy.ALL, inactive_threshold=60.0))
                try:
                    while left > 0:
                        for m in await sub.fetch(min(left, 1000), timeout=10):
                            left -= 1
                            out.write(json.dumps({"seq": m.metadata.sequence.stream, "subject": m.subject,
                                                  "headers": dict(m.headers or {}),
                                                  "data": (m.data or b"").decode("latin-1")}) + "\n")
                finally:
                    await sub.unsubscribe()
        else:
            print(f"unknown command {cmd}", file=sys.stderr)
            return 2
    finally:
        await nc.close()
    return 0


if __name__ == "__main__":
    async def bounded():
        # A server that is down or stuck must not hang a test: 30 s for any command, 120 s to read a stream.
        return await asyncio.wait_for(main(sys.argv[1:]), 120 if sys.argv[2:3] == ["read"] else 30)
    try:
        sys.exit(asyncio.run(bounded()))
    except (asyncio.TimeoutError, OSError, nats.errors.Error) as e:
        print(f"nats_tool: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
