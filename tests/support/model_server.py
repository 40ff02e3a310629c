#!/usr/bin/env python3
"""A scripted model server for the real agent CLIs, offline.

It answers on 127.0.0.1 the three wire protocols the CLIs speak:
  Anthropic Messages    POST /v1/messages (SSE when "stream": true),
                        /v1/messages/count_tokens            (claude)
  OpenAI Responses      POST /v1/responses (SSE), GET /v1/models (codex)
  Gemini                POST /v1beta/models/M:streamGenerateContent (SSE),
                        :generateContent, :countTokens         (gemini)
and doubles as the CLIs' HTTP(S) proxy: a CONNECT or an absolute-URI
request for any other host is refused (403) and logged, so nothing leaves
the machine and a test can see every attempt.

Replies are scripted. A conversation is recognised by the persona and the
task its prompt names ("agents/<persona>.md", "Task <id> of bundle",
"Review task <id> of bundle"); its script is the first entry of
`conversations` whose persona (and task, when given) match, and whose
`prompt_contains`, when given, is in that prompt, else `default`. A
relaunch that carries what stopped the attempt before it (a reason
devgraph adds to the dispatch) can so be told from the first launch and
play other turns. The step played is the number of model turns already in
the conversation's history, so the server keeps no state and a CLI
retrying a request gets the same answer (but for a "times" error turn,
below). A script file:

  {"conversations": [
     {"persona": "developer", "task": "T1", "name": "second developer",
      "prompt_contains": "What stopped the previous attempt",
      "turns": [{"bash": "sh run-tests.sh"}, {"say": "Done.", "result": ...}]},
     {"persona": "developer", "task": "T1",
      "turns": [{"write": {"path": "src/T1.txt", "content": "hello\\n"}},
                {"bash": "sh run-tests.sh"},
                {"say": "Done.", "result": {"status": "DONE", ...}}]}],
   "default": {"turns": [{"result": {"status": "DONE",
                                     "summary": "{persona} approves {task}",
                                     "evidence": []}}]}}

A `write` path that is relative is taken from the conversation's working
directory: the "cwd" of the script entry, else the server's --cwd. A final
turn says `say` (optional prose) and then the line
"RESULT_JSON: <result>"; {persona} and {task} are replaced in it. Past the
last turn the last one is played again. A turn {"http_error": 429,
"message": "...", "retry_after": 0} answers with that HTTP status and the
protocol's error body instead (the CLI's retries get it too), to see how
a CLI reports a provider failure. Its "retry_after" (absent or null: no
header) becomes a Retry-After header; "body" (a JSON value) replaces the
protocol's error body exactly; "headers" ({name: value}) adds response
headers; "times": N makes only the first N requests for that step fail,
and later ones (a CLI's retries, counted per persona, task and step: the
one piece of state the server keeps) play the turn "then" (default: the
next turn of the script). A "then" with "times" of its own takes the
requests after those N in turn, so {"http_error": 500, "times": 1,
"then": {"http_error": 503, "times": 1, "then": DONE}} fails the first
request with 500, the second with 503, and answers the third.

A `write`, `read` ({"read": "/abs/path"}) or `bash` turn becomes a call of
the tool the CLI offers for it: claude's Write, Read and Bash; codex's
apply_patch when offered, else its shell tool (exec_command, shell_command
or shell) running the write as printf and the read as cat; gemini's
write_file, read_file and run_shell_command. A turn whose tool the CLI did
not offer is answered as a final turn and logged with an `error`.

Requests that belong to no persona conversation (titles, topic checks,
quota probes, model lists) get a minimal answer of the shape asked for.

Every request is one JSON line in --log: seq, method, path, api, kind
(turn, side, outside, unknown, error), persona, task, step, the script
played (its entry's `name`, else its index in `conversations`, else
"default"), the tools the CLI offered, the reply, and the tool results the
request brought back
({tool, command, input, output, is_error}; `command` is the shell command
line whatever the CLI calls its shell tool, `is_error` also holds for a
command that exited non-zero), so a test can tell that a command really
ran and what it printed.

Usage: model_server.py --script FILE --log FILE [--port-file FILE] [--cwd DIR]
Prints "ready PORT" on stdout once it listens; --port-file gets the port
(written to a temporary name, then renamed). Python standard library only.
"""

