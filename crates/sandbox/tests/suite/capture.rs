//! Output capture: head and tail kept, every byte counted, the tree killed
//! once a stream passes its hard limit.

use subagent_sandbox::{Stream, Termination, spawn};

use super::support::{MIB, assert_nothing_alive, finish, marker, sh};

/// Slack allowed past the hard limit, bytes: one pipe buffer.
const PIPE_SLACK: u64 = 64 * 1024;

async fn flood(script: &str, stream: Stream) {
    let marker = marker().await;
    let spec = sh(script, &marker, &[]);
    let kept_at_most = (spec.capture.keep_head_bytes + spec.capture.keep_tail_bytes) as u64;
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::OutputLimit { stream });
    let (flooded, quiet) = match stream {
        Stream::Stdout => (&exit.stdout, &exit.stderr),
        Stream::Stderr => (&exit.stderr, &exit.stdout),
    };
    assert!(
        flooded.bytes_seen > MIB,
        "killed before the limit: {}",
        flooded.bytes_seen
    );
    assert!(
        flooded.bytes_seen <= MIB + PIPE_SLACK,
        "read too far: {}",
        flooded.bytes_seen
    );
    assert!(flooded.bytes_kept <= kept_at_most);
    assert_eq!(
        flooded.bytes_kept,
        (flooded.head.len() + flooded.tail.len()) as u64
    );
    assert!(flooded.truncated);
    assert!(flooded.head.iter().all(|b| *b == 0));
    assert_eq!(quiet.bytes_seen, 0);
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn stdout_flood_of_a_gigabyte_is_cut_at_the_hard_limit() {
    flood("head -c 1G /dev/zero", Stream::Stdout).await;
}

#[tokio::test]
async fn stderr_flood_of_a_gigabyte_is_cut_at_the_hard_limit() {
    flood("head -c 1G /dev/zero >&2", Stream::Stderr).await;
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_counts_every_byte() {
    let marker = marker().await;
    let mut spec = sh("seq 1 100000", &marker, &[]);
    spec.capture.keep_head_bytes = 4;
    spec.capture.keep_tail_bytes = 7;
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    let expected_len: u64 = (1..=100_000u64)
        .map(|i| i.to_string().len() as u64 + 1)
        .sum();
    assert_eq!(exit.termination, Termination::Exited { code: 0 });
    assert_eq!(exit.stdout.bytes_seen, expected_len);
    assert_eq!(exit.stdout.head, b"1\n2\n");
    assert_eq!(exit.stdout.tail, b"100000\n");
    assert_eq!(exit.stdout.bytes_kept, 11);
    let omitted = expected_len - 11;
    assert_eq!(
        exit.stdout.lossy_text(),
        format!("1\n2\n\n[... {omitted} bytes omitted ...]\n100000\n")
    );
    assert_nothing_alive(&marker, &[pid]);
}
