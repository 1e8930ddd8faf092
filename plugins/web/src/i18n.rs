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

/// One locale's messages: the singular ones, the plural ones (`msgid` → its `msgstr[i]`
/// forms) and the rule that picks a form for a count (its header's `Plural-Forms`).
#[derive(Default)]
pub(crate) struct Catalog {
    messages: HashMap<String, String>,
    plurals: HashMap<String, Vec<String>>,
    rule: Option<plural::Rule>,
}

/// Every locale's messages.
pub(crate) struct Catalogs {
    catalogs: HashMap<&'static str, Catalog>,
}

impl Catalogs {
    pub(crate) fn load() -> Catalogs {
        let catalogs = LOCALES
            .iter()
            .map(|l| (l.code, l.po.map(parse_catalog).unwrap_or_default()))
            .collect();
        Catalogs { catalogs }
    }

    /// `msgid` in `locale`, or `msgid` itself.
    pub(crate) fn get<'a>(&'a self, locale: &str, msgid: &'a str) -> &'a str {
        self.catalogs
            .get(locale)
            .and_then(|c| c.messages.get(msgid))
            .map_or(msgid, String::as_str)
    }

    /// The form of a message for the count `n` in `locale` (gettext's `ngettext`): the
    /// catalog's form its plural rule picks, else English's (`singular` for 1, else `plural`).
    pub(crate) fn nget<'a>(
        &'a self,
        locale: &str,
        singular: &'a str,
        plural: &'a str,
        n: u64,
    ) -> &'a str {
        let translated = self.catalogs.get(locale).and_then(|c| {
            let forms = c.plurals.get(singular)?;
            let i = c.rule.as_ref()?.form(n);
            forms.get(i).filter(|f| !f.is_empty())
        });
        match translated {
            Some(f) => f,
            None if n == 1 => singular,
            None => plural,
        }
    }

    /// The msgids a locale translates, singular and plural (for the completeness test).
    #[cfg(test)]
    pub(crate) fn translated(&self, locale: &str) -> Vec<&str> {
        let c = &self.catalogs[locale];
        c.messages
            .keys()
            .chain(c.plurals.keys())
            .map(String::as_str)
            .collect()
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

/// A `.po` text's entries (`msgid` → `msgstr`, comments, continued strings and C escapes
/// handled; `msgctxt` is not used here), its plural entries (`msgid_plural` with `msgstr[0]`…, an entry
/// with any form untranslated left out) and its header's `Plural-Forms` rule.
fn parse_catalog(text: &str) -> Catalog {
    #[derive(Default)]
    struct Entry {
        id: Option<String>,
        plural: Option<String>,
        strs: Vec<String>,
    }
    let mut catalog = Catalog::default();
    let mut header = String::new();
    let mut finish = |e: &mut Entry, catalog: &mut Catalog| {
        let e = std::mem::take(e);
        let Some(id) = e.id else { return };
        if id.is_empty() {
            header = e.strs.into_iter().next().unwrap_or_default();
        } else if e.plural.is_some() {
            if !e.strs.is_empty() && e.strs.iter().all(|s| !s.is_empty()) {
                catalog.plurals.insert(id, e.strs);
            }
        } else if let Some(m) = e.strs.into_iter().next().filter(|m| !m.is_empty()) {
            catalog.messages.insert(id, m);
        }
    };
    let mut entry = Entry::default();
    // Which string a continued `"…"` line extends: 0 msgid, 1 msgid_plural, 2 a msgstr.
    let mut current = None::<u8>;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("msgid_plural ") {
            entry.plural = Some(unquote(rest));
            current = Some(1);
        } else if let Some(rest) = line.strip_prefix("msgid ") {
            finish(&mut entry, &mut catalog);
            entry.id = Some(unquote(rest));
            current = Some(0);
        } else if let Some(rest) = line.strip_prefix("msgstr") {
            // `msgstr "…"` or `msgstr[i] "…"` (forms in order).
            let rest = match rest.strip_prefix('[') {
                Some(r) => r.split_once(']').map_or("", |(_, r)| r),
                None => rest,
            };
            entry.strs.push(unquote(rest));
            current = Some(2);
        } else if line.starts_with('"') {
            let target = match current {
                Some(0) => entry.id.as_mut(),
                Some(1) => entry.plural.as_mut(),
                Some(_) => entry.strs.last_mut(),
                None => None,
            };
            if let Some(s) = target {
                s.push_str(&unquote(line));
            }
        } else if line.is_empty() || line.starts_with('#') {
            current = None;
        }
    }
    finish(&mut entry, &mut catalog);
    catalog.rule = header
        .lines()
        .find_map(|l| l.trim().strip_prefix("Plural-Forms:"))
        .and_then(|f| f.split(';').find_map(|p| p.trim().strip_prefix("plural=")))
        .and_then(plural::Rule::parse);
    catalog
}

