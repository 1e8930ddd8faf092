//! Escaping for the markup the service writes, in one place: HTML text and attributes, XML
//! text and attributes, JSON inside a `<script>`. Each function says whose output it matches,
//! since pages, feeds and dumps are compared with CKAN's byte for byte.
//!
//! ```
//! use catalog_framework::escape;
//! assert_eq!(escape::html("<a href=\"x\">O'Brien & co</a>"),
//!            "&lt;a href=&quot;x&quot;&gt;O&#39;Brien &amp; co&lt;/a&gt;");
//! assert_eq!(escape::script_json(r#"{"t":"</script>"}"#), r#"{"t":"\u003c/script\u003e"}"#);
//! ```

use std::fmt::{self, Write};

/// How one character is written (`Some("")` leaves it out), or `None` to write it as it is.
type Rule = fn(char) -> Option<&'static str>;

fn write_with(out: &mut impl Write, s: &str, rule: Rule) -> fmt::Result {
    let mut last = 0;
    for (i, c) in s.char_indices() {
        if let Some(esc) = rule(c) {
            out.write_str(&s[last..i])?;
            out.write_str(esc)?;
            last = i + c.len_utf8();
        }
    }
    out.write_str(&s[last..])
}

fn with(s: &str, rule: Rule) -> String {
    let mut out = String::with_capacity(s.len());
    // Writing to a String cannot fail.
    let _ = write_with(&mut out, s, rule);
    out
}

fn markup(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        _ => None,
    }
}

fn html_rule(c: char) -> Option<&'static str> {
    match c {
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        c => markup(c),
    }
}

fn jinja_rule(c: char) -> Option<&'static str> {
    match c {
        '"' => Some("&#34;"),
        '\'' => Some("&#39;"),
        c => markup(c),
    }
}

fn python_rule(c: char) -> Option<&'static str> {
    match c {
        '"' => Some("&quot;"),
        '\'' => Some("&#x27;"),
        c => markup(c),
    }
}

/// Characters XML 1.0 cannot hold at all: controls other than tab and line ends, U+FFFE and
/// U+FFFF.
fn not_xml(c: char) -> bool {
    ((c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
}

fn xml_text_rule(c: char) -> Option<&'static str> {
    if not_xml(c) {
        return Some("");
    }
    markup(c)
}

fn xml_attr_rule(c: char) -> Option<&'static str> {
    match c {
        '"' => Some("&quot;"),
        '\n' => Some("&#10;"),
        c => xml_text_rule(c),
    }
}

fn script_rule(c: char) -> Option<&'static str> {
    match c {
        '<' => Some("\\u003c"),
        '>' => Some("\\u003e"),
        '&' => Some("\\u0026"),
        _ => None,
    }
}

/// HTML text or a quoted attribute value: `& < > " '` as `&amp; &lt; &gt; &quot; &#39;`.
/// What the pages, the sitemap and the DCAT endpoints' HTML write.
pub fn html(s: &str) -> String {
    with(s, html_rule)
}

/// [`html`], written to `out` as it goes (a template engine's output).
pub fn write_html(out: &mut impl Write, s: &str) -> fmt::Result {
    write_with(out, s, html_rule)
}

/// HTML as CKAN's Jinja templates escape it (markupsafe): `"` as `&#34;`, `'` as `&#39;`. For
/// HTML compared with CKAN's own (the activity snippets).
pub fn jinja(s: &str) -> String {
    with(s, jinja_rule)
}

/// HTML as Python's `html.escape` writes it: `"` as `&quot;`, `'` as `&#x27;`. What CKAN's API
/// does to a JSONP callback name.
pub fn python_html(s: &str) -> String {
    with(s, python_rule)
}

/// XML text as Python's ElementTree writes it (`& < >`), with the characters XML 1.0 cannot
/// hold left out. The DataStore's XML dump.
pub fn xml_text(s: &str) -> String {
    with(s, xml_text_rule)
}

/// An XML attribute value as ElementTree writes it: [`xml_text`] and `"` as `&quot;`, a line
/// feed as `&#10;`.
pub fn xml_attr(s: &str) -> String {
    with(s, xml_attr_rule)
}

/// JSON placed inside `<script>`: `<`, `>` and `&` as `\u` escapes, so no text in it closes
/// the element or starts a comment.
pub fn script_json(json: &str) -> String {
    with(json, script_rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flavour_writes_what_its_model_writes() {
        let s = "a&b<c>d\"e'f";
        assert_eq!(html(s), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
        assert_eq!(jinja(s), "a&amp;b&lt;c&gt;d&#34;e&#39;f");
        assert_eq!(python_html(s), "a&amp;b&lt;c&gt;d&quot;e&#x27;f");
        assert_eq!(xml_text(s), "a&amp;b&lt;c&gt;d\"e'f");
        assert_eq!(xml_attr("x\"\ny"), "x&quot;&#10;y");
        assert_eq!(xml_text("a\u{1}b\u{fffe}c\td\u{e9}"), "abc\td\u{e9}");
        assert_eq!(script_json("<&>"), "\\u003c\\u0026\\u003e");
        let mut out = String::new();
        write_html(&mut out, "é<").unwrap();
        assert_eq!(out, "é&lt;");
    }
}
