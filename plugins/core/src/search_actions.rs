//! Search and lookup actions besides `package_search` (spec/ckan-read-api.md §4.1–§4.4, §5.9):
//! `resource_search`; `tag_search`, `tag_autocomplete` and `tag_list`; the format, dataset,
//! user, group and organization autocompletes; `group_package_show`. Also the search-backed
//! dataset counts and lists that `group_show`, `group_list` and `tag_show` embed, computed the
//! way CKAN computes them (package_search / facet queries, not SQL counts).
//!
//! CKAN matches these in SQL with `ILIKE`; here the matching is done by [`ilike`] in Rust, so
//! SQLite and PostgreSQL answer identically (SQLite's `LOWER`/`LIKE` fold ASCII only).

use std::collections::HashMap;

use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store_queries::{self as q, GroupRow, PackageRow};
use catalog_framework::time::parse_iso;
use chrono::NaiveDateTime;

use crate::search::{self, SearchOptions};

// ---------------------------------------------------------------------------------------------
// LIKE matching

/// SQL `ILIKE` with `\` as the escape character (PostgreSQL's default, which CKAN relies on):
/// `%` matches any run of characters, `_` exactly one; letters compare case-insensitively.
pub(crate) fn ilike(text: &str, pattern: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Lit(char),
        One,
        Many,
    }
    let mut pat = Vec::new();
    let mut chars = pattern
        .to_lowercase()
        .chars()
        .collect::<Vec<_>>()
        .into_iter();
    while let Some(c) = chars.next() {
        pat.push(match c {
            // A trailing escape stands for itself (PostgreSQL would reject the pattern).
            '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
            '%' => Tok::Many,
            '_' => Tok::One,
            c => Tok::Lit(c),
        });
    }
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let (mut ti, mut pi) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while ti < text.len() {
        match pat.get(pi) {
            Some(Tok::One) => {
                ti += 1;
                pi += 1;
            }
            Some(Tok::Lit(c)) if *c == text[ti] => {
                ti += 1;
                pi += 1;
            }
            Some(Tok::Many) => {
                backtrack = Some((pi, ti));
                pi += 1;
            }
            _ => match backtrack {
                Some((bp, bt)) => {
                    pi = bp + 1;
                    ti = bt + 1;
                    backtrack = Some((bp, bt + 1));
                }
                None => return false,
            },
        }
    }
    pat[pi..].iter().all(|t| *t == Tok::Many)
}

/// CKAN's `escape_sql_like_special_characters`: `\`, `%` and `_` escaped with `\`.
pub(crate) fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `limit`/`offset` as `natural_number_validator` checks them, errors collected per field.
fn naturals(p: &Params, keys: &[&str]) -> CkanResult<Vec<Option<usize>>> {
    let mut errors = validation();
    let mut out = Vec::new();
    for key in keys {
        match natural(p, key) {
            Ok(v) => out.push(v.map(|n| n as usize)),
            Err(e) => {
                errors.set(key, e.body.get(*key).cloned().unwrap_or(Value::Null));
                out.push(None);
            }
        }
    }
    errors.finish()?;
    Ok(out)
}

/// Python truthiness of a raw parameter (CKAN reads some flags with a bare `if`).
fn py_truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// `q` of the autocompletes' `default_autocomplete_schema`: required (may be empty).
fn autocomplete_q(p: &Params) -> CkanResult<String> {
    match p.get("q") {
        None | Some(Value::Null) => Err(missing("q")),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err(validation().field("q", "Must be a string").build()),
    }
}

