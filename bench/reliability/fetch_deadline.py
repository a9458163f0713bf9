"""How long a trickling data server holds a fetch: the whole-fetch deadline measured.

A loopback HTTP server answers 200 with a Content-Length of 100,000 bytes and sends one
byte every ``--every`` seconds (never tripping the per-read timeout of 10 s). The script
fetches it ``--repeat`` times through :func:`app.services.datasets.fetching.fetch_to_file`
with 127.0.0.1 allowed and a whole-fetch deadline (COSTWISE_DATA_FETCH_SECONDS) of
``--deadline`` seconds, and reports how long each fetch took to end and its message.

Run::

    .venv/bin/python bench/reliability/fetch_deadline.py --every 4 --deadline 5

Writes ``bench/results/reliability/fetch_deadline.json``. Loopback only.
"""

from __future__ import annotations

import argparse
import http.server
import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.errors import ServiceError  # noqa: E402
from app.services.datasets.fetching import FetchPolicy, fetch_to_file  # noqa: E402
from bench.record import write_result  # noqa: E402


def serve(every: float) -> http.server.ThreadingHTTPServer:
    class Trickle(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(100_000):
                    self.wfile.write(b"1")
                    self.wfile.flush()
                    time.sleep(every)
            except OSError:
                pass  # cut by the client

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--every", type=float, default=4.0)
    parser.add_argument("--deadline", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    server = serve(args.every)
    uri = f"http://127.0.0.1:{server.server_address[1]}/trickle.csv"
    policy = FetchPolicy(("127.0.0.1",), timeout=10.0, total_seconds=args.deadline)
    runs = []
    for _ in range(args.repeat):
        started = time.monotonic()
        try:
            fetch_to_file(uri, policy, schemes={"http"}, field="dataset.uri", suffix=".csv")
            detail = "fetched (unexpected)"
        except ServiceError as exc:
            detail = exc.detail
        runs.append({"seconds": round(time.monotonic() - started, 3), "detail": detail})
        print(json.dumps(runs[-1]))
    server.shutdown()
    write_result(__file__, {"every": args.every, "deadline": args.deadline, "runs": runs})


if __name__ == "__main__":
    main()
