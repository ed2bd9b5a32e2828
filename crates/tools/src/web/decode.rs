//! From a response's `Content-Type` and bytes to text: which types
//! `scrape_webpage` accepts, and which charset the bytes are in.
//!
//! The charset is taken as browsers take it: a byte-order mark first, then
//! the header's `charset`, then (for HTML) a `<meta charset>` near the top,
//! else UTF-8. Bytes that do not decode are replaced, never an error: a page
//! with one bad byte is still worth reading. Pure functions, no I/O.

use encoding_rs::{Encoding, UTF_8};

use super::markdown::BodyKind;

/// How far into an HTML page a `<meta charset>` is looked for (the HTML
/// standard's prescan looks at the first 1024 bytes).
const META_PRESCAN_BYTES: usize = 1024;

/// The media type (lowercase, no parameters) and the charset parameter of a
/// `Content-Type` value.
pub fn parse_content_type(value: &str) -> (String, Option<String>) {
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|part| {
        let (name, value) = part.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_owned())
    });
    (essence, charset)
}

/// How a body of `media_type` is shown, or `None` when it is not text.
/// An absent type (empty) counts as HTML: the renderer copes with plain text.
pub fn body_kind(media_type: &str) -> Option<BodyKind> {
    match media_type {
        "" | "text/html" | "application/xhtml+xml" => Some(BodyKind::Html),
        "application/json" | "application/xml" => Some(BodyKind::Plain),
        t if t.starts_with("text/") => Some(BodyKind::Plain),
        t if t.starts_with("application/") && (t.ends_with("+json") || t.ends_with("+xml")) => {
            Some(BodyKind::Plain)
        }
        _ => None,
    }
}

/// `bytes` decoded to text, by BOM, `header_charset`, a `<meta>` (HTML
/// only), else UTF-8.
pub fn decode_body(bytes: &[u8], header_charset: Option<&str>, kind: BodyKind) -> String {
    let declared = header_charset
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .or_else(|| match kind {
            BodyKind::Html => meta_charset(bytes),
            BodyKind::Plain => None,
        })
        .unwrap_or(UTF_8);
    // `decode` lets a BOM override the declared encoding, as browsers do.
    let (text, _, _) = declared.decode(bytes);
    text.into_owned()
}

/// The encoding a `<meta charset=...>` or `<meta http-equiv=content-type
/// content="...; charset=...">` in the first bytes of a page declares.
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_PRESCAN_BYTES)];
    let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("charset=") {
        rest = &rest[at + "charset=".len()..];
        let label: String = rest
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
            .collect();
        if let Some(encoding) = Encoding::for_label(label.as_bytes()) {
            // A page whose ASCII `charset=` was readable is not UTF-16,
            // whatever it says (the HTML standard's rule).
            return Some(encoding.output_encoding());
        }
    }
    None
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