/// gettext's plural rules: the C expression of a `Plural-Forms` header over `n` (`?:`, `||`,
/// `&&`, comparisons, `+ - * / %`, `!`, parentheses), parsed once and evaluated per count.
mod plural {
    #[derive(Debug)]
    pub(crate) enum Rule {
        N,
        Num(u64),
        Not(Box<Rule>),
        Bin(&'static str, Box<Rule>, Box<Rule>),
        If(Box<Rule>, Box<Rule>, Box<Rule>),
    }

    /// Binary operators by precedence, loosest first.
    const LEVELS: &[&[&str]] = &[
        &["||"],
        &["&&"],
        &["==", "!="],
        &["<=", ">=", "<", ">"],
        &["+", "-"],
        &["*", "/", "%"],
    ];

    impl Rule {
        /// The rule of a `plural=` expression; none if it does not parse (or nests past 64).
        pub(crate) fn parse(text: &str) -> Option<Rule> {
            let mut p = Parser {
                s: text.trim().trim_end_matches(';').as_bytes(),
                at: 0,
            };
            let r = p.ternary(0)?;
            p.skip();
            (p.at == p.s.len()).then_some(r)
        }

        /// The form for the count `n`.
        pub(crate) fn form(&self, n: u64) -> usize {
            usize::try_from(self.eval(n)).unwrap_or(0)
        }

        fn eval(&self, n: u64) -> u64 {
            match self {
                Rule::N => n,
                Rule::Num(v) => *v,
                Rule::Not(a) => u64::from(a.eval(n) == 0),
                Rule::If(c, a, b) => {
                    if c.eval(n) != 0 {
                        a.eval(n)
                    } else {
                        b.eval(n)
                    }
                }
                Rule::Bin(op, a, b) => {
                    let (a, b) = (a.eval(n), b.eval(n));
                    match *op {
                        "||" => u64::from(a != 0 || b != 0),
                        "&&" => u64::from(a != 0 && b != 0),
                        "==" => u64::from(a == b),
                        "!=" => u64::from(a != b),
                        "<=" => u64::from(a <= b),
                        ">=" => u64::from(a >= b),
                        "<" => u64::from(a < b),
                        ">" => u64::from(a > b),
                        "+" => a.wrapping_add(b),
                        "-" => a.wrapping_sub(b),
                        "*" => a.wrapping_mul(b),
                        "/" => a.checked_div(b).unwrap_or(0),
                        _ => a.checked_rem(b).unwrap_or(0),
                    }
                }
            }
        }
    }

    struct Parser<'a> {
        s: &'a [u8],
        at: usize,
    }

