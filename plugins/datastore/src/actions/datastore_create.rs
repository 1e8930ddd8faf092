//! `datastore_create`: a resource's table made, or given columns, indexes and rows. In
//! steps: the parameters checked (`parse`), the resource found or created (`target`), the
//! columns, key and indexes planned on the table's description, then written (`write`) and
//! the call echoed (`shape`).

use std::borrow::Cow;

use catalog_framework::error::integrity;
use catalog_framework::prelude::*;
use catalog_framework::typed::{any_text, AnyText, CsvList, Dict, Later, ParamType, Truthy};

use super::common::{
    auth_data, backend, check_read_only, check_records, insert_records, resource, resource_id_of,
    set_active, text, verr, Records,
};
use crate::params::Opt;
use crate::table::{self, Field, Meta};
use crate::types::{self, parse_type, valid_field_name};

/// Columns a table may have, and records one call may write.
const MAX_FIELDS: usize = 1_000;

action_params! {
    /// Adds a table to the DataStore for a resource, or columns and rows to its table.
    ///
    /// Give `resource_id` (an existing resource; `force` for one not made for the DataStore)
    /// or `resource` (a resource dict to create, without a `url`). `fields`: a list of
    /// `{"id", "type", "info"}` (types: text, int, int8, numeric, float8, bool, date, time,
    /// timestamp, json, _text, _int4, _float8 …); a field without a type takes one guessed
    /// from the first record. `records`: rows to insert. `primary_key`: the fields of the
    /// unique key that `datastore_upsert` matches on; `indexes`: fields to index.
    pub struct DatastoreCreateParams {
        /// the resource's id
        resource_id: Option<AnyText>,
        /// alias of resource_id
        id: Opt<AnyText>,
        /// a new resource to create (its dict, with package_id)
        resource: Later<Dict>,
        /// write to a resource whose url_type is not datastore
        force: Option<Truthy>,
        /// the columns: a list of {"id", "type", "info"}
        fields: Later<GivenFields>,
        /// rows to insert (a list of objects)
        records: Later<Records>,
        /// the unique key's fields (list or comma-separated)
        primary_key: Later<CsvList>,
        /// fields to index (list or comma-separated; an element may be a list)
        indexes: Later<Indexes>,
        /// other names for the table (list or comma-separated); replaces the old ones
        aliases: Later<CsvList>,
        /// accepted and ignored (the count is always exact)
        calculate_record_count: Option<Truthy>,
    }
}

/// A field as given: its id, type name (if any) and info.
type GivenField = (String, Option<String>, Option<Value>);

/// CKAN's error for `fields` that are not a list of dicts (an integrity error, no key).
const NOT_A_LIST_OF_DICTS: &str =
    "Only lists of dicts can be placed against subschema ('fields',), not <class 'str'>";

/// The `fields` param: each `{id, type?, info?}` (an id is required; a type, when given, is
/// checked with the names, see `check_fields`), at most [`MAX_FIELDS`].
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct GivenFields(pub Vec<GivenField>);

impl ParamType for GivenFields {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let Value::Array(items) = v else {
            return Err(NOT_A_LIST_OF_DICTS.into());
        };
        if items.len() > MAX_FIELDS {
            return Err(format!("at most {MAX_FIELDS} fields").into());
        }
        let mut out = Vec::new();
        for item in items {
            let Value::Object(m) = item else {
                return Err(NOT_A_LIST_OF_DICTS.into());
            };
            let id = m.get("id").map(any_text).unwrap_or_default();
            if id.is_empty() {
                return Err("Missing value".into());
            }
            let ftype = m.get("type").map(any_text).filter(|t| !t.is_empty());
            out.push((id, ftype, m.get("info").cloned()));
        }
        Ok(GivenFields(out))
    }
    fn schema() -> Value {
        json!({"type": "array", "items": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "type": {"type": "string"},
                "info": {"type": "object"},
            },
            "required": ["id"],
        }})
    }
    fn to_value(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                .map(|(id, ftype, info)| {
                    let mut f = Map::new();
                    f.insert("id".into(), json!(id));
                    if let Some(t) = ftype {
                        f.insert("type".into(), json!(t));
                    }
                    if let Some(i) = info {
                        f.insert("info".into(), i.clone());
                    }
                    Value::Object(f)
                })
                .collect(),
        )
    }
    fn refusal(key: &str, message: Cow<'static, str>) -> CkanError {
        if message == NOT_A_LIST_OF_DICTS {
            integrity(message, json!({}))
        } else {
            verr(key, message)
        }
    }
}

/// The `indexes` param: each index a list of columns; given as a list (an element a column
/// or a list of them) or as comma-separated text (a column each). At most
/// `table::MAX_INDEXES`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Indexes(pub Vec<Vec<String>>);

