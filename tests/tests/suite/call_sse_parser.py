"""Reads `subagent call --sse` output on stdin the way the seed's
call_subagent tool does: frames are `event:` and `data:` lines ended by a
blank line; only `output_text` events are consumed and their deltas
concatenated. Prints {"text": <concatenation>, "events": [every event name,
in order], "frames": [every frame's data object]} as JSON, so the test can
check the answer and the sequence. Standard library only."""

import json
import sys


def frames(stream):
    event, data = None, []
    for raw in stream:
        line = raw.rstrip("\n")
        if line == "":
            if event is not None:
                yield event, "\n".join(data)
            event, data = None, []
        elif line.startswith("event:"):
            event = line[len("event:"):].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:"):].lstrip(" "))
        else:
            raise SystemExit(f"not an SSE line: {line!r}")
    if event is not None:
        raise SystemExit("the stream ended inside a frame (no blank line)")


def main():
    text, events, objects = [], [], []
    for event, data in frames(sys.stdin):
        obj = json.loads(data)
        if obj.get("type") != event:
            raise SystemExit(f"data type {obj.get('type')!r} under event {event!r}")
        events.append(event)
        objects.append(obj)
        # The seed's rule: only output_text is the answer.
        if event == "output_text":
            text.append(obj["delta"])
    json.dump({"text": "".join(text), "events": events, "frames": objects}, sys.stdout)


main()
