//! ckanext-dcat's `Accept` parsing (spec/dcat.md §2).

use crate::rdf::RdfFormat;

/// How many items of an `Accept` header are read.
const MAX_ITEMS: usize = 64;

/// What a request's `Accept` header asks for: an RDF format, or the HTML page.
///
/// Items are `type[;q=N]`; an item with any other parameter is ignored. Items are sorted by q
/// (stable), then walked: `text/html` stops the walk (HTML); an exact RDF media type wins;
/// `application/*` gives RDF/XML and `text/*` N3; `*/*` never matches.
pub fn negotiate(accept: &str) -> Option<RdfFormat> {
    let mut items: Vec<(String, f32, usize)> = Vec::new();
    // Only the first items count: a header of thousands of types must not cost quadratic time.
    for (i, raw) in accept.split(',').take(MAX_ITEMS).enumerate() {
        let mut parts = raw.split(';').map(str::trim);
        let Some(mt) = parts.next().filter(|m| !m.is_empty()) else {
            continue;
        };
        let mut q = 1.0_f32;
        let mut ok = true;
        for param in parts {
            match param.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                Some(("q", v)) => match v.parse::<f32>() {
                    Ok(x) if (0.0..=1.0).contains(&x) => q = x,
                    _ => ok = false,
                },
                _ => ok = false,
            }
        }
        if !ok {
            continue;
        }
        let mt = mt.to_ascii_lowercase();
        items.retain(|(m, _, _)| *m != mt);
        items.push((mt, q, i));
    }
    items.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    for (mt, q, _) in items {
        if q <= 0.0 {
            continue;
        }
        if mt == "text/html" {
            return None;
        }
        if let Some(f) = RdfFormat::from_media_type(&mt) {
            return Some(f);
        }
        match mt.as_str() {
            "application/*" => return Some(RdfFormat::RdfXml),
            "text/*" => return Some(RdfFormat::N3),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_accept_cases() {
        let cases = [
            ("text/turtle", Some(RdfFormat::Turtle)),
            (
                "text/csv;q=1.0, text/turtle;q=0.6, application/ld+json;q=0.3",
                Some(RdfFormat::Turtle),
            ),
            ("image/gif", None),
            (
                "application/rdf+xml, application/ld+json",
                Some(RdfFormat::RdfXml),
            ),
            ("image/gif;q=1.0, text/html;q=0.8, text/turtle;q=0.6", None),
            ("*/*", None),
            (
                "application/ld+json;q=0.5, text/n3;q=0.9",
                Some(RdfFormat::N3),
            ),
            ("text/turtle;charset=utf-8", None),
            ("application/*", Some(RdfFormat::RdfXml)),
            ("text/*", Some(RdfFormat::N3)),
            ("", None),
            ("text/turtle;q=0", None),
        ];
        for (accept, want) in cases {
            assert_eq!(negotiate(accept), want, "{accept}");
        }
    }
}
