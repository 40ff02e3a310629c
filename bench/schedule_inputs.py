#!/usr/bin/env python3
"""Write the schedule benchmark inputs into a directory.

  tasks.json   5,000 tasks; T0 <- T1 <- ... <- T1999 is the longest chain
  state.json   the first 1,000 chain tasks complete, five tasks in flight
  repo/        a git repository with 20,000 uncommitted changes (a quarter
               inside T0's footprint, a quarter inside T1's, the rest
               outside), some of them staged renames

The shape matches bench/schedule_bench.cpp, so the in-process and the
whole-process numbers describe the same work. Usage: schedule_inputs.py DIR
"""
import json
import os
import subprocess
import sys

TASKS = 5000
CHAIN = 2000
CHANGES = 20000


def plan() -> dict:
    seed = 12345

    def rand() -> int:
        nonlocal seed
        seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
        return (seed >> 8) & 0xFFFFFF

    tasks = []
    for i in range(TASKS):
        if 0 < i < CHAIN:
            deps = [f"T{i - 1}"]
        elif i >= CHAIN:
            deps = [f"T{rand() % 300}"]
            if i % 3 == 0:
                deps.append(f"T{CHAIN + (rand() % (i - CHAIN + 1)) // 2}")
        else:
            deps = []
        files = [f"src/mod{i}/**", f"tests/mod{i}/*.ts"]
        if i % 50 == 0:
            files.append("package.json")
        tasks.append({"id": f"T{i}", "title": f"task {i}", "depends_on": deps,
                      "files": files, "kind": "code"})
    return {"bundle": "bench", "tasks": tasks}


def state() -> dict:
    runtime = {}

    def add(i: int, status: str, node: str) -> None:
        runtime[f"bench/T{i}"] = {"bundle": "bench", "task": f"T{i}", "node": node, "status": status}

    for i in range(1000):
        add(i, "complete", "commit_task")
    add(1000, "active", "verify")
    for i in range(4):
        add(CHAIN + i, "active", "write_tdd")
    return {"tasks_runtime": runtime}


def change_path(i: int) -> str:
    kind = i % 4
    if kind == 0:
        return f"src/mod0/dir{i % 97}/file {i}.ts"
    if kind == 1:
        return f"src/mod1/f{i}.ts"
    if kind == 2:
        return f"tests/mod2/n\u00e9w{i}.ts"
    return f"lib/other/deep/er/x{i}.js"


def repo(root: str) -> None:
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", root, *args], check=True, env=env, stdout=subprocess.DEVNULL)

    os.makedirs(root)
    git("init", "-q")
    git("config", "user.email", "bench@example.com")
    git("config", "user.name", "bench")
    renamed = [i for i in range(CHANGES) if i % 10 == 0]
    for i in renamed:  # committed under old/, then moved into place
        write(root, "old/" + change_path(i))
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    for i in range(CHANGES):
        if i % 10 != 0:
            write(root, change_path(i))
    for i in renamed:
        dst = os.path.join(root, change_path(i))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.rename(os.path.join(root, "old", change_path(i)), dst)
    git("add", "-A")  # stage everything so the moves show as renames


def write(root: str, rel: str) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(rel + "\n")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tasks.json"), "w", encoding="utf-8") as f:
        json.dump(plan(), f)
    with open(os.path.join(out, "state.json"), "w", encoding="utf-8") as f:
        json.dump(state(), f)
    if not os.path.exists(os.path.join(out, "repo")):
        repo(os.path.join(out, "repo"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
