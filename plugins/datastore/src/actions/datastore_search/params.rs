//! The parameters of `datastore_search`, as CKAN documents them (the help text), and the
//! shapes of those the search reads its own way.

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::typed::{any_text, AnyText, CsvList, Later, ParamType, Truthy};

use crate::params::Opt;

action_params! {
    /// Searches a resource's DataStore table.
    ///
    /// `filters`: {field: value or list of values}; `q`: full-text search (a string over
    /// every field, or {field: text}); `fields`, `sort` (`"a desc, b"`), `distinct`, `limit`
    /// (default 100, at most catalog.datastore.search.rows_max, 32,000), `offset`,
    /// `include_total` (default true), `records_format` (objects, lists, csv, tsv).
    pub struct DatastoreSearchParams {
        /// the resource's id
        resource_id: Option<AnyText>,
        /// alias of resource_id
        id: Opt<AnyText>,
        /// {field: value}; a list of values matches any of them
        filters: Later<FilterSpec>,
        /// full-text query: a string, or {field: text}
        q: Later<TextQuery>,
        /// full-text query over every field
        full_text: Option<AnyText>,
        /// accepted: the query is always plain text
        plain: Option<Truthy>,
        /// accepted: the text-search language is English
        language: Option<AnyText>,
        /// return each distinct row once
        distinct: Later<Truthy>,
        /// rows to return (default 100)
        limit: Later<Limit>,
        /// rows to skip
        offset: Later<Offset>,
        /// the fields to return (list or comma-separated)
        fields: Later<CsvList>,
        /// the order: "field [asc|desc][, …]"
        sort: Later<CsvList>,
        /// return the total (default true)
        include_total: Opt<Truthy>,
        /// accepted; the total is always exact
        total_estimation_threshold: Later<i64>,
        /// objects (default), lists, csv or tsv
        records_format: Later<RecordsFormat>,
    }
}

/// An integer as the search reads `limit` and `offset`: a JSON integer, or text that is
/// one (spaces around allowed); anything else, `""` and `5.0` too, is `Invalid integer`.
fn integer(v: &Value) -> Result<i64, Cow<'static, str>> {
    match v {
        Value::Number(n) => n.as_i64(),
        other => any_text(other).trim().parse::<i64>().ok(),
    }
    .ok_or_else(|| "Invalid integer".into())
}

fn integer_schema() -> Value {
    json!({"type": ["integer", "string"], "minimum": 0, "pattern": "^\\s*(\\+?[0-9]+|-0+)\\s*$"})
}

/// `limit`: an [`integer`] ≥ 0 (`Must be a natural number`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limit(pub i64);

impl ParamType for Limit {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match integer(v)? {
            n if n < 0 => Err("Must be a natural number".into()),
            n => Ok(Limit(n)),
        }
    }
    fn schema() -> Value {
        integer_schema()
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// `offset`: an [`integer`] ≥ 0 (`invalid value "-1"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Offset(pub i64);

impl ParamType for Offset {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match integer(v)? {
            n if n < 0 => Err(format!("invalid value \"{n}\"").into()),
            n => Ok(Offset(n)),
        }
    }
    fn schema() -> Value {
        integer_schema()
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// The formats of the records.
pub(crate) const RECORDS_FORMATS: [&str; 4] = ["objects", "lists", "csv", "tsv"];

/// `records_format`: one of [`RECORDS_FORMATS`] (a value other than a string as its text,
/// refused with the other unknown ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordsFormat(pub String);

impl ParamType for RecordsFormat {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let s = any_text(v);
        if RECORDS_FORMATS.contains(&s.as_str()) {
            Ok(RecordsFormat(s))
        } else {
            Err("Value must be one of ['objects', 'lists', 'csv', 'tsv']".into())
        }
    }
    fn schema() -> Value {
        json!({"type": "string", "enum": RECORDS_FORMATS})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// `filters` as sent: a value, or JSON text of one (a query string's `filters={"a":1}`;
/// text that is no JSON is `Cannot parse JSON`). What it says is checked against the table
/// (`crate::filters`), so the value stays as JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FilterSpec(pub Value);

impl ParamType for FilterSpec {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) => serde_json::from_str(s)
                .map(FilterSpec)
                .map_err(|_| "Cannot parse JSON".into()),
            other => Ok(FilterSpec(other.clone())),
        }
    }
    fn schema() -> Value {
        json!({"oneOf": [
            {"type": "object"},
            {"type": "array", "items": {"type": "object"}},
            {"type": "string", "description": "JSON text of the dict or list"},
        ]})
    }
    fn to_value(&self) -> Value {
        self.0.clone()
    }
}

