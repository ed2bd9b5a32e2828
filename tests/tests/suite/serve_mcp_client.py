"""An MCP client for the serve_mcp tests: the real Python `mcp` SDK
(stdio_client + ClientSession) against `subagent serve --mcp`.

Usage: python serve_mcp_client.py SCENARIO SERVER [ARGS...]
Prints one JSON report on stdout; the Rust test asserts on it. It asserts
nothing itself, so every fact the test checks is one it reads here.
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

SCHEMA = {
    "type": "object",
    "properties": {"capital": {"type": "string"}},
    "required": ["capital"],
}


def texts(result):
    return [c.text for c in result.content if getattr(c, "type", "") == "text"]


def summary(result):
    return {
        "isError": bool(result.is_error),
        "texts": texts(result),
        "structuredContent": result.structured_content,
    }


async def calls(session, report):
    tools = await session.list_tools()
    report["tools"] = {t.name: t.input_schema for t in tools.tools}

    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "message": message})

    plain = await session.call_tool(
        "subagent", {"task": "fixture:success"}, progress_callback=on_progress
    )
    report["plain"] = summary(plain)
    report["progress"] = progress

    structured = await session.call_tool(
        "subagent", {"task": "fixture:structured", "outputSchema": SCHEMA}
    )
    report["structured"] = summary(structured)

    failed = await session.call_tool("subagent", {"task": "fixture:fail"})
    report["failed"] = summary(failed)

    invalid = await session.call_tool("subagent", {"tasks": ["a", "b"]})
    report["invalid"] = summary(invalid)

    parallel = await session.call_tool(
        "subagent",
        {"tasks": ["fixture:structured", "fixture:structured"], "mode": "parallel",
         "outputSchema": SCHEMA},
    )
    report["parallel"] = summary(parallel)


async def cancel(session, report):
    started = anyio.Event()
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)
        if message and "turn 1" in message:
            started.set()

    async with anyio.create_task_group() as tg:

        async def long_call():
            # Abandoning the request sends notifications/cancelled.
            with anyio.CancelScope() as scope:
                report["cancelScope"] = "entered"
                tg_scope.append(scope)
                await session.call_tool(
                    "subagent", {"task": "fixture:sleep"}, progress_callback=on_progress
                )
                report["longCall"] = "returned"

        tg_scope = []
        tg.start_soon(long_call)
        with anyio.fail_after(60):
            await started.wait()
        tg_scope[0].cancel()
    report["progressBeforeCancel"] = progress
    # The server keeps serving after a cancelled call.
    after = await session.call_tool("subagent", {"task": "fixture:success"})
    report["after"] = summary(after)


async def jobs(session, report):
    # A background run that sleeps: running, then cancelled.
    started = await session.call_tool(
        "subagent", {"task": "fixture:sleep", "background": True}
    )
    report["sleepStarted"] = summary(started)
    job_id = started.structured_content["jobId"]
    # Asked until its worker is in its first turn (bounded), then cancelled.
    with anyio.fail_after(60):
        while True:
            running = await session.call_tool("subagent_status", {"jobId": job_id})
            if running.structured_content["streaming"]["turnCount"] >= 1:
                break
            await anyio.sleep(0.05)
    report["sleepRunning"] = summary(running)
    cancelled = await session.call_tool("subagent_cancel", {"jobId": job_id})
    report["sleepCancelled"] = summary(cancelled)

    # A background run that succeeds: asked until it is over (bounded).
    started = await session.call_tool(
        "subagent", {"task": "fixture:success", "background": True}
    )
    job_id = started.structured_content["jobId"]
    with anyio.fail_after(60):
        while True:
            done = await session.call_tool("subagent_status", {"jobId": job_id})
            if done.structured_content["state"] != "running":
                break
            await anyio.sleep(0.05)
    report["successDone"] = summary(done)

    unknown = await session.call_tool("subagent_status", {"jobId": "nosuchjob"})
    report["unknown"] = summary(unknown)


async def status_until(session, job_id, done):
    """subagent_status until `done(structuredContent)` holds (bounded)."""
    with anyio.fail_after(60):
        while True:
            status = await session.call_tool("subagent_status", {"jobId": job_id})
            if done(status.structured_content):
                return status
            await anyio.sleep(0.05)


async def over_the_limit(session, report):
    # Under max_concurrent = 1: a background sleeper holds the only slot.
    started = await session.call_tool(
        "subagent", {"task": "fixture:sleep", "background": True}
    )
    holder = started.structured_content["jobId"]
    await status_until(session, holder, lambda s: s["streaming"]["turnCount"] >= 1)
    # A background job over the limit is queued.
    queued = await session.call_tool(
        "subagent", {"task": "fixture:success", "background": True}
    )
    report["queuedStarted"] = summary(queued)
    queued_id = queued.structured_content["jobId"]
    report["queuedStatus"] = summary(
        await session.call_tool("subagent_status", {"jobId": queued_id})
    )
    # A foreground call over the limit waits, its progress says so.
    progress = []
    waiting = anyio.Event()

    async def on_progress(value, total, message):
        progress.append(message)
        if message and ": queued " in message:
            waiting.set()

    async with anyio.create_task_group() as tg:

        async def foreground():
            report["foreground"] = summary(await session.call_tool(
                "subagent", {"task": "fixture:success"}, progress_callback=on_progress
            ))

        tg.start_soon(foreground)
        with anyio.fail_after(60):
            await waiting.wait()
        # Cancelled while queued; then the slot is freed for the call.
        report["queuedCancelled"] = summary(
            await session.call_tool("subagent_cancel", {"jobId": queued_id})
        )
        await session.call_tool("subagent_cancel", {"jobId": holder})
    report["foregroundProgress"] = progress
    # The default concurrency (4) is lowered to the limit, not refused.
    report["parallel"] = summary(await session.call_tool(
        "subagent", {"tasks": ["fixture:success", "fixture:success"], "mode": "parallel"}
    ))
    report["tooMany"] = summary(await session.call_tool(
        "subagent",
        {"tasks": ["fixture:success", "fixture:success"], "mode": "parallel", "concurrency": 2},
    ))
    # A background job keeps to the same rule: its concurrency is checked.
    report["tooManyBackground"] = summary(await session.call_tool(
        "subagent",
        {"tasks": ["fixture:success", "fixture:success"], "mode": "parallel",
         "concurrency": 2, "background": True},
    ))


async def call_with_progress(session, arguments):
    """Calls subagent; returns the result and the progress messages seen."""
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    result = await session.call_tool(
        "subagent", arguments, progress_callback=on_progress
    )
    return result, progress


async def real(session, report):
    read, report["progress"] = await call_with_progress(
        session, {"task": "What do the notes say?"}
    )
    report["read"] = summary(read)
    capital = await session.call_tool(
        "subagent", {"task": "Capital of France?", "outputSchema": SCHEMA}
    )
    report["capital"] = summary(capital)


async def hello(session, report):
    answer, report["progress"] = await call_with_progress(
        session, {"task": "Say hello."}
    )
    report["hello"] = summary(answer)


async def leave(session, report):
    # A background run in its first turn when the client goes away.
    started = await session.call_tool(
        "subagent", {"task": "fixture:sleep", "background": True}
    )
    job_id = started.structured_content["jobId"]
    with anyio.fail_after(60):
        while True:
            status = await session.call_tool("subagent_status", {"jobId": job_id})
            if status.structured_content["streaming"]["turnCount"] >= 1:
                break
            await anyio.sleep(0.05)
    report["leftRunning"] = status.structured_content["state"]


async def resume(session, report):
    first = await session.call_tool("subagent", {"task": "Read the notes."})
    report["first"] = summary(first)
    report["firstMeta"] = first.meta
    run_id = (first.meta or {}).get("runId", "")
    second = await session.call_tool(
        "subagent", {"resume": run_id, "task": "And again?"}
    )
    report["second"] = summary(second)
    report["secondMeta"] = second.meta
    missing = await session.call_tool(
        "subagent", {"resume": "deadbeef", "task": "x"}
    )
    report["missing"] = summary(missing)


async def reach(session, report):
    # Each target a `resume` the client names (REACH_TARGETS, a JSON list):
    # ids of other workspaces' runs, prefixes, paths, a FIFO, /dev/zero.
    # Every call must be answered; then the server must still serve.
    import os

    report["reach"] = {}
    for target in json.loads(os.environ["REACH_TARGETS"]):
        try:
            with anyio.fail_after(30):
                answer = await session.call_tool(
                    "subagent", {"resume": target, "task": "Show me the conversation."}
                )
            report["reach"][target] = summary(answer)
        except TimeoutError:
            report["reach"][target] = "TIMEOUT"
    with anyio.fail_after(60):
        after = await session.call_tool("subagent", {"task": "Say hello."})
    report["after"] = summary(after)


async def main():
    scenario, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    report = {}
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["server"] = init.server_info.name
            if scenario == "calls":
                await calls(session, report)
            elif scenario == "cancel":
                await cancel(session, report)
            elif scenario == "jobs":
                await jobs(session, report)
            elif scenario == "real":
                await real(session, report)
            elif scenario == "hello":
                await hello(session, report)
            elif scenario == "leave":
                await leave(session, report)
            elif scenario == "resume":
                await resume(session, report)
            elif scenario == "reach":
                await reach(session, report)
            elif scenario == "over_the_limit":
                await over_the_limit(session, report)
            else:
                raise SystemExit(f"unknown scenario {scenario}")
    print(json.dumps(report))


anyio.run(main)