/// `q` and `limit` of an autocomplete, validated together as CKAN's schema does.
fn autocomplete_params(p: &Params, default_limit: usize) -> CkanResult<(String, usize)> {
    let q = autocomplete_q(p);
    let limit = naturals(p, &["limit"]);
    match (q, limit) {
        (Ok(q), Ok(l)) => Ok((q, l[0].unwrap_or(default_limit))),
        (Err(mut a), Err(b)) => {
            a.body.extend(b.body);
            Err(a)
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

// ---------------------------------------------------------------------------------------------
// resource_search (spec §5.9)

/// The resource columns `resource_search` accepts (CKAN's `CORE_RESOURCE_COLUMNS`).
const RESOURCE_FIELDS: &[&str] = &[
    "url",
    "format",
    "description",
    "hash",
    "name",
    "resource_type",
    "mimetype",
    "mimetype_inner",
    "size",
    "created",
    "last_modified",
    "metadata_modified",
    "cache_url",
    "cache_last_updated",
    "url_type",
];

const RESOURCE_DATE_FIELDS: &[&str] = &[
    "created",
    "last_modified",
    "metadata_modified",
    "cache_last_updated",
];

/// The attributes of CKAN's Resource model `order_by` may name; anything else is ignored.
const RESOURCE_ORDERABLE: &[&str] = &[
    "id",
    "package_id",
    "url",
    "format",
    "description",
    "hash",
    "position",
    "name",
    "resource_type",
    "mimetype",
    "mimetype_inner",
    "size",
    "created",
    "last_modified",
    "metadata_modified",
    "cache_url",
    "cache_last_updated",
    "url_type",
    "extras",
    "state",
];

/// One `field:term` criterion of resource_search, the term already LIKE-escaped.
#[derive(Debug, Clone, PartialEq)]
enum Criterion {
    /// `hash ILIKE 'term%'`.
    Hash(String),
    /// `<field> ILIKE '%term%'` on a text column.
    Text(String, String),
    /// `size = term`; a term that is not an integer matches nothing.
    Size(Option<i64>),
    /// `<date column> = term`; an unparseable term matches nothing.
    Date(String, Option<NaiveDateTime>),
    /// A `catalog.extra_resource_fields` field, matched against the serialized extras.
    Extra(String, String),
}

fn resource_query_error(msg: impl Into<String>) -> CkanError {
    let mut b = validation();
    b.set("query", json!(msg.into()));
    b.build()
}

/// Parses `query` (a `field:term` string or a list of them) into criteria, with CKAN's
/// messages; a repeated field keeps its last term (a Python dict).
fn parse_resource_query(query: Option<&Value>, extra: &[String]) -> CkanResult<Vec<Criterion>> {
    const PAIRS: &str = "Must be <field>:<value> pair(s)";
    let items: Vec<&Value> = match query {
        None | Some(Value::Null) => return Err(resource_query_error("Missing value")),
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v @ Value::String(_)) => vec![v],
        Some(_) => return Err(resource_query_error(PAIRS)),
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for item in items {
        let Some((field, term)) = item.as_str().and_then(|s| s.split_once(':')) else {
            return Err(resource_query_error(PAIRS));
        };
        match pairs.iter_mut().find(|(f, _)| f == field) {
            Some(slot) => slot.1 = term.to_string(),
            None => pairs.push((field.to_string(), term.to_string())),
        }
    }
    let mut out = Vec::new();
    for (field, term) in pairs {
        let is_extra = extra.contains(&field);
        if !RESOURCE_FIELDS.contains(&field.as_str()) && !is_extra {
            return Err(resource_query_error(format!(
                "Field \"{field}\" not recognised in resource_search."
            )));
        }
        let term = escape_like(&term);
        out.push(if field == "hash" {
            Criterion::Hash(format!("{term}%"))
        } else if is_extra {
            Criterion::Extra(field, term)
        } else if field == "size" {
            Criterion::Size(term.trim().parse().ok())
        } else if RESOURCE_DATE_FIELDS.contains(&field.as_str()) {
            Criterion::Date(field, parse_iso(&term))
        } else {
            Criterion::Text(field, format!("%{term}%"))
        });
    }
    Ok(out)
}

/// A resource value as the text SQL would compare (`None` for NULL).
fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn int_of(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Python's `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators.
fn py_json(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("[{}]", a.iter().map(py_json).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), py_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The resource's extras column as CKAN stores it: the JSON of every non-column key, or NULL
/// when there is none.
fn extras_blob(r: &Map<String, Value>) -> Option<String> {
    let extras: Map<String, Value> = r
        .iter()
        .filter(|(k, _)| !catalog_plugin_schema::RESOURCE_COLUMNS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!extras.is_empty()).then(|| py_json(&Value::Object(extras)))
}

fn matches_resource(r: &Map<String, Value>, criteria: &[Criterion]) -> bool {
    criteria.iter().all(|c| match c {
        Criterion::Hash(pat) => text_of(r.get("hash")).is_some_and(|h| ilike(&h, pat)),
        Criterion::Text(field, pat) => text_of(r.get(field)).is_some_and(|t| ilike(&t, pat)),
        Criterion::Size(n) => n.is_some() && int_of(r.get("size")) == *n,
        Criterion::Date(field, t) => {
            t.is_some() && text_of(r.get(field)).and_then(|s| parse_iso(&s)) == *t
        }
        Criterion::Extra(field, term) => extras_blob(r).is_some_and(|blob| {
            ilike(&blob, &format!("%\"{field}\": \"%{term}%\",%"))
                || ilike(&blob, &format!("%\"{field}\": \"%{term}%\"}}"))
        }),
    })
}

/// An `order_by` key; NULLs sort last, as PostgreSQL sorts ascending.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum SortValue {
    Int(i64),
    Text(String),
    Null,
}

fn sort_value(r: &Map<String, Value>, field: &str) -> SortValue {
    let v = match field {
        "extras" => extras_blob(r).map(SortValue::Text),
        "size" | "position" => int_of(r.get(field)).map(SortValue::Int),
        _ => text_of(r.get(field)).map(SortValue::Text),
    };
    v.unwrap_or(SortValue::Null)
}

/// A stored resource as CKAN's `resource_dictize` gives it: every column (nulls kept) and the
/// extras, with the URL made absolute (uploads, scheme-less URLs); the format is not touched.
fn raw_resource(site_url: &str, dataset_type: &str, r: &Map<String, Value>) -> Value {
    let mut out = r.clone();
    let shown = crate::dictize::resource_out(site_url, dataset_type, &Value::Object(r.clone()));
    if let (Some(url), true) = (shown.get("url"), r.get("url").is_some_and(|u| !u.is_null())) {
        out.insert("url".into(), url.clone());
    }
    Value::Object(crate::dictize::sorted(out))
}

pub async fn resource_search(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let paging = naturals(&p, &["offset", "limit"])?;
    let (offset, limit) = (paging[0].unwrap_or(0), paging[1]);
    ctx.check_access("resource_search", &p).await?;
    let extra = ctx.config().catalog.extra_resource_fields.clone();
    let criteria = parse_resource_query(p.get("query"), &extra)?;
    let order_by = opt_str(&p, "order_by").filter(|f| RESOURCE_ORDERABLE.contains(&f.as_str()));

    // Active resources of active, public datasets (of any type), in a stable order.
    let mut rows = sqlx::query(
        "SELECT id, type, metadata_created, data FROM package WHERE state = 'active' AND private = false",
    )
    .fetch_all(ctx.db().await?)
    .await?;
    // Sorted here, not by the database: collations differ between SQLite and PostgreSQL.
    rows.sort_by_cached_key(|r| (r.s("metadata_created"), r.s("id")));
    let mut found: Vec<(String, Map<String, Value>)> = Vec::new();
    for row in &rows {
        let doc: Value = serde_json::from_str(&row.s("data"))?;
        for r in doc["resources"].as_array().into_iter().flatten() {
            let Some(r) = r.as_object() else { continue };
            let active = r.get("state").and_then(Value::as_str).unwrap_or("active") == "active";
            if active && matches_resource(r, &criteria) {
                found.push((row.s("type"), r.clone()));
            }
        }
    }
    if let Some(field) = &order_by {
        found.sort_by_cached_key(|(_, r)| sort_value(r, field));
    }
    let count = found.len();
    let mut page: Vec<(String, Map<String, Value>)> = found
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    // resource_list_dictize sorts what the query returned by position.
    page.sort_by_key(|(_, r)| int_of(r.get("position")).unwrap_or(i64::MAX));
    let site_url = ctx.config().site_url().to_string();
    let results: Vec<Value> = page
        .iter()
        .map(|(ty, r)| raw_resource(&site_url, ty, r))
        .collect();
    Ok(json!({"count": count, "results": results}))
}

// ---------------------------------------------------------------------------------------------
// Tags (spec §4.3). Vocabularies are not implemented: no vocabulary exists.

/// The search terms of `_tag_search`: `query` or `q` (a string or a list), each stripped,
/// blanks dropped, plus the deprecated `fields` `tag`/`tags` values.
fn tag_terms(p: &Params) -> Vec<String> {
    let raw = [p.get("query"), p.get("q")]
        .into_iter()
        .find(|v| py_truthy(*v))
        .flatten();
    let mut terms: Vec<String> = match raw {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(|v| text_of(Some(v))).collect(),
        Some(Value::Number(n)) => vec![n.to_string()],
        _ => Vec::new(),
    };
    terms = terms
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    if let Some(Value::Object(fields)) = p.get("fields") {
        for (k, v) in fields {
            if k == "tag" || k == "tags" {
                if let Some(s) = v.as_str() {
                    terms.push(s.to_string());
                }
            }
        }
    }
    terms
}

/// The values of an index field (`tags`, `res_format`) over the active datasets the caller may
/// read, with the number of datasets holding each: a facet of the index, so that neither the
/// cost of the call grows with a scan of every dataset nor the tags and formats of private,
/// draft or deleted datasets leak to those who may not read them (CKAN lists them to anyone;
/// docs/API-COMPAT.md).
async fn visible_values(ctx: &mut ActionContext, field: &str) -> CkanResult<Vec<(String, u64)>> {
    let mut filters = vec![Query::term("state", "active")];
    filters.extend(authz::label_filter(ctx).await?);
    let req = SearchRequest {
        query: Query::All,
        filters,
        sort: Vec::new(),
        start: 0,
        rows: 0,
        facet_fields: vec![field.to_string()],
        facet_limit: None,
        facet_mincount: 1,
    };
    let hits = ctx.app.search.backend.search(&req).await?;
    Ok(hits
        .facets
        .into_iter()
        .find(|(f, _)| f == field)
        .map(|(_, values)| values)
        .unwrap_or_default())
}

/// The stored free tags of these (distinct) names, as `(id, name)` in name order.
async fn free_tags(ctx: &mut ActionContext, names: &[String]) -> CkanResult<Vec<(String, String)>> {
    let mut out = q::free_tags_by_name(ctx.db().await?, names).await?;
    // CKAN leaves the order unspecified; code-point order of names, the same on every store.
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// CKAN's `_tag_search`: free tags whose names contain every term, case-insensitively, among
/// the tags of the datasets the caller may read. Returns the page of `(id, name)` and the total.
async fn tag_search_rows(
    ctx: &mut ActionContext,
    p: &Params,
) -> CkanResult<(Vec<(String, String)>, usize)> {
    let paging = naturals(p, &["offset", "limit"])?;
    let terms = tag_terms(p);
    // A vocabulary search finds nothing: no vocabulary exists.
    if p.contains_key("vocabulary_id") || terms.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let patterns: Vec<String> = terms
        .iter()
        .map(|t| format!("%{}%", escape_like(t)))
        .collect();
    let mut matched: Vec<String> = visible_values(ctx, "tags")
        .await?
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| patterns.iter().all(|pat| ilike(name, pat)))
        .collect();
    matched.sort_unstable();
    let count = matched.len();
    let page: Vec<String> = matched
        .into_iter()
        .skip(paging[0].unwrap_or(0))
        .take(paging[1].unwrap_or(usize::MAX))
        .collect();
    Ok((free_tags(ctx, &page).await?, count))
}

pub async fn tag_search(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("tag_search", &p).await?;
    let (tags, count) = tag_search_rows(ctx, &p).await?;
    let results: Vec<Value> = tags
        .into_iter()
        .map(|(id, name)| json!({"id": id, "name": name, "vocabulary_id": null}))
        .collect();
    Ok(json!({"count": count, "results": results}))
}

pub async fn tag_autocomplete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("tag_autocomplete", &p).await?;
    let (tags, _) = tag_search_rows(ctx, &p).await?;
    Ok(Value::Array(
        tags.into_iter().map(|(_, name)| json!(name)).collect(),
    ))
}

pub async fn tag_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let has_query = match [p.get("query"), p.get("q")]
        .into_iter()
        .find(|v| py_truthy(*v))
        .flatten()
    {
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(_) => true,
        None => false,
    };
    let all_fields = py_truthy(p.get("all_fields"));
    ctx.check_access("tag_list", &p).await?;
    let tags: Vec<(String, String)> = if has_query {
        tag_search_rows(ctx, &p).await?.0
    } else {
        if let Some(v) = opt_str(&p, "vocabulary_id").filter(|s| !s.is_empty()) {
            return Err(not_found(format!("could not find vocabulary '{v}'")));
        }
        let names: Vec<String> = visible_values(ctx, "tags")
            .await?
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        free_tags(ctx, &names).await?
    };
    Ok(Value::Array(
        tags.into_iter()
            .map(|(id, name)| {
                if all_fields {
                    json!({"display_name": name, "id": id, "name": name, "vocabulary_id": null})
                } else {
                    json!(name)
                }
            })
            .collect(),
    ))
}

/// `tag_show`'s `packages`: up to 1000 public, active datasets with the tag, from the index;
/// no permission labels apply (CKAN's `tag_dictize`).
pub(crate) async fn tag_datasets(ctx: &mut ActionContext, tag: &str) -> CkanResult<Vec<Value>> {
    let sort = search::parse_sort(&ctx.config().catalog.search.default_package_sort)?;
    let req = SearchRequest {
        query: Query::and(vec![
            Query::term("capacity", "public"),
            Query::term("tags", tag),
        ]),
        filters: vec![Query::term("state", "active")],
        sort,
        start: 0,
        rows: 1000,
        facet_fields: Vec::new(),
        facet_limit: None,
        facet_mincount: 1,
    };
    let hits = ctx.app.search.backend.search(&req).await?;
    hits.docs
        .iter()
        .map(|d| serde_json::from_str(d).map_err(|e| internal(format!("stored search dict: {e}"))))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Autocompletes

pub async fn format_autocomplete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let (q, limit) = autocomplete_params(&p, 5)?;
    ctx.check_access("format_autocomplete", &p).await?;
    // CKAN does not escape `q` here: `%` and `_` in it are wildcards.
    let pattern = format!("%{q}%");
    // Formats of the datasets the caller may read, by how many datasets use each (CKAN counts
    // resources of every dataset, private and deleted ones included: docs/API-COMPAT.md).
    let mut counts: HashMap<String, u64> = HashMap::new();
    for (f, n) in visible_values(ctx, "res_format").await? {
        if ilike(&f, &pattern) {
            *counts.entry(f.to_lowercase()).or_default() += n;
        }
    }
    let mut formats: Vec<(String, u64)> = counts.into_iter().collect();
    formats.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Value::Array(
        formats
            .into_iter()
            .take(limit)
            .map(|(f, _)| json!(f))
            .collect(),
    ))
}

pub async fn package_autocomplete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let (q, limit) = autocomplete_params(&p, 10)?;
    ctx.check_access("package_autocomplete", &p).await?;
    let q_lower = q.to_lowercase();
    if q_lower.trim().is_empty() || limit == 0 {
        return Ok(json!([]));
    }
    // A cheap SQL pre-filter when it cannot miss: an ASCII term without characters that JSON
    // escapes is found in the lower-cased JSON text wherever it is in the title.
    let prefilter = q_lower
        .chars()
        .all(|c| c.is_ascii() && !c.is_ascii_control() && c != '"' && c != '\\');
    let mut sql = String::from(
        "SELECT id, name, type, state, private, owner_org, creator_user_id, metadata_modified, data \
         FROM package WHERE state = 'active'",
    );
    if prefilter {
        sql.push_str(" AND (LOWER(name) LIKE $1 ESCAPE '\\' OR LOWER(data) LIKE $1 ESCAPE '\\')");
    }
    let mut query = sqlx::query(&sql);
    if prefilter {
        query = query.bind(format!("%{}%", escape_like(&q_lower)));
    }
    let mut rows = query.fetch_all(ctx.db().await?).await?;
    rows.sort_by_cached_key(|r| r.s("name"));
    let labels = if ctx.is_sysadmin() || ctx.ignore_auth {
        None
    } else {
        Some(authz::user_labels(ctx).await?)
    };
    let collaborators = ctx.config().catalog.auth.allow_dataset_collaborators;
    let (mut by_name, mut by_title) = (Vec::new(), Vec::new());
    for r in &rows {
        let pkg = PackageRow::from_row(r);
        if let Some(mine) = &labels {
            if !authz::dataset_labels(&pkg, collaborators)
                .iter()
                .any(|l| mine.contains(l))
            {
                continue;
            }
        }
        let doc: Value = serde_json::from_str(&pkg.data)?;
        let title = doc["title"]
            .as_str()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(&pkg.name)
            .to_string();
        if pkg.name.contains(&q_lower) {
            by_name.push(json!({
                "match_displayed": pkg.name, "match_field": "name", "name": pkg.name, "title": title,
            }));
        } else if title.to_lowercase().contains(&q_lower) {
            by_title.push(json!({
                "match_displayed": format!("{title} ({})", pkg.name), "match_field": "title",
                "name": pkg.name, "title": title,
            }));
        }
    }
    by_name.extend(by_title);
    by_name.truncate(limit);
    Ok(Value::Array(by_name))
}

