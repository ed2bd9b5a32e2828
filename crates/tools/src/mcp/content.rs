//! A tool call's result as the text a model reads: text content as it is,
//! other content (images, audio, binary resources) named with its type and
//! size but not shown, embedded text resources with their URI, and the
//! structured content when there is nothing else.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The result as text.
pub(crate) fn as_text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    if parts.is_empty() {
        return "(the tool returned no content)".to_owned();
    }
    parts.join("\n")
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => not_shown("image", &image.mime_type, &image.data),
        ContentBlock::Audio(audio) => not_shown("audio", &audio.mime_type, &audio.data),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} bytes, not shown]",
                mime_type.as_deref().unwrap_or("binary"),
                decoded_len(blob)
            ),
            _ => "[resource of a kind this client does not know, not shown]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} ({})]", link.uri, link.name)
        }
        _ => "[content of a kind this client does not know, not shown]".to_owned(),
    }
}

fn not_shown(kind: &str, mime_type: &str, base64: &str) -> String {
    format!(
        "[{kind} content: {mime_type}, {} bytes, not shown]",
        decoded_len(base64)
    )
}

/// Bytes `base64` decodes to (padding discounted).
fn decoded_len(base64: &str) -> usize {
    let trimmed = base64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