impl ParamType for Indexes {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let items: Vec<Vec<String>> = match v {
            Value::Array(items) => items
                .iter()
                .map(|i| match i {
                    Value::Array(cols) => cols.iter().map(any_text).collect(),
                    other => vec![any_text(other)],
                })
                .collect(),
            other => CsvList::decode(other)?
                .0
                .into_iter()
                .map(|c| vec![c])
                .collect(),
        };
        if items.len() > table::MAX_INDEXES {
            return Err(format!("at most {} indexes", table::MAX_INDEXES).into());
        }
        Ok(Indexes(items))
    }
    fn schema() -> Value {
        json!({"oneOf": [
            {"type": "array", "items": {"oneOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}},
            ]}},
            {"type": "string", "description": "comma-separated"},
        ]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// The parameters of a create, checked before the resource is looked at (CKAN's order).
struct Request {
    /// `id` or `resource_id`, when given.
    resource_id: Option<String>,
    fields: Vec<GivenField>,
    records: Vec<Value>,
    force: bool,
    aliases: Option<Vec<String>>,
}

/// What `primary_key` and `indexes` ask of the table.
struct Keys {
    /// The unique key is new or other than the table's.
    key_changed: bool,
    indexes: Option<Vec<Vec<String>>>,
}

pub(crate) async fn datastore_create(
    ctx: &mut ActionContext,
    p: DatastoreCreateParams,
) -> CkanResult<Value> {
    let req = parse(&p)?;
    let mut echo = serde_json::Map::new();
    let res = target(ctx, &p, req.resource_id.clone(), req.force, &mut echo).await?;
    let rid = text(&res["id"]);
    let existing = table::load(ctx.db().await?, &rid).await?;
    let is_new = existing.is_none();
    let mut meta = existing.unwrap_or_else(|| Meta {
        resource_id: rid.clone(),
        name: table::table_name(&rid),
        fields: Vec::new(),
        primary_key: Vec::new(),
    });
    let before = meta.fields.len();
    let echoed_fields = plan_columns(&mut meta, req.fields, req.records.first())?;
    let keys = Keys {
        key_changed: primary_key(&mut meta, &p, is_new, &mut echo)?,
        indexes: indexes(&meta, &p, &mut echo)?,
    };
    check_records(&meta, &req.records)?;
    write(ctx, &meta, before, is_new, &req.records, &keys).await?;
    if let Some(a) = &req.aliases {
        table::set_aliases(ctx.db().await?, &rid, a).await?;
    }
    set_active(ctx, &res, true).await?;
    Ok(shape(echo, &rid, echoed_fields, &p))
}

/// Checks the parameters that need no resource: `resource` with `resource_id`, `fields`,
/// `records`, `force`, `aliases`.
fn parse(p: &DatastoreCreateParams) -> CkanResult<Request> {
    let given = resource_id_of(&p.id, &p.resource_id);
    if p.resource.is_present() && given.is_some() {
        return Err(verr("resource", "resource cannot be used with resource_id"));
    }
    let fields = p.fields.get()?.unwrap_or_default().0;
    let records = p.records.get()?.unwrap_or_default().0;
    let force = p.force.is_some_and(|t| t.0);
    let aliases: Option<Vec<String>> = p.aliases.get()?.map(|CsvList(a)| a);
    for a in aliases.iter().flatten() {
        if a.contains('%') || !valid_field_name(a) || a.len() > 63 {
            return Err(verr("alias", format!("\"{a}\" is not a valid alias name")));
        }
    }
    Ok(Request {
        resource_id: given,
        fields,
        records,
        force,
        aliases,
    })
}

/// The resource written to: the one `resource` describes, created now (and echoed), or the
/// existing one `resource_id` names, which the caller may write (auth, the read-only guard).
async fn target(
    ctx: &mut ActionContext,
    p: &DatastoreCreateParams,
    given: Option<String>,
    force: bool,
    echo: &mut serde_json::Map<String, Value>,
) -> CkanResult<Value> {
    Ok(match (p.resource.get(), given) {
        (Ok(Some(Dict(r))), None) => {
            if r.get("url").is_some_and(|u| !text(u).is_empty()) {
                return Err(verr("resource", "The datapusher has to be enabled."));
            }
            let mut r = r;
            r.insert("url".into(), json!("_datastore_only_resource"));
            r.insert("url_type".into(), json!("datastore"));
            echo.insert("resource".into(), Value::Object(r.clone()));
            ctx.call("resource_create", r.into_iter().collect()).await?
        }
        (Err(e), None) => return Err(e),
        (Ok(None), Some(id)) => {
            let res = resource(ctx, &id).await?;
            ctx.check_access("datastore_create", &auth_data(&res))
                .await?;
            check_read_only(&res, force)?;
            res
        }
        (Ok(None), None) => return Err(verr("resource_id", "resource_id or resource required")),
        // `resource` with `resource_id` is refused by `parse`.
        (Ok(Some(_)) | Err(_), Some(_)) => unreachable!("refused above"),
    })
}

/// The table's columns after this call: the given fields checked and added (or their info
/// updated), then the first record's other keys as columns of guessed types. The given
/// fields as echoed back.
fn plan_columns(
    meta: &mut Meta,
    fields: Vec<GivenField>,
    first: Option<&Value>,
) -> CkanResult<Vec<Value>> {
    check_fields(&fields)?;
    let echoed = add_fields(meta, fields, first)?;
    add_guessed_columns(meta, first)?;
    if meta.fields.len() > MAX_FIELDS {
        return Err(verr("fields", format!("at most {MAX_FIELDS} fields")));
    }
    Ok(echoed)
}

/// Types are checked before names (CKAN's order), then names, lengths, duplicates.
fn check_fields(fields: &[GivenField]) -> CkanResult<()> {
    let mut seen = std::collections::HashSet::new();
    for (id, ftype, _) in fields {
        if let Some(t) = ftype {
            if parse_type(t).is_none() {
                return Err(verr("fields", format!("\"{t}\" is not a valid field type")));
            }
        }
        if !valid_field_name(id) {
            return Err(verr(
                "fields",
                format!("\"{id}\" is not a valid field name"),
            ));
        }
        if id.chars().count() > 63 {
            return Err(verr(
                "fields",
                format!("Column heading \"{id}\" exceeds limit of 63 characters."),
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(verr("field", "Duplicate column names are not supported"));
        }
    }
    Ok(())
}

/// Adds the given fields the table lacks (a field without a type takes the one guessed from
/// the first record) and returns them as echoed.
fn add_fields(
    meta: &mut Meta,
    fields: Vec<GivenField>,
    first: Option<&Value>,
) -> CkanResult<Vec<Value>> {
    let mut echoed_fields = Vec::new();
    for (id, ftype, info) in fields {
        let type_name = match ftype {
            Some(t) => t,
            None => match first.and_then(|r| r.get(&id)).and_then(types::guess) {
                Some(g) => g.to_string(),
                None => return Err(verr("fields", format!("\"{id}\" type not guessable"))),
            },
        };
        let ftype = parse_type(&type_name).unwrap_or_else(|| parse_type("text").expect("text"));
        echoed_fields.push({
            let mut f = serde_json::Map::new();
            f.insert("id".into(), json!(id));
            f.insert("type".into(), json!(type_name));
            if let Some(i) = &info {
                f.insert("info".into(), i.clone());
            }
            Value::Object(f)
        });
        // 2.11+: a field the table has keeps its type; a new one is added.
        if meta.field(&id).is_none() {
            meta.fields.push(Field { id, ftype, info });
        } else if let Some(f) = meta.fields.iter_mut().find(|f| f.id == id) {
            if info.is_some() {
                f.info = info;
            }
        }
    }
    Ok(echoed_fields)
}

/// Keys of the first record that are not fields become columns of the guessed type.
fn add_guessed_columns(meta: &mut Meta, first: Option<&Value>) -> CkanResult<()> {
    if let Some(Value::Object(r)) = first {
        for (k, v) in r {
            if k == "_id" || meta.field(k).is_some() {
                continue;
            }
            if !valid_field_name(k) {
                return Err(verr("fields", format!("\"{k}\" is not a valid field name")));
            }
            let g = types::guess(v).unwrap_or("text");
            meta.fields.push(Field {
                id: k.clone(),
                ftype: parse_type(g).expect("guessed types parse"),
                info: None,
            });
        }
    }
    Ok(())
}

/// The unique key `primary_key` gives, checked and set on `meta` (and echoed): whether it
/// changed.
fn primary_key(
    meta: &mut Meta,
    p: &DatastoreCreateParams,
    is_new: bool,
    echo: &mut serde_json::Map<String, Value>,
) -> CkanResult<bool> {
    let (Some(CsvList(key)), Some(k)) = (p.primary_key.get()?, p.primary_key.raw()) else {
        return Ok(false);
    };
    for col in &key {
        if meta.field(col).is_none() {
            return Err(verr(
                "index",
                format!("The field \"{col}\" is not a valid column name."),
            ));
        }
    }
    let key_changed = key != meta.primary_key || is_new;
    meta.primary_key = key;
    echo.insert("primary_key".into(), k.clone());
    Ok(key_changed)
}

/// The indexes `indexes` asks for (each a list of columns), checked (and echoed).
fn indexes(
    meta: &Meta,
    p: &DatastoreCreateParams,
    echo: &mut serde_json::Map<String, Value>,
) -> CkanResult<Option<Vec<Vec<String>>>> {
    let (Some(Indexes(items)), Some(v)) = (p.indexes.get()?, p.indexes.raw()) else {
        return Ok(None);
    };
    for cols in &items {
        for c in cols {
            if meta.field(c).is_none() {
                return Err(verr(
                    "index",
                    format!("The field \"{c}\" is not a valid column name."),
                ));
            }
        }
    }
    echo.insert("indexes".into(), v.clone());
    Ok(Some(items))
}

/// Makes the table (or adds the columns past the first `before`), inserts the records and
/// sets the indexes.
async fn write(
    ctx: &mut ActionContext,
    meta: &Meta,
    before: usize,
    is_new: bool,
    records: &[Value],
    keys: &Keys,
) -> CkanResult<()> {
    let b = backend(ctx);
    if is_new {
        table::create(ctx.db().await?, b, meta).await?;
    } else {
        table::add_columns(ctx.db().await?, b, meta, before).await?;
    }
    insert_records(ctx, meta, records).await?;
    if keys.key_changed || keys.indexes.is_some() {
        table::set_indexes(
            ctx.db().await?,
            b,
            meta,
            keys.indexes.as_deref(),
            keys.key_changed,
        )
        .await?;
        table::save_meta(ctx.db().await?, meta).await?;
    }
    Ok(())
}

/// The answer: what was asked (the created resource, the key and indexes as given, then the
/// resource's id, the fields, the method, the aliases and any other keys).
fn shape(
    mut echo: serde_json::Map<String, Value>,
    rid: &str,
    echoed_fields: Vec<Value>,
    p: &DatastoreCreateParams,
) -> Value {
    echo.insert("resource_id".into(), json!(rid));
    echo.insert("fields".into(), Value::Array(echoed_fields));
    echo.insert("method".into(), json!("insert"));
    if let Some(a) = p.aliases.raw() {
        echo.insert("aliases".into(), a.clone());
    }
    if !p.__extras.is_empty() {
        echo.insert("__extras".into(), json!(p.__extras));
    }
    Value::Object(echo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_framework::typed::ActionParams;

    fn decode(v: Value) -> DatastoreCreateParams {
        DatastoreCreateParams::decode(v.as_object().cloned().unwrap()).unwrap()
    }

    #[test]
    fn fields_are_a_list_of_dicts_with_ids() {
        let p = decode(
            json!({"fields": [{"id": "a", "type": "int", "info": {"x": 1}}, {"id": 5, "type": ""}]}),
        );
        assert_eq!(
            p.fields.get().unwrap().unwrap().0,
            vec![
                (
                    "a".to_string(),
                    Some("int".to_string()),
                    Some(json!({"x": 1}))
                ),
                ("5".to_string(), None, None),
            ]
        );
        let e = decode(json!({"fields": "a"})).fields.get().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Integrity);
        assert_eq!(e.body["message"], NOT_A_LIST_OF_DICTS);
        let e = decode(json!({"fields": [{"id": "a"}, "b"]}))
            .fields
            .get()
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Integrity);
        let e = decode(json!({"fields": [{"type": "int"}]}))
            .fields
            .get()
            .unwrap_err();
        assert_eq!(
            e.to_error_object(),
            json!({"__type": "Validation Error", "fields": ["Missing value"]})
        );
        let many = vec![json!({"id": "a"}); MAX_FIELDS + 1];
        let e = decode(json!({"fields": many})).fields.get().unwrap_err();
        assert_eq!(e.body["fields"][0], "at most 1000 fields");
        assert_eq!(decode(json!({"fields": null})).fields.get().unwrap(), None);
    }

    #[test]
    fn indexes_are_lists_of_columns() {
        let get = |v: Value| {
            decode(json!({"indexes": v}))
                .indexes
                .get()
                .map(|i| i.unwrap().0)
        };
        assert_eq!(get(json!("a, b")).unwrap(), vec![vec!["a"], vec!["b"]]);
        assert_eq!(
            get(json!(["a", ["b", "c"], 1])).unwrap(),
            vec![vec!["a"], vec!["b", "c"], vec!["1"]]
        );
        assert_eq!(get(json!("")).unwrap(), Vec::<Vec<String>>::new());
        let many = vec![json!("a"); table::MAX_INDEXES + 1];
        assert_eq!(
            get(json!(many)).unwrap_err().body["indexes"][0],
            format!("at most {} indexes", table::MAX_INDEXES)
        );
    }

    #[test]
    fn aliases_and_resource_sent_as_null_are_absent() {
        let p = decode(json!({"aliases": null, "resource": null}));
        assert_eq!(p.aliases.raw(), None);
        assert_eq!(p.aliases.get().unwrap(), None);
        assert!(!p.resource.is_present());
    }
}
