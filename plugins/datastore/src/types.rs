//! Field names and types: CKAN's rules for names, the PostgreSQL type names CKAN accepts and
//! reports, each type's column on both stores, and turning a record's JSON value into a
//! checked value (with PostgreSQL's messages when it is not one) and a stored one back.

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Int,
    Float,
    Numeric,
    Bool,
    Date,
    Time,
    Timestamp,
    Json,
    /// An array of the inner kind (kept as a JSON array).
    Array(Inner),
}

/// What an array holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inner {
    Text,
    Int,
    Float,
}

/// A field type: its kind and the name CKAN reports (PostgreSQL's `typname`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldType {
    pub(crate) kind: Kind,
    pub(crate) reported: &'static str,
}

/// The type a field's `type` names, or `None` (CKAN: `"<t>" is not a valid field type`).
pub(crate) fn parse_type(name: &str) -> Option<FieldType> {
    let t = name.trim().to_ascii_lowercase();
    let (kind, reported) = match t.as_str() {
        "text" | "varchar" | "character varying" | "string" => (Kind::Text, "text"),
        "int" | "integer" | "int4" => (Kind::Int, "int4"),
        "smallint" | "int2" => (Kind::Int, "int2"),
        "bigint" | "int8" => (Kind::Int, "int8"),
        "numeric" | "decimal" | "number" => (Kind::Numeric, "numeric"),
        "float" | "float8" | "double precision" => (Kind::Float, "float8"),
        "real" | "float4" => (Kind::Float, "float4"),
        "bool" | "boolean" => (Kind::Bool, "bool"),
        "date" => (Kind::Date, "date"),
        "time" => (Kind::Time, "time"),
        "timestamp" | "timestamp without time zone" | "timestamptz" => {
            (Kind::Timestamp, "timestamp")
        }
        "json" | "jsonb" | "nested" => (Kind::Json, "json"),
        "_text" | "text[]" => (Kind::Array(Inner::Text), "_text"),
        "_int4" | "int[]" | "integer[]" | "int4[]" => (Kind::Array(Inner::Int), "_int4"),
        "_int8" | "bigint[]" | "int8[]" => (Kind::Array(Inner::Int), "_int8"),
        "_float8" | "float8[]" | "float[]" | "double precision[]" => {
            (Kind::Array(Inner::Float), "_float8")
        }
        "_numeric" | "numeric[]" => (Kind::Array(Inner::Float), "_numeric"),
        _ => return None,
    };
    Some(FieldType { kind, reported })
}

impl FieldType {
    /// The column's SQL type on `backend`.
    pub(crate) fn column_sql(&self, backend: Backend) -> &'static str {
        match (backend, self.kind) {
            (Backend::Postgres, Kind::Text) => "text",
            (Backend::Postgres, Kind::Int) => "bigint",
            (Backend::Postgres, Kind::Float) => "double precision",
            (Backend::Postgres, Kind::Numeric) => "numeric",
            (Backend::Postgres, Kind::Bool) => "boolean",
            (Backend::Postgres, Kind::Date) => "date",
            (Backend::Postgres, Kind::Time) => "time",
            (Backend::Postgres, Kind::Timestamp) => "timestamp",
            (Backend::Postgres, Kind::Json | Kind::Array(_)) => "jsonb",
            (Backend::Sqlite, Kind::Int | Kind::Bool) => "INTEGER",
            (Backend::Sqlite, Kind::Float | Kind::Numeric) => "REAL",
            (Backend::Sqlite, _) => "TEXT",
        }
    }

    /// The placeholder `$n` as this column takes it on `backend` (PostgreSQL casts the text
    /// of dates, times and JSON).
    pub(crate) fn placeholder(&self, backend: Backend, n: usize) -> String {
        match (backend, self.kind) {
            (Backend::Postgres, Kind::Date) => format!("CAST(${n} AS date)"),
            (Backend::Postgres, Kind::Time) => format!("CAST(${n} AS time)"),
            (Backend::Postgres, Kind::Timestamp) => format!("CAST(${n} AS timestamp)"),
            (Backend::Postgres, Kind::Numeric) => format!("CAST(${n} AS numeric)"),
            (Backend::Postgres, Kind::Json | Kind::Array(_)) => format!("CAST(${n} AS jsonb)"),
            _ => format!("${n}"),
        }
    }

    /// PostgreSQL's name of the type in its input-syntax message.
    fn pg_name(&self) -> &'static str {
        match self.kind {
            Kind::Text => "text",
            Kind::Int => match self.reported {
                "int8" => "bigint",
                "int2" => "smallint",
                _ => "integer",
            },
            Kind::Float => "double precision",
            Kind::Numeric => "numeric",
            Kind::Bool => "boolean",
            Kind::Date => "date",
            Kind::Time => "time without time zone",
            Kind::Timestamp => "timestamp without time zone",
            Kind::Json => "json",
            Kind::Array(_) => "array",
        }
    }
}