pub async fn user_autocomplete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let (q, limit) = autocomplete_params(&p, 20)?;
    ctx.check_access("user_autocomplete", &p).await?;
    // `User.search`: `q` is not escaped; sysadmins also match e-mail addresses.
    let pattern = format!("%{q}%");
    let sysadmin = ctx.is_sysadmin();
    let me = ctx.user_name().to_string();
    let ignore_self = py_truthy(p.get("ignore_self"));
    let users = q::users_where(ctx.db().await?, "state <> 'deleted'", &[]).await?;
    let mut out: Vec<&q::UserRow> = users
        .iter()
        .filter(|u| {
            ilike(&u.name, &pattern)
                || u.fullname.as_deref().is_some_and(|f| ilike(f, &pattern))
                || (sysadmin && u.email.as_deref().is_some_and(|e| ilike(e, &pattern)))
        })
        .filter(|u| !(ignore_self && u.name == me))
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Value::Array(
        out.into_iter()
            .take(limit)
            .map(|u| json!({"fullname": u.fullname, "id": u.id, "name": u.name}))
            .collect(),
    ))
}

/// CKAN's `Group.search_by_name_or_title`: active groups whose name or title contains the
/// stripped, lower-cased `q` (not escaped). Organizations are `type == "organization"`;
/// groups are every other type.
async fn group_or_org_autocomplete(
    ctx: &mut ActionContext,
    p: Params,
    is_org: bool,
) -> CkanResult<Value> {
    let action = if is_org {
        "organization_autocomplete"
    } else {
        "group_autocomplete"
    };
    ctx.check_access(action, &p).await?;
    let (q, limit) = autocomplete_params(&p, 20)?;
    let pattern = format!("%{}%", q.trim().to_lowercase());
    let sql = format!(
        "SELECT {} FROM catalog_group WHERE state = 'active'",
        q::GROUP_COLS
    );
    let rows = sqlx::query(&sql).fetch_all(ctx.db().await?).await?;
    let mut groups: Vec<GroupRow> = rows.iter().map(GroupRow::from_row).collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Value::Array(
        groups
            .into_iter()
            .filter(|g| (g.group_type == "organization") == is_org)
            .filter(|g| {
                ilike(&g.name, &pattern) || g.title.as_deref().is_some_and(|t| ilike(t, &pattern))
            })
            .take(limit)
            .map(|g| json!({"id": g.id, "name": g.name, "title": g.title}))
            .collect(),
    ))
}

