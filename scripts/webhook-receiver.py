#!/usr/bin/env python3
"""A minimal webhook receiver for the README and scripts/quickstart.sh --sink http: answers every POST 200 and
appends one line per request to OUT ("<path> <Idempotency-Key> <Outbox-Key> <body>"); HEAD answers 200.

    scripts/webhook-receiver.py PORT_FILE OUT     listen on 127.0.0.1, a free port written to PORT_FILE
"""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(sys.argv[2], "a", encoding="utf-8") as out:
            out.write("%s %s %s %s\n" % (self.path, self.headers.get("Idempotency-Key", "-"),
                                         self.headers.get("Outbox-Key", "-"), body.decode("utf-8", "replace")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()
