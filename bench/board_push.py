#!/usr/bin/env python3
"""Time from an event's append to its arrival in a page connected to
`devgraph board serve`: a run directory is made with `devgraph checkpoint
init`, the board serves it, one Server-Sent Events stream is open, and
N events are appended to events.jsonl one at a time (written and fsynced,
as the run's store does); each is timed until its `id:` line arrives. The
same appends with nobody waiting are the floor.

usage: bench/board_push.py BUILD_DIR [N]
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def main() -> int:
    build = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    devgraph = os.path.join(build, "devgraph")
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "run")
        env = dict(os.environ, DEVELOP_METRICS_DIR=os.path.join(tmp, "metrics"))
        subprocess.run([devgraph, "checkpoint", run, "init", "--repo", "acme/widgets",
                        "--default-branch", "main"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        board = subprocess.Popen([devgraph, "board", "serve", run, "--port", "0"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = board.stdout.readline().strip()
            port = int(url.rsplit(":", 1)[1].strip("/"))
            page = socket.create_connection(("127.0.0.1", port))
            page.sendall(b"GET /events HTTP/1.1\r\n\r\n")
            got = b""
            while b":devgraph board" not in got:
                got += page.recv(65536)
            times = []
            with open(os.path.join(run, "events.jsonl"), "a") as log:
                for i in range(n):
                    seq = i + 2
                    line = json.dumps({"ts": "t", "seq": seq, "type": "NOTE", "node": "scan",
                                       "detail": {"i": i}})
                    start = time.perf_counter()
                    log.write(line + "\n")
                    log.flush()
                    os.fsync(log.fileno())
                    want = b"id: %d\n" % seq
                    while want not in got:
                        got += page.recv(65536)
                    times.append((time.perf_counter() - start) * 1000)
        finally:
            board.terminate()
            board.wait()
        # The floor: the same appends with nobody waiting for them.
        floor = []
        with open(os.path.join(tmp, "floor.jsonl"), "a") as log:
            for i in range(n):
                start = time.perf_counter()
                log.write(json.dumps({"seq": i}) + "\n")
                log.flush()
                os.fsync(log.fileno())
                floor.append((time.perf_counter() - start) * 1000)
    times.sort()
    floor.sort()
    print("events=%d to the page: p50=%.2f ms p95=%.2f ms max=%.2f ms; "
          "the append alone: p50=%.2f ms p95=%.2f ms" %
          (n, times[len(times) // 2], times[int(len(times) * 0.95)], times[-1],
           floor[len(floor) // 2], floor[int(len(floor) * 0.95)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
