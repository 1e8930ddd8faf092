//! JSON text as CKAN writes it: Python's `json.dumps` layout, a space after every `:` and `,`
//! (`{"help": "…", "success": true}`). Scripts that match the text of an answer
//! (`grep '"success": true'`, CKAN's own tests) depend on it; parsers do not care. Used for
//! every answer of the Action API and the legacy API (DCAT's JSON-LD keeps its own layout).

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

/// serde_json's compact output with `", "` and `": "` as separators.
struct CkanFormatter;

/// The separator before an item of a list or a member of an object: none before the first.
#[inline]
fn separator<W: ?Sized + io::Write>(w: &mut W, first: bool) -> io::Result<()> {
    if first {
        Ok(())
    } else {
        w.write_all(b", ")
    }
}

impl Formatter for CkanFormatter {
    #[inline]
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        separator(w, first)
    }

    #[inline]
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        separator(w, first)
    }

    #[inline]
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// Appends `value` in CKAN's layout to `out`.
fn write_ckan_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let mut ser = Serializer::with_formatter(out, CkanFormatter);
    // Serializing a `Value` (or a type of ours) into memory cannot fail: no I/O, string keys.
    if let Err(e) = value.serialize(&mut ser) {
        tracing::error!(error = %e, "a value could not be written as JSON");
    }
}

/// `value` in CKAN's layout.
pub fn to_ckan_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_ckan_json(&mut out, value);
    out
}

/// `value` in CKAN's layout, as a string.
pub fn to_ckan_json_string<T: Serialize + ?Sized>(value: &T) -> String {
    // The serializer writes valid UTF-8 only.
    String::from_utf8(to_ckan_json(value)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn separators_are_followed_by_a_space_as_in_python() {
        let v = json!({"help": "h", "success": true, "result": {"a": [1, 2, {"b": null}], "e": {}, "l": []}});
        assert_eq!(
            to_ckan_json_string(&v),
            r#"{"help": "h", "success": true, "result": {"a": [1, 2, {"b": null}], "e": {}, "l": []}}"#
        );
    }

    #[test]
    fn strings_keep_their_own_separators_and_escapes() {
        let v = json!({"k": "a,b:c \"q\" </script> é"});
        let text = to_ckan_json_string(&v);
        assert_eq!(text, r#"{"k": "a,b:c \"q\" </script> é"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
