#!/usr/bin/env python3
"""clockserver: a small register served over HTTP that reads the time through
libc, for chaos's faketime clock strategy (examples/systems/clockserver.yaml).

Every node serves:

  GET  /clock        {"id": ..., "now": seconds since 1970}: the node's clock,
                     time.time(), which libfaketime bends
  GET  /state        {"id", "role", "term", "leader"}: the first member leads
                     (term 1, for ever); the others are followers
  GET  /kv/KEY       {"value": V}, or {} when KEY holds nothing
  PUT  /kv/KEY       body {"value": V}
  POST /cas/KEY      body {"from": A, "to": B}: {"ok": true} when KEY held A
  GET  /set          {"values": [...]}: the values of the keys that start with s
                     (the set workload's elements)

The first member holds the register, in a JSON file written before each
answer; the others forward the client's request to it, so the register is
linearizable while it answers (and 503 when it does not). It is no consensus
system: it exists to have a libc program whose clock chaos can bend, and a
state to report.
"""

import argparse
import json
import os
import socketserver
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Register:
    """The register of the first member, kept in a file."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        try:
            with open(path) as f:
                self.values = json.load(f)
        except FileNotFoundError:
            self.values = {}

    def _save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.values, f)
        os.replace(tmp, self.path)

    def read(self, key):
        with self.lock:
            return self.values.get(key)

    def write(self, key, value):
        with self.lock:
            self.values[key] = value
            self._save()

    def elements(self):
        with self.lock:
            return [v for k, v in self.values.items() if k.startswith("s")]

    def cas(self, key, old, new):
        with self.lock:
            if self.values.get(key) != old:
                return False
            self.values[key] = new
            self._save()
            return True


def handler(args, register):
    leader_id, primary = args.members.split(",")[0].split("=", 1)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def forward(self, payload):
            req = urllib.request.Request("http://" + primary + self.path, data=payload or None, method=self.command)
            req.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(req, timeout=1) as resp:
                    self.answer(resp.status, json.loads(resp.read() or b"{}"))
            except urllib.error.HTTPError as e:
                self.answer(e.code, {"error": str(e)})
            except (urllib.error.URLError, OSError) as e:
                self.answer(503, {"error": "the first member does not answer: %s" % e})

        def do_GET(self):
            if self.path == "/clock":
                return self.answer(200, {"id": args.id, "now": time.time()})
            if self.path == "/state":
                role = "leader" if args.id == leader_id else "follower"
                return self.answer(200, {"id": args.id, "role": role, "term": 1, "leader": leader_id})
            if self.path == "/set":
                if register is None:
                    return self.forward(None)
                return self.answer(200, {"values": register.elements()})
            if self.path.startswith("/kv/"):
                if register is None:
                    return self.forward(None)
                v = register.read(self.path[4:])
                return self.answer(200, {} if v is None else {"value": v})
            self.answer(404, {"error": "no such path"})

        def do_PUT(self):
            payload = self.body()
            if not self.path.startswith("/kv/"):
                return self.answer(404, {"error": "no such path"})
            if register is None:
                return self.forward(payload)
            register.write(self.path[4:], json.loads(payload)["value"])
            self.answer(200, {})

        def do_POST(self):
            payload = self.body()
            if not self.path.startswith("/cas/"):
                return self.answer(404, {"error": "no such path"})
            if register is None:
                return self.forward(payload)
            b = json.loads(payload)
            self.answer(200, {"ok": register.cas(self.path[5:], b["from"], b["to"])})

    return Handler


class Server(ThreadingHTTPServer):
    """ThreadingHTTPServer without the name lookup: HTTPServer.server_bind asks
    the resolver for the address's name (socket.getfqdn) before it listens,
    and on a host without DNS that waits out the resolver's timeouts (10 s),
    so every start and restart answered 10 s late."""

    daemon_threads = True

    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--id", required=True)
    p.add_argument("--addr", required=True, help="host:port to serve on")
    p.add_argument("--members", required=True, help="every member as id=host:port, the first one holding the register")
    p.add_argument("--data-dir", required=True)
    args = p.parse_args()
    os.makedirs(args.data_dir, exist_ok=True)
    register = None
    if args.id == args.members.split(",")[0].split("=", 1)[0]:
        register = Register(os.path.join(args.data_dir, "register.json"))
    host, port = args.addr.rsplit(":", 1)
    srv = Server((host, int(port)), handler(args, register))
    srv.serve_forever()


if __name__ == "__main__":
    main()
