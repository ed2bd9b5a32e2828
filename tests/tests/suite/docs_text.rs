//! The docs and the `--help` tree as data, for the tests that hold them to
//! each other and to the binary (`docs_help.rs`, `docs_flags.rs`,
//! `docs_examples.rs`).
//!
//! What flows in: README.md and docs/*.md as written, and the `--help` text
//! of every command of the built `subagent` (the clap tree walked through
//! each help's `Commands:` list). What flows out: fenced blocks, prose with
//! its inline code spans, heading-delimited sections, logical shell commands
//! (continuation lines, quotes over several lines and heredocs joined) and
//! their words, each command's help and flags. Nothing here runs a doc
//! example; it only reads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The width `--help` is rendered at: clap's own default when it finds no
/// terminal, set explicitly so a developer's `COLUMNS` cannot change the
/// snapshots.
pub const HELP_COLUMNS: &str = "100";

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One Markdown file of the docs: its path from the repository root and
/// its text.
pub struct Doc {
    pub name: String,
    pub text: String,
}

/// README.md and every docs/*.md, in name order.
pub fn docs() -> Vec<Doc> {
    let root = repo_root();
    let mut names = vec!["README.md".to_owned()];
    let mut in_docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    in_docs.sort();
    names.extend(in_docs);
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root.join(&name))
                .unwrap_or_else(|e| panic!("read {name}: {e}"));
            Doc { name, text }
        })
        .collect()
}

/// A fenced code block: its info string's first word (`sh`, `console`,
/// `toml`, or empty) and its lines; `line` is the 1-based line of its
/// first body line in `doc`.
pub struct Block {
    pub doc: String,
    pub line: usize,
    pub lang: String,
    pub body: Vec<String>,
}

/// Every fenced block of `doc` (``` fences, indented or not).
pub fn fenced_blocks(doc: &Doc) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in doc.text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, open.take()) {
            (Some(_), Some(block)) => blocks.push(block),
            (Some(info), None) => {
                open = Some(Block {
                    doc: doc.name.clone(),
                    line: i + 2,
                    lang: info.split_whitespace().next().unwrap_or("").to_owned(),
                    body: Vec::new(),
                });
            }
            (None, Some(mut block)) => {
                block.body.push(line.to_owned());
                open = Some(block);
            }
            (None, None) => {}
        }
    }
    blocks
}

/// `doc` cut at its headings (any level; a `#` line inside a fence is not a
/// heading): each section's text, fences included, heading first.
pub fn sections(doc: &Doc) -> Vec<String> {
    let mut sections = vec![String::new()];
    let mut in_fence = false;
    for line in doc.text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if !in_fence && line.starts_with('#') {
            sections.push(String::new());
        }
        let current = sections.last_mut().unwrap();
        current.push_str(line);
        current.push('\n');
    }
    sections
}

