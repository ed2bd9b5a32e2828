//! An error and its causes as one line, `what: why: why`, the way the CLI
//! prints errors: for messages that travel to a client (a server's error
//! response, a batch's list of bad lines) instead of to a terminal.

/// `error` and each of its sources, joined by `: `.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
