//! Markdown to HTML for `notes_rendered` and `/api/util/markdown`: CommonMark, with raw HTML
//! shown as text (never passed through), links and images only to safe schemes, and
//! `dataset:<name>` written as a link to that dataset's page (CKAN's `render_markdown`).

use pulldown_cmark::{html, Event, Options, Parser, Tag, TagEnd};

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

/// Renders Markdown; `dataset:<name>` becomes a link to `<site>/dataset/<name>`.
pub fn render_with_site(markdown: &str, site: &str) -> String {
    let linked = link_datasets(&atx_headings(markdown), site);
    // For each open link or image: whether it was dropped (its text stays, as plain text).
    let mut dropped = Vec::new();
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
    fn dataset_references_become_links() {
        assert_eq!(
            render_with_site("see dataset:my-data.", "http://x"),
            r#"<p>see <a href="http://x/dataset/my-data">dataset:my-data</a>.</p>"#
        );
        assert_eq!(render("nodataset:ab"), "<p>nodataset:ab</p>");
    }
}
