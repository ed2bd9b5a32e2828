"""A stand-in for the seed's call_subagent tool: the parent side of
`subagent call`.

Provenance: the seed (source document 003 of this project, "call_subagent")
specifies this tool but ships no code, so there is nothing to vendor. This
file is written for this project's tests (the project's licence, MIT OR
Apache-2.0) and does exactly what that document says the tool does, and
nothing more:

- `call_subagent(prompt, system_prompt=None, tool_subset=None) -> str`;
- validation: a non-empty prompt, tool names from the six the seed lists;
  a failure returns "Error: <message>";
- one subprocess, the stdin JSON contract (model, provider, url,
  api_key_name, prompt, system_prompt, tool_subset, think, temperature,
  max_tokens: the parent's own settings and the call's arguments);
- the runner's exit-code check: a non-zero exit returns
  "Error: Subagent exited with code N" and discards stdout (the failure mode
  issue 21 reports of the seed's parent);
- the SSE parse: only `event: output_text` is consumed, its deltas are
  concatenated; tool_call, tool_result, reasoning_content, block_end and
  response_end are ignored.

The command the tool runs is the parent's configuration (the seed does not
name it); the test passes it. The tool returns a string and no more; so
that the test can check the stream the parser read, `EVENTS_SEEN` records
the name of every event the parser met, in order (observation only: the
tool's behaviour does not depend on it).

Usage: python3 seed_call_subagent.py CASE_JSON
  CASE_JSON = {"command": [argv...],
               "parent": {model, provider, url, api_key_name, think,
                          temperature, max_tokens},
               "call": {prompt, system_prompt, tool_subset}}
Prints {"returned": <the tool's string>, "events": EVENTS_SEEN,
"exit_codes": [the subprocess's exit status]} as JSON on stdout. Standard
library only.
"""

import json
import subprocess
import sys

AVAILABLE_TOOLS = [
    "search_web",
    "scrape_webpage",
    "bash_find",
    "bash_ripgrep",
    "bash_read",
    "python_execute",
]

EVENTS_SEEN = []
EXIT_CODES = []


def parse_sse(stdout):
    """The seed's SSE contract: the concatenated deltas of output_text."""
    text = []
    event = None
    for line in stdout.splitlines():
        if line.startswith("event:"):
            event = line[len("event:"):].strip()
            EVENTS_SEEN.append(event)
        elif line.startswith("data:"):
            if event == "output_text":
                text.append(json.loads(line[len("data:"):].strip())["delta"])
        elif line.strip() == "":
            event = None
    return "".join(text)


def make_call_subagent(command, parent):
    """The tool, bound to the parent's runner command and LLM settings."""

    def call_subagent(prompt, system_prompt=None, tool_subset=None):
        if not isinstance(prompt, str) or not prompt.strip():
            return "Error: prompt must be a non-empty string"
        if tool_subset is not None:
            unknown = [t for t in tool_subset if t not in AVAILABLE_TOOLS]
            if unknown:
                return f"Error: unknown tools: {', '.join(unknown)}"
        payload = {
            "model": parent["model"],
            "provider": parent["provider"],
            "url": parent["url"],
            "api_key_name": parent["api_key_name"],
            "prompt": prompt,
            "system_prompt": system_prompt,
            "tool_subset": tool_subset,
            "think": parent.get("think", False),
            "temperature": parent.get("temperature", 0.8),
            "max_tokens": parent.get("max_tokens", 8192),
        }
        try:
            proc = subprocess.run(
                command,
                input=json.dumps(payload),
                capture_output=True,
                text=True,
            )
        except OSError as e:
            return f"Error: {e}"
        EXIT_CODES.append(proc.returncode)
        if proc.returncode != 0:
            return f"Error: Subagent exited with code {proc.returncode}"
        return parse_sse(proc.stdout)

    return call_subagent


def main():
    case = json.loads(sys.argv[1])
    tool = make_call_subagent(case["command"], case["parent"])
    returned = tool(**case["call"])
    json.dump(
        {"returned": returned, "events": EVENTS_SEEN, "exit_codes": EXIT_CODES},
        sys.stdout,
    )


main()