/// CKAN's `is_valid_field_name`: not empty, no surrounding spaces, not starting with `_`, no
/// `"`, no control characters.
pub(crate) fn valid_field_name(name: &str) -> bool {
    !name.is_empty()
        && name.trim() == name
        && !name.starts_with('_')
        && !name.contains('"')
        && !name.chars().any(char::is_control)
}

/// An identifier quoted for SQL (names are checked first; the quoting makes any name safe).
pub(crate) fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A value ready to bind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// PostgreSQL's message for text a type does not take.
fn bad_input(t: &FieldType, raw: &str) -> String {
    format!("invalid input syntax for type {}: \"{raw}\"", t.pg_name())
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A record's value for a column of type `t`: checked, in the stored form. An empty string
/// in a column that is not text is NULL (CKAN 2.11+).
pub(crate) fn to_cell(t: &FieldType, v: &Value) -> Result<Cell, String> {
    if v.is_null() {
        return Ok(Cell::Null);
    }
    if t.kind != Kind::Text && v.as_str().is_some_and(|s| s.is_empty()) {
        return Ok(Cell::Null);
    }
    let raw = text_of(v);
    match t.kind {
        Kind::Text => Ok(Cell::Text(raw)),
        Kind::Int => match v {
            Value::Number(n) if n.is_i64() => Ok(Cell::Int(n.as_i64().unwrap_or_default())),
            Value::Bool(b) => Ok(Cell::Int(i64::from(*b))),
            _ => raw
                .trim()
                .parse::<i64>()
                .map(Cell::Int)
                .map_err(|_| bad_input(t, &raw)),
        },
        Kind::Float | Kind::Numeric => match v {
            Value::Number(n) => Ok(Cell::Float(n.as_f64().unwrap_or_default())),
            _ => raw
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Cell::Float)
                .ok_or_else(|| bad_input(t, &raw)),
        },
        Kind::Bool => match v {
            Value::Bool(b) => Ok(Cell::Bool(*b)),
            _ => match raw.trim().to_ascii_lowercase().as_str() {
                "t" | "true" | "y" | "yes" | "on" | "1" => Ok(Cell::Bool(true)),
                "f" | "false" | "n" | "no" | "off" | "0" => Ok(Cell::Bool(false)),
                _ => Err(bad_input(t, &raw)),
            },
        },
        Kind::Date => parse_date(&raw)
            .map(|d| Cell::Text(d.format("%Y-%m-%d").to_string()))
            .ok_or_else(|| bad_input(t, &raw)),
        Kind::Time => parse_time(&raw)
            .map(|d| Cell::Text(d.format("%H:%M:%S%.f").to_string()))
            .ok_or_else(|| bad_input(t, &raw)),
        Kind::Timestamp => parse_timestamp(&raw)
            .map(|d| Cell::Text(d.format("%Y-%m-%dT%H:%M:%S%.f").to_string()))
            .ok_or_else(|| bad_input(t, &raw)),
        Kind::Json => Ok(Cell::Text(v.to_string())),
        Kind::Array(inner) => {
            let Value::Array(items) = v else {
                return Err(format!("malformed array literal: \"{raw}\""));
            };
            let inner_type = FieldType {
                kind: match inner {
                    Inner::Text => Kind::Text,
                    Inner::Int => Kind::Int,
                    Inner::Float => Kind::Float,
                },
                reported: "",
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(match to_cell(&inner_type, item)? {
                    Cell::Null => Value::Null,
                    Cell::Text(s) => json!(s),
                    Cell::Int(i) => json!(i),
                    Cell::Float(f) => json!(f),
                    Cell::Bool(b) => json!(b),
                });
            }
            Ok(Cell::Text(Value::Array(out).to_string()))
        }
    }
}

