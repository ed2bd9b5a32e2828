//! Text from a model or a tool made safe to print on a terminal.
//!
//! A terminal obeys what it is sent: an OSC 52 sequence writes the user's
//! clipboard, OSC 0 sets the window title, `CSI 2J` clears the screen, and
//! an 8-bit C1 control (U+009B is CSI) does the same on terminals that take
//! them. Model-chosen text (the answer, a tool name on the status line, a
//! transcript) goes through [`strip_controls`] before it reaches one.
//!
//! In: any `&str`. Out: the same text without control characters and
//! without the whole escape sequences they start. `\n` and `\t` stay.
//! This module must not be used on machine output (`--json`, the servers'
//! lines): JSON escapes control characters already, and a program reading
//! it must get the text as it was.

use std::borrow::Cow;

/// ESC, which starts every 7-bit sequence.
const ESC: char = '\u{1b}';
/// BEL, which ends an OSC string on xterm and most terminals.
const BEL: char = '\u{07}';
/// The 8-bit String Terminator (C1 ST).
const C1_ST: char = '\u{9c}';
/// The 8-bit Control Sequence Introducer (C1 CSI).
const C1_CSI: char = '\u{9b}';

/// `text` without control sequences: C0 controls except `\n` and `\t`,
/// DEL, ESC with the whole sequence it starts (CSI `ESC [ ... final`,
/// OSC/DCS/SOS/PM/APC strings up to BEL or ST, two-character escapes such
/// as `ESC c`), and C1 controls U+0080..U+009F, with the whole sequence
/// when one starts a CSI or a string. An unterminated string runs to the
/// end of the text, as a terminal would take it. Borrowed when there was
/// nothing to strip.
pub fn strip_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_control(c) {
            out.push(c);
            continue;
        }
        match c {
            ESC => match chars.peek().copied() {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                // `ESC intermediates* final`: `ESC c` (reset), `ESC ( B`,
                // `ESC 7`. Anything else after ESC is text of its own.
                Some(' '..='~') => skip_escape(&mut chars),
                _ => {}
            },
            C1_CSI => skip_csi(&mut chars),
            // OSC, DCS, SOS, PM, APC in their 8-bit forms.
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// True for what [`strip_controls`] removes: C0 but `\n` and `\t`, DEL, C1.
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

/// The rest of a CSI after its introducer: parameter bytes (0x30..0x3F),
/// intermediate bytes (0x20..0x2F), then one final byte (0x40..0x7E). A
/// byte outside those ranges ends the sequence there and is read as text
/// again (terminals abort the sequence the same way).
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        match c {
            '\u{30}'..='\u{3f}' | '\u{20}'..='\u{2f}' => {
                chars.next();
            }
            '\u{40}'..='\u{7e}' => {
                chars.next();
                return;
            }
            _ => return,
        }
    }
}

/// The rest of a string sequence (OSC, DCS, ...) up to and including its
/// terminator: BEL, `ESC \` or C1 ST; to the end when there is none.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            BEL | C1_ST => return,
            ESC if chars.peek() == Some(&'\\') => {
                chars.next();
                return;
            }
            _ => {}
        }
    }
}

/// The rest of a two-or-more-character escape: intermediates (0x20..0x2F),
/// then a final byte (0x30..0x7E).
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        if !(' '..='~').contains(&c) {
            return;
        }
        chars.next();
        if !(' '..='/').contains(&c) {
            return;
        }
    }
}

#[cfg(test)]
#[path = "terminal_text_tests.rs"]
mod tests;