import argparse
import gzip
import http.server
import json
import os
import re
import socketserver
import sys
import threading
import zlib

PERSONA_RE = re.compile(r"agents/([A-Za-z0-9_-]+)\.md")
TASK_RE = re.compile(r"(?:^|\n)(?:Review task|Task) (\S+) of bundle ")


class Scripts:
    def __init__(self, doc, cwd):
        self.conversations = doc.get("conversations", [])
        self.default = doc.get("default") or {
            "turns": [{"result": {"status": "DONE", "summary": "{persona} done", "evidence": []}}]
        }
        self.cwd = cwd
        self.lock = threading.Lock()
        self.failures = {}  # (persona, task, step) -> errors answered, for "times"

    def find(self, persona, task, prompt):
        """(name, script) of the conversation (persona, task) whose first prompt is `prompt`."""
        for n, c in enumerate(self.conversations):
            if c.get("persona") != persona:
                continue
            if "task" in c and (c["task"] or None) != task:
                continue
            if "prompt_contains" in c and c["prompt_contains"] not in (prompt or ""):
                continue
            return c.get("name", n), c
        return "default", self.default

    def turn(self, persona, task, step, prompt, record):
        name, script = self.find(persona, task, prompt)
        record["script"] = name
        turns = script.get("turns") or self.default["turns"]
        turn = dict(turns[min(step, len(turns) - 1)])
        if "http_error" in turn and "times" in turn:
            key = (persona, task, step)
            with self.lock:
                seen = self.failures.get(key, 0)
                self.failures[key] = seen + 1
            # A "then" that is itself a "times" error takes the requests
            # after the first N: errors in sequence, then an answer.
            while "http_error" in turn and "times" in turn and seen >= turn["times"]:
                seen -= turn["times"]
                if not turn.get("then"):
                    turn = dict(turns[min(step + 1, len(turns) - 1)])
                    break
                turn = dict(turn["then"])
        cwd = script.get("cwd") or self.cwd
        if "write" in turn:
            w = dict(turn["write"])
            if cwd and not os.path.isabs(w["path"]):
                w["path"] = os.path.join(cwd, w["path"])
            turn["write"] = w
        return turn

    @staticmethod
    def final_text(turn, persona, task):
        result = json.dumps(turn.get("result", {}))
        result = result.replace("{persona}", persona or "").replace("{task}", task or "")
        say = turn.get("say", "Done.")
        return say + "\nRESULT_JSON: " + result


def who(text):
    """(persona, task) named by a prompt, or (None, None)."""
    m = PERSONA_RE.search(text or "")
    if not m:
        return None, None
    t = TASK_RE.search(text)
    return m.group(1), (t.group(1) if t else None)


def text_of(content):
    """The text of an Anthropic/OpenAI content value (string or blocks)."""
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                out.append(block["text"])
            elif "content" in block and block.get("type") not in ("tool_result",):
                out.append(text_of(block["content"]))
    return "\n".join(out)


def shell_command(tool, args):
    """The command line of a shell tool call (each CLI names it its own way), else None."""
    if not isinstance(args, dict):
        return None
    if tool in ("Bash", "run_shell_command", "shell_command"):
        return args.get("command")
    if tool == "exec_command":
        return args.get("cmd")
    if tool == "shell" and isinstance(args.get("command"), list):
        argv = args["command"]
        return argv[-1] if len(argv) == 3 and argv[1] in ("-c", "-lc") else " ".join(argv)
    return None