pub async fn group_autocomplete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    group_or_org_autocomplete(ctx, p, false).await
}

pub async fn organization_autocomplete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    group_or_org_autocomplete(ctx, p, true).await
}

// ---------------------------------------------------------------------------------------------
// Groups' datasets and counts (spec §4.2, §3.4)

/// Runs package_search as another action would call it.
async fn package_search_with(ctx: &mut ActionContext, p: Params) -> CkanResult<(u64, Vec<Value>)> {
    let opts = SearchOptions::parse(ctx, &p)?;
    let r = search::run(ctx, opts).await?;
    let results = r["results"].as_array().cloned().unwrap_or_default();
    Ok((r["count"].as_u64().unwrap_or(0), results))
}

pub async fn group_package_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("group_package_show", &p).await?;
    let id = req_str(&p, "id")?;
    let bad_limit = || validation_message("Limit must be a positive integer");
    // `int(limit)` when truthy; a falsy limit goes to package_search as is ('' → 10 rows).
    let rows: Value = match p.get("limit") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) if s.is_empty() => Value::Null,
        Some(Value::Bool(b)) => json!(u8::from(*b)),
        Some(Value::Number(n)) => match n.as_f64().map(f64::trunc) {
            Some(f) if f >= 0.0 => json!(f as u64),
            _ => return Err(bad_limit()),
        },
        Some(Value::String(s)) => match s.trim().parse::<i64>() {
            Ok(n) if n >= 0 => json!(n),
            _ => return Err(bad_limit()),
        },
        Some(_) => return Err(bad_limit()),
    };
    let g = ctx.group_row(&id).await?.ok_or_else(|| not_found(""))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access("group_show", &auth).await?;
    let mut search = Params::new();
    search.insert("fq".into(), json!(format!("groups:{}", g.name)));
    search.insert("rows".into(), rows);
    let (_, results) = package_search_with(ctx, search).await?;
    Ok(Value::Array(results))
}

