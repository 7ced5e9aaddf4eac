#!/usr/bin/env python3
"""A chaos client command for chaos-node, in Python 3 with the standard library only.

chaos runs one such process per worker (examples/systems/chaos-node.yaml):

    python3 chaos-node-client.py --addr 127.0.0.11:7000 [--read-consistency serializable]

It reads one JSON request per line on stdin and writes one JSON answer per
line on stdout (README, "Your own system"), speaking chaos-node's HTTP API
(docs/FORMATS.md, "chaos-node's HTTP API"):

    {"id":1,"f":"write","key":"k1","value":3,"timeout_ms":990}  ->  {"id":1,"type":"ok"}
    {"id":2,"f":"read","key":"k1","timeout_ms":990}             ->  {"id":2,"type":"ok","value":3}

Each request opens a connection of its own, so that a failure to connect
means the node never saw the request (fail, unavailable) and a failure after
sending means its outcome is unknown (info, or fail for a read: a read
changes nothing).
"""

import argparse
import http.client
import json
import socket
import sys
import time

# The share of chaos's timeout this client waits for a node: it answers
# info itself before chaos gives up on it and restarts it.
TIMEOUT_SHARE = 0.8


class NotSent(Exception):
    """No connection: the node never saw the request."""


class Node:
    def __init__(self, addr, stale):
        host, _, port = addr.rpartition(":")
        self.host, self.port, self.stale = host.strip("[]"), int(port), stale

    def call(self, method, path, body, deadline):
        """Sends one request; returns (status, parsed JSON body or None)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=max(deadline - time.monotonic(), 0.001))
        try:
            try:
                conn.connect()
            except OSError as e:
                raise NotSent(str(e)) from e
            conn.sock.settimeout(max(deadline - time.monotonic(), 0.001))
            data = None if body is None else json.dumps(body)
            headers = {"Content-Type": "application/json"} if data else {}
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, None


def answer(status, body, ok=None):
    """The fail or info answer of a status other than the successes."""
    error = "HTTP %d: %s" % (status, (body or {}).get("error", "") if isinstance(body, dict) else "")
    if status == 503:  # no leader, not applied
        return {"type": "fail", "error": error, "unavailable": True}
    if 400 <= status < 500 and status != 409:  # refused as malformed
        return {"type": "fail", "error": error}
    return {"type": "info", "error": error}  # 504 and the rest: unknown


def read(node, key, deadline):
    path = "/kv/" + key + ("?stale=true" if node.stale else "")
    status, body = node.call("GET", path, None, deadline)
    if status == 200:
        return {"type": "ok", "value": int(body["value"])}
    if status == 404:
        return {"type": "ok", "value": None}
    out = answer(status, body)
    out["type"] = "fail"  # a read changes nothing
    return out


def write(node, key, value, deadline):
    status, body = node.call("PUT", "/kv/" + key, {"value": str(value)}, deadline)
    return {"type": "ok"} if status == 200 else answer(status, body)


def cas(node, key, pair, deadline):
    status, body = node.call("POST", "/kv/" + key + "/cas", {"from": str(pair[0]), "to": str(pair[1])}, deadline)
    if status == 200:
        return {"type": "ok"}
    if status == 409:
        return {"type": "fail", "error": "cas mismatch"}
    return answer(status, body)


def read_set(node, attempted, deadline):
    """The set's final read: element v is present when key s<v> is."""
    present = []
    for v in attempted:
        status, body = node.call("GET", "/kv/s%d" % v, None, deadline)
        if status == 200:
            present.append(v)
        elif status != 404:
            return {"type": "fail", "error": "read s%d: HTTP %d" % (v, status)}
    return {"type": "ok", "value": sorted(present)}


def perform(node, req):
    deadline = time.monotonic() + TIMEOUT_SHARE * req.get("timeout_ms", 1000) / 1000
    f, key, value = req["f"], req.get("key", ""), req.get("value")
    is_read = f == "read"
    try:
        if f == "read" and key == "":
            return read_set(node, req.get("attempted", []), deadline)
        if f == "read":
            return read(node, key, deadline)
        if f == "write":
            return write(node, key, value, deadline)
        if f == "cas":
            return cas(node, key, value, deadline)
        if f == "add":
            return write(node, "s%d" % value, 1, deadline)
        return {"type": "fail", "error": "unknown operation %r" % f}
    except NotSent as e:
        return {"type": "fail", "error": "not sent: %s" % e, "unavailable": True}
    except (OSError, http.client.HTTPException, socket.timeout) as e:
        return {"type": "fail" if is_read else "info", "error": "%s: %s" % (type(e).__name__, e)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--addr", required=True, help="the node's client address, host:port")
    p.add_argument("--read-consistency", default="linearizable", choices=["linearizable", "serializable"])
    args = p.parse_args()
    node = Node(args.addr, args.read_consistency == "serializable")
    for line in sys.stdin:
        req = json.loads(line)
        out = perform(node, req)
        out["id"] = req["id"]
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
