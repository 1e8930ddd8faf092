//! Markdown to HTML for `notes_rendered`, `/api/util/markdown` and the web pages: CommonMark, with raw HTML
//! shown as text (never passed through), links and images only to safe schemes, and
//! `dataset:<name>` written as a link to that dataset's page (CKAN's `render_markdown`).

use crate::blocking::Lane;
use crate::error::CkanResult;
use pulldown_cmark::{html, Event, Options, Parser, Tag, TagEnd};

/// The longest text rendered, in characters (the default `catalog.max_field_chars` of a
/// dataset's notes): the rest of a longer text is left out.
pub const MAX_CHARS: usize = 100_000;

/// The deepest nesting of block quotes and lists kept: deeper markers are rendered as the
/// content of the deepest kept level. `>>>>…` on one line would otherwise make one
/// `<blockquote>` per character (a 10 MB body became 290 MB of HTML).
pub const MAX_NESTING: usize = 32;

/// Renderings run on the blocking pool, in a lane of their own.
static RENDERING: Lane = Lane::new("markdown");

/// [`render_with_site`] off the async workers.
pub async fn render_off_thread(markdown: String, site: String) -> CkanResult<String> {
    RENDERING
        .run(move || render_with_site(&markdown, &site))
        .await
}

/// True for the blocks that nest (an item nests within its list).
fn is_container(tag: &Tag<'_>) -> bool {
    matches!(tag, Tag::BlockQuote(_) | Tag::List(_) | Tag::Item)
}

fn is_container_end(tag: &TagEnd) -> bool {
    matches!(tag, TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item)
}

/// The link targets kept: web, mail and relative addresses. `javascript:`, `data:` and the
/// rest are dropped (the link's text stays).
fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        None => true,
        // A colon after a slash, `?` or `#` is inside a relative path, not a scheme.
        Some((scheme, _)) if scheme.contains(['/', '?', '#']) => true,
        Some((scheme, _)) => matches!(scheme, "http" | "https" | "mailto" | "ftp"),
    }
}

/// Renders Markdown as sanitized HTML.
pub fn render(markdown: &str) -> String {
    render_with_site(markdown, "")
}

/// Renders Markdown; `dataset:<name>` becomes a link to `<site>/dataset/<name>`. At most
/// [`MAX_CHARS`] characters are read and [`MAX_NESTING`] levels of quotes and lists kept, so
/// the HTML is at most a small multiple of the input.
pub fn render_with_site(markdown: &str, site: &str) -> String {
    let markdown = match markdown.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => &markdown[..end],
        None => markdown,
    };
    let linked = link_datasets(&atx_headings(markdown), site);
    // For each open link or image: whether it was dropped (its text stays, as plain text).
    let mut dropped = Vec::new();
    // For each open container (quote, list, item): whether it was kept, and whether it is a
    // level (a quote or a list; an item is not).
    let mut containers: Vec<(bool, bool)> = Vec::new();
    let mut kept_depth = 0usize;
    let events = Parser::new_ext(
        &linked,
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES,
    )
    .filter_map(|ev| match ev {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link { ref dest_url, .. })
        | Event::Start(Tag::Image { ref dest_url, .. }) => {
            let keep = safe_url(dest_url);
            dropped.push(!keep);
            keep.then_some(ev)
        }
        Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => {
            let was_dropped = dropped.pop().unwrap_or(false);
            (!was_dropped).then_some(ev)
        }
        // An item is kept with its list; a quote or a list while fewer than MAX_NESTING are
        // open around it.
        Event::Start(Tag::Item) => {
            let keep = containers.last().is_none_or(|(kept, _)| *kept);
            containers.push((keep, false));
            keep.then_some(ev)
        }
        Event::Start(ref tag) if is_container(tag) => {
            let keep = kept_depth < MAX_NESTING;
            containers.push((keep, true));
            kept_depth += usize::from(keep);
            keep.then_some(ev)
        }
        Event::End(ref tag) if is_container_end(tag) => {
            let (keep, level) = containers.pop().unwrap_or((true, false));
            kept_depth -= usize::from(keep && level && kept_depth > 0);
            keep.then_some(ev)
        }
        other => Some(other),
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out.trim_end().to_string()
}

/// `##Title` is a heading to Python-Markdown (CKAN's renderer) though not to CommonMark: a
/// space goes in after the hashes of such lines (outside fenced code).
fn atx_headings(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut fenced = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        }
        let hashes = line.len() - line.trim_start_matches('#').len();
        let after = line[hashes..].chars().next();
        if !fenced && (1..=6).contains(&hashes) && after.is_some_and(|c| !c.is_whitespace()) {
            out.push_str(&line[..hashes]);
            out.push(' ');
            out.push_str(&line[hashes..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// `dataset:<name>` (a name of lowercase letters, digits, `-` and `_`) as a Markdown link.
fn link_datasets(text: &str, site: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("dataset:") {
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '/' && c != '[');
        let after = &rest[at + "dataset:".len()..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'))
            .unwrap_or(after.len());
        out.push_str(&rest[..at]);
        if before_ok && name_len >= 2 {
            let name = &after[..name_len];
            out.push_str(&format!("[dataset:{name}]({site}/dataset/{name})"));
            rest = &after[name_len..];
        } else {
            out.push_str("dataset:");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_and_paragraphs() {
        assert_eq!(render("##Title"), "<h2>Title</h2>");
        assert_eq!(render("some *text*"), "<p>some <em>text</em></p>");
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let html = render("<script>alert(1)</script> and <b>bold</b>");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn unsafe_links_lose_their_address_but_keep_their_text() {
        let html = render(
            "[click](javascript:alert(1)) ![x](data:text/html,hi) [ok](https://example.org/a:b)",
        );
        assert!(!html.contains("javascript"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(html.contains("click"), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.org/a:b">ok</a>"#),
            "{html}"
        );
    }

    #[test]
    fn deep_nesting_is_flattened_and_the_output_stays_small() {
        for (marker, tag) in [(">", "<blockquote>"), ("- ", "<ul>"), ("1. ", "<ol>")] {
            let text = format!("{}deep", marker.repeat(30_000));
            let html = render(&text);
            assert_eq!(html.matches(tag).count(), MAX_NESTING, "{marker}");
            assert!(
                html.len() < 40 * text.len(),
                "{marker}: {} bytes",
                html.len()
            );
            assert!(html.contains("deep"), "{marker}");
        }
    }

    #[test]
    fn pathological_inputs_render_quickly() {
        let started = std::time::Instant::now();
        for unit in [
            "[", "*a", "<", "`", "|", "![", "](", "_", "> - ", "[x]: ", "\\", "&#",
        ] {
            let text = unit.repeat(MAX_CHARS / unit.len() + 10);
            let html = render(&text);
            assert!(html.len() < 40 * MAX_CHARS, "{unit}: {} bytes", html.len());
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn only_the_first_max_chars_are_read() {
        let text = format!("{}TAIL", "a".repeat(MAX_CHARS));
        assert!(!render(&text).contains("TAIL"));
    }

    #[test]
    fn dataset_references_become_links() {
        assert_eq!(
            render_with_site("see dataset:my-data.", "http://x"),
            r#"<p>see <a href="http://x/dataset/my-data">dataset:my-data</a>.</p>"#
        );
        assert_eq!(render("nodataset:ab"), "<p>nodataset:ab</p>");
    }
}
