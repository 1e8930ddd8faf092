//! `filters` as CKAN 2.12 reads them (ckanext/datastore/filters.py): `{field: value}` (equal),
//! `{field: [values]}` (any of them), `{field: {"gt"|"gte"|"lt"|"lte"|"eq"|"in": value}}`, and
//! `$and` / `$or` over lists of such dicts, nested at most 10 deep, at most 100 operations; a
//! list of dicts at the top is their `$or`. Errors are gathered and reported together under
//! `filters`, with CKAN's messages.

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;

use crate::table::Meta;
use crate::types::{self, parse_type, quote, to_cell, Cell};

const MAX_DEPTH: usize = 10;
const MAX_OPS: usize = 100;
/// Values all filters together may give (each is a bound parameter; the stores take at most
/// 32,766 / 65,535 in a statement).
const MAX_VALUES: usize = 10_000;

/// One parsed operation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FilterOp {
    And(Vec<FilterOp>),
    Or(Vec<FilterOp>),
    Field {
        field: String,
        op: String,
        value: Value,
    },
}

fn too_many() -> CkanError {
    validation()
        .field("filters", "Maximum number of filter operations exceeded")
        .build()
}

/// Python's `repr` of a JSON value, near enough for messages (`{'a': 1}`, `['x']`, `True`).
fn repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::String(s) => format!("'{s}'"),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(repr).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("'{k}': {}", repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

struct Parser<'m> {
    meta: &'m Meta,
    errors: Vec<String>,
    ops: usize,
}

fn is_operator(key: &str) -> bool {
    key.starts_with('$') && !key.starts_with("$$")
}

fn list_of_dicts(v: &Value) -> bool {
    matches!(v, Value::Array(a) if a.iter().all(Value::is_object))
}