def tool_result(tool, args, output, is_error):
    return {
        "tool": tool,
        "command": shell_command(tool, args),
        "input": args,
        "output": output,
        "is_error": is_error,
    }


class ScriptedError(Exception):
    """A turn that answers with an HTTP error: {"http_error": 429, "message": ...,
    "retry_after": seconds, "body", "headers", "times"}; every retry of the
    request gets it again, unless "times" limits it."""

    def __init__(self, record, turn):
        super().__init__(turn.get("message", "scripted error"))
        self.record = dict(record, reply="http_error", status=turn["http_error"])
        self.status = turn["http_error"]
        self.message = turn.get("message", "scripted error")
        self.retry_after = turn.get("retry_after")
        self.exact_body = turn.get("body")
        self.headers = turn.get("headers") or {}

    def body(self, api):
        if self.exact_body is not None:
            return self.exact_body
        if api == "anthropic":
            kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(self.status, "api_error")
            return {"type": "error", "error": {"type": kind, "message": self.message}}
        if api == "gemini":
            status = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(self.status, "INTERNAL")
            return {"error": {"code": self.status, "message": self.message, "status": status}}
        kind = "rate_limit_exceeded" if self.status == 429 else "server_error"
        return {"error": {"message": self.message, "type": kind, "code": kind}}


class Log:
    def __init__(self, path):
        self.lock = threading.Lock()
        self.seq = 0
        self.file = open(path, "a", encoding="utf-8")

    def write(self, record):
        with self.lock:
            self.seq += 1
            record = dict(seq=self.seq, **record)
            self.file.write(json.dumps(record, sort_keys=True) + "\n")
            self.file.flush()


# ---------------------------------------------------------------- Anthropic


def anthropic_tool_results(messages):
    """Tool results after the model's last turn, each with the call it answers.

    claude may put other messages after them (a "system" nudge of its own),
    so every user message after the last assistant one counts."""
    calls = {}
    for m in messages:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_use":
                    calls[b.get("id")] = b
    tail = []
    for m in reversed(messages):
        if m.get("role") == "assistant":
            break
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            tail.insert(0, m)
    out = []
    for m in tail:
        for b in m["content"]:
            if b.get("type") == "tool_result":
                call = calls.get(b.get("tool_use_id"), {})
                out.append(
                    tool_result(
                        call.get("name"),
                        call.get("input"),
                        text_of(b.get("content")),
                        bool(b.get("is_error")),
                    )
                )
    return out


TOOL_TURNS = ("write", "read", "bash")


def is_tool_turn(turn):
    return any(k in turn for k in TOOL_TURNS)


def anthropic_tool_call(turn, tools):
    """(name, input) for a scripted tool turn, using the tools offered."""
    names = {t.get("name") for t in tools or []}
    if "read" in turn:
        return ("Read", {"file_path": turn["read"]}) if "Read" in names else None
    if "write" in turn:
        if "Write" not in names:
            return None
        return "Write", {"file_path": turn["write"]["path"], "content": turn["write"]["content"]}
    if "bash" in turn:
        if "Bash" not in names:
            return None
        return "Bash", {"command": turn["bash"], "description": "Run " + turn["bash"]}
    return None


def anthropic_blocks(handler, body):
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    first = next((m for m in messages if m.get("role") == "user"), {})
    prompt = text_of(first.get("content"))
    persona, task = who(prompt)
    record = {"api": "anthropic", "model": body.get("model")}
    if persona is None or not tools:
        record.update(kind="side", reply="text")
        return (
            record,
            [
                {
                    "type": "text",
                    "text": side_answer(text_of(messages[-1].get("content")) if messages else ""),
                }
            ],
            "end_turn",
        )
    step = sum(1 for m in messages if m.get("role") == "assistant")
    turn = handler.server.scripts.turn(persona, task, step, prompt, record)
    record.update(
        kind="turn",
        persona=persona,
        task=task,
        step=step,
        tools=sorted(t.get("name", "") for t in tools),
        tool_results=anthropic_tool_results(messages),
    )
    if "http_error" in turn:
        raise ScriptedError(record, turn)
    call = anthropic_tool_call(turn, tools) if is_tool_turn(turn) else None
    if call:
        name, args = call
        record["reply"] = name
        block = {
            "type": "tool_use",
            "id": "toolu_%02d_%d" % (step, handler.server.log.seq),
            "name": name,
            "input": args,
        }
        return record, [block], "tool_use"
    if is_tool_turn(turn):
        record["error"] = "no such tool offered: " + json.dumps(turn)
    record["reply"] = "final"
    return record, [{"type": "text", "text": Scripts.final_text(turn, persona, task)}], "end_turn"


