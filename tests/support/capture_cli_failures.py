#!/usr/bin/env python3
"""Capture what the real agent CLIs print when their model provider fails.

For each (cli, shape) it starts tests/support/model_server.py on a script
whose persona turn answers with an HTTP error (or, for max-turns, a tool
call), runs the CLI with the argv devgraph uses (src/agents/backend.cpp)
in a fresh home and worktree under a temporary directory, and writes
tests/fixtures/cli-failures/<cli>-<shape>.json: the settings used, exit
code (or the signal when the run outlived its time limit and was killed),
stdout, stderr, seconds, and the model requests the server saw (with the
time each arrived), so the CLI's own retries show. Paths of this machine
and the server's port are replaced by <tmp>, <home>, <work> and <port>.

Usage: capture_cli_failures.py [--clis-dir DIR] [--out DIR] [--only CLI[-SHAPE]]...
Offline: every CLI talks only to the server on 127.0.0.1, which refuses
any other host. Python standard library only.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SERVER = os.path.join(HERE, "model_server.py")

PROMPT = (
    "Your persona is defined in /x/agents/developer.md; read it and follow it.\n"
    "Task T1 of bundle b1: write src/T1.txt containing hello, then answer with RESULT_JSON."
)
DONE = {"say": "Finished.", "result": {"status": "DONE", "summary": "T1 done", "evidence": []}}
WRITE = {"write": {"path": "src/T1.txt", "content": "hello\n"}}

# ------------------------------------------------------------ error bodies

ANTHROPIC_RATE = {
    "type": "error",
    "error": {
        "type": "rate_limit_error",
        "message": "This request would exceed your account's rate limit. Please try again later.",
    },
}
ANTHROPIC_500 = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
ANTHROPIC_529 = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
ANTHROPIC_401 = {
    "type": "error",
    "error": {"type": "authentication_error", "message": "invalid x-api-key"},
}

OPENAI_RATE = {
    "error": {
        "message": "Rate limit reached for gpt-5-codex in organization org-x on tokens per min "
        "(TPM): Limit 30000, Used 30000, Requested 1000. Please try again in 3s.",
        "type": "tokens",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
OPENAI_USAGE = {
    "error": {
        "type": "usage_limit_reached",
        "message": "The usage limit has been reached",
        "plan_type": "plus",
        "resets_at": None,  # filled in at run time: now + 2 hours
        "resets_in_seconds": 7200,
    }
}
OPENAI_500 = {
    "error": {
        "message": "The server had an error while processing your request. Sorry about that!",
        "type": "server_error",
        "param": None,
        "code": None,
    }
}
OPENAI_401 = {
    "error": {
        "message": "Incorrect API key provided: dummy. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}


def gemini_quota(retry):
    """The Gemini API's per-minute quota 429, with its RetryInfo delay."""
    return {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing "
            "details. For more information on this error, head to: "
            "https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: "
            "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, "
            "model: gemini-2.5-pro\nPlease retry in %s." % retry,
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/"
                            "generate_content_free_tier_requests",
                            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                            "quotaDimensions": {"location": "global", "model": "gemini-2.5-pro"},
                            "quotaValue": "10",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry},
            ],
        }
    }


GEMINI_EXHAUSTED = {
    "error": {
        "code": 429,
        "message": "Resource has been exhausted (e.g. check quota).",
        "status": "RESOURCE_EXHAUSTED",
    }
}
GEMINI_DAILY = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details."
        "\n* Quota exceeded for metric: generativelanguage.googleapis.com/"
        "generate_content_free_tier_requests, limit: 100, model: gemini-2.5-pro",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/"
                        "generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                        "quotaValue": "100",
                    }
                ],
            }
        ],
    }
}
GEMINI_500 = {
    "error": {
        "code": 500,
        "message": "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
        "status": "INTERNAL",
    }
}
GEMINI_503 = {
    "error": {
        "code": 503,
        "message": "The model is overloaded. Please try again later.",
        "status": "UNAVAILABLE",
    }
}
GEMINI_401 = {
    "error": {
        "code": 401,
        "message": "Request had invalid authentication credentials. Expected OAuth 2 access "
        "token, login cookie or other valid authentication credential.",
        "status": "UNAUTHENTICATED",
    }
}
GEMINI_400_KEY = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ],
    }
}


