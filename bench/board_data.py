#!/usr/bin/env python3
"""The board's data endpoint on a run of 1,000 tasks: GET /data.json of
`devgraph board serve`, against GET /data.json of the reference's
dashboard.py serving the same run directory, in the same run. The run
(100 bundles of 10 tasks, 1,703 events) is made by
tests/support/make_board_run.py and checked with `devgraph validate run`.
Each request is a new connection, timed from connect to the last byte of
the answer; the two servers are asked in turn, N rounds after a warm-up.
The reference rebuilds its data on every request (it reads GRAPH.yaml,
state.json and events.jsonl again); devgraph answers from what it has
read as the run grew.

usage: bench/board_data.py BUILD_DIR [REFERENCE_DIR] [N]
REFERENCE_DIR is the reference's checkout (its runtime/dashboard.py), or
DEVGRAPH_REFERENCE_DIR; without either only devgraph is measured.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_RUN = os.path.join(HERE, "..", "tests", "support", "make_board_run.py")


def start(argv, env=None):
    """Starts a server and reads its port from the URL it prints first."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    line = proc.stdout.readline()
    at = line.find("http://127.0.0.1:")
    if at < 0:
        proc.kill()
        sys.exit("board_data: %s printed no URL: %r" % (argv[0], line))
    port = int(line[at + len("http://127.0.0.1:"):].split("/")[0])
    return proc, port


def get(port, path):
    """One GET on a new connection: (milliseconds, body bytes)."""
    start_t = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path)
    chunks = []
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        chunks.append(b)
    ms = (time.perf_counter() - start_t) * 1000
    s.close()
    whole = b"".join(chunks)
    head, _, body = whole.partition(b"\r\n\r\n")
    if not head.split(b"\r\n")[0].split()[1:2] == [b"200"]:
        sys.exit("board_data: GET %s answered %r" % (path.decode(), head[:80]))
    return ms, body


def pct(sorted_ms, p):
    return sorted_ms[min(len(sorted_ms) - 1, int(len(sorted_ms) * p))]


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit("usage: bench/board_data.py BUILD_DIR [REFERENCE_DIR] [N]")
    build = sys.argv[1]
    ref_dir = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("DEVGRAPH_REFERENCE_DIR", "")
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    devgraph = os.path.join(build, "devgraph")
    dashboard = os.path.join(ref_dir, "runtime", "dashboard.py") if ref_dir else ""
    if dashboard and not os.path.exists(dashboard):
        sys.exit("board_data: no runtime/dashboard.py in %s" % ref_dir)
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "run")
        made = json.loads(subprocess.run(
            [sys.executable, MAKE_RUN, devgraph, run, "--bundles", "100", "--tasks", "10",
             "--direct"], check=True, stdout=subprocess.PIPE, text=True).stdout)
        subprocess.run([devgraph, "validate", "run", run], check=True, stdout=subprocess.DEVNULL)
        servers = {"devgraph": start([devgraph, "board", "serve", run, "--port", "0"])}
        if dashboard:
            servers["reference"] = start([sys.executable, dashboard, "serve", run, "--port", "0"])
        try:
            times = {name: [] for name in servers}
            size = {}
            for name, (_, port) in servers.items():
                for _ in range(5):
                    _, body = get(port, b"/data.json")
                size[name] = (len(body), json.loads(body))
            for _ in range(n):
                for name, (_, port) in servers.items():
                    ms, _ = get(port, b"/data.json")
                    times[name].append(ms)
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait()
    print("run: %d bundles, %d tasks, %d events; %d requests each" %
          (len(made["bundles"]), len(made["tasks"]), made["event_seq"], n))
    for name, ms in times.items():
        ms.sort()
        body_len, data = size[name]
        print("%-9s GET /data.json p50=%.2f ms p95=%.2f ms max=%.2f ms; %d bytes (%.0f KiB), "
              "%d events in it" % (name, pct(ms, 0.5), pct(ms, 0.95), ms[-1], body_len,
                                   body_len / 1024, len(data.get("events", []))))
    if "reference" in times:
        d, r = times["devgraph"], times["reference"]
        print("reference / devgraph: p50 %.1fx, p95 %.1fx; size %.2fx" %
              (pct(r, 0.5) / pct(d, 0.5), pct(r, 0.95) / pct(d, 0.95),
               size["reference"][0] / size["devgraph"][0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