/// CKAN's `get_packages_for_this_group`: a package_search for `+owner_org:"<id>"`
/// (organizations: private datasets included for callers with `read` on it, or for everyone
/// when collaborators are enabled; the caller's labels still apply) or `+groups:"<name>"`.
/// With `datasets`, the first page (default rows) is returned with the count.
pub(crate) async fn group_packages(
    ctx: &mut ActionContext,
    g: &GroupRow,
    datasets: bool,
) -> CkanResult<(u64, Vec<Value>)> {
    let mut p = Params::new();
    p.insert("facet".into(), json!("false"));
    if !datasets {
        p.insert("rows".into(), json!(0));
    }
    if g.is_organization {
        p.insert("fq".into(), json!(format!("+owner_org:\"{}\"", g.id)));
        let private = (ctx.user.is_some() && authz::has_permission(ctx, &g.id, "read").await?)
            || ctx.config().catalog.auth.allow_dataset_collaborators;
        if private {
            p.insert("include_private".into(), json!(true));
        }
    } else {
        p.insert("fq".into(), json!(format!("+groups:\"{}\"", g.name)));
    }
    package_search_with(ctx, p).await
}

/// Active dataset counts per group name and per organization id, from one facet query
/// (CKAN's `get_group_dataset_counts`).
#[derive(Debug, Default)]
pub(crate) struct DatasetCounts {
    groups: HashMap<String, u64>,
    orgs: HashMap<String, u64>,
}