def err(status, body, retry_after=None, **extra):
    t = {"http_error": status, "body": body, "message": "scripted"}
    if retry_after is not None:
        t["retry_after"] = retry_after
    t.update(extra)
    return t


# A shape: the persona's turns, how long the run may take, a note, and
# per-CLI knobs: "retries" (False keeps the CLI's defaults).
SHAPES = {
    "claude": {
        "rate-limit-retry-after": dict(turns=[err(429, ANTHROPIC_RATE, 3)]),
        "rate-limit-long-retry-after": dict(turns=[err(429, ANTHROPIC_RATE, 3600)], limit=180),
        "usage-limit": dict(turns=[err(429, ANTHROPIC_RATE)]),
        "usage-limit-unified-headers": dict(
            turns=[
                err(
                    429,
                    ANTHROPIC_RATE,
                    headers={
                        "anthropic-ratelimit-unified-status": "rejected",
                        "anthropic-ratelimit-unified-reset": "@RESET",
                        "anthropic-ratelimit-unified-representative-claim": "five_hour",
                        "anthropic-ratelimit-unified-5h-status": "rejected",
                        "anthropic-ratelimit-unified-5h-reset": "@RESET",
                        "anthropic-ratelimit-unified-5h-utilization": "1.0",
                    },
                )
            ],
            note="429 with the subscription (unified) rate-limit headers a Claude.ai plan "
            "gets; reset = capture time + 2 h",
        ),
        "server-error": dict(turns=[err(500, ANTHROPIC_500)]),
        "server-error-default-retries": dict(
            turns=[err(500, ANTHROPIC_500)], retries=False, limit=200,
            note="the CLI's own retry defaults; killed if still retrying after 200 s",
        ),
        "server-error-503": dict(turns=[err(503, ANTHROPIC_500)]),
        "overloaded": dict(turns=[err(529, ANTHROPIC_529)]),
        "auth": dict(turns=[err(401, ANTHROPIC_401)]),
        "max-turns": dict(turns=[WRITE, DONE], max_turns=1),
        "recovers-after-429": dict(
            turns=[err(429, ANTHROPIC_RATE, 1, times=1, then=DONE)],
            note="the first request fails with 429 (Retry-After: 1), the retry succeeds",
        ),
    },
    "codex": {
        "rate-limit-retry-after": dict(turns=[err(429, OPENAI_RATE, 3)]),
        "rate-limit-long-retry-after": dict(turns=[err(429, OPENAI_RATE, 3600)], limit=180),
        "usage-limit": dict(turns=[err(429, OPENAI_USAGE)]),
        "server-error": dict(turns=[err(500, OPENAI_500)]),
        "server-error-default-retries": dict(
            turns=[err(500, OPENAI_500)], retries=False, limit=200,
            note="the CLI's own retry defaults; killed if still retrying after 200 s",
        ),
        "server-error-503": dict(turns=[err(503, OPENAI_500)]),
        "auth": dict(turns=[err(401, OPENAI_401)]),
        "recovers-after-429": dict(
            turns=[err(429, OPENAI_RATE, 1, times=1, then=DONE)],
            note="the first request fails with 429 (Retry-After: 1), the retry succeeds",
        ),
    },
    "gemini": {
        "rate-limit-retry-after": dict(
            turns=[err(429, gemini_quota("3s"), 3)],
            note="Gemini API per-minute quota 429: Retry-After: 3 header, RetryInfo "
            "retryDelay 3s and 'Please retry in 3s.' in the message",
        ),
        "rate-limit-long-retry-after": dict(
            turns=[err(429, gemini_quota("3600s"), 3600)], limit=180
        ),
        "usage-limit": dict(
            turns=[err(429, GEMINI_EXHAUSTED)],
            note="bare RESOURCE_EXHAUSTED without details (gemini treats it as retryable)",
        ),
        "usage-limit-daily": dict(
            turns=[err(429, GEMINI_DAILY)],
            note="per-day QuotaFailure (gemini treats it as terminal)",
        ),
        "server-error": dict(turns=[err(500, GEMINI_500)]),
        "server-error-default-retries": dict(
            turns=[err(500, GEMINI_500)], retries=False, limit=290,
            note="the CLI's own retry defaults; killed if still retrying after 290 s",
        ),
        "server-error-503": dict(turns=[err(503, GEMINI_503)]),
        "auth": dict(turns=[err(401, GEMINI_401)]),
        "auth-invalid-key-400": dict(
            turns=[err(400, GEMINI_400_KEY)],
            note="what the Gemini API really answers for a bad key: 400 API_KEY_INVALID",
        ),
        "max-turns": dict(turns=[WRITE, DONE], max_turns=1),
        "recovers-after-429": dict(
            turns=[err(429, gemini_quota("1s"), 1, times=1, then=DONE)],
            note="the first request fails with 429 (retry in 1s), the retry succeeds",
        ),
    },
}

