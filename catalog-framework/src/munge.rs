//! CKAN's name and tag munging (`ckan/lib/munge.py`, unchanged from 2.7 to master; spec §10.5):
//! what the legacy Util API's `/api/util/dataset/munge_name`, `…/munge_title_to_name`,
//! `…/tag/munge` and `…/dataset/create_slug` answer, and the URL name the web's dataset form
//! makes from a title. Every function works on characters and returns ASCII.

/// CKAN's `PACKAGE_NAME_MIN_LENGTH` / `PACKAGE_NAME_MAX_LENGTH`.
const NAME_MIN: usize = 2;
const NAME_MAX: usize = 100;
/// CKAN's `MIN_TAG_LENGTH` / `MAX_TAG_LENGTH`.
const TAG_MIN: usize = 2;
const TAG_MAX: usize = 100;

/// `substitute_ascii_equivalents`: Latin-1 letters become their ASCII look-alikes; every other
/// character at or above U+0080 is dropped; ASCII is kept as is.
pub fn substitute_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let s = match c as u32 {
            0xc0..=0xc5 => "A",
            0xc6 => "Ae",
            0xc7 => "C",
            0xc8..=0xcb => "E",
            0xcc..=0xcf => "I",
            0xd0 => "Th",
            0xd1 => "N",
            0xd2..=0xd6 | 0xd8 => "O",
            0xd9..=0xdc => "U",
            0xdd => "Y",
            0xde => "th",
            0xdf => "ss",
            0xe0..=0xe5 => "a",
            0xe6 => "ae",
            0xe7 => "c",
            0xe8..=0xeb => "e",
            0xec..=0xef => "i",
            0xf0 => "th",
            0xf1 => "n",
            0xf2..=0xf6 | 0xf8 => "o",
            0xf9..=0xfc => "u",
            0xfd | 0xff => "y",
            0xfe => "th",
            _ => "",
        };
        out.push_str(s);
    }
    out
}

/// `_munge_to_length`: pads with `_` up to `min`, cuts at `max` (the text is ASCII here).
fn to_length(mut s: String, min: usize, max: usize) -> String {
    while s.len() < min {
        s.push('_');
    }
    s.truncate(max);
    s
}

/// The steps `munge_name` and `munge_title_to_name` share: ASCII, each of space `.` `:` `/`
/// → `-`, only `[A-Za-z0-9_-]` kept, lower-cased.
fn name_chars(name: &str) -> String {
    substitute_ascii(name)
        .chars()
        .map(|c| {
            if matches!(c, ' ' | '.' | ':' | '/') {
                '-'
            } else {
                c
            }
        })
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `munge_name`: a dataset name from anything (no collapsing of dashes).
pub fn munge_name(name: &str) -> String {
    to_length(name_chars(name), NAME_MIN, NAME_MAX)
}

/// Whether `s` is CKAN's year-like tail: `\d{2,4}` optionally preceded by `\d{2,4}[-/]`.
fn is_year(s: &str) -> bool {
    let digits = |t: &str| (2..=4).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit());
    match s.split_once(['-', '/']) {
        Some((a, b)) => digits(a) && digits(b),
        None => digits(s),
    }
}

/// `munge_title_to_name`: as `munge_name`, then runs of `-` collapse, leading and trailing `-`
/// go, and a name longer than 95 characters keeps a trailing year-like word when it has one.
pub fn munge_title_to_name(title: &str) -> String {
    let chars = name_chars(title);
    let mut name = String::with_capacity(chars.len());
    for c in chars.chars() {
        if !(c == '-' && name.ends_with('-')) {
            name.push(c);
        }
    }
    let mut name = name.trim_matches('-').to_string();
    let max_length = NAME_MAX - 5;
    if name.len() > max_length {
        // `re.match('.*?[_-]((?:\d{2,4}[-/])?\d{2,4})$')`: the leftmost separator whose whole
        // tail is year-like.
        let year = name
            .char_indices()
            .filter(|(_, c)| matches!(c, '_' | '-'))
            .map(|(i, _)| &name[i + 1..])
            .find(|tail| is_year(tail))
            .map(str::to_string);
        match year {
            Some(year) => {
                let keep = max_length - year.len() - 1;
                name = format!("{}-{year}", &name[..keep]);
            }
            None => name.truncate(max_length),
        }
    }
    to_length(name, NAME_MIN, NAME_MAX)
}

/// Python's `str.strip()` whitespace among ASCII characters (it includes `\x1c`–`\x1f`).
fn py_space(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | '\x1c'..='\x1f'
    )
}

