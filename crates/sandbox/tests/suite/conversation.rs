//! A child that talks with its caller over stdin and stdout
//! (`SandboxSpec::conversation`), as an MCP server does: inside the tool
//! sandbox, its stdout reaches the caller uncaptured, its stderr is still
//! captured, and closing its stdin ends it.

use subagent_sandbox::{Termination, spawn};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

use super::support::{assert_nothing_alive, finish, marker};
use super::tool_sandbox_support::{dirs, python_spec, strict};

/// Echoes each line back upper-cased, says on stderr that it is done when
/// its stdin ends.
const ECHO: &str = "import sys\n\
for line in sys.stdin:\n    sys.stdout.write(line.upper()); sys.stdout.flush()\n\
sys.stderr.write('stdin closed\\n')\n";

#[tokio::test]
async fn a_sandboxed_child_answers_each_line_and_ends_when_its_stdin_closes() {
    let dirs = dirs();
    let marker = marker().await;
    let mut spec = python_spec(ECHO, &dirs, &marker, strict(&dirs));
    spec.conversation = true;
    let mut child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let talk = child
        .take_conversation()
        .expect("a conversation was asked for");
    assert!(child.take_conversation().is_none(), "taken once");
    let mut to_child = pipe::Sender::from_owned_fd(talk.to_child).unwrap();
    let mut from_child =
        BufReader::new(pipe::Receiver::from_owned_fd(talk.from_child).unwrap()).lines();
    for word in ["ping", "second line"] {
        to_child
            .write_all(format!("{word}\n").as_bytes())
            .await
            .unwrap();
        let answer = from_child.next_line().await.unwrap();
        assert_eq!(answer.as_deref(), Some(word.to_uppercase().as_str()));
    }
    drop(to_child);
    assert_eq!(from_child.next_line().await.unwrap(), None, "stdout ends");
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Exited { code: 0 });
    assert_eq!(exit.stderr.lossy_text(), "stdin closed\n");
    assert_eq!(
        exit.stdout.bytes_seen, 0,
        "stdout is the caller's, not captured"
    );
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn without_a_conversation_stdin_is_empty_and_stdout_is_captured() {
    let dirs = dirs();
    let marker = marker().await;
    let mut spec = python_spec(ECHO, &dirs, &marker, strict(&dirs));
    spec.conversation = false;
    let mut child = spawn(spec).await.unwrap();
    let pid = child.pid();
    assert!(child.take_conversation().is_none());
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Exited { code: 0 });
    assert_eq!(exit.stderr.lossy_text(), "stdin closed\n");
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn a_conversing_child_dropped_by_its_caller_leaves_nothing_alive() {
    let dirs = dirs();
    let marker = marker().await;
    let mut spec = python_spec(ECHO, &dirs, &marker, strict(&dirs));
    spec.conversation = true;
    let mut child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let talk = child.take_conversation().unwrap();
    // The caller keeps the pipes open but drops the child (a run that ends
    // without stopping its servers): the guard kills the tree.
    drop(child);
    super::support::assert_eventually_nothing_alive(&marker, &[pid]).await;
    drop(talk);
}
