use std::collections::BTreeMap;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::Usage;

use super::*;
use crate::read::{parse_session, summarize};

const PAYLOAD: &str =
    "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)>";

/// A session file as the writer leaves it, built from JSON values so the
/// test does not depend on every field of the line structs.
fn session_text(lines: &[serde_json::Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn header(task: &str) -> serde_json::Value {
    json!({
        "type": "session", "version": 1, "runId": "r-123", "agent": "general",
        "task": task, "model": "m-1", "provider": "openai-chat", "cwd": "/w", "depth": 1,
        "limits": serde_json::to_value(subagent_protocol::Limits::default()).unwrap(),
        "sandbox": {"applied": ["process_group", "rlimit_nofile"],
                    "notApplied": [{"protection": "cgroup_memory", "reason": "no cgroup v2"}]},
        "timestamp": "2026-11-22T12:00:00.000Z"
    })
}

fn line(ts: &str, mut v: serde_json::Value) -> serde_json::Value {
    v["timestamp"] = json!(ts);
    v
}

fn usage(turn: u32, input: u64, output: u64) -> serde_json::Value {
    line(
        "2026-11-22T12:00:01.000Z",
        json!({"type": "usage", "turn": turn, "usage": {
            "input": input, "output": output, "cacheRead": 0, "cacheWrite": 0,
            "cost": 0.0, "turns": 1}}),
    )
}

fn page_of(lines: &[serde_json::Value]) -> String {
    let items = parse_session(&session_text(lines));
    let summary = summarize(Path::new("f.jsonl"), &items);
    render_page(&items, summary.as_ref())
}

/// A two-turn run: a tool call, its result, a limit hit, a warning, an
/// info log, and the ending line.
fn two_turn_run(result_output: &str, assistant_text: &str) -> Vec<serde_json::Value> {
    let t = "2026-11-22T12:00:01.000Z";
    vec![
        header("Find the answer."),
        line(
            t,
            json!({"type": "agent_event", "eventType": "subagent:start", "jobId": "r-123",
                "requestedBy": "assistant", "agentName": "general", "mode": "single",
                "pid": 42, "startedAt": t, "model": "m-1"}),
        ),
        line(
            t,
            json!({"type": "message", "role": "user", "turn": 0, "text": "Find the answer."}),
        ),
        line(
            t,
            json!({"type": "message", "role": "assistant", "turn": 1,
                "text": assistant_text, "stopReason": "tool_calls"}),
        ),
        line(
            t,
            json!({"type": "tool_call", "turn": 1, "callId": "c1", "name": "bash_read",
                "args": {"path": "notes.txt"}}),
        ),
        usage(1, 100, 10),
        line(
            t,
            json!({"type": "tool_result", "callId": "c1", "name": "bash_read",
                "output": result_output, "isError": false}),
        ),
        line(
            t,
            json!({"type": "message", "role": "assistant", "turn": 2, "text": "",
                "stopReason": "tool_calls"}),
        ),
        line(
            t,
            json!({"type": "tool_call", "turn": 2, "callId": "c2", "name": "python_execute",
                "args": {"code": "import time; time.sleep(60)"}}),
        ),
        usage(2, 300, 30),
        line(
            t,
            json!({"type": "limit", "limit": "wall_timeout", "value": 3000, "action": "cancel"}),
        ),
        line(
            t,
            json!({"type": "log", "level": "warn", "source": "supervisor",
                "message": "worker slow to stop"}),
        ),
        line(
            t,
            json!({"type": "log", "level": "info", "source": "worker", "message": "chatter"}),
        ),
        line(
            "2026-11-22T12:00:04.000Z",
            json!({"type": "agent_event", "eventType": "subagent:error", "jobId": "r-123",
                "requestedBy": "assistant", "agentName": "general", "mode": "single",
                "pid": 42, "startedAt": t, "completedAt": "2026-11-22T12:00:04.000Z",
                "durationMs": 3000, "model": "m-1", "status": "failed",
                "summary": "wall timeout after 3s",
                "usage": {"input": 400, "output": 40, "cacheRead": 0, "cacheWrite": 0,
                          "cost": 0.0, "turns": 2},
                "error": {"code": "SUBAGENT_TIMEOUT",
                          "message": "subagent timed out after 3 s (wall timeout) <b>",
                          "limit": {"name": "wallTimeoutMs", "value": 3000}},
                "stopReason": "timeout"}),
        ),
    ]
}

#[test]
fn escape_turns_every_markup_character_into_an_entity() {
    assert_eq!(
        escape(r#"<a href="x" title='y'>&amp;</a>"#),
        "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;"
    );
    assert_eq!(escape("plain text, ünïcode"), "plain text, ünïcode");
}

#[test]
fn untrusted_text_from_every_field_reaches_the_page_only_escaped() {
    let mut lines = two_turn_run(PAYLOAD, PAYLOAD);
    lines[0] = header(PAYLOAD);
    let page = page_of(&lines);
    assert!(!page.contains("<img"), "an img tag got through");
    assert!(!page.contains("<script"), "a script tag got through");
    assert!(
        !page.contains("</script>"),
        "a closing script tag got through"
    );
    let escaped = escape(PAYLOAD);
    // Task, assistant text and tool result: three times.
    assert_eq!(page.matches(escaped.as_str()).count(), 3, "{page}");
}

#[test]
fn the_page_loads_nothing_from_outside_and_forbids_scripts() {
    let page = page_of(&two_turn_run("ok", "Reading."));
    for external in ["src=", "href=", "@import", "url(", "http://", "https://"] {
        let outside_svg_ns = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!outside_svg_ns.contains(external), "{external} in the page");
    }
    assert!(page.contains("Content-Security-Policy"));
    assert!(page.contains("default-src 'none'"));
}

#[test]
fn each_turn_is_one_timeline_block_holding_its_calls_results_and_limit_hits() {
    let page = page_of(&two_turn_run("file text", "Reading."));
    assert_eq!(page.matches("<li class=\"turn\"").count(), 2, "{page}");
    let turn1 = &page[page.find("id=\"turn-1\"").unwrap()..page.find("id=\"turn-2\"").unwrap()];
    assert!(turn1.contains("Reading."));
    assert!(turn1.contains("tool call <code class=\"tool-name\">bash_read</code>"));
    assert!(turn1.contains("tool result <code class=\"tool-name\">bash_read</code>"));
    assert!(turn1.contains("file text"));
    let turn2 = &page[page.find("id=\"turn-2\"").unwrap()..];
    let turn2 = &turn2[..turn2.find("</ol></li>").unwrap()];
    assert!(turn2.contains("python_execute"));
    assert!(turn2.contains("<strong class=\"limit-kind\">wall_timeout</strong> (3.0s) → cancel"));
    assert!(turn2.contains("worker slow to stop"), "warnings are shown");
    assert!(
        !page.contains("chatter"),
        "info logs are counted, not shown"
    );
    assert!(page.contains("1 debug/info log line(s) not shown"));
}

#[test]
fn the_header_and_the_closing_say_what_ran_under_which_limits_and_how_it_ended() {
    let page = page_of(&two_turn_run("ok", "Reading."));
    let header = &page[page.find("<header").unwrap()..page.find("</header>").unwrap()];
    for expected in [
        "<code>r-123</code>",
        "m-1",
        "openai-chat",
        "wall 15m00s",
        "memory 2.0 GiB",
        "applied: process_group, rlimit_nofile",
        "not applied: <strong>cgroup_memory</strong> — no cgroup v2",
    ] {
        assert!(
            header.contains(expected),
            "{expected} missing from {header}"
        );
    }
    let closing = &page[page.find("<footer").unwrap()..];
    assert!(closing.contains("<span class=\"status failed\">failed</span> after 3.0s; 2 turns"));
    assert!(closing.contains("400 in / 40 out tokens"));
    // The ending line sits after the turns, with its exit reason.
    let ending = page.rfind("subagent:error").unwrap();
    assert!(ending > page.rfind("id=\"turn-2\"").unwrap());
    assert!(page[ending..].contains("wall timeout after 3s"));
}

#[test]
fn a_failed_endings_code_message_and_limit_are_on_the_page_escaped() {
    let page = page_of(&two_turn_run("ok", "Reading."));
    let reason = "<dd class=\"reason-error\">SUBAGENT_TIMEOUT: subagent timed out after 3 s \
                  (wall timeout) &lt;b&gt;</dd>";
    let limit = "<dd class=\"reason-limit\">wallTimeoutMs = 3.0s</dd>";
    let ending = page.rfind("subagent:error").unwrap();
    let footer = page.find("<footer").unwrap();
    // On the ending line in the timeline, and again in the closing.
    assert!(page[ending..footer].contains(reason), "{page}");
    assert!(page[ending..footer].contains(limit), "{page}");
    assert!(page[footer..].contains(reason), "{page}");
    assert!(page[footer..].contains(limit), "{page}");
    assert!(!page.contains("<b>"));
}

#[test]
fn a_cut_answer_says_so_on_its_message_and_in_the_closing() {
    let t = "2026-11-22T12:00:01.000Z";
    let page = page_of(&[
        header("Tell a story."),
        line(
            t,
            json!({"type": "message", "role": "assistant", "turn": 1,
                "text": "Once upon a", "stopReason": "length"}),
        ),
        line(
            t,
            json!({"type": "agent_event", "eventType": "subagent:complete", "jobId": "r-123",
                "requestedBy": "assistant", "agentName": "general", "mode": "single",
                "startedAt": t, "completedAt": t, "durationMs": 5, "model": "m-1",
                "status": "completed", "stopReason": "max_tokens",
                "usage": {"input": 4, "output": 3, "cacheRead": 0, "cacheWrite": 0,
                          "cost": 0.0, "turns": 1}}),
        ),
    ]);
    assert!(
        page.contains("<strong class=\"cut\">cut by max_tokens</strong>"),
        "{page}"
    );
    let footer = &page[page.find("<footer").unwrap()..];
    assert!(footer.contains("<span class=\"status completed\">completed</span>"));
    assert!(footer.contains("<dd class=\"reason-note\">"), "{footer}");
}

#[test]
fn short_texts_are_shown_and_long_ones_folded() {
    assert_eq!(text_block("a\nb"), "<pre>a\nb</pre>");
    let many_lines: String = (0..=COLLAPSE_LINES)
        .map(|i| format!("line {i}\n"))
        .collect();
    let folded = text_block(&many_lines);
    assert!(
        folded.starts_with("<details class=\"long\"><summary>21 lines"),
        "{folded}"
    );
    assert!(folded.contains("line 20"), "the whole text is kept inside");
    let one_long_line = "x".repeat(COLLAPSE_BYTES + 1);
    assert!(text_block(&one_long_line).starts_with("<details"));
    let just_fits = "x".repeat(COLLAPSE_BYTES);
    assert!(text_block(&just_fits).starts_with("<pre>"));
    // The summary's first line is escaped too.
    let hostile = format!("{PAYLOAD}\n{}", "y\n".repeat(COLLAPSE_LINES));
    assert!(!text_block(&hostile).contains("<img"));
}

#[test]
fn the_chart_has_one_bar_per_turn_scaled_to_the_largest() {
    let mut turns = BTreeMap::new();
    let u = |input, output| Usage {
        input,
        output,
        turns: 1,
        ..Usage::default()
    };
    turns.insert(1, u(30, 10));
    turns.insert(2, u(90, 30));
    turns.insert(3, Usage::default());
    let svg = usage_chart(&turns);
    assert_eq!(svg.matches("<g class=\"bar\"").count(), 3);
    // Turn 2 is the largest: its stack fills the plot area.
    let bar2 = &svg[svg.find("data-turn=\"2\"").unwrap()..svg.find("data-turn=\"3\"").unwrap()];
    assert!(
        bar2.contains("class=\"input\" x=\"78\" y=\"30\" width=\"18\" height=\"90\""),
        "{bar2}"
    );
    assert!(
        bar2.contains("class=\"output\" x=\"78\" y=\"0\" width=\"18\" height=\"30\""),
        "{bar2}"
    );
    let bar1 = &svg[svg.find("data-turn=\"1\"").unwrap()..svg.find("data-turn=\"2\"").unwrap()];
    assert!(
        bar1.contains("height=\"30\"/>") && bar1.contains("height=\"10\"/>"),
        "{bar1}"
    );
    let bar3 = &svg[svg.find("data-turn=\"3\"").unwrap()..];
    assert!(bar3.contains("height=\"0\""), "{bar3}");
}

#[test]
fn a_turn_without_a_usage_line_still_gets_its_bar() {
    let mut lines = two_turn_run("ok", "Reading.");
    lines.retain(|l| !(l["type"] == "usage" && l["turn"] == 2));
    let page = page_of(&lines);
    assert_eq!(page.matches("<g class=\"bar\"").count(), 2);
}

#[test]
fn skipped_and_torn_lines_are_noted_and_an_unended_run_is_interrupted() {
    let mut text = session_text(&two_turn_run("ok", "Reading.")[..5]);
    text.push_str("{\"type\":\"future_line\",\"timestamp\":\"2026-11-22T12:00:01.000Z\"}\n");
    text.push_str("{\"type\":\"message\",\"ro");
    let items = parse_session(&text);
    let summary = summarize(Path::new("f.jsonl"), &items);
    let page = render_page(&items, summary.as_ref());
    assert!(page.contains("unknown type future_line, skipped"));
    assert!(page.contains("is torn"));
    assert!(page.contains("<span class=\"status interrupted\">interrupted</span>"));
}

#[test]
fn a_file_without_a_header_still_renders() {
    let page = render_page(&parse_session("not json\n"), None);
    assert!(page.contains("No session header"));
    assert!(page.contains("line 1 does not parse"));
    assert!(page.ends_with("</html>\n"));
}