def side_answer(prompt):
    low = prompt.lower()
    if "json" in low:
        return "{}"
    return "OK"


def anthropic_messages(handler, body):
    record, blocks, stop = anthropic_blocks(handler, body)
    handler.server.log.write(dict(record, method="POST", path=handler.path))
    model = body.get("model", "model")
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    msg_id = "msg_%d" % handler.server.log.seq
    if not body.get("stream"):
        handler.send_json(
            200,
            {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            },
        )
        return
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": dict(usage, output_tokens=1),
                },
            },
        )
    ]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "text_delta", "text": b["text"]},
                    },
                )
            )
        else:
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {
                            "type": "tool_use",
                            "id": b["id"],
                            "name": b["name"],
                            "input": {},
                        },
                    },
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(b["input"]),
                        },
                    },
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    handler.send_sse(events)


# ---------------------------------------------------------- OpenAI Responses


def responses_items(body):
    items = body.get("input")
    if isinstance(items, str):
        return [{"type": "message", "role": "user", "content": items}]
    return items or []


def responses_tool_results(items):
    calls = {}
    for it in items:
        if it.get("type") in ("function_call", "custom_tool_call"):
            calls[it.get("call_id")] = it
    out = []
    # The outputs after the model's last item answer its last turn; the CLI
    # may add messages of its own among them.
    tail = []
    for it in reversed(items):
        if it.get("type") in ("function_call", "custom_tool_call", "reasoning") or (
            it.get("type") == "message" and it.get("role") == "assistant"
        ):
            break
        if it.get("type") in ("function_call_output", "custom_tool_call_output"):
            tail.append(it)
    for it in reversed(tail):
        call = calls.get(it.get("call_id"), {})
        args = call.get("arguments", call.get("input"))
        try:
            args = (
                json.loads(args)
                if isinstance(args, str) and call.get("type") == "function_call"
                else args
            )
        except ValueError:
            pass
        output = it.get("output")
        if isinstance(output, dict):
            output = output.get("content", json.dumps(output))
        elif isinstance(output, list):
            output = text_of(output)
        # codex reports a command's exit in the text it hands back.
        code = (
            re.search(r"Process exited with code (\d+)", output)
            if isinstance(output, str)
            else None
        )
        out.append(
            tool_result(
                call.get("name"),
                args,
                output,
                bool(code and code.group(1) != "0")
                or (isinstance(output, str) and output.startswith("exec_command failed")),
            )
        )
    return out


def responses_tool_names(tools):
    names = {}
    for t in tools or []:
        name = t.get("name") or (t.get("function") or {}).get("name")
        if name:
            names[name] = t
    return names


