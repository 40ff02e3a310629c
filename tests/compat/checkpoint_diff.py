#!/usr/bin/env python3
"""Differential test of `devgraph checkpoint` against the reference checkpoint.py.

Random sessions of checkpoint commands (valid and invalid: unknown nodes and
events, bad ids, odd JSON, dispatches, plans, signals, handoffs, resumes)
run on two run directories, one per tool. After every step the two must
agree on the exit status class (0, usage error, refusal), on what they
print, and on state.json and events.jsonl (timestamps and paths aside).
Where devgraph refuses on purpose (docs/building-blocks.md, "Recording a run") the
step is skipped on both sides and the session goes on. With --alternate
the devgraph side is a run directory the two tools take turns on. Exit 0
when every session agreed; otherwise each difference is printed with its
seed.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

STAMP = re.compile(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"')
ORCHESTRATOR = ["scan", "bundle", "bundle_scheduler", "handoff", "monitor_prs", "complete",
                "human_required"]
BUNDLE = ["plan_bundle", "task_scheduler", "bundle_verify", "final_review", "create_pr",
          "repair_bundle"]
TASK = ["write_tdd", "implement", "verify", "commit_task", "repair_task"]
SHARED = ["context_recovery", "blocker_recovery", "awaiting_human"]
EVENTS = ["SCAN_DONE", "BUNDLES_FORMED", "BUNDLE_STARTED", "PLAN_DONE", "TASK_STARTED",
          "TDD_DONE", "IMPLEMENT_DONE", "VERIFY_DONE", "TASK_COMMITTED", "PR_CREATED",
          "BRANCH_READY", "NOTE", "AWAITING_HUMAN", "RECOVERED", "BLOCKED", "RUN_COMPLETE",
          "PERSONA_DISPATCHED", "MADE_UP"]
PERSONAS = ["planner", "tech-lead", "developer", "tester", "code-reviewer", "developer-repair"]
ODD_IDS = ["", "x y", "-x", "a/b", "\u00e9", "True"]
# devgraph's deliberate refusals, by the words of its message.
ON_PURPOSE = ("not a node of the graph", " is in lane ", "outside the 64-bit range")


def random_json(rng, depth=0):
    pick = rng.random()
    if depth > 2 or pick < 0.3:
        return rng.choice([1, 0, -3, 2.5, "s", "", True, False, None, 2**63, 2**64 - 1, 10**20])
    if pick < 0.5:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["a", "b", "+a", "note", "+list", "x"]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def random_step(rng, plan):
    def maybe(flag, p):
        return [flag, json.dumps(random_json(rng))] if rng.random() < p else []

    bundle = rng.choice(["B1", "B1", "B2"]) if rng.random() > 0.05 else rng.choice(ODD_IDS)
    event = rng.choice(EVENTS)
    pick = rng.random()
    if pick < 0.15:
        return (["go", "--node", rng.choice(ORCHESTRATOR + SHARED), "--event", event]
                + maybe("--merge", 0.2) + maybe("--detail", 0.2))
    if pick < 0.55:
        task = rng.random() < 0.6
        step = ["move", "--bundle", bundle]
        if task:
            step += ["--task", rng.choice(["T1", "T2", "T3"])]
        step += ["--node", rng.choice((TASK if task else BUNDLE) + SHARED), "--event", event]
        step += maybe("--merge", 0.2) + maybe("--detail", 0.1)
        if not task and rng.random() < 0.2:
            step += ["--plan", plan]
        return step
    if pick < 0.72:
        if rng.random() < 0.6:
            detail = {"persona": rng.choice(PERSONAS), "agent_handle": rng.choice(["h1", "h2", ""])}
            if rng.random() < 0.8:
                detail["bundle"] = rng.choice(["B1", "B2", ""])
            if rng.random() < 0.5:
                detail["task"] = rng.choice(["T1", "T2", ""])
            return ["event", "--event", "PERSONA_DISPATCHED", "--detail", json.dumps(detail)]
        return ["event", "--event", event] + maybe("--detail", 0.3) + maybe("--merge", 0.3)
    if pick < 0.88:
        step = ["signal", "--type", rng.choice(["tool_call", "turn", "result"])]
        if rng.random() < 0.6:
            step += ["--count", rng.choice(["1", "5", "20", "40", "0", " 3", "1_0", "-1", "x"])]
        if rng.random() < 0.3:
            step += ["--bundle", rng.choice(["B1", "B2"])]
        if rng.random() < 0.15:
            step += ["--reset"]
        return step
    if pick < 0.94:
        return ["handoff", "--reason", rng.choice(["red", "x y"])]
    if pick < 0.98:
        return ["resume"]
    return ["show"]


def abbreviated(rng, step):
    """The step with its flags shortened to prefixes argparse accepts (no two
    options of a command share a first letter)."""
    return [w[:2 + rng.randint(1, len(w) - 2)] if w.startswith("--") else w for w in step]


def run(argv, env):
    p = subprocess.run(argv, capture_output=True, text=True, errors="replace", env=env)
    status = p.returncode
    if status != 0 and "Traceback" in p.stderr:
        status = "crash"
    return status, p.stdout, p.stderr


def exit_class(status):
    return {0: "ok", 2: "usage"}.get(status, "refused")


def comparable(text, run_dir):
    return STAMP.sub('"TS"', text).replace(run_dir, "RUN")


def run_files(run_dir):
    out = []
    for name in ("state.json", "events.jsonl"):
        path = os.path.join(run_dir, name)
        out.append(comparable(open(path, encoding="utf-8").read(), run_dir)
                   if os.path.exists(path) else None)
    return out


def printed(step, stdout, run_dir):
    if step[0] == "signal":  # the tier's action text differs on purpose
        try:
            report = json.loads(stdout)
            report.pop("action", None)
            return report
        except ValueError:
            pass
    return comparable(stdout, run_dir)


def session(seed, steps, devgraph, reference, alternate):
    """One session; returns the first difference found, or None. With
    `alternate`, the devgraph side is one run directory that the two tools
    take turns on, so each continues the other's files."""
    rng = random.Random(seed)
    root = tempfile.mkdtemp(prefix="checkpoint-diff-")
    try:
        env = dict(os.environ, HOME=os.path.join(root, "home"))
        os.makedirs(env["HOME"])
        plan = os.path.join(root, "tasks.json")
        with open(plan, "w") as f:
            json.dump({"tasks": [{"id": "T1", "title": "a"}, {"id": "T2", "depends_on": ["T1"]},
                                 {"id": ""}, {"title": "no id"}]}, f)
        ref_dir, dg_dir = os.path.join(root, "ref", "run"), os.path.join(root, "dg", "run")
        with_ref = lambda d, step: run(["python3", reference, d] + step, env)
        with_dg = lambda d, step: run([devgraph, "checkpoint", d] + step, env)
        init = ["init", "--repo", "/repo", "--default-branch", "main"]
        if with_ref(ref_dir, init)[0] != 0 or with_dg(dg_dir, init)[0] != 0:
            return (0, init, "init failed")
        for i in range(steps):
            step = random_step(rng, plan)
            if rng.random() < 0.1:
                step = abbreviated(rng, step)
            for d in (ref_dir, dg_dir):
                shutil.rmtree(d + ".undo", ignore_errors=True)
                shutil.copytree(d, d + ".undo")
            other = with_ref if alternate and i % 2 else with_dg
            r, d = with_ref(ref_dir, step), other(dg_dir, step)
            if r[0] != 0 or d[0] != 0:
                same_refusal = r[0] != 0 and d[0] != 0 and exit_class(r[0]) == exit_class(d[0])
                on_purpose = r[0] == 0 and d[0] != 0 and any(w in d[2] for w in ON_PURPOSE)
                if not (same_refusal or on_purpose):
                    return (i, step, f"exit {r[0]} vs {d[0]}", r[2][-300:], d[2][-300:])
                # Skip the step on both sides (the reference may have left
                # an orphan event behind).
                for run_dir in (ref_dir, dg_dir):
                    shutil.rmtree(run_dir)
                    shutil.copytree(run_dir + ".undo", run_dir)
                continue
            if printed(step, r[1], ref_dir) != printed(step, d[1], dg_dir):
                return (i, step, "stdout", r[1][-300:], d[1][-300:])
            rf, df = run_files(ref_dir), run_files(dg_dir)
            if rf != df:
                which = [n for n, a, b in zip(("state.json", "events.jsonl"), rf, df) if a != b]
                return (i, step, "files differ: " + ", ".join(which))
        return None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devgraph", required=True, help="the devgraph binary")
    ap.add_argument("--reference", required=True, help="the reference checkpoint.py")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0, help="first session's seed")
    ap.add_argument("--alternate", action="store_true",
                    help="the devgraph side alternates the two tools on one run directory")
    a = ap.parse_args()
    failed = 0
    for seed in range(a.seed, a.seed + a.sessions):
        found = session(seed, a.steps, a.devgraph, a.reference, a.alternate)
        if found:
            failed += 1
            print("seed", seed, "step", found[0], found[1:], flush=True)
    print(f"{a.sessions} sessions of {a.steps} steps: {failed} with differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
