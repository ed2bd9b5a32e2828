//! The docs and `--help` name the same flags: every long flag of every
//! command's `--help` is written in README.md or docs/*.md in a section that
//! names that command, and every flag the docs (or a help's own examples)
//! write after a `subagent` command is one of that command's options.

use super::docs_text::{
    Doc, Help, docs, fenced_blocks, help_tree, inline_spans, invocations, sections, shell_commands,
    words,
};
use super::support::binary;

/// Commands the docs describe as taking `run`'s flags ("the same flags and
/// config as `run`": README's Batch runs, MCP server, JSON-lines server and
/// call_subagent sections): a flag they share with `run` is documented where
/// `run`'s is.
const TAKE_RUN_FLAGS: [&str; 3] = ["batch", "call", "serve"];

/// Flags every command has, which no doc needs to repeat.
const CLAP_FLAGS: [&str; 2] = ["--help", "--version"];

/// Whether `text` names the command `path`: `subagent a b` (any whitespace
/// between the words, a line break included) or the code span `` `a b ...` ``.
fn names_command(text: &str, path: &[String]) -> bool {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let words = path.join(" ");
    let full = format!("subagent {words}");
    let span = format!("`{words}");
    followed_by_end_of_word(&flat, &full) || followed_by_end_of_word(&flat, &span)
}

/// Whether `needle` occurs in `text` with no word character right after it
/// (`--json` is not found in `--json-lines`, `sessions ls` not in `sessions lsx`).
fn followed_by_end_of_word(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(at, _)| {
        !text[at + needle.len()..]
            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// Whether some section of some doc names `path` and writes `flag`.
fn documented(sections: &[String], path: &[String], flag: &str) -> bool {
    sections
        .iter()
        .any(|s| names_command(s, path) && followed_by_end_of_word(s, flag))
}

#[test]
fn every_flag_in_help_is_documented_beside_its_command() {
    let tree = help_tree(&binary("subagent"));
    let docs = docs();
    let sections: Vec<String> = docs.iter().flat_map(sections).collect();
    let run = tree
        .iter()
        .find(|h| h.path == ["run"])
        .expect("`subagent run` in the clap tree");
    let mut missing = Vec::new();
    for help in &tree {
        for flag in &help.long_flags {
            if CLAP_FLAGS.contains(&flag.as_str()) || documented(&sections, &help.path, flag) {
                continue;
            }
            let shared_with_run = help.path.len() == 1
                && TAKE_RUN_FLAGS.contains(&help.path[0].as_str())
                && run.has_flag(flag);
            if shared_with_run && documented(&sections, &run.path, flag) {
                continue;
            }
            missing.push(format!("{} {flag}", help.command()));
        }
    }
    assert!(
        missing.is_empty(),
        "flags in --help that README.md and docs/*.md never write in a section naming \
         their command; document each where its command is described:\n{}",
        missing.join("\n")
    );
}

/// Every `subagent ...` the docs write: in sh/console blocks and in inline
/// code spans, with where it was written.
fn written_invocations(doc: &Doc) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for block in fenced_blocks(doc) {
        if !matches!(block.lang.as_str(), "sh" | "console" | "bash" | "") {
            continue;
        }
        for command in shell_commands(&block.body, block.line) {
            let text = command.text.trim_start().trim_start_matches("$ ");
            for args in invocations(&words(text)) {
                found.push((format!("{}:{}", doc.name, command.line), args));
            }
        }
    }
    for span in inline_spans(doc) {
        for args in invocations(&words(&span)) {
            found.push((format!("{} (`{span}`)", doc.name), args));
        }
    }
    found
}

/// The help of the command `args` start with (the longest path of
/// subcommand names), and the flags among `args`.
fn resolve<'a>(tree: &'a [Help], args: &[String]) -> (&'a Help, Vec<String>) {
    let mut depth = 0;
    while depth < args.len() && tree.iter().any(|h| h.path[..] == args[..=depth]) {
        depth += 1;
    }
    let help = tree
        .iter()
        .find(|h| h.path[..] == args[..depth])
        .expect("the root command is in the tree");
    let flags = args
        .iter()
        // `[--task FOLLOW-UP]`: an optional flag in a usage line.
        .map(|a| a.trim_start_matches('['))
        .filter(|a| a.starts_with('-') && a.len() > 1 && !a.starts_with("---"))
        .filter(|a| {
            a.chars()
                .nth(1)
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '-')
        })
        .map(|a| a.split(['=', ']']).next().unwrap_or(a).to_owned())
        .collect();
    (help, flags)
}

#[test]
fn every_flag_the_docs_write_after_a_command_exists() {
    let tree = help_tree(&binary("subagent"));
    let mut written: Vec<(String, Vec<String>)> =
        docs().iter().flat_map(written_invocations).collect();
    // The examples in the helps themselves (`EXAMPLES:`) are held to the same rule.
    for help in &tree {
        for line in help
            .text
            .lines()
            .filter(|l| l.trim_start().starts_with("subagent "))
        {
            for args in invocations(&words(line.trim())) {
                written.push((format!("`{} --help`", help.command()), args));
            }
        }
    }
    assert!(
        written.len() > 50,
        "only {} `subagent` commands found in the docs: is the parser still finding them?",
        written.len()
    );
    let mut unknown = Vec::new();
    for (at, args) in &written {
        // `claude mcp add subagent -- subagent serve ...`: a word `subagent`
        // that is a name, not the program, is followed by no subcommand.
        let runs_the_program = args.first().is_none_or(|first| {
            tree.iter()
                .any(|h| h.path.len() == 1 && h.path[0] == *first)
                || tree[0].has_flag(first)
        });
        if !runs_the_program {
            continue;
        }
        let (help, flags) = resolve(&tree, args);
        for flag in flags {
            if !help.has_flag(&flag) {
                unknown.push(format!("{at}: `{}` has no {flag}", help.command()));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "flags the docs write that the binary does not have; fix the doc (or report the \
         binary):\n{}",
        unknown.join("\n")
    );
}
