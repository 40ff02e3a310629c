#!/usr/bin/env python3
"""Makes a run directory for the board's tests and benchmarks: BUNDLES
bundles of TASKS tasks each, every bundle planned (its tasks listed on
state.bundles) and started, every task started at write_tdd, and every
other task moved on to implement, as a run looks mid-way.

By default every step is a real `devgraph checkpoint` call (init, go,
move with --plan, move of each task), so the files are exactly what
devgraph writes. With --direct only the first steps are (init, the scan
and the bundles formed); the cursors and their events are then written
into state.json and events.jsonl in the same shapes, so a run of 1,000
tasks takes a fraction of a second. Check such a run with `devgraph
validate state` (and `validate run`, which replays it).

--title TEXT gives the first bundle and its first task that title (say,
markup that must show as text). It prints one JSON object: the run
directory, the bundles and tasks ({"id", "title"}; tasks keyed
"BUNDLE/TASK") and the newest event's seq.

usage: make_board_run.py DEVGRAPH RUN_DIR [--bundles N] [--tasks N] [--title TEXT] [--direct]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def bundle_id(b: int, count: int) -> str:
    return "B%0*d" % (len(str(count)), b + 1)


def task_id(t: int, count: int) -> str:
    return "T%0*d" % (len(str(count)), t + 1)


def plan(args) -> list:
    """The bundles and their tasks: unique ids, and titles unique enough to
    filter for one ("rule 0427" names one task of a 1,000-task run)."""
    bundles = []
    width = len(str(args.bundles * args.tasks))
    for b in range(args.bundles):
        bid = bundle_id(b, args.bundles)
        tasks = []
        for t in range(args.tasks):
            k = b * args.tasks + t + 1
            tasks.append({"id": task_id(t, args.tasks),
                          "title": "Teach the parser rule %0*d" % (width, k),
                          "depends_on": [] if t == 0 else [task_id(t - 1, args.tasks)],
                          "files": ["src/rule_%d.py" % k, "tests/test_rule_%d.py" % k]})
        bundles.append({"id": bid, "title": "Widgets, part %d of %d" % (b + 1, args.bundles),
                        "issues": [b + 1], "branch": "develop/%s" % bid.lower(),
                        "status": "running", "tasks": tasks})
    if args.title is not None and bundles:
        bundles[0]["title"] = args.title
        if bundles[0]["tasks"]:
            bundles[0]["tasks"][0]["title"] = args.title
    return bundles


class Checkpoint:
    def __init__(self, devgraph: str, run: str, env: dict):
        self.devgraph, self.run, self.env = devgraph, run, env

    def __call__(self, *args: str) -> None:
        r = subprocess.run([self.devgraph, "checkpoint", self.run, *args], env=self.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit("make_board_run: checkpoint %s failed: %s" % (" ".join(args), r.stderr))


def with_verbs(cp: Checkpoint, bundles: list, scratch: str) -> None:
    for b in bundles:
        cp("move", "--bundle", b["id"], "--node", "plan_bundle", "--event", "BUNDLE_STARTED",
           "--merge", json.dumps({"branch": b["branch"]}))
        tasks_json = os.path.join(scratch, "tasks-%s.json" % b["id"])
        with open(tasks_json, "w", encoding="utf-8") as f:
            json.dump({"tasks": b["tasks"]}, f)
        cp("move", "--bundle", b["id"], "--node", "task_scheduler", "--event", "PLAN_DONE",
           "--plan", tasks_json)
        for i, t in enumerate(b["tasks"]):
            cp("move", "--bundle", b["id"], "--task", t["id"], "--node", "write_tdd", "--event",
               "TASK_STARTED")
            if i % 2 == 1:
                cp("move", "--bundle", b["id"], "--task", t["id"], "--node", "implement",
                   "--event", "TDD_DONE")


def direct(run: str, bundles: list) -> None:
    """The same cursors and events as with_verbs(), written in one go."""
    state_path = os.path.join(run, "state.json")
    with open(state_path, encoding="utf-8") as f:
        state = json.load(f)
    node = state["node"]
    seq = state["event_seq"]
    stamp = state["updated_at"]
    lines = []
    moves = 0
    state["bundles"] = bundles  # as formed, each with its plan (what --plan leaves)

    def event(etype: str, detail: dict) -> None:
        nonlocal seq
        seq += 1
        lines.append(json.dumps({"ts": stamp, "seq": seq, "type": etype, "node": node,
                                 "detail": detail}) + "\n")

    for b in bundles:
        bid = b["id"]
        event("BUNDLE_STARTED",
              {"bundle": bid, "lane_from": None, "lane_to": "plan_bundle", "cursor": bid})
        event("PLAN_DONE", {"bundle": bid, "lane_from": "plan_bundle", "lane_to": "task_scheduler",
                            "cursor": bid, "plan_tasks": len(b["tasks"])})
        moves += 2
        state["bundles_runtime"][bid] = {
            "bundle": bid, "task": None, "node": "task_scheduler", "previous_node": "plan_bundle",
            "status": "active", "moves": 2, "updated_at": stamp, "branch": b["branch"],
            "task_count": len(b["tasks"])}
        for i, t in enumerate(b["tasks"]):
            key = "%s/%s" % (bid, t["id"])
            event("TASK_STARTED", {"bundle": bid, "lane_from": None, "lane_to": "write_tdd",
                                   "cursor": key, "task": t["id"]})
            cursor = {"bundle": bid, "task": t["id"], "node": "write_tdd", "previous_node": None,
                      "status": "active", "moves": 1, "updated_at": stamp}
            moves += 1
            if i % 2 == 1:
                event("TDD_DONE", {"bundle": bid, "lane_from": "write_tdd", "lane_to": "implement",
                                   "cursor": key, "task": t["id"]})
                cursor.update(node="implement", previous_node="write_tdd", moves=2)
                moves += 1
            state["tasks_runtime"][key] = cursor
    state["event_seq"] = seq
    state["metrics"]["nodes_executed"] += moves
    state["metrics"]["transitions"] += moves
    with open(os.path.join(run, "events.jsonl"), "a", encoding="utf-8") as f:
        f.writelines(lines)
        f.flush()
        os.fsync(f.fileno())
    # Replaced whole, as the store does, so a board reading it never sees half.
    tmp = state_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, state_path)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("devgraph")
    p.add_argument("run_dir")
    p.add_argument("--bundles", type=int, default=2)
    p.add_argument("--tasks", type=int, default=2, help="tasks per bundle")
    p.add_argument("--title", help="the first bundle's and first task's title")
    p.add_argument("--direct", action="store_true",
                   help="write the cursors and their events directly (fast; for large runs)")
    args = p.parse_args()
    env = dict(os.environ)
    # A run's checkpoints may record its session; keep that out of the home directory.
    env.setdefault("DEVELOP_METRICS_DIR", os.path.join(os.path.dirname(os.path.abspath(
        args.run_dir)), "metrics"))
    cp = Checkpoint(args.devgraph, args.run_dir, env)
    bundles = plan(args)
    cp("init", "--repo", "acme/widgets", "--default-branch", "main", "--merge",
       json.dumps({"delivery": "local"}))
    cp("go", "--node", "bundle", "--event", "SCAN_DONE", "--detail",
       json.dumps({"issues": [b["issues"][0] for b in bundles]}))
    # The bundles as formed; each one's plan comes with its PLAN_DONE.
    formed = [{k: v for k, v in b.items() if k != "tasks"} for b in bundles]
    if args.direct:
        # One argument holds at most 128 KiB: direct() writes the bundles.
        formed = []
    cp("go", "--node", "bundle_scheduler", "--event", "BUNDLES_FORMED", "--merge",
       json.dumps({"bundles": formed}))
    if args.direct:
        direct(args.run_dir, bundles)
    else:
        with tempfile.TemporaryDirectory() as scratch:
            with_verbs(cp, bundles, scratch)
    with open(os.path.join(args.run_dir, "state.json"), encoding="utf-8") as f:
        seq = json.load(f)["event_seq"]
    print(json.dumps({
        "run_dir": os.path.abspath(args.run_dir),
        "bundles": [{"id": b["id"], "title": b["title"]} for b in bundles],
        "tasks": [{"id": "%s/%s" % (b["id"], t["id"]), "title": t["title"]}
                  for b in bundles for t in b["tasks"]],
        "event_seq": seq,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
