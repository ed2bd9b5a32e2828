use rmcp::model::{CallToolResult, ContentBlock, ImageContent, ResourceContents, TextContent};

use super::*;

fn result(content: Vec<ContentBlock>) -> CallToolResult {
    let mut result = CallToolResult::success(content);
    result.structured_content = None;
    result
}

#[test]
fn text_is_shown_and_binary_content_is_named_with_its_size() {
    let image = ImageContent::new("iVBORw0KGgo=", "image/png");
    let text = as_text(&result(vec![
        ContentBlock::Text(TextContent::new("hello")),
        ContentBlock::Image(image),
        ContentBlock::Resource(rmcp::model::EmbeddedResource::new(ResourceContents::text(
            "body",
            "file:///a.txt",
        ))),
    ]));
    assert_eq!(
        text,
        "hello\n[image content: image/png, 8 bytes, not shown]\n[resource file:///a.txt]\nbody"
    );
}

#[test]
fn structured_content_is_shown_when_there_is_nothing_else() {
    let mut only_structured = result(Vec::new());
    only_structured.structured_content = Some(serde_json::json!({"n": 1}));
    assert_eq!(as_text(&only_structured), r#"{"n":1}"#);
    assert_eq!(
        as_text(&result(Vec::new())),
        "(the tool returned no content)"
    );
}
