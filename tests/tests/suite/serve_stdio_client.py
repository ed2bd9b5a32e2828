"""A stdlib-only client of `subagent serve --stdio` for the serve_stdio tests.

Usage: python3 serve_stdio_client.py SCENARIO CONFIG_JSON

Starts the server through pipes, drives one scenario, checks the protocol
answers as it goes (an AssertionError names what was wrong), and prints a
JSON report of what it saw as its last stdout line for the Rust test to
check the rest (files, processes).
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

TIMEOUT = 30.0

# Every server started, for the report's `seen` and `sent`.
SERVERS = []


class Server:
    def __init__(self, cfg, extra=()):
        cmd = [
            cfg["subagent"], "serve", "--stdio",
            "--worker", cfg.get("worker", cfg["fixture"]),
            "--sessions-dir", cfg["sessions"],
            "--workspace", cfg["workspace"],
            "--model", cfg.get("model", "fixture-model"),
            "--base-url", cfg.get("base_url", "http://127.0.0.1:9/v1"),
            *cfg.get("extra", []),
            *extra,
        ]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            env={**os.environ, **cfg.get("env", {})},
        )
        self.messages = queue.Queue()
        self.seen = []
        self.sent = []
        self.bad = []
        self.next_id = 0
        SERVERS.append(self)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.messages.put(json.loads(line))
        self.messages.put(None)

    def send_raw(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def send(self, method, params=None, bad=False):
        """Sends a request; `bad` marks one the schema must refuse too."""
        self.next_id += 1
        request = {"id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        (self.bad if bad else self.sent).append(request)
        self.send_raw(json.dumps(request))
        return self.next_id

    def until(self, pred, what, timeout=TIMEOUT):
        """The first message (seen before or arriving) for which pred holds."""
        for m in self.seen:
            if pred(m):
                return m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {what}; saw {self.seen}"
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            assert m is not None, f"server closed stdout before {what}; saw {self.seen}"
            self.seen.append(m)
            if pred(m):
                return m

    def response(self, rid, timeout=TIMEOUT):
        return self.until(lambda m: m.get("id") == rid and "method" not in m, f"response {rid}", timeout)

    def call(self, method, params=None):
        m = self.response(self.send(method, params))
        assert "result" in m, f"{method} failed: {m}"
        return m["result"]

    def notification(self, method, job):
        return self.until(
            lambda m: m.get("method") == method and m["params"].get("jobId") == job,
            f"{method} for {job}",
        )

    def close(self, timeout=TIMEOUT):
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        while True:
            m = self.messages.get(timeout=timeout)
            if m is None:
                break
            self.seen.append(m)
        return code


def foreground(cfg):
    s = Server(cfg)
    single = s.call("spawn", {"agent": "general", "task": "fixture:success"})
    assert single["state"] == "completed", single
    assert not single["result"]["details"].get("error"), single
    job = single["jobId"]
    progress = [m for m in s.seen if m.get("method") == "progress" and m["params"]["jobId"] == job]
    assert progress, f"no progress for {job}: {s.seen}"
    streaming = progress[-1]["params"]["details"]["streaming"]
    assert {"displayItems", "usage", "turnCount"} <= streaming.keys(), streaming
    assert streaming["turnCount"] >= 1, streaming
    parallel = s.call("spawn", {"tasks": ["fixture:success", "fixture:structured"], "mode": "parallel"})
    assert parallel["state"] == "completed" and len(parallel["result"]["details"]["results"]) == 2, parallel
    chain = s.call("spawn", {"tasks": ["fixture:success", "fixture:fail"], "mode": "chain"})
    assert chain["state"] == "failed", chain
    assert chain["result"]["details"]["error"]["code"] == "SUBAGENT_FAILED", chain
    code = s.close()
    endings = [m for m in s.seen if str(m.get("method", "")).startswith("subagent:")]
    assert not endings, f"foreground jobs are not announced: {endings}"
    return {"exit": code, "single": single, "parallel": parallel, "chain": chain}


def background(cfg):
    s = Server(cfg)
    started = s.call("spawn", {"task": "fixture:success", "background": True})
    job = started["jobId"]
    assert started["state"] == "running" and started["background"] is True, started
    done = s.notification("subagent:complete", job)
    line = done["params"]
    assert line["type"] == "agent_event" and line["status"] == "completed", line
    status = s.call("status", {"jobId": job})
    assert status["state"] == "completed", status
    waited = s.call("wait", {"jobId": job})
    assert waited["result"]["content"][0]["text"].startswith("fixture done"), waited
    listed = s.call("list")
    assert [j["jobId"] for j in listed["jobs"]] == [job], listed
    assert "result" not in listed["jobs"][0], "list leaves results out"
    unknown = s.response(s.send("status", {"jobId": "nope"}))
    assert unknown["error"]["code"] == "UNKNOWN_JOB", unknown
    return {"exit": s.close(), "job": job, "line": line, "result": waited["result"]}


def sleeper_in_its_first_turn(s):
    """Spawns a background fixture:sleep; returns its id once its first turn has begun."""
    job = s.call("spawn", {"task": "fixture:sleep", "background": True})["jobId"]
    s.until(
        lambda m: m.get("method") == "progress" and m["params"]["jobId"] == job
        and m["params"]["details"]["streaming"]["turnCount"] >= 1,
        "the sleeping job's first turn",
    )
    return job


def cancel(cfg):
    s = Server(cfg)
    job = sleeper_in_its_first_turn(s)
    # A wait in flight must not hold up a status.
    wait_id = s.send("wait", {"jobId": job})
    status = s.call("status", {"jobId": job})
    assert status["state"] == "running", status
    assert not any(m.get("id") == wait_id for m in s.seen), "wait answered before the job ended"
    cancelled = s.call("cancel", {"jobId": job})
    assert cancelled == {"jobId": job, "cancelled": True}, cancelled
    aborted = s.notification("subagent:aborted", job)
    assert aborted["params"]["status"] == "aborted", aborted
    waited = s.response(wait_id)["result"]
    assert waited["state"] == "aborted", waited
    assert waited["result"]["details"]["error"]["code"] == "SUBAGENT_CANCELLED", waited
    again = s.call("cancel", {"jobId": job})
    assert again["cancelled"] is False, again
    return {"exit": s.close(), "job": job, "result": waited["result"]}


def progress_states(s, job):
    return [m["params"].get("state") for m in s.seen
            if m.get("method") == "progress" and m["params"]["jobId"] == job]


def over_the_limit(cfg):
    """Under max_concurrent = 1: a sleeper holds the only slot; a job over
    the limit is queued (answer, status, progress), a second one cancelled
    while queued ends aborted, and the first runs once the slot frees."""
    s = Server(cfg)
    holder = sleeper_in_its_first_turn(s)
    started = s.call("spawn", {"task": "fixture:success", "background": True})
    job = started["jobId"]
    assert started["state"] == "queued", started
    s.until(lambda m: m.get("method") == "progress" and m["params"]["jobId"] == job
            and m["params"].get("state") == "queued", "the queued job's progress")
    status = s.call("status", {"jobId": job})
    assert status["state"] == "queued", status
    other = s.call("spawn", {"task": "fixture:success", "background": True})["jobId"]
    assert s.call("cancel", {"jobId": other})["cancelled"] is True
    s.notification("subagent:aborted", other)
    cancelled = s.call("wait", {"jobId": other})
    assert cancelled["state"] == "aborted", cancelled
    assert s.call("status", {"jobId": job})["state"] == "queued", "the other's cancel freed nothing"
    s.call("cancel", {"jobId": holder})
    s.notification("subagent:aborted", holder)
    s.notification("subagent:complete", job)
    done = s.call("wait", {"jobId": job})
    assert done["state"] == "completed", done
    states = progress_states(s, job)
    assert states[0] == "queued" and "running" in states, states
    assert states.index("running") > max(i for i, st in enumerate(states) if st == "queued"), states
    return {"exit": s.close(), "result": done["result"], "cancelled": cancelled["result"]}


def over_the_limit_terminated(cfg):
    """SIGTERM with a job queued behind a sleeper: both end aborted."""
    s = Server(cfg)
    holder = sleeper_in_its_first_turn(s)
    job = s.call("spawn", {"task": "fixture:success", "background": True})["jobId"]
    s.until(lambda m: m.get("method") == "progress" and m["params"]["jobId"] == job
            and m["params"].get("state") == "queued", "the queued job's progress")
    s.proc.send_signal(signal.SIGTERM)
    queued = s.notification("subagent:aborted", job)
    s.notification("subagent:aborted", holder)
    code = s.close()
    return {"exit": code, "line": queued["params"]}


def malformed(cfg):
    s = Server(cfg)
    s.send_raw("this is not json")
    not_json = s.until(lambda m: "error" in m and m["error"]["code"] == "PARSE_ERROR", "PARSE_ERROR")
    assert not_json["id"] is None, not_json
    unknown = s.response(s.send("explode", {}, bad=True))
    assert unknown["error"]["code"] == "UNKNOWN_METHOD" and "explode" in unknown["error"]["message"], unknown
    no_task = s.response(s.send("spawn", {"agent": "general"}, bad=True))
    assert no_task["error"]["code"] == "INVALID_PARAMS" and "task" in no_task["error"]["message"], no_task
    bad_agent = s.response(s.send("spawn", {"agent": "no-such-agent", "task": "x"}))
    assert "error" in bad_agent or bad_agent["result"]["state"] == "failed", bad_agent
    s.send_raw("[1, 2, 3]")
    s.until(lambda m: "error" in m and m["error"]["code"] == "INVALID_REQUEST", "INVALID_REQUEST")
    # Still serving.
    ok = s.call("spawn", {"task": "fixture:success"})
    assert ok["state"] == "completed", ok
    return {"exit": s.close(), "errors": [m for m in s.seen if "error" in m]}


def killed(cfg):
    s = Server(cfg)
    job = sleeper_in_its_first_turn(s)
    pid = s.proc.pid
    os.kill(pid, signal.SIGKILL)
    s.proc.wait(timeout=TIMEOUT)
    return {"job": job, "pid": pid}


def terminated(cfg):
    s = Server(cfg)
    job = sleeper_in_its_first_turn(s)
    s.proc.send_signal(signal.SIGTERM)
    aborted = s.notification("subagent:aborted", job)
    code = s.close()
    return {"exit": code, "job": job, "line": aborted["params"]}


def terminated_stdin_open(cfg):
    """SIGTERM (or SIGINT) while the client keeps stdin open: the server
    exits by itself, with its jobs (one foreground, one background)
    cancelled; stdin is closed only after the exit, or after the wait
    gave up."""
    s = Server(cfg)
    background = sleeper_in_its_first_turn(s)
    rid = s.send("spawn", {"task": "fixture:sleep"})
    s.until(lambda m: m.get("method") == "progress"
            and m["params"]["jobId"] != background
            and m["params"]["details"]["streaming"]["turnCount"] >= 1,
            "the foreground job's first turn")
    s.proc.send_signal(getattr(signal, cfg.get("signal", "SIGTERM")))
    try:
        code = s.proc.wait(timeout=TIMEOUT)
        exited = True
    except subprocess.TimeoutExpired:
        exited = False
    code = s.close()
    answer = next((m for m in s.seen if m.get("id") == rid), None)
    aborted = [m["params"]["jobId"] for m in s.seen
               if m.get("method") == "subagent:aborted"]
    return {"exited_with_stdin_open": exited, "exit": code, "answer": answer,
            "aborted": aborted, "background": background}


def real(cfg):
    s = Server(cfg)
    answer = s.call("spawn", {"task": "Say hello in one word."})
    assert answer["state"] == "completed", answer
    text = answer["result"]["content"][0]["text"]
    assert text.strip(), answer
    job = answer["jobId"]
    usage = [m["params"]["details"]["streaming"]["usage"] for m in s.seen
             if m.get("method") == "progress" and m["params"]["jobId"] == job]
    assert any(u["inputTokens"] > 0 for u in usage), f"no real token counts streamed: {usage}"
    return {"exit": s.close(), "result": answer["result"]}


def scripted(cfg):
    s = Server(cfg)
    tool = s.call("spawn", {"task": "Where is the needle?"})
    assert tool["state"] == "completed", tool
    job = tool["jobId"]
    shown = [item for m in s.seen
             if m.get("method") == "progress" and m["params"]["jobId"] == job
             for item in m["params"]["details"]["streaming"]["displayItems"]]
    assert any(i.get("type") == "toolCall" and i.get("name") == "bash_read" for i in shown), shown
    schema = {"type": "object", "properties": {"capital": {"type": "string"}}, "required": ["capital"]}
    structured = s.call("spawn", {"task": "Capital of France?", "outputSchema": schema})
    assert structured["state"] == "completed", structured
    return {"exit": s.close(), "tool": tool["result"], "structured": structured["result"]}


def resumed(cfg):
    s = Server(cfg)
    first = s.call("spawn", {"task": "Where is the needle?"})
    assert first["state"] == "completed", first
    first_id = first["result"]["details"]["runId"]
    second = s.call("spawn", {"resume": first_id, "task": "And again?"})
    assert second["state"] == "completed", second
    second_id = second["result"]["details"]["runId"]
    started = s.call("spawn", {"resume": second_id, "task": "Once more?", "background": True})
    assert started["state"] == "running", started
    third = s.call("wait", {"jobId": started["jobId"]})
    return {"exit": s.close(), "first": first["result"], "second": second["result"],
            "third": third["result"]}


def restarted(cfg):
    s = Server(cfg)
    listed = s.call("list")
    return {"exit": s.close(), "jobs": listed["jobs"]}


def notify(cfg):
    s = Server(cfg, ["--notify-cmd", f"cat >> '{cfg['notified']}'"])
    jobs = [
        s.call("spawn", {"task": "fixture:success", "background": True})["jobId"],
        s.call("spawn", {"tasks": ["fixture:success", "fixture:fail"], "background": True})["jobId"],
    ]
    # stdin closes at once: background jobs still run to their end, are
    # announced, and their commands run before the server exits.
    code = s.close()
    lines = {}
    for job, method in zip(jobs, ["subagent:complete", "subagent:error"]):
        lines[job] = s.notification(method, job)["params"]
    return {"exit": code, "jobs": jobs, "lines": lines}


def eof(cfg):
    s = Server(cfg)
    rid = s.send("spawn", {"task": "fixture:sleep"})
    s.until(lambda m: m.get("method") == "progress"
            and m["params"]["details"]["streaming"]["turnCount"] >= 1, "the foreground job's first turn")
    started = time.monotonic()
    code = s.close()
    answer = next(m for m in s.seen if m.get("id") == rid)
    assert answer["result"]["state"] == "aborted", answer
    return {"exit": code, "seconds": time.monotonic() - started}


if __name__ == "__main__":
    scenario, config = sys.argv[1], json.loads(sys.argv[2])
    report = globals()[scenario](config)
    report["seen"] = [m for server in SERVERS for m in server.seen]
    report["sent"] = [r for server in SERVERS for r in server.sent]
    report["bad"] = [r for server in SERVERS for r in server.bad]
    print(json.dumps(report))