    impl Parser<'_> {
        fn skip(&mut self) {
            while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
                self.at += 1;
            }
        }

        fn eat(&mut self, tok: &str) -> bool {
            self.skip();
            if self.s[self.at..].starts_with(tok.as_bytes()) {
                self.at += tok.len();
                true
            } else {
                false
            }
        }

        fn ternary(&mut self, depth: usize) -> Option<Rule> {
            if depth > 64 {
                return None;
            }
            let c = self.binary(0, depth)?;
            if !self.eat("?") {
                return Some(c);
            }
            let a = self.ternary(depth + 1)?;
            if !self.eat(":") {
                return None;
            }
            let b = self.ternary(depth + 1)?;
            Some(Rule::If(Box::new(c), Box::new(a), Box::new(b)))
        }

        fn binary(&mut self, level: usize, depth: usize) -> Option<Rule> {
            let Some(ops) = LEVELS.get(level) else {
                return self.unary(depth);
            };
            let mut left = self.binary(level + 1, depth)?;
            'more: loop {
                for op in ops.iter() {
                    if self.eat(op) {
                        let right = self.binary(level + 1, depth)?;
                        left = Rule::Bin(op, Box::new(left), Box::new(right));
                        continue 'more;
                    }
                }
                return Some(left);
            }
        }

        fn unary(&mut self, depth: usize) -> Option<Rule> {
            if depth > 64 {
                return None;
            }
            if self.eat("!") {
                return Some(Rule::Not(Box::new(self.unary(depth + 1)?)));
            }
            if self.eat("(") {
                let r = self.ternary(depth + 1)?;
                return self.eat(")").then_some(r);
            }
            if self.eat("n") {
                return Some(Rule::N);
            }
            self.skip();
            let start = self.at;
            while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
                self.at += 1;
            }
            std::str::from_utf8(&self.s[start..self.at])
                .ok()?
                .parse()
                .ok()
                .map(Rule::Num)
        }
    }
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
        let m = parse_catalog(po).messages;
        assert_eq!(m["Datasets"], "Datensätze");
        assert_eq!(m["A \"quoted\" word"], "Ein \"zitiertes\" Wort");
        assert!(!m.contains_key("Untranslated"));
        assert!(!m.contains_key(""));
    }

    #[test]
    fn plural_forms_pick_the_form_of_each_count() {
        let po =
            "msgid \"\"\nmsgstr \"\"\n\"Plural-Forms: nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : \
                  n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5;\\n\"\n\n\
                  msgid \"{n} dataset\"\nmsgid_plural \"{n} datasets\"\n\
                  msgstr[0] \"z\"\nmsgstr[1] \"o\"\nmsgstr[2] \"t\"\nmsgstr[3] \"f\"\n\
                  msgstr[4] \"m\"\nmsgstr[5] \"h\"\n";
        let c = parse_catalog(po);
        let rule = c.rule.as_ref().expect("a rule");
        let forms: Vec<usize> = [0, 1, 2, 3, 10, 11, 99, 100, 102, 103]
            .iter()
            .map(|n| rule.form(*n))
            .collect();
        assert_eq!(forms, [0, 1, 2, 3, 3, 4, 4, 5, 5, 3]);
        assert_eq!(c.plurals["{n} dataset"].len(), 6);
        let german = plural::Rule::parse("(n != 1)").unwrap();
        assert_eq!((german.form(1), german.form(0), german.form(5)), (0, 1, 1));
        assert!(plural::Rule::parse("n ==").is_none());
        assert!(plural::Rule::parse(&"(".repeat(500)).is_none());
        // The shipped catalogs: English by its own rule, German and Arabic by theirs.
        let cats = Catalogs::load();
        let one = |l, n| cats.nget(l, "{n} dataset", "{n} datasets", n).to_string();
        assert_eq!(
            (one("en", 1), one("en", 2)),
            ("{n} dataset".into(), "{n} datasets".into())
        );
        assert_eq!(
            (one("de", 1), one("de", 0)),
            ("{n} Datensatz".into(), "{n} Datensätze".into())
        );
        assert_ne!(one("ar", 2), one("ar", 3));
        assert_ne!(one("ar", 3), one("ar", 11));
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
        let missing: Vec<String> = crate::built_in::messages_in_templates()
            .into_iter()
            .filter(|m| !translated.contains(m.as_str()))
            .collect();
        assert!(missing.is_empty(), "untranslated in de.po: {missing:#?}");
    }
}
