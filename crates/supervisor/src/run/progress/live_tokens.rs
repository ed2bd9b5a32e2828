//! The token figures a live display shows for one running child, kept from
//! its progress and content events: input as the result counts it
//! (`usage.input`, the provider's cache left out), the cached share on its
//! own, output, and an estimate of the output the model is streaming in
//! the turn in progress, until that turn's usage arrives.
//!
//! Pure bookkeeping: it counts the characters of streamed text and keeps
//! no text, and it never blocks (its callers are progress sinks).

use crate::run::progress::events::{ContentEvent, ProgressEvent};

/// Characters per token for the streaming estimate: the usual figure for
/// English text with BPE tokenizers. Only an estimate, shown as `~N`, and
/// replaced by the provider's count when the turn's usage arrives.
pub const CHARS_PER_TOKEN: u64 = 4;

/// One child's live token figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveTokens {
    /// Prompt tokens billed at the full price, all turns so far.
    pub input: u64,
    /// Prompt tokens read from or written to the provider's cache.
    pub cached_input: u64,
    /// Completion tokens the provider counted, all finished turns.
    pub output: u64,
    /// Characters streamed in the turn in progress (text and reasoning),
    /// not yet counted by a usage report.
    pub streamed_chars: u64,
    /// True once a turn of the run was cut by the output cap.
    pub cut_by_max_tokens: bool,
}

impl LiveTokens {
    /// Takes in a progress event of this child: a turn start begins a new
    /// estimate; a usage report replaces the estimate with the count.
    pub fn on_progress(&mut self, event: &ProgressEvent) {
        match event {
            ProgressEvent::Turn { .. } => self.streamed_chars = 0,
            ProgressEvent::Usage {
                input_tokens,
                cached_input_tokens,
                output_tokens,
                cut_by_max_tokens,
                ..
            } => {
                self.input = *input_tokens;
                self.cached_input = *cached_input_tokens;
                self.output = *output_tokens;
                self.streamed_chars = 0;
                self.cut_by_max_tokens |= *cut_by_max_tokens;
            }
            _ => {}
        }
    }

    /// Takes in a content event of this child: streamed text counts
    /// towards the estimate.
    pub fn on_content(&mut self, event: &ContentEvent) {
        self.on_streamed(streamed_chars(event));
    }

    /// Adds `chars` streamed characters to the estimate.
    pub fn on_streamed(&mut self, chars: u64) {
        self.streamed_chars = self.streamed_chars.saturating_add(chars);
    }

    /// Estimated tokens of the turn in progress (0 when none streamed).
    pub fn estimated_output(&self) -> u64 {
        self.streamed_chars.div_ceil(CHARS_PER_TOKEN)
    }

    /// `1,200 in / 34 out tok`; `1,200 in (+9,000 cached) / 34 out tok`
    /// when the cache handled part of the prompt; `~` before the output
    /// while part of it is an estimate of the turn in progress.
    pub fn text(&self) -> String {
        let cached = match self.cached_input {
            0 => String::new(),
            n => format!(" (+{} cached)", thousands(n)),
        };
        let estimate = self.estimated_output();
        let output = if estimate > 0 {
            format!("~{}", thousands(self.output.saturating_add(estimate)))
        } else {
            thousands(self.output)
        };
        format!("{} in{cached} / {output} out tok", thousands(self.input))
    }
}

/// Characters of streamed text in `event` (text and reasoning deltas; 0
/// for anything else).
pub fn streamed_chars(event: &ContentEvent) -> u64 {
    match event {
        ContentEvent::TextDelta { text, .. } | ContentEvent::ReasoningDelta { text, .. } => {
            u64::try_from(text.chars().count()).unwrap_or(u64::MAX)
        }
        ContentEvent::ToolCall { .. } | ContentEvent::ToolResult { .. } => 0,
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "live_tokens_tests.rs"]
mod tests;