/// The inline code spans of `doc`'s prose (outside fences), a span that
/// wraps over a line break joined with a space.
pub fn inline_spans(doc: &Doc) -> Vec<String> {
    let mut prose = String::new();
    let mut in_fence = false;
    for line in doc.text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            // A fence ends any paragraph, so no span runs across it.
            prose.push_str("\n\n");
            continue;
        }
        if !in_fence {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let mut spans = Vec::new();
    for paragraph in prose.split("\n\n") {
        let mut parts = paragraph.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            spans.push(span.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    spans
}

/// One command of the `subagent` clap tree and its `--help`.
pub struct Help {
    /// Subcommand names below `subagent` (empty for `subagent` itself).
    pub path: Vec<String>,
    pub text: String,
    /// `--name` of every option (`--help` and `--version` included).
    pub long_flags: BTreeSet<String>,
    /// `-x` of every option that has one.
    pub short_flags: BTreeSet<String>,
}

impl Help {
    /// `subagent sessions ls`.
    pub fn command(&self) -> String {
        std::iter::once("subagent")
            .chain(self.path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether `flag` (`--name` or `-x`) is one of this command's options.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.long_flags.contains(flag) || self.short_flags.contains(flag)
    }
}

/// `subagent PATH... --help`, rendered without a terminal, at
/// [`HELP_COLUMNS`], in an environment of `PATH` alone.
pub fn help_text(subagent: &Path, path: &[String]) -> String {
    let out = Command::new(subagent)
        .args(path)
        .arg("--help")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("COLUMNS", HELP_COLUMNS)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "subagent {} --help exited {:?}: {}",
        path.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every command of the clap tree, `subagent` first, each followed by its
/// subcommands (depth first, in `--help` order).
pub fn help_tree(subagent: &Path) -> Vec<Help> {
    let mut tree = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let text = help_text(subagent, &path);
        for name in subcommands(&text).into_iter().rev() {
            let mut child = path.clone();
            child.push(name);
            todo.push(child);
        }
        let (long_flags, short_flags) = option_flags(&text);
        tree.push(Help {
            path,
            text,
            long_flags,
            short_flags,
        });
    }
    tree
}

/// The lines of a help's `NAME:` section (up to the next line that starts
/// at column 0).
fn help_section<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let heading = format!("{name}:");
    text.lines()
        .skip_while(|l| !l.starts_with(&heading))
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

/// The subcommand names a help lists under `Commands:`, `help` left out
/// (clap's own, the same text as `--help`).
pub fn subcommands(text: &str) -> Vec<String> {
    help_section(text, "Commands")
        .into_iter()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase()))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The long and short flags a help lists under `Options:`. An option line is
/// `  -x, --name ...` or `      --name ...`; a wrapped description starts
/// further right, so a flag named inside one is not taken for an option.
pub fn option_flags(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut long = BTreeSet::new();
    let mut short = BTreeSet::new();
    for line in help_section(text, "Options") {
        let rest = if let Some(rest) = line.strip_prefix("      --") {
            rest
        } else if let Some(with_short) = line.strip_prefix("  -") {
            let Some((letter, rest)) = with_short.split_once(", --") else {
                continue;
            };
            short.insert(format!("-{letter}"));
            rest
        } else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        long.insert(format!("--{name}"));
    }
    (long, short)
}

/// One logical shell command of a block: its first line (1-based, in the
/// doc) and its text, continuation lines, quoted newlines and heredoc
/// bodies included.
pub struct ShellCommand {
    pub line: usize,
    pub text: String,
}

/// The logical commands of `lines` (a block's body starting at doc line
/// `first_line`). Blank lines and lines that are only a comment between
/// commands are skipped.
pub fn shell_commands(lines: &[String], first_line: usize) -> Vec<ShellCommand> {
    let mut commands = Vec::new();
    let mut current = String::new();
    // The command without its heredoc bodies: a body is data, its quotes
    // say nothing about where the command ends.
    let mut shell_part = String::new();
    let mut start = 0;
    let mut heredoc: Option<String> = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some(end) = &heredoc {
            current.push('\n');
            current.push_str(line);
            if line.trim() != end {
                continue;
            }
            heredoc = None;
        } else {
            if current.is_empty() {
                let trimmed = line.trim();
                if trimmed.is_empty() || trimmed.starts_with('#') {
                    continue;
                }
                start = i;
            } else {
                current.push('\n');
                shell_part.push('\n');
            }
            current.push_str(line);
            shell_part.push_str(line);
            if let Some(end) = heredoc_delimiter(line) {
                heredoc = Some(end);
                continue;
            }
        }
        if !scan(&shell_part).incomplete {
            shell_part.clear();
            commands.push(ShellCommand {
                line: first_line + start,
                text: std::mem::take(&mut current),
            });
        }
    }
    if !current.is_empty() {
        commands.push(ShellCommand {
            line: first_line + start,
            text: current,
        });
    }
    commands
}

/// The delimiter of a heredoc that `line` opens (`<<'END'`, `<<END`,
/// `<<-END`), if any.
fn heredoc_delimiter(line: &str) -> Option<String> {
    let after = &line[line.find("<<")? + 2..];
    let after = after.strip_prefix('-').unwrap_or(after);
    let word: String = after
        .trim_start()
        .chars()
        .filter(|c| *c != '\'' && *c != '"')
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// A command's words as a shell splits them (quotes removed, comments
/// dropped, `\` + newline a space), and whether the text stops mid-command.
struct Scan {
    words: Vec<String>,
    incomplete: bool,
}

/// Shell operators kept as words of their own, longest first.
const OPERATORS: [&str; 9] = ["&&", "||", ">>", "<<", "|", ";", "&", ">", "<"];

fn scan(text: &str) -> Scan {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.char_indices().peekable();
    let mut quote: Option<char> = None;
    while let Some((at, c)) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if q == '"' && c == '\\' {
                if let Some((_, next)) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            } else {
                word.get_or_insert_with(String::new).push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            '\\' => match chars.next() {
                Some((_, '\n')) | None => words.extend(word.take()),
                Some((_, next)) => word.get_or_insert_with(String::new).push(next),
            },
            '#' if word.is_none() => {
                while chars.peek().is_some_and(|(_, c)| *c != '\n') {
                    chars.next();
                }
            }
            c if c.is_whitespace() => words.extend(word.take()),
            _ => {
                let rest = &text[at..];
                if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                    words.extend(word.take());
                    words.push((*op).to_owned());
                    for _ in 1..op.len() {
                        chars.next();
                    }
                } else {
                    word.get_or_insert_with(String::new).push(c);
                }
            }
        }
    }
    let ends_open = text.trim_end().ends_with('\\')
        || words
            .last()
            .is_some_and(|w| matches!(w.as_str(), "|" | "&&" | "||"));
    words.extend(word);
    Scan {
        words,
        incomplete: quote.is_some() || ends_open,
    }
}

/// Whether `text` stops mid-command: an open quote, a trailing `\`, `|`,
/// `&&` or `||`.
pub fn is_incomplete(text: &str) -> bool {
    scan(text).incomplete
}

/// The words of a shell command (see [`scan`]).
pub fn words(text: &str) -> Vec<String> {
    scan(text).words
}

/// Each `subagent` invocation in `words`: the words after `subagent` (or a
/// path ending in `/subagent`) up to the next shell operator.
pub fn invocations(words: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if word == "subagent" || word.ends_with("/subagent") {
            let args = words[i + 1..]
                .iter()
                .take_while(|w| !OPERATORS.contains(&w.as_str()))
                .cloned()
                .collect();
            found.push(args);
        }
    }
    found
}
