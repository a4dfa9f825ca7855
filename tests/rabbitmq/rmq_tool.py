#!/usr/bin/env python3
"""The RabbitMQ e2e tests' second client (pika, not librabbitmq, which the relay uses): makes and drains queues.

  rmq_tool.py URL setup EXCHANGE QUEUE [--max-length=N] [BINDING...]
                                           a durable topic exchange and a durable queue bound to it with each binding
                                           key (default "#"); with --max-length the queue holds at most N messages and
                                           the broker nacks publishes beyond them (x-overflow: reject-publish)
  rmq_tool.py URL delete EXCHANGE QUEUE    deletes both (missing ones are fine)
  rmq_tool.py URL delete-exchange EXCHANGE
  rmq_tool.py URL count QUEUE              the queue's message count (a passive declare; takes nothing)
  rmq_tool.py URL drain QUEUE              takes (and acks) the messages waiting when it starts, one JSON object a line:
                                           {"exchange", "routing_key", "headers": {name: value or null},
                                            "properties": {...}, "body": text (latin-1)}
"""
import json
import sys

import pika


def text(v):
    if isinstance(v, bytes):
        return v.decode("latin-1")
    return v


def main(argv):
    url, cmd = argv[0], argv[1]
    params = pika.URLParameters(url)
    params.socket_timeout = 10
    params.blocked_connection_timeout = 20
    conn = pika.BlockingConnection(params)
    ch = conn.channel()
    try:
        if cmd == "setup":
            exchange, queue, rest = argv[2], argv[3], argv[4:]
            arguments = None
            if rest and rest[0].startswith("--max-length="):
                arguments = {"x-max-length": int(rest[0].split("=", 1)[1]), "x-overflow": "reject-publish"}
                rest = rest[1:]
            ch.exchange_declare(exchange, exchange_type="topic", durable=True)
            ch.queue_declare(queue, durable=True, arguments=arguments)
            for key in rest or ["#"]:
                ch.queue_bind(queue, exchange, routing_key=key)
        elif cmd == "delete":
            ch.exchange_delete(argv[2])
            ch.queue_delete(argv[3])
        elif cmd == "delete-exchange":
            ch.exchange_delete(argv[2])
        elif cmd == "count":
            print(ch.queue_declare(argv[2], passive=True).method.message_count)
        elif cmd == "drain":
            out = sys.stdout
            # What waits now, not what keeps coming (a relay publishing under load would never let it end).
            waiting = ch.queue_declare(argv[2], passive=True).method.message_count
            ch.basic_qos(prefetch_count=2000)
            last = None
            taken = 0
            for method, props, body in ([] if waiting == 0 else ch.consume(argv[2], inactivity_timeout=2)):
                if method is None:
                    break
                taken += 1
                headers = {k: text(v) for k, v in (props.headers or {}).items()}
                p = {"message_id": props.message_id, "content_type": props.content_type,
                     "delivery_mode": props.delivery_mode, "timestamp": props.timestamp}
                out.write(json.dumps({"exchange": method.exchange, "routing_key": method.routing_key,
                                      "headers": headers, "properties": p,
                                      "body": (body or b"").decode("latin-1")}) + "\n")
                last = method.delivery_tag
                if last % 1000 == 0:
                    ch.basic_ack(last, multiple=True)
                if taken >= waiting:
                    break
            if last is not None:
                ch.basic_ack(last, multiple=True)
            ch.cancel()
        else:
            print(f"unknown command {cmd}", file=sys.stderr)
            return 2
    finally:
        try:
            conn.close()
        except Exception:
            pass
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (pika.exceptions.AMQPError, OSError) as e:
        print(f"rmq_tool: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