fn parse_date(s: &str) -> Option<chrono::NaiveDate> {
    let s = s.trim();
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .or_else(|| parse_timestamp(s).map(|t| t.date()))
}

fn parse_time(s: &str) -> Option<chrono::NaiveTime> {
    let s = s.trim();
    ["%H:%M:%S%.f", "%H:%M"]
        .iter()
        .find_map(|f| chrono::NaiveTime::parse_from_str(s, f).ok())
}

fn parse_timestamp(s: &str) -> Option<chrono::NaiveDateTime> {
    let s = s.trim().trim_end_matches('Z');
    [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|f| chrono::NaiveDateTime::parse_from_str(s, f).ok())
    .or_else(|| {
        chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
    })
}

/// A stored value (read back as text) as the API gives it: numbers as numbers, booleans,
/// timestamps as `YYYY-MM-DDTHH:MM:SS`, JSON and arrays as JSON.
pub(crate) fn from_text(t: &FieldType, text: Option<String>) -> Value {
    let Some(s) = text else {
        return Value::Null;
    };
    match t.kind {
        Kind::Text | Kind::Date => Value::String(s),
        Kind::Int => s
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or(Value::String(s)),
        Kind::Float | Kind::Numeric => match s.parse::<f64>() {
            Ok(f) if f.fract() == 0.0 && f.abs() < 9e15 => json!(f as i64),
            Ok(f) => json!(f),
            Err(_) => Value::String(s),
        },
        Kind::Bool => json!(matches!(s.as_str(), "1" | "t" | "true")),
        Kind::Time => Value::String(
            parse_time(&s)
                .map(|t| t.format("%H:%M:%S").to_string())
                .unwrap_or(s),
        ),
        Kind::Timestamp => Value::String(
            parse_timestamp(&s)
                .map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
                .unwrap_or(s),
        ),
        Kind::Json | Kind::Array(_) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
    }
}

/// CKAN's type guess from the first record's value (`_guess_type`).
pub(crate) fn guess(v: &Value) -> Option<&'static str> {
    match v {
        Value::Null => None,
        Value::Bool(_) => Some("int"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("int"),
        Value::Number(_) => Some("float"),
        Value::Object(_) | Value::Array(_) => Some("json"),
        Value::String(s) => Some(if s.trim().parse::<i64>().is_ok() {
            "int"
        } else if s.trim().parse::<f64>().is_ok() {
            "numeric"
        } else if parse_timestamp(s).is_some() {
            "timestamp"
        } else {
            "text"
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_as_postgresql_reports_them() {
        assert_eq!(parse_type("integer").unwrap().reported, "int4");
        assert_eq!(parse_type("BIGINT").unwrap().reported, "int8");
        assert_eq!(parse_type("double precision").unwrap().reported, "float8");
        assert_eq!(parse_type("text[]").unwrap().reported, "_text");
        assert!(parse_type("int; drop table x").is_none());
    }

    #[test]
    fn field_names_follow_ckan() {
        assert!(valid_field_name("the year"));
        assert!(valid_field_name("42"));
        assert!(!valid_field_name("_id"));
        assert!(!valid_field_name(" padded"));
        assert!(!valid_field_name("a\"b"));
        assert!(!valid_field_name(""));
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn values_checked_with_postgresql_messages() {
        let int = parse_type("int").unwrap();
        assert_eq!(to_cell(&int, &json!("12")), Ok(Cell::Int(12)));
        assert_eq!(to_cell(&int, &json!("")), Ok(Cell::Null));
        assert_eq!(
            to_cell(&int, &json!("abc")),
            Err("invalid input syntax for type integer: \"abc\"".to_string())
        );
        let ts = parse_type("timestamp").unwrap();
        assert_eq!(
            to_cell(&ts, &json!("2014-01-02 03:04:05")),
            Ok(Cell::Text("2014-01-02T03:04:05".into()))
        );
        assert_eq!(
            from_text(&ts, Some("2014-01-02 03:04:05".into())),
            json!("2014-01-02T03:04:05")
        );
        let arr = parse_type("_int4").unwrap();
        assert_eq!(
            to_cell(&arr, &json!([1, "2"])),
            Ok(Cell::Text("[1,2]".into()))
        );
        assert!(to_cell(&arr, &json!("x")).is_err());
        assert_eq!(guess(&json!("2014-01-01")), Some("timestamp"));
        assert_eq!(guess(&json!("1.5")), Some("numeric"));
    }
}