def responses_call(turn, tools, call_id):
    """A scripted tool turn as a Responses output item, using the tools offered."""
    names = responses_tool_names(tools)
    if "write" in turn:
        path, content = turn["write"]["path"], turn["write"]["content"]
        if "apply_patch" in names:
            patch = "*** Begin Patch\n*** Add File: %s\n" % path
            patch += "".join("+" + line + "\n" for line in content.splitlines())
            patch += "*** End Patch\n"
            if names["apply_patch"].get("type") == "custom":
                return {
                    "type": "custom_tool_call",
                    "call_id": call_id,
                    "name": "apply_patch",
                    "input": patch,
                    "status": "completed",
                }
            return {
                "type": "function_call",
                "call_id": call_id,
                "name": "apply_patch",
                "arguments": json.dumps({"input": patch}),
                "status": "completed",
            }
        command = "mkdir -p \"$(dirname '%s')\" && printf '%%s' '%s' > '%s'" % (
            path,
            content.replace("'", "'\\''"),
            path,
        )
    elif "read" in turn:
        command = "cat '%s'" % turn["read"].replace("'", "'\\''")
    else:
        command = turn["bash"]
    if "exec_command" in names:
        return {
            "type": "function_call",
            "call_id": call_id,
            "name": "exec_command",
            "arguments": json.dumps({"cmd": command}),
            "status": "completed",
        }
    if "shell_command" in names:
        return {
            "type": "function_call",
            "call_id": call_id,
            "name": "shell_command",
            "arguments": json.dumps({"command": command}),
            "status": "completed",
        }
    if "shell" in names:
        return {
            "type": "function_call",
            "call_id": call_id,
            "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", command]}),
            "status": "completed",
        }
    return None


def openai_responses(handler, body):
    items = responses_items(body)
    first = next(
        (
            i
            for i in items
            if i.get("role") == "user" and PERSONA_RE.search(text_of(i.get("content")))
        ),
        None,
    )
    prompt = text_of(first.get("content")) if first else ""
    persona, task = who(prompt)
    record = {"api": "openai", "model": body.get("model")}
    seq = handler.server.log.seq
    if persona is None:
        record.update(kind="side", reply="text")
        out = [
            {
                "type": "message",
                "id": "msg_%d" % seq,
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "OK", "annotations": []}],
            }
        ]
    else:
        step = sum(
            1
            for i in items
            if i.get("type") in ("function_call", "custom_tool_call")
            or (i.get("type") == "message" and i.get("role") == "assistant")
        )
        turn = handler.server.scripts.turn(persona, task, step, prompt, record)
        record.update(
            kind="turn",
            persona=persona,
            task=task,
            step=step,
            tools=sorted(responses_tool_names(body.get("tools"))),
            tool_results=responses_tool_results(items),
        )
        if "http_error" in turn:
            raise ScriptedError(record, turn)
        call = None
        if is_tool_turn(turn):
            call = responses_call(turn, body.get("tools"), "call_%02d_%d" % (step, seq))
            if call is None:
                record["error"] = "no such tool offered: " + json.dumps(turn)
        if call:
            record["reply"] = call["name"]
            out = [call]
        else:
            record["reply"] = "final"
            out = [
                {
                    "type": "message",
                    "id": "msg_%d" % seq,
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {
                            "type": "output_text",
                            "text": Scripts.final_text(turn, persona, task),
                            "annotations": [],
                        }
                    ],
                }
            ]
    handler.server.log.write(dict(record, method="POST", path=handler.path))
    resp_id = "resp_%d" % seq
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    base = {
        "id": resp_id,
        "object": "response",
        "model": body.get("model"),
        "status": "in_progress",
        "output": [],
    }
    events = [("response.created", {"type": "response.created", "response": base})]
    for n, item in enumerate(out):
        events.append(
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "output_index": n,
                    "item": dict(item, status="in_progress"),
                },
            )
        )
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "output_index": n,
                        "content_index": 0,
                        "item_id": item["id"],
                        "delta": text,
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": n, "item": item},
            )
        )
    events.append(
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": dict(base, status="completed", output=out, usage=usage),
            },
        )
    )
    handler.send_sse(events)


# -------------------------------------------------------------------- Gemini


def gemini_text(content):
    return "\n".join(
        p.get("text", "") for p in (content or {}).get("parts", []) if isinstance(p, dict)
    )