RETRIES = {"claude": 2, "codex": 1, "gemini": 2}


CLIS_DIR = os.path.join(SOURCE, ".real-clis")


def exe_of(cli):
    return os.path.join(CLIS_DIR, "node_modules", ".bin", cli)


def version(cli, exe):
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"\d+\.\d+\.\d+", out.stdout + out.stderr)
    return m.group(0) if m else (out.stdout + out.stderr).strip()


def common_env(url, home):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HTTPS_PROXY": url,
        "HTTP_PROXY": url,
        "https_proxy": url,
        "http_proxy": url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    return env


def prepare(cli, url, home, shape, spec):
    """Writes the CLI's files under home; returns (env, settings record)."""
    retries = spec.get("retries", RETRIES[cli])
    env = common_env(url, home)
    settings = {}
    if cli == "claude":
        env.update(
            ANTHROPIC_BASE_URL=url,
            ANTHROPIC_API_KEY="dummy",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        if retries is not False:
            env["CLAUDE_CODE_MAX_RETRIES"] = str(retries)
            settings["env"] = {"CLAUDE_CODE_MAX_RETRIES": str(retries)}
    elif cli == "codex":
        codex_home = os.path.join(home, ".codex")
        os.makedirs(codex_home)
        provider = ""
        if retries is not False:
            provider = "request_max_retries = %d\nstream_max_retries = %d\n" % (retries, retries)
            settings["config.toml [model_providers.scripted]"] = {
                "request_max_retries": retries,
                "stream_max_retries": retries,
            }
        with open(os.path.join(codex_home, "config.toml"), "w") as f:
            f.write(
                'model = "gpt-5-codex"\nmodel_provider = "scripted"\n'
                "check_for_update_on_startup = false\n"
                '[model_providers.scripted]\nname = "scripted"\nbase_url = "%s/v1"\n'
                'wire_api = "responses"\n%s'
                "[features]\nplugins = false\n[analytics]\nenabled = false\n" % (url, provider)
            )
        env["CODEX_HOME"] = codex_home
    else:
        gdir = os.path.join(home, ".gemini")
        os.makedirs(gdir)
        doc = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
        }
        if retries is not False:
            doc["general"] = {"maxAttempts": retries}
            settings["settings.json"] = {"general.maxAttempts": retries}
        if spec.get("max_turns"):
            doc["model"] = {"maxSessionTurns": spec["max_turns"]}
            settings.setdefault("settings.json", {})["model.maxSessionTurns"] = spec["max_turns"]
        with open(os.path.join(gdir, "settings.json"), "w") as f:
            json.dump(doc, f)
        env.update(
            GEMINI_API_KEY="dummy",
            GOOGLE_GEMINI_BASE_URL=url,
            GEMINI_CLI_TRUST_WORKSPACE="true",
        )
    return env, settings


