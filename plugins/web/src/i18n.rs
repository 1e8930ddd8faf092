//! Message catalogs in gettext's `.po` format, written by us: `msgid` is the English text,
//! `msgstr` its translation (an empty or missing one falls back to English). The locale of a
//! page comes from its `/<locale>/` URL prefix, else from `Accept-Language`, else
//! `catalog.locale_default`, as in CKAN.

use std::collections::HashMap;

/// The locales the pages speak, with their catalog (`None`: English, the source language)
/// and writing direction.
pub(crate) const LOCALES: &[Locale] = &[
    Locale {
        code: "en",
        name: "English",
        rtl: false,
        po: None,
    },
    Locale {
        code: "de",
        name: "Deutsch",
        rtl: false,
        po: Some(include_str!("../i18n/de.po")),
    },
    Locale {
        code: "ar",
        name: "العربية",
        rtl: true,
        po: Some(include_str!("../i18n/ar.po")),
    },
];

pub(crate) struct Locale {
    pub(crate) code: &'static str,
    pub(crate) name: &'static str,
    pub(crate) rtl: bool,
    po: Option<&'static str>,
}

/// Every locale's messages.
pub(crate) struct Catalogs {
    messages: HashMap<&'static str, HashMap<String, String>>,
}

impl Catalogs {
    pub(crate) fn load() -> Catalogs {
        let messages = LOCALES
            .iter()
            .map(|l| (l.code, l.po.map(parse_po).unwrap_or_default()))
            .collect();
        Catalogs { messages }
    }

    /// `msgid` in `locale`, or `msgid` itself.
    pub(crate) fn get<'a>(&'a self, locale: &str, msgid: &'a str) -> &'a str {
        self.messages
            .get(locale)
            .and_then(|m| m.get(msgid))
            .map_or(msgid, String::as_str)
    }

    /// The msgids a locale translates (for the completeness test).
    #[cfg(test)]
    pub(crate) fn translated(&self, locale: &str) -> Vec<&str> {
        self.messages[locale].keys().map(String::as_str).collect()
    }
}

/// The URL prefixes pages are served under: none (any locale, by `Accept-Language`) and
/// `/<code>` for every locale but English.
pub(crate) fn prefixes() -> impl Iterator<Item = String> {
    std::iter::once(String::new()).chain(
        LOCALES
            .iter()
            .filter(|l| l.code != "en")
            .map(|l| format!("/{}", l.code)),
    )
}

pub(crate) fn locale(code: &str) -> Option<&'static Locale> {
    LOCALES.iter().find(|l| l.code == code)
}

/// The best of our locales for an `Accept-Language` header (quality values honoured, `de-AT`
/// matches `de`), if any.
pub(crate) fn from_accept_language(header: &str) -> Option<&'static Locale> {
    let mut ranked: Vec<(f32, usize, &'static Locale)> = Vec::new();
    for (i, part) in header.split(',').take(32).enumerate() {
        let mut bits = part.split(';');
        let tag = bits.next().unwrap_or_default().trim().to_ascii_lowercase();
        let q = bits
            .find_map(|b| b.trim().strip_prefix("q="))
            .and_then(|q| q.parse::<f32>().ok())
            .unwrap_or(1.0);
        let primary = tag.split('-').next().unwrap_or_default();
        if let Some(l) = locale(primary) {
            if q > 0.0 {
                ranked.push((q, i, l));
            }
        }
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.first().map(|r| r.2)
}

/// The entries of a `.po` text: `msgid` → `msgstr`, untranslated ones left out. Handles
/// comments, continued strings and C escapes; `msgctxt` and plural forms are not used here.
pub(crate) fn parse_po(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let (mut id, mut msg) = (None::<String>, None::<String>);
    let mut current: Option<&mut String> = None;
    let mut finish = |id: &mut Option<String>, msg: &mut Option<String>| {
        if let (Some(i), Some(m)) = (id.take(), msg.take()) {
            if !i.is_empty() && !m.is_empty() {
                out.insert(i, m);
            }
        }
    };
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("msgid ") {
            finish(&mut id, &mut msg);
            id = Some(unquote(rest));
            current = id.as_mut();
        } else if let Some(rest) = line.strip_prefix("msgstr ") {
            msg = Some(unquote(rest));
            current = msg.as_mut();
        } else if line.starts_with('"') {
            if let Some(s) = current.as_deref_mut() {
                s.push_str(&unquote(line));
            }
        } else if line.is_empty() || line.starts_with('#') {
            current = None;
        }
    }
    finish(&mut id, &mut msg);
    out
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    let s = s
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn po_entries_with_continuations_and_escapes() {
        let po = "# comment\nmsgid \"\"\nmsgstr \"Content-Type: text/plain\\n\"\n\n\
                  msgid \"Datasets\"\nmsgstr \"Datensätze\"\n\n\
                  msgid \"A \\\"quoted\\\" \"\n\"word\"\nmsgstr \"\"\n\"Ein \\\"zitiertes\\\" Wort\"\n\n\
                  msgid \"Untranslated\"\nmsgstr \"\"\n";
        let m = parse_po(po);
        assert_eq!(m["Datasets"], "Datensätze");
        assert_eq!(m["A \"quoted\" word"], "Ein \"zitiertes\" Wort");
        assert!(!m.contains_key("Untranslated"));
        assert!(!m.contains_key(""));
    }

    #[test]
    fn accept_language_by_quality() {
        assert_eq!(
            from_accept_language("fr, de-AT;q=0.8, en;q=0.5")
                .unwrap()
                .code,
            "de"
        );
        assert_eq!(
            from_accept_language("en-GB,en;q=0.9,de;q=0.8")
                .unwrap()
                .code,
            "en"
        );
        assert!(from_accept_language("fr, it").is_none());
        assert!(from_accept_language("de;q=0").is_none());
    }

    #[test]
    fn german_is_complete_for_every_message_the_templates_use() {
        let catalogs = Catalogs::load();
        let translated: std::collections::HashSet<&str> =
            catalogs.translated("de").into_iter().collect();
        let missing: Vec<String> = crate::messages_in_templates()
            .into_iter()
            .filter(|m| !translated.contains(m.as_str()))
            .collect();
        assert!(missing.is_empty(), "untranslated in de.po: {missing:#?}");
    }
}