/// `q`: a text over every field, or {field: text} (also as JSON text); never refused here
/// (the fields are checked against the table), and any other value is accepted and ignored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TextQuery {
    /// A text (that is no JSON object) over every field.
    Text(String),
    /// {field: text}, as sent (a value that is not text is refused with its field).
    Fields(Map<String, Value>),
    /// Another value (a number, a list …): no query.
    Ignored(Value),
}

impl ParamType for TextQuery {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(match v {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(m)) => TextQuery::Fields(m),
                _ => TextQuery::Text(s.clone()),
            },
            Value::Object(m) => TextQuery::Fields(m.clone()),
            other => TextQuery::Ignored(other.clone()),
        })
    }
    fn schema() -> Value {
        json!({"oneOf": [
            {"type": "string"},
            {"type": "object", "additionalProperties": {"type": "string"}},
        ]})
    }
    fn to_value(&self) -> Value {
        match self {
            TextQuery::Text(s) => json!(s),
            TextQuery::Fields(m) => Value::Object(m.clone()),
            TextQuery::Ignored(v) => v.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_and_offset_are_strict_integers() {
        assert_eq!(Limit::decode(&json!(" 5 ")).unwrap(), Limit(5));
        assert_eq!(Limit::decode(&json!(7)).unwrap(), Limit(7));
        for bad in [json!(""), json!(5.0), json!("x"), json!(true), json!([1])] {
            assert_eq!(Limit::decode(&bad).unwrap_err(), "Invalid integer");
        }
        assert_eq!(
            Limit::decode(&json!(-1)).unwrap_err(),
            "Must be a natural number"
        );
        assert_eq!(Offset::decode(&json!("3")).unwrap(), Offset(3));
        assert_eq!(
            Offset::decode(&json!("-2")).unwrap_err(),
            "invalid value \"-2\""
        );
        assert_eq!(Offset::decode(&json!("")).unwrap_err(), "Invalid integer");
    }

    #[test]
    fn records_format_is_one_of_four() {
        assert_eq!(RecordsFormat::decode(&json!("csv")).unwrap().0, "csv");
        for bad in [json!(""), json!("CSV"), json!(1)] {
            assert!(RecordsFormat::decode(&bad).is_err());
        }
    }

    #[test]
    fn filters_may_come_as_json_text() {
        assert_eq!(
            FilterSpec::decode(&json!("{\"a\": 1}")).unwrap().0,
            json!({"a": 1})
        );
        assert_eq!(FilterSpec::decode(&json!("null")).unwrap().0, Value::Null);
        assert_eq!(
            FilterSpec::decode(&json!([{"a": 1}])).unwrap().0,
            json!([{"a": 1}])
        );
        assert_eq!(
            FilterSpec::decode(&json!("{")).unwrap_err(),
            "Cannot parse JSON"
        );
        assert_eq!(
            FilterSpec::decode(&json!("")).unwrap_err(),
            "Cannot parse JSON"
        );
    }

    #[test]
    fn a_text_query_is_text_fields_or_ignored() {
        assert_eq!(
            TextQuery::decode(&json!("ber")).unwrap(),
            TextQuery::Text("ber".into())
        );
        assert_eq!(
            TextQuery::decode(&json!("5")).unwrap(),
            TextQuery::Text("5".into())
        );
        let f = TextQuery::decode(&json!("{\"city\": \"b\"}")).unwrap();
        assert_eq!(f.to_value(), json!({"city": "b"}));
        assert!(matches!(
            TextQuery::decode(&json!({"c": 1})).unwrap(),
            TextQuery::Fields(_)
        ));
        assert_eq!(
            TextQuery::decode(&json!(5)).unwrap(),
            TextQuery::Ignored(json!(5))
        );
        assert_eq!(
            TextQuery::decode(&json!([1])).unwrap().to_value(),
            json!([1])
        );
    }
}