def argv(cli, exe, wt, run_dir, spec):
    if cli == "claude":
        turns = str(spec.get("max_turns", 80))
        return [exe, "-p", PROMPT, "--output-format", "json", "--permission-mode", "acceptEdits",
                "--max-turns", turns, "--add-dir", run_dir]
    if cli == "codex":
        return [exe, "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check",
                "--cd", wt, "--add-dir", run_dir, PROMPT]
    return [exe, "-p", PROMPT, "--output-format", "json", "--approval-mode", "auto_edit"]


def fill(value, reset):
    """The turn with @RESET (and codex's resets_at) set to the reset time."""
    if isinstance(value, dict):
        out = {k: fill(v, reset) for k, v in value.items()}
        if out.get("type") == "usage_limit_reached" and "resets_at" in out:
            out["resets_at"] = reset
        return out
    if isinstance(value, list):
        return [fill(v, reset) for v in value]
    if value == "@RESET":
        return str(reset)
    return value


class LogWatcher(threading.Thread):
    """Stamps each line of the server's log with the time it appeared."""

    def __init__(self, path, start):
        super().__init__(daemon=True)
        self.path, self.start_time, self.lines, self.stop = path, start, [], False

    def run(self):
        pos = 0
        while True:
            try:
                with open(self.path, encoding="utf-8") as f:
                    f.seek(pos)
                    data = f.read()
            except FileNotFoundError:
                data = ""
            while "\n" in data:
                line, data = data.split("\n", 1)
                pos += len(line.encode()) + 1
                rec = json.loads(line)
                rec["t"] = round(time.monotonic() - self.start_time, 1)
                self.lines.append(rec)
            if self.stop:
                return
            time.sleep(0.05)


def clean(text, subs):
    for old, new in subs:
        text = text.replace(old, new)
    text = re.sub(r"/work/[^\s\"'`]*", "<work>", text)
    text = re.sub(r"/tmp/[^\s\"'`]*", "<tmp>", text)
    return text


def clean_doc(value, subs, reset):
    if isinstance(value, dict):
        return {k: clean_doc(v, subs, reset) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_doc(v, subs, reset) for v in value]
    if isinstance(value, str):
        return clean(value, subs)
    if value == reset:
        return "<reset-epoch>"
    return value