def gemini_tool_results(contents):
    calls = []
    for c in contents:
        for p in c.get("parts", []):
            if "functionCall" in p:
                calls.append(p["functionCall"])
    by_id = {c.get("id"): c for c in calls if c.get("id")}
    # Every user content after the model's last one answers its last turn.
    tail = []
    for c in reversed(contents):
        if c.get("role") == "model":
            break
        tail.insert(0, c)
    out = []
    for c in tail:
        for p in c.get("parts", []):
            r = p.get("functionResponse")
            if not r:
                continue
            call = by_id.get(r.get("id")) or next(
                (fc for fc in reversed(calls) if fc.get("name") == r.get("name")), {}
            )
            resp = r.get("response", {})
            output = resp.get("output", resp.get("error", resp))
            output = output if isinstance(output, str) else json.dumps(output)
            # gemini reports a command's exit in the text it hands back.
            code = re.search(r"Exit Code: (\d+)", output)
            out.append(
                tool_result(
                    r.get("name"),
                    call.get("args"),
                    output,
                    "error" in resp or bool(code and code.group(1) != "0"),
                )
            )
    return out


def gemini_tool_names(tools):
    names = set()
    for t in tools or []:
        for d in t.get("functionDeclarations", []) or []:
            names.add(d.get("name"))
    return names


def gemini_reply(handler, body, stream):
    contents = body.get("contents") or []
    persona, task, prompt = None, None, ""
    for c in contents:
        if c.get("role") == "user":
            prompt = gemini_text(c)
            persona, task = who(prompt)
            if persona:
                break
    tools = body.get("tools")
    record = {"api": "gemini"}
    config = body.get("generationConfig") or {}
    if persona is None or not tools:
        record.update(kind="side", reply="text")
        wants_json = (
            config.get("responseMimeType") == "application/json"
            or "responseJsonSchema" in config
            or "responseSchema" in config
        )
        parts = [{"text": side_json(config) if wants_json else "OK"}]
    else:
        step = sum(1 for c in contents if c.get("role") == "model")
        turn = handler.server.scripts.turn(persona, task, step, prompt, record)
        record.update(
            kind="turn",
            persona=persona,
            task=task,
            step=step,
            tools=sorted(gemini_tool_names(tools)),
            tool_results=gemini_tool_results(contents),
        )
        if "http_error" in turn:
            raise ScriptedError(record, turn)
        names = gemini_tool_names(tools)
        parts = None
        if "write" in turn and "write_file" in names:
            parts = [
                {
                    "functionCall": {
                        "name": "write_file",
                        "args": {
                            "file_path": turn["write"]["path"],
                            "content": turn["write"]["content"],
                        },
                    }
                }
            ]
        elif "read" in turn and "read_file" in names:
            parts = [{"functionCall": {"name": "read_file", "args": {"file_path": turn["read"]}}}]
        elif "bash" in turn and "run_shell_command" in names:
            parts = [
                {"functionCall": {"name": "run_shell_command", "args": {"command": turn["bash"]}}}
            ]
        elif is_tool_turn(turn):
            record["error"] = "no such tool offered: " + json.dumps(turn)
        if parts:
            record["reply"] = parts[0]["functionCall"]["name"]
        else:
            record["reply"] = "final"
            parts = [{"text": Scripts.final_text(turn, persona, task)}]
    handler.server.log.write(dict(record, method="POST", path=handler.path))
    doc = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "scripted",
    }
    if stream:
        handler.send_sse([(None, doc)])
    else:
        handler.send_json(200, doc)


def side_json(config):
    """A minimal JSON answer for the schema a side request asks for."""
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    props = schema.get("properties") or {}
    out = {}
    for name, spec in props.items():
        kind = str(spec.get("type", "string")).lower()
        if name == "next_speaker":
            out[name] = "user"
        elif "enum" in spec and spec["enum"]:
            out[name] = spec["enum"][0]
        elif kind == "boolean":
            out[name] = False
        elif kind in ("number", "integer"):
            out[name] = spec.get("minimum", 1)
        elif kind == "array":
            out[name] = []
        elif kind == "object":
            out[name] = {}
        else:
            out[name] = "scripted"
    return json.dumps(out)