impl Parser<'_> {
    fn op(&mut self, op: FilterOp) -> CkanResult<FilterOp> {
        self.ops += 1;
        if self.ops > MAX_OPS {
            return Err(too_many());
        }
        Ok(op)
    }

    fn check_operator(&mut self, key: &str, value: &Value) -> bool {
        if key != "$or" && key != "$and" {
            self.errors.push(format!(
                "Unknown operators (must be one of $or, $and): {key}"
            ));
            false
        } else if !list_of_dicts(value) {
            self.errors.push(format!(
                "Filter operations must be defined as a list of dicts: {}",
                repr(value)
            ));
            false
        } else {
            true
        }
    }

    /// Children of the same kind as `parent` are merged into it.
    fn combine(ops: Vec<FilterOp>, parent: &str) -> Vec<FilterOp> {
        let mut out = Vec::new();
        for op in ops {
            match (op, parent) {
                (FilterOp::And(inner), "$and") | (FilterOp::Or(inner), "$or") => out.extend(inner),
                (other, _) => out.push(other),
            }
        }
        out
    }

    fn group(parent: &str, children: Vec<FilterOp>) -> FilterOp {
        if parent == "$and" {
            FilterOp::And(children)
        } else {
            FilterOp::Or(children)
        }
    }

    fn members(&mut self, value: &Value, parent: &str, depth: usize) -> CkanResult<Vec<FilterOp>> {
        if depth >= MAX_DEPTH {
            return Err(validation()
                .field(
                    "filters",
                    "Maximum nesting depth for filter operations reached",
                )
                .build());
        }
        let Value::Array(items) = value else {
            self.errors.push(format!(
                "Filter operations must contain lists of filters: {}",
                repr(value)
            ));
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for item in items {
            let Value::Object(m) = item else {
                self.errors.push(format!(
                    "Filter operation members must be dictionaries: {}",
                    repr(item)
                ));
                continue;
            };
            if m.len() >= MAX_OPS {
                return Err(too_many());
            }
            let mut children = Vec::new();
            for (key, v) in m {
                if is_operator(key) {
                    if !self.check_operator(key, v) {
                        continue;
                    }
                    let inner = self.members(v, key, depth + 1)?;
                    let inner = Self::combine(inner, key);
                    if !inner.is_empty() {
                        let g = Self::group(key, inner);
                        children.push(self.op(g)?);
                    }
                } else if let Some(op) = self.field(key, v)? {
                    children.push(op);
                }
            }
            match children.len() {
                0 => {}
                1 => out.push(children.pop().expect("one")),
                _ => {
                    let g = FilterOp::And(Self::combine(children, "$and"));
                    out.push(self.op(g)?);
                }
            }
        }
        Ok(Self::combine(out, parent))
    }

    fn check_field(
        &mut self,
        field: &str,
        op: &str,
        value: &Value,
    ) -> CkanResult<Option<FilterOp>> {
        if field != "_id" && self.meta.field(field).is_none() {
            self.errors.push(format!("Unknown field: {field}"));
            return Ok(None);
        }
        self.op(FilterOp::Field {
            field: field.to_string(),
            op: op.to_string(),
            value: value.clone(),
        })
        .map(Some)
    }

    fn field(&mut self, name: &str, value: &Value) -> CkanResult<Option<FilterOp>> {
        let name = name
            .strip_prefix('$')
            .filter(|_| name.starts_with("$$"))
            .unwrap_or(name);
        match value {
            Value::Object(m) if m.len() > 1 => {
                let mut children = Vec::new();
                for (k, v) in m {
                    let one = Value::Object([(k.clone(), v.clone())].into_iter().collect());
                    if let Some(op) = self.field(name, &one)? {
                        children.push(op);
                    }
                }
                if children.is_empty() {
                    Ok(None)
                } else {
                    self.op(FilterOp::And(children)).map(Some)
                }
            }
            Value::Object(m) => match m.iter().next() {
                Some((op, v)) => self.check_field(name, op, v),
                None => Ok(None),
            },
            // An array column compares with a whole array (our extension: CKAN 2.12 reads
            // every list as `in`).
            Value::Array(_)
                if self
                    .meta
                    .field(name)
                    .is_some_and(|f| matches!(f.ftype.kind, types::Kind::Array(_))) =>
            {
                self.check_field(name, "eq", value)
            }
            Value::Array(items) => {
                let (ops, plain): (Vec<&Value>, Vec<&Value>) =
                    items.iter().partition(|v| v.is_object());
                if ops.is_empty() {
                    return self.check_field(name, "in", value);
                }
                let mut members = Vec::new();
                for op in ops {
                    if let Some(f) = self.field(name, op)? {
                        members.push(f);
                    }
                }
                if !plain.is_empty() {
                    let rest = Value::Array(plain.into_iter().cloned().collect());
                    if let Some(f) = self.check_field(name, "in", &rest)? {
                        members.push(f);
                    }
                }
                if members.is_empty() {
                    Ok(None)
                } else {
                    self.op(FilterOp::Or(members)).map(Some)
                }
            }
            scalar => self.check_field(name, "eq", scalar),
        }
    }
}