def trim_stderr(text, keep=4096):
    """Text of at most about `keep` bytes: first without the stack frames
    ("    at ..." lines) of the JavaScript errors, then, if still too long,
    without its middle."""
    if len(text) <= keep:
        return text
    out, frames = [], 0
    for line in text.split("\n") + [None]:
        if line is not None and re.match(r"^\s+at ", line):
            frames += 1
            continue
        if frames:
            out.append("    at ... <%d stack frames trimmed>" % frames)
            frames = 0
        if line is not None:
            out.append(line)
    text = "\n".join(out)
    if len(text) <= keep:
        return text
    # keep the start and the end, where the error lines are
    head, tail = text[: keep // 4], text[-(keep * 3 // 4):]
    return head + "\n<... %d bytes trimmed ...>\n" % (len(text) - len(head) - len(tail)) + tail


def run_one(cli, exe, ver, shape, spec, root, out_dir):
    base = tempfile.mkdtemp(prefix="%s-%s-" % (cli, shape), dir=root)
    home, wt, run_dir = (os.path.join(base, d) for d in ("home", "wt", "run"))
    for d in (home, wt, run_dir):
        os.makedirs(d)
    os.makedirs(os.path.join(wt, "src"))
    reset = int(time.time()) + 7200
    turns = fill(spec["turns"], reset)
    script = {"conversations": [{"persona": "developer", "task": "T1", "turns": turns}]}
    script_path, log_path = os.path.join(base, "script.json"), os.path.join(base, "server.log")
    with open(script_path, "w") as f:
        json.dump(script, f)
    server = subprocess.Popen(
        [sys.executable, SERVER, "--script", script_path, "--log", log_path, "--cwd", wt],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        port = int(server.stdout.readline().split()[1])
        url = "http://127.0.0.1:%d" % port
        env, settings = prepare(cli, url, home, shape, spec)
        if spec.get("max_turns"):
            settings["max_turns"] = spec["max_turns"]
        limit = spec.get("limit", 300)
        cmd = argv(cli, exe, wt, run_dir, spec)
        start = time.monotonic()
        watcher = LogWatcher(log_path, start)
        watcher.start()
        proc = subprocess.Popen(cmd, cwd=wt, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        killed = None
        try:
            out, errout = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            killed = "SIGTERM"
            os.killpg(proc.pid, signal.SIGTERM)  # the CLI's own process group
            try:
                out, errout = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                killed = "SIGKILL"
                os.killpg(proc.pid, signal.SIGKILL)
                out, errout = proc.communicate()
        seconds = round(time.monotonic() - start, 1)
        time.sleep(0.3)
        watcher.stop = True
        watcher.join()
    finally:
        server.terminate()
        server.wait()
    subs = [(wt, "<wt>"), (run_dir, "<run>"), (home, "<home>"), (base, "<tmp>"),
            (os.path.realpath(os.path.dirname(exe_of(cli))), "<clis>/node_modules/.bin"),
            (os.path.realpath(os.path.join(os.path.dirname(exe_of(cli)), "..")), "<clis>/node_modules"),
            (SOURCE, "<work>"), (url, "http://127.0.0.1:<port>"), ("127.0.0.1:%d" % port,
            "127.0.0.1:<port>"), (str(reset), "<reset-epoch>")]
    out_s, err_s = out.decode("utf-8", "replace"), errout.decode("utf-8", "replace")
    requests = [
        {k: r[k] for k in ("t", "method", "path", "kind", "step", "reply", "status") if k in r}
        for r in watcher.lines if r.get("kind") != "side" or r.get("api")
    ]
    doc = {
        "cli": cli,
        "version": ver,
        "shape": shape,
        "argv": [clean(a, subs) for a in [os.path.basename(cmd[0])] + cmd[1:]],
        "settings": settings,
        "script_turns": clean_doc(turns, subs, reset),
        "exit_code": None if killed else proc.returncode,
        "seconds": seconds,
        "stdout": clean(out_s, subs),
        "stderr": trim_stderr(clean(err_s, subs)),
        "server_requests": clean_doc(requests, subs, reset),
    }
    if killed:
        doc["signal"] = killed
        doc["killed_after_seconds"] = limit
    if spec.get("note"):
        doc["note"] = spec["note"]
    if str(reset) in out_s + err_s:
        doc["reset_epoch_visible"] = True
    path = os.path.join(out_dir, "%s-%s.json" % (cli, shape))
    with open(path, "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    shutil.rmtree(base, ignore_errors=True)
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clis-dir", default=os.path.join(SOURCE, ".real-clis"))
    ap.add_argument("--out", default=os.path.join(SOURCE, "tests", "fixtures", "cli-failures"))
    ap.add_argument("--only", action="append", default=[],
                    help="cli or cli-shape to run (repeatable); default all")
    args = ap.parse_args()
    global CLIS_DIR
    CLIS_DIR = args.clis_dir
    os.makedirs(args.out, exist_ok=True)
    root = tempfile.mkdtemp(prefix="cli-failures-")
    jobs = []
    for cli, shapes in SHAPES.items():
        for shape, spec in shapes.items():
            name = "%s-%s" % (cli, shape)
            if args.only and cli not in args.only and name not in args.only:
                continue
            jobs.append((cli, shape, spec))
    versions = {}
    threads = []
    results = []

    def work(cli, shape, spec):
        exe = exe_of(cli)
        doc = run_one(cli, exe, versions[cli], shape, spec, root, args.out)
        results.append(doc)
        print("%-40s exit=%s signal=%s %.1fs" % (cli + "-" + shape, doc["exit_code"],
              doc.get("signal"), doc["seconds"]), flush=True)

    for cli in {j[0] for j in jobs}:
        versions[cli] = version(cli, exe_of(cli))
    for job in jobs:  # all at once: each has its own server, home and worktree
        t = threading.Thread(target=work, args=job)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