impl DatasetCounts {
    pub(crate) fn of(&self, g: &GroupRow) -> u64 {
        let n = if g.is_organization {
            self.orgs.get(&g.id)
        } else {
            self.groups.get(&g.name)
        };
        n.copied().unwrap_or(0)
    }
}

/// Which datasets [`dataset_counts`] counts.
pub(crate) enum CountScope {
    /// `group_list`/`organization_list` with `all_fields`: every dataset type, the caller's
    /// permission labels applied (`fq=entity_type:package`).
    VisibleToCaller,
    /// `organization_list_for_user`/`group_list_authz`: datasets of type `dataset`, no labels
    /// (private ones included), as `group_list_dictize` asks.
    AllOfTypeDataset,
}

pub(crate) async fn dataset_counts(
    ctx: &mut ActionContext,
    scope: CountScope,
) -> CkanResult<DatasetCounts> {
    let mut filters = vec![Query::term("state", "active")];
    match scope {
        CountScope::VisibleToCaller => {
            filters.push(Query::term("entity_type", "package"));
            filters.extend(authz::label_filter(ctx).await?);
        }
        CountScope::AllOfTypeDataset => filters.push(Query::term("dataset_type", "dataset")),
    }
    let req = SearchRequest {
        query: Query::All,
        filters,
        sort: Vec::new(),
        start: 0,
        rows: 0,
        facet_fields: vec!["groups".into(), "owner_org".into()],
        facet_limit: None,
        facet_mincount: 1,
    };
    let hits = ctx.app.search.backend.search(&req).await?;
    let mut counts = DatasetCounts::default();
    for (field, values) in hits.facets {
        let target = match field.as_str() {
            "groups" => &mut counts.groups,
            "owner_org" => &mut counts.orgs,
            _ => continue,
        };
        target.extend(values);
    }
    Ok(counts)
}