/// Parses `filters` (a dict, or a list of dicts) against the table's fields.
pub(crate) fn parse(input: &Value, meta: &Meta) -> CkanResult<Option<FilterOp>> {
    let empty = match input {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    if empty {
        return Ok(None);
    }
    if !input.is_object() && !list_of_dicts(input) {
        return Err(validation()
            .field(
                "filters",
                "Filters must be defined as a dict or a list of dicts",
            )
            .build());
    }
    let mut p = Parser {
        meta,
        errors: Vec::new(),
        ops: 0,
    };
    let parsed = match input {
        Value::Array(items) => {
            if items.len() >= MAX_OPS {
                return Err(too_many());
            }
            let children = p.members(input, "$or", 0)?;
            if children.is_empty() {
                None
            } else {
                Some(p.op(FilterOp::Or(children))?)
            }
        }
        Value::Object(m) => {
            if m.len() >= MAX_OPS {
                return Err(too_many());
            }
            let mut children = Vec::new();
            for (key, value) in m {
                if is_operator(key) {
                    if !p.check_operator(key, value) {
                        continue;
                    }
                    let inner = p.members(value, key, 0)?;
                    if inner.is_empty() {
                        continue;
                    }
                    if key == "$and" {
                        children.extend(inner);
                    } else {
                        children.push(p.op(FilterOp::Or(inner))?);
                    }
                } else if let Some(op) = p.field(key, value)? {
                    children.push(op);
                }
            }
            match children.len() {
                0 => None,
                1 => children.pop(),
                _ => Some(p.op(FilterOp::And(children))?),
            }
        }
        _ => None,
    };
    if !p.errors.is_empty() {
        let mut errs = validation();
        for e in p.errors {
            errs.push("filters", e);
        }
        return Err(errs.build());
    }
    Ok(parsed)
}

/// The SQL of a parsed filter, its values appended to `binds` (`$n` placeholders).
pub(crate) fn clause(
    op: &FilterOp,
    meta: &Meta,
    b: Backend,
    binds: &mut Vec<Cell>,
) -> CkanResult<String> {
    let verr = |msg: String| validation().field("filters", msg).build();
    Ok(match op {
        FilterOp::And(items) if items.is_empty() => "1 = 1".into(),
        FilterOp::Or(items) if items.is_empty() => "1 = 0".into(),
        FilterOp::And(items) | FilterOp::Or(items) => {
            let join = if matches!(op, FilterOp::And(_)) {
                " AND "
            } else {
                " OR "
            };
            let parts = items
                .iter()
                .map(|i| clause(i, meta, b, binds))
                .collect::<CkanResult<Vec<_>>>()?;
            format!("({})", parts.join(join))
        }
        FilterOp::Field {
            field,
            op: name,
            value,
        } => {
            let (col, ftype) = if field == "_id" {
                ("_id".to_string(), parse_type("int8").expect("int8"))
            } else {
                let f = meta.field(field).expect("checked by parse");
                (quote(&f.id), f.ftype)
            };
            let bind = |v: &Value, binds: &mut Vec<Cell>| -> CkanResult<Option<String>> {
                let cell = match v {
                    // Text columns compare with the value's text (CKAN 2.11+).
                    Value::Number(_) | Value::Bool(_) if ftype.kind == types::Kind::Text => {
                        Cell::Text(v.to_string())
                    }
                    _ => to_cell(&ftype, v).map_err(verr)?,
                };
                if cell == Cell::Null {
                    return Ok(None);
                }
                if binds.len() >= MAX_VALUES {
                    return Err(verr(format!(
                        "Maximum number of filter values ({MAX_VALUES}) exceeded"
                    )));
                }
                binds.push(cell);
                Ok(Some(ftype.placeholder(b, binds.len())))
            };
            let cmp = match name.as_str() {
                "eq" => "=",
                "gt" => ">",
                "gte" => ">=",
                "lt" => "<",
                "lte" => "<=",
                "in" => "IN",
                _ => {
                    return Err(verr(format!(
                    "Unknown filter operation: FilterOp(field='{field}', op='{name}', value={})",
                    repr(value)
                )))
                }
            };
            if cmp == "IN" {
                let items: Vec<&Value> = match value {
                    Value::Array(a) => a.iter().collect(),
                    other => vec![other],
                };
                let mut marks = Vec::new();
                let mut null = false;
                for v in items {
                    match bind(v, binds)? {
                        Some(m) => marks.push(m),
                        None => null = true,
                    }
                }
                let mut parts = Vec::new();
                if !marks.is_empty() {
                    parts.push(format!("{col} IN ({})", marks.join(", ")));
                }
                if null {
                    parts.push(format!("{col} IS NULL"));
                }
                match parts.len() {
                    0 => "1 = 0".into(),
                    1 => parts.pop().expect("one"),
                    _ => format!("({})", parts.join(" OR ")),
                }
            } else {
                match bind(value, binds)? {
                    Some(m) => format!("{col} {cmp} {m}"),
                    // `= null` is IS NULL (our reading; CKAN's `= NULL` matches nothing);
                    // an order against null matches nothing.
                    None if cmp == "=" => format!("{col} IS NULL"),
                    None => "1 = 0".into(),
                }
            }
        }
    })
}

/// `filters` as WHERE clauses (none, or one).
pub(crate) fn where_clauses(
    input: &Value,
    meta: &Meta,
    b: Backend,
    binds: &mut Vec<Cell>,
) -> CkanResult<Vec<String>> {
    match parse(input, meta)? {
        None => Ok(Vec::new()),
        Some(op) => Ok(vec![clause(&op, meta, b, binds)?]),
    }
}