/// `munge_tag`: ASCII, lower-cased, stripped, only `[A-Za-z0-9 -]` kept (so `_` and `.` go),
/// each space → `-` (no collapsing).
pub fn munge_tag(tag: &str) -> String {
    let ascii = substitute_ascii(tag).to_ascii_lowercase();
    let tag: String = ascii
        .trim_matches(py_space)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect();
    to_length(tag, TAG_MIN, TAG_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The examples of CKAN's own `ckan/tests/lib/test_munge.py` (2.8 and master alike), each
    // also checked to be stable under a second pass where CKAN checks that.

    #[test]
    fn munge_name_as_ckan_tests() {
        let cases = [
            ("unchanged", "unchanged"),
            ("bad spaces", "bad-spaces"),
            ("s", "s_"),
            ("random:other%character&", "random-othercharacter"),
            ("u with umlaut \u{fc}", "u-with-umlaut-u"),
            (
                "2014-11-10 12:24:05.my_image",
                "2014-11-10-12-24-05-my_image",
            ),
        ];
        for (orig, expected) in cases {
            let first = munge_name(orig);
            assert_eq!(first, expected, "{orig}");
            assert_eq!(munge_name(&first), expected, "second pass of {orig}");
        }
    }

    #[test]
    fn munge_title_to_name_as_ckan_tests() {
        let long = "reallylong".repeat(12);
        let cases = [
            ("unchanged".to_string(), "unchanged".to_string()),
            (
                "some spaces  here    &here".into(),
                "some-spaces-here-here".into(),
            ),
            ("s".into(), "s_".into()),
            (
                "random:other%character&".into(),
                "random-othercharacter".into(),
            ),
            ("u with umlaut \u{fc}".into(), "u-with-umlaut-u".into()),
            (long.clone(), "reallylong".repeat(9) + "reall"),
            (long + " - 2012", "reallylong".repeat(9) + "-2012"),
            (
                "10cm - 50cm Near InfraRed (NI) Digital Aerial Photography (AfA142)".into(),
                "10cm-50cm-near-infrared-ni-digital-aerial-photography-afa142".into(),
            ),
        ];
        for (orig, expected) in cases {
            assert_eq!(munge_title_to_name(&orig), expected, "{orig}");
        }
    }

    #[test]
    fn munge_tag_as_ckan_tests() {
        let cases = [
            ("unchanged", "unchanged"),
            ("s", "s_"),
            ("some spaces  here", "some-spaces--here"),
            (
                "random:other%characters&_.here",
                "randomothercharactershere",
            ),
            ("river-water-dashes", "river-water-dashes"),
        ];
        for (orig, expected) in cases {
            let first = munge_tag(orig);
            assert_eq!(first, expected, "{orig}");
            assert_eq!(munge_tag(&first), expected, "second pass of {orig}");
        }
    }

    #[test]
    fn ascii_substitution() {
        assert_eq!(
            substitute_ascii("ÀÆÇÐÑØÞßàæçðñøþÿý"),
            "AAeCThNOthssaaecthnothyy"
        );
        // Everything else above U+007F is dropped, ASCII kept.
        assert_eq!(substitute_ascii("a\u{a9}b\u{30a1}c\u{1f600}~"), "abc~");
        assert_eq!(munge_name("Ünïcødé ✓"), "unicode-");
    }

    #[test]
    fn year_tails_and_lengths() {
        // A two-part year survives; the leftmost separator with a year-like tail is used.
        let t = format!("{} 2012/13", "word ".repeat(30));
        let n = munge_title_to_name(&t);
        assert!(n.ends_with("-2012-13"), "{n}");
        assert_eq!(n.len(), 95);
        // No year: cut at 95.
        assert_eq!(munge_title_to_name(&"x".repeat(300)).len(), 95);
        // munge_name cuts at 100 and pads to 2.
        assert_eq!(munge_name(&"y".repeat(300)).len(), 100);
        assert_eq!(munge_name(""), "__");
        assert_eq!(munge_tag(""), "__");
        assert_eq!(munge_title_to_name("--"), "__");
        // Python's strip() also takes \x1c–\x1f.
        assert_eq!(munge_tag("\x1f a b \t"), "a-b");
        assert!(is_year("12"));
        assert!(is_year("2012-13"));
        assert!(!is_year("2"));
        assert!(!is_year("20123"));
        assert!(!is_year("12-"));
    }
}
