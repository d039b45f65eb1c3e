"""A local HTTP server for tests/cli/test_fetch.sh: serves the files of one
folder on 127.0.0.1 only, with HTTP Range, and misbehaves on purpose by URL
prefix, so that `brainlesslab fetch --mirror http://127.0.0.1:PORT/MODE`
meets each failure the real servers can show:

  /ok/NAME         the file (200, or 206 for a Range request)
  /cut/NAME        the first request for NAME ends half-way (the connection
                   closes short of Content-Length); later requests are served
  /norange/NAME    Range is ignored: always 200 and the whole file
  /redirect/NAME   302 to /ok/NAME
  /loop/NAME       302 to itself: a redirect loop
  /slow/NAME       headers and 64 bytes, then silence (until the client gives
                   up, at most --stall seconds)
  /long/NAME       the file followed by as many bytes again, no Content-Length
  /offby/NAME      a Range request answered 206 from byte 0 (the wrong range)
  anything else    404

Bounded: it serves at most --max-requests requests and exits after
--max-seconds whatever happens. Usage: fetch_server.py DIR PORTFILE.
"""

from __future__ import annotations

import argparse
import http.server
import os
import threading
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("root")
parser.add_argument("portfile")
parser.add_argument("--max-requests", type=int, default=400)
parser.add_argument("--max-seconds", type=float, default=300.0)
parser.add_argument("--stall", type=float, default=20.0)
args = parser.parse_args()
ROOT = Path(args.root).resolve()
cut_seen: set[str] = set()
lock = threading.Lock()
requests = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):  # the test reads the server's log
        print(f"{self.command} {self.path} {self.headers.get('Range', '-')} " + (fmt % a), flush=True)

    def file(self, name: str) -> bytes | None:
        p = (ROOT / name).resolve()
        if p.parent != ROOT or not p.is_file():
            return None
        return p.read_bytes()

    def send_body(self, data: bytes, honour_range: bool = True, cut: bool = False):
        rng = self.headers.get("Range") if honour_range else None
        start = 0
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        if cut:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if cut else body)
        self.wfile.flush()
        if cut:
            self.close_connection = True

    def do_GET(self):
        global requests
        with lock:
            requests += 1
            if requests > args.max_requests:
                self.send_error(503, "request budget spent")
                return
        parts = self.path.lstrip("/").split("/", 1)
        mode, name = (parts[0], parts[1]) if len(parts) == 2 else ("", "")
        if mode == "redirect":
            self.send_response(302)
            self.send_header("Location", f"/ok/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "loop":
            self.send_response(302)
            self.send_header("Location", f"/loop/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = self.file(name) if mode in ("ok", "cut", "norange", "slow", "long", "offby") else None
        if data is None:
            self.send_error(404, "no such file")
            return
        if mode == "ok":
            self.send_body(data)
        elif mode == "offby":
            self.send_response(206)
            self.send_header("Content-Range", f"bytes 0-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif mode == "norange":
            self.send_body(data, honour_range=False)
        elif mode == "cut":
            with lock:
                first = name not in cut_seen
                cut_seen.add(name)
            self.send_body(data, cut=first)
        elif mode == "slow":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:64])
            self.wfile.flush()
            end = time.monotonic() + args.stall
            try:
                while time.monotonic() < end:  # bounded: the client hangs up long before
                    time.sleep(0.2)
                    self.wfile.write(b"")
            except OSError:
                pass
            self.close_connection = True
        elif mode == "long":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                self.wfile.write(data + data)
            except OSError:
                pass
            self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
tmp = args.portfile + ".tmp"
Path(tmp).write_text(str(srv.server_address[1]))
os.replace(tmp, args.portfile)
threading.Timer(args.max_seconds, srv.shutdown).start()
srv.serve_forever(poll_interval=0.2)
