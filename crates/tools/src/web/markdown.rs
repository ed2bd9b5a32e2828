//! A fetched page turned into text a model reads well.
//!
//! HTML goes through Readability (`dom_smoothie`, a port of the algorithm
//! behind Firefox's reader view), which keeps the article and drops
//! navigation, ads and footers; its Markdown keeps links as `[text](url)`
//! with relative URLs made absolute. A page where it finds no article (a
//! short page, a listing) is converted whole instead (scripts, styles and
//! the head skipped), so the model always gets the page's text. Plain text
//! and JSON are passed through unchanged.
//!
//! Pure functions: nothing here touches the network.

use dom_smoothie::{Config, Readability, TextMode};

/// How `scrape_webpage` renders an HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageFormat {
    /// Markdown: headings, lists, emphasis, links kept.
    #[default]
    Markdown,
    /// Plain text: paragraphs and line breaks only.
    Text,
}

impl PageFormat {
    /// Its name as the model writes it, and as the page renderer takes it
    /// on its command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
        }
    }

    /// The format named `name` ([`Self::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Markdown, Self::Text]
            .into_iter()
            .find(|format| format.name() == name)
    }
}

/// What kind of body a page has, from its content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// `text/html`, `application/xhtml+xml`.
    Html,
    /// Other `text/*`, JSON: shown as they are.
    Plain,
}

/// `body` of the page at `url` rendered in `format`.
pub fn render_page(body: &str, kind: BodyKind, url: &str, format: PageFormat) -> String {
    match kind {
        BodyKind::Plain => body.to_owned(),
        BodyKind::Html => html_to_readable(body, url, format),
    }
}

/// The readable content of an HTML page, with its title as a heading.
pub fn html_to_readable(html: &str, url: &str, format: PageFormat) -> String {
    let text_mode = match format {
        PageFormat::Markdown => TextMode::Markdown,
        PageFormat::Text => TextMode::Formatted,
    };
    let config = Config {
        text_mode,
        ..Config::default()
    };
    let article = Readability::new(html, Some(url), Some(config))
        .ok()
        .and_then(|mut readability| readability.parse().ok());
    match article {
        Some(article) if !article.text_content.trim().is_empty() => {
            with_title(article.title.trim(), article.text_content.trim(), format)
        }
        _ => whole_page(html, format),
    }
}

/// The whole page, for when Readability finds no article.
fn whole_page(html: &str, format: PageFormat) -> String {
    let document = dom_query::Document::from(html);
    let title = document.select("title").text();
    let body = document.select("body");
    let text = match (format, body.nodes().first()) {
        (PageFormat::Markdown, Some(body)) => body.md(None),
        (PageFormat::Markdown, None) => document.md(None),
        (PageFormat::Text, Some(body)) => body.formatted_text(),
        (PageFormat::Text, None) => document.root().formatted_text(),
    };
    with_title(title.trim(), text.trim(), format)
}

fn with_title(title: &str, text: &str, format: PageFormat) -> String {
    match (title.is_empty(), format) {
        (true, _) => text.to_owned(),
        (false, PageFormat::Markdown) => format!("# {title}\n\n{text}"),
        (false, PageFormat::Text) => format!("{title}\n\n{text}"),
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
