use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::*;

const RECORDED: [&[u8]; 4] = [
    include_bytes!("../../tests/fixtures/openai_chat_tool_calls.sse"),
    include_bytes!("../../tests/fixtures/openai_chat_text.sse"),
    include_bytes!("../../tests/fixtures/openai_responses_tool_call.sse"),
    include_bytes!("../../tests/fixtures/anthropic_tool_use.sse"),
];

fn parse_pieces(pieces: &[&[u8]]) -> Result<Vec<SseEvent>, SseError> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    for piece in pieces {
        parser.push(piece, &mut events)?;
    }
    events.extend(parser.finish()?);
    Ok(events)
}

fn parse_whole(bytes: &[u8]) -> Vec<SseEvent> {
    parse_pieces(&[bytes]).unwrap()
}

fn split_at_all<'b>(bytes: &'b [u8], cuts: &[usize]) -> Vec<&'b [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut pieces = Vec::new();
    let mut start = 0;
    for cut in cuts {
        pieces.push(&bytes[start..cut]);
        start = cut;
    }
    pieces.push(&bytes[start..]);
    pieces
}

fn event(event: &str, data: &str) -> SseEvent {
    SseEvent {
        event: event.into(),
        data: data.into(),
    }
}

fn crlf(bytes: &[u8]) -> Vec<u8> {
    String::from_utf8(bytes.to_vec())
        .unwrap()
        .replace('\n', "\r\n")
        .into_bytes()
}

#[test]
fn recorded_anthropic_stream_yields_its_events_in_order() {
    let events = parse_whole(RECORDED[3]);
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    assert_eq!(events[2].data, r#"{"type": "ping"}"#);
}

#[test]
fn openai_stream_ends_with_the_done_sentinel() {
    let events = parse_whole(RECORDED[0]);
    assert_eq!(events.len(), 10);
    assert!(events.iter().all(|e| e.event.is_empty()));
    assert!(events[9].is_done());
    assert!(!events[8].is_done());
}

#[test]
fn byte_at_a_time_gives_the_same_events_as_one_piece() {
    for recorded in RECORDED {
        let pieces: Vec<&[u8]> = recorded.chunks(1).collect();
        assert_eq!(parse_pieces(&pieces).unwrap(), parse_whole(recorded));
    }
}

#[test]
fn crlf_and_lone_cr_line_endings_parse_like_lf() {
    let lf = b"event: a\ndata: one\ndata: two\n\nevent: b\ndata: three\n\n";
    let cr: Vec<u8> = lf
        .iter()
        .map(|b| if *b == b'\n' { b'\r' } else { *b })
        .collect();
    let expected = vec![event("a", "one\ntwo"), event("b", "three")];
    assert_eq!(parse_whole(lf), expected);
    assert_eq!(parse_whole(&crlf(lf)), expected);
    assert_eq!(parse_whole(&cr), expected);
}

#[test]
fn a_crlf_split_between_cr_and_lf_is_one_line_break() {
    let events = parse_pieces(&[b"data: x\r", b"\n\r", b"\ndata: y\r\n\r\n"]).unwrap();
    assert_eq!(events, vec![event("", "x"), event("", "y")]);
}

#[test]
fn comments_are_skipped_and_keep_nothing() {
    let events = parse_whole(b": keep-alive\n\n:another\ndata: x\n: inside\n\n");
    assert_eq!(events, vec![event("", "x")]);
}

#[test]
fn value_keeps_spaces_beyond_the_first_and_colons_inside() {
    let events = parse_whole(b"data:no-space\n\ndata:   three: spaces\n\ndata\n\n");
    assert_eq!(
        events,
        vec![
            event("", "no-space"),
            event("", "  three: spaces"),
            event("", "")
        ]
    );
}

#[test]
fn event_without_data_is_not_dispatched_and_its_name_does_not_leak() {
    let events = parse_whole(b"event: lonely\n\ndata: x\n\n");
    assert_eq!(events, vec![event("", "x")]);
}

#[test]
fn leading_byte_order_mark_is_ignored_even_when_split() {
    let events = parse_pieces(&[b"\xEF", b"\xBB\xBFdata: x\n\n"]).unwrap();
    assert_eq!(events, vec![event("", "x")]);
}

#[test]
fn multibyte_character_split_across_pieces_survives() {
    let text = "data: café ☕\n\n".as_bytes();
    let split = text.iter().position(|b| *b == 0xE2).unwrap() + 1;
    let events = parse_pieces(&[&text[..split], &text[split..]]).unwrap();
    assert_eq!(events, vec![event("", "café ☕")]);
}

#[test]
fn stream_cut_inside_a_line_is_truncated() {
    assert_eq!(
        parse_pieces(&[b"data: {\"a\":1}\n\ndata: {\"b\""]),
        Err(SseError::Truncated)
    );
}

#[test]
fn last_event_without_its_blank_line_is_still_delivered() {
    let events = parse_whole(b"data: one\n\ndata: [DONE]\n");
    assert_eq!(events, vec![event("", "one"), event("", "[DONE]")]);
}

#[test]
fn oversized_line_is_refused_before_it_is_buffered_whole() {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    let big = vec![b'x'; MAX_SSE_EVENT_BYTES / 2 + 1];
    parser.push(b"data: ", &mut events).unwrap();
    parser.push(&big, &mut events).unwrap();
    assert_eq!(parser.push(&big, &mut events), Err(SseError::TooLarge));
}

proptest! {
    #[test]
    fn any_split_of_a_recorded_stream_gives_the_same_events(
        which in 0usize..RECORDED.len(),
        use_crlf in any::<bool>(),
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let bytes = if use_crlf { crlf(RECORDED[which]) } else { RECORDED[which].to_vec() };
        let pieces = split_at_all(&bytes, &cuts);
        prop_assert_eq!(parse_pieces(&pieces).unwrap(), parse_whole(RECORDED[which]));
    }
}