/// `group_list`'s `sort=package_count`: CKAN counts member rows (of any state) pointing to
/// active datasets, private ones included; groups without any are left out of the list.
pub(crate) async fn member_package_counts(
    ctx: &mut ActionContext,
) -> CkanResult<HashMap<String, i64>> {
    let rows = sqlx::query(
        "SELECT m.group_id AS gid, COUNT(*) AS n FROM member m JOIN package p ON p.id = m.table_id \
         WHERE m.table_name = 'package' AND p.state = 'active' GROUP BY m.group_id",
    )
    .fetch_all(ctx.db().await?)
    .await?;
    Ok(rows.iter().map(|r| (r.s("gid"), r.i("n"))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ilike_follows_sql() {
        assert!(ilike("Hello World", "%world%"));
        assert!(ilike("Hello", "h_llo"));
        assert!(!ilike("Hello", "h_lo"));
        assert!(ilike("abc", "%"));
        assert!(ilike("", "%%"));
        assert!(!ilike("abc", ""));
        assert!(ilike("50% off", "%50\\%%"));
        assert!(!ilike("500 off", "%50\\%%"));
        assert!(ilike("a_b", "a\\_b"));
        assert!(!ilike("axb", "a\\_b"));
        assert!(ilike("back\\slash", "%k\\\\s%"));
        assert!(ilike("ÉCONOMIE", "%éco%"));
        assert!(ilike("aaab", "%aab"));
        assert!(ilike("abcabd", "%abd"));
    }

    #[test]
    fn escape_like_escapes_wildcards_and_the_escape() {
        assert_eq!(escape_like("a%b_c\\d"), "a\\%b\\_c\\\\d");
        assert!(ilike("x%y", &format!("%{}%", escape_like("%"))));
        assert!(!ilike("xy", &format!("%{}%", escape_like("%"))));
    }

    fn res(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn resource_query_parsing() {
        let err = |q: Value| Value::Object(parse_resource_query(Some(&q), &[]).unwrap_err().body);
        assert_eq!(
            parse_resource_query(None, &[]).unwrap_err().body["query"],
            "Missing value"
        );
        assert_eq!(
            err(json!("name")),
            json!({"query": "Must be <field>:<value> pair(s)"})
        );
        assert_eq!(
            err(json!("")),
            json!({"query": "Must be <field>:<value> pair(s)"})
        );
        assert_eq!(
            err(json!(["name:a", "id:x"])),
            json!({"query": "Field \"id\" not recognised in resource_search."})
        );
        // The last term of a repeated field wins; `:` in the term is kept.
        let c = parse_resource_query(Some(&json!(["url:a", "url:http://x"])), &[]).unwrap();
        assert_eq!(c, vec![Criterion::Text("url".into(), "%http://x%".into())]);
        let extra = vec!["theme".to_string()];
        let c = parse_resource_query(Some(&json!("theme:wa_ter")), &extra).unwrap();
        assert_eq!(c, vec![Criterion::Extra("theme".into(), "wa\\_ter".into())]);
        assert!(parse_resource_query(Some(&json!([])), &[])
            .unwrap()
            .is_empty());
    }

    #[test]
    fn resource_matching() {
        let r = res(json!({
            "name": "Daily Counts", "hash": "ABCdef", "size": 1024, "format": "CSV",
            "created": "2024-01-02T03:04:05.123456", "description": null,
            "theme": "water", "other": "land",
        }));
        let m = |q: Value| {
            let extra = vec!["theme".to_string(), "other".to_string()];
            matches_resource(&r, &parse_resource_query(Some(&q), &extra).unwrap())
        };
        assert!(m(json!("name:COUNTS")));
        assert!(m(json!("name:")));
        assert!(!m(json!("description:")));
        assert!(m(json!("hash:abc")));
        assert!(!m(json!("hash:def")));
        assert!(m(json!("size:1024")));
        assert!(!m(json!("size:102")));
        assert!(m(json!("created:2024-01-02T03:04:05.123456")));
        assert!(!m(json!("created:2024-01-02")));
        assert!(m(json!(["format:cs", "name:daily"])));
        assert!(!m(json!(["format:cs", "name:weekly"])));
        // The extras blob is `{"theme": "water", "other": "land"}` (stored key order).
        assert!(m(json!("theme:ATE")));
        assert!(!m(json!("other:ate")));
        // CKAN's known false positive: the pattern runs on past the field's own value.
        assert!(m(json!("theme:lan")));
        assert!(!m(json!("name:Daily_")));
    }

    #[test]
    fn extras_blob_is_python_json() {
        let r = res(json!({"name": "x", "b": "two", "a": [1, {"k": true}]}));
        assert_eq!(
            extras_blob(&r).unwrap(),
            r#"{"b": "two", "a": [1, {"k": true}]}"#
        );
        assert_eq!(extras_blob(&res(json!({"name": "x"}))), None);
    }

    #[test]
    fn tag_terms_follow_ckan() {
        let p = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(tag_terms(&p(json!({"query": " ab "}))), vec!["ab"]);
        assert_eq!(tag_terms(&p(json!({"query": "", "q": "cd"}))), vec!["cd"]);
        assert_eq!(tag_terms(&p(json!({"q": ["a", " ", "b"]}))), vec!["a", "b"]);
        assert_eq!(
            tag_terms(&p(json!({"fields": {"tags": "x", "other": "y"}}))),
            vec!["x"]
        );
        assert!(tag_terms(&p(json!({"query": "  "}))).is_empty());
    }
}