# ------------------------------------------------------------------- server


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        enc = self.headers.get("Content-Encoding", "").lower()
        if enc == "gzip":
            data = gzip.decompress(data)
        elif enc == "deflate":
            data = zlib.decompress(data)
        return data

    def send_json(self, code, doc):
        data = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name, data in events:
            chunk = ("event: %s\n" % name if name else "") + "data: %s\n\n" % json.dumps(data)
            raw = chunk.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def outside(self, target):
        self.server.log.write(
            {"kind": "outside", "method": self.command, "path": self.path, "target": target}
        )
        data = b"outside connections are refused\n"
        self.send_response(403)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_CONNECT(self):
        self.outside(self.path)

    def local_path(self):
        """The request's path, or None when it is a proxied request for elsewhere."""
        m = re.match(r"^[a-z]+://([^/]+)(/.*)?$", self.path)
        if not m:
            return self.path
        host = m.group(1)
        if host in ("127.0.0.1:%d" % self.server.port, "localhost:%d" % self.server.port):
            return m.group(2) or "/"
        return None

    def dispatch(self):
        path = self.local_path()
        if path is None:
            self.read_body()
            return self.outside(self.path)
        raw = self.read_body() if self.command in ("POST", "PUT", "PATCH") else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        route = path.split("?")[0]
        try:
            if self.command == "POST" and route.endswith("/messages/count_tokens"):
                self.server.log.write(
                    {"kind": "side", "api": "anthropic", "method": "POST", "path": path}
                )
                return self.send_json(200, {"input_tokens": 100})
            if self.command == "POST" and route.endswith("/messages"):
                return anthropic_messages(self, body)
            if self.command == "POST" and route.endswith("/responses"):
                return openai_responses(self, body)
            if self.command == "POST" and ":streamGenerateContent" in route:
                return gemini_reply(self, body, stream=True)
            if self.command == "POST" and ":generateContent" in route:
                return gemini_reply(self, body, stream=False)
            if self.command == "POST" and ":countTokens" in route:
                self.server.log.write(
                    {"kind": "side", "api": "gemini", "method": "POST", "path": path}
                )
                return self.send_json(200, {"totalTokens": 100})
            if self.command == "GET" and re.search(r"/models/?$", route):
                self.server.log.write({"kind": "side", "method": "GET", "path": path})
                return self.send_json(200, {"object": "list", "data": [], "models": []})
        except ScriptedError as e:
            self.server.log.write(dict(e.record, method=self.command, path=path))
            data = json.dumps(e.body(e.record.get("api"))).encode()
            self.send_response(e.status)
            self.send_header("Content-Type", "application/json")
            if e.retry_after is not None:
                self.send_header("Retry-After", str(e.retry_after))
            for name, value in e.headers.items():
                self.send_header(name, str(value))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as e:  # a bug here must show in the log, not hang the CLI
            self.server.log.write(
                {"kind": "error", "method": self.command, "path": path, "error": repr(e)}
            )
            return self.send_json(500, {"error": {"message": "model server: " + repr(e)}})
        self.server.log.write(
            {
                "kind": "unknown",
                "method": self.command,
                "path": path,
                "body": raw.decode("utf-8", "replace")[:2000],
            }
        )
        return self.send_json(
            404, {"error": {"type": "not_found_error", "message": "not scripted: " + route}}
        )

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = dispatch


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file")
    ap.add_argument("--cwd", default="")
    args = ap.parse_args()
    with open(args.script, encoding="utf-8") as f:
        scripts = Scripts(json.load(f), args.cwd)
    server = Server(("127.0.0.1", 0), Handler)
    server.port = server.server_address[1]
    server.scripts = scripts
    server.log = Log(args.log)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % server.port)
        os.rename(tmp, args.port_file)
    sys.stdout.write("ready %d\n" % server.port)
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
