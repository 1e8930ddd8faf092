//! The engine of `package_search` (the action is `package/search.rs`): CKAN's parameters,
//! filters, permission rules and result shape (spec/ckan-read-api.md §5), answered by the
//! configured search backend. Groups' datasets and `tag_show` search through it too.

use catalog_framework::authz::{self, label_filter};
use catalog_framework::error::{search_error, search_query_error};
use catalog_framework::params::{bool_param, dedup, natural};
use catalog_framework::prelude::*;
use catalog_framework::search::query::{parse_dismax, parse_lucene, parse_q, QueryError};
use catalog_framework::search::{Query, SearchRequest, SortField, SortKey};
use chrono::Utc;

use crate::licenses;

/// The most distinct `facet.field`s of one search: each is counted over every match (a
/// deployment indexes a few dozen fields; the default facets are six).
const MAX_FACET_FIELDS: usize = 100;

/// package_search's parameters after validation.
pub(crate) struct SearchOptions {
    pub q: String,
    pub fq: Vec<String>,
    pub sort: String,
    pub rows: usize,
    pub start: usize,
    pub facet: bool,
    pub facet_fields: Vec<String>,
    pub facet_limit: Option<usize>,
    pub facet_mincount: u64,
    pub fl: Option<Vec<String>>,
    pub include_private: bool,
    pub include_drafts: bool,
    pub include_deleted: bool,
    pub qf: Option<String>,
}

impl SearchOptions {
    /// Validates the parameters as CKAN's `default_package_search_schema` does (409 on error).
    pub(crate) fn parse(ctx: &ActionContext, p: &Params) -> CkanResult<SearchOptions> {
        let cfg = &ctx.config().catalog.search;
        // CKAN's rows chain ends with limit_to_configured_maximum, which converts the value
        // again: a value that is no integer at all gets its message too (CKAN 2.12 answers
        // `["Invalid integer", "Please enter an integer value"]`; a negative one only the first).
        let rows_not_an_integer = natural(p, "rows").is_err_and(|e| {
            e.body.get("rows") == Some(&Value::from(vec![Value::from("Invalid integer")]))
        });
        let mut errors = validation();
        let mut nat = |key: &str, default: i64| match natural(p, key) {
            Ok(v) => v.unwrap_or(default),
            Err(e) => {
                errors.set(key, e.body.get(key).cloned().unwrap_or(Value::Null));
                default
            }
        };
        let rows = nat("rows", 10).min(cfg.rows_max.max(0)) as usize;
        let start = nat("start", 0) as usize;
        let facet_mincount = nat("facet.mincount", 1) as u64;
        if rows_not_an_integer {
            errors.push("rows", "Please enter an integer value");
        }
        let facet_limit = match p.get("facet.limit") {
            None | Some(Value::Null) => Some(cfg.facets_limit),
            Some(v) => match int_of(v) {
                Some(n) => Some(n),
                None => {
                    errors.push("facet.limit", "Invalid integer");
                    None
                }
            },
        }
        .and_then(|n| usize::try_from(n).ok());
        let facet_fields = facet_fields(p, &mut errors);
        let mut flag = |key: &str| match bool_param(p, key, false) {
            Ok(b) => b,
            Err(_) => {
                errors.push(key, "Invalid boolean");
                false
            }
        };
        let include_private = flag("include_private");
        let include_drafts = flag("include_drafts");
        let include_deleted = flag("include_deleted");
        let q = match p.get("q") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(_) => {
                errors.push("q", "Must be a string");
                String::new()
            }
        };
        let fq = filters(p, &mut errors);
        let sort = match p.get("sort").and_then(Value::as_str).map(str::trim) {
            None | Some("") | Some("rank") => cfg.default_package_sort.clone(),
            Some(s) => s.to_string(),
        };
        let facet = !matches!(
            p.get("facet"),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false")
        ) && !matches!(p.get("facet"), Some(Value::Bool(false)));
        let fl = field_list(p);
        let qf = p.get("qf").and_then(Value::as_str).map(str::to_string);
        // Each facet, filter and field is worked for once, however often it is repeated.
        let facet_fields = dedup(facet_fields);
        if facet_fields.len() > MAX_FACET_FIELDS {
            errors.push(
                "facet.field",
                format!("Must hold at most {MAX_FACET_FIELDS} distinct fields"),
            );
        }
        let fq = dedup(fq);
        let fl = fl.map(dedup);
        errors.finish()?;
        Ok(SearchOptions {
            q,
            fq,
            sort,
            rows,
            start,
            facet,
            facet_fields,
            facet_limit,
            facet_mincount,
            fl,
            include_private,
            include_drafts,
            include_deleted,
            qf,
        })
    }
}

/// `facet.field`: a list of field names, or a JSON text of one (as a GET parameter sends it).
fn facet_fields(p: &Params, errors: &mut ValidationBuilder) -> Vec<String> {
    match p.get("facet.field") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Ok(_) => {
                errors.push("facet.field", "Not a list");
                Vec::new()
            }
            Err(_) => {
                // CKAN 2.12 runs the next validator (a list?) on the unparsed text too.
                errors.push("facet.field", "Could not parse as valid JSON");
                errors.push("facet.field", "Not a list");
                Vec::new()
            }
        },
        Some(_) => {
            errors.push("facet.field", "Not a list");
            Vec::new()
        }
    }
}

/// The filters: `fq` (one, or a repeated GET parameter) then `fq_list`.
fn filters(p: &Params, errors: &mut ValidationBuilder) -> Vec<String> {
    let mut fq = Vec::new();
    match p.get("fq") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => fq.push(s.clone()),
        // A repeated GET `fq`: each is a filter (CKAN would send Solr a JSON text).
        Some(Value::Array(a)) => fq.extend(a.iter().filter_map(|v| v.as_str().map(str::to_string))),
        Some(_) => errors.push("fq", "Must be a string"),
    }
    match p.get("fq_list") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => fq.extend(a.iter().filter_map(|v| v.as_str().map(str::to_string))),
        Some(Value::String(s)) => fq.push(s.clone()),
        Some(_) => errors.push("fq_list", "Not a list"),
    }
    fq
}

/// `fl`: the fields to return, comma- or space-separated (in one text or a list of them).
fn field_list(p: &Params) -> Option<Vec<String>> {
    match p.get("fl") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(
            s.split([',', ' '])
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        Some(Value::Array(a)) => Some(
            a.iter()
                .filter_map(Value::as_str)
                .flat_map(|s| s.split([',', ' ']))
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        Some(_) => None,
    }
}

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Parses `sort` (`field dir, field dir`); a key without a valid direction is a Search Query
/// Error, as Solr's "Can't determine a Sort Order" is in CKAN.
pub(crate) fn parse_sort(sort: &str) -> CkanResult<Vec<SortKey>> {
    let mut keys = Vec::new();
    for part in sort.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut it = part.split_whitespace();
        let (Some(field), Some(dir), None) = (it.next(), it.next(), it.next()) else {
            return Err(search_query_error("Invalid \"sort\" parameter"));
        };
        let descending = match dir.to_ascii_lowercase().as_str() {
            "asc" => false,
            "desc" => true,
            _ => return Err(search_query_error("Invalid \"sort\" parameter")),
        };
        let field = match field {
            "score" => SortField::Score,
            // `title` is a text field in Solr; sorting means the title string.
            "title" => SortField::Field("title_string".into()),
            "type" => SortField::Field("dataset_type".into()),
            f => SortField::Field(f.to_string()),
        };
        keys.push(SortKey { field, descending });
    }
    Ok(keys)
}

/// Parses a `qf` override (`name^4 title^4 text`) into fields and boosts.
fn parse_qf(qf: &str) -> Vec<(String, f32)> {
    qf.split_whitespace()
        .map(|part| match part.split_once('^') {
            Some((f, b)) => (f.to_string(), b.parse().unwrap_or(1.0)),
            None => (part.to_string(), 1.0),
        })
        .collect()
}

/// A syntax error is Solr's error in CKAN (`Search Error`, 409); a query over our limits is
/// refused before any engine sees it (`Search Query Error`, 400).
fn query_error(e: QueryError) -> CkanError {
    match e {
        QueryError::Syntax(m) => search_error(format!(
            "Search engine returned an error running query: {m}"
        )),
        QueryError::TooComplex(m) => search_query_error(m),
    }
}

/// Builds the request with CKAN's filters, runs it and shapes the result.
pub(crate) async fn run(ctx: &mut ActionContext, o: SearchOptions) -> CkanResult<Value> {
    let now = Utc::now();
    let query = match &o.qf {
        Some(qf) if !o.q.contains(':') && !o.q.trim().is_empty() => {
            let fields = parse_qf(qf);
            let refs: Vec<(&str, f32)> = fields.iter().map(|(f, b)| (f.as_str(), *b)).collect();
            parse_dismax(&o.q, &refs)
        }
        _ => parse_q(&o.q, now),
    }
    .map_err(query_error)?;
    let mut filters = Vec::new();
    for f in &o.fq {
        if !f.trim().is_empty() {
            filters.push(parse_lucene(f, now).map_err(query_error)?);
        }
    }
    if !o.include_private {
        filters.push(Query::term("capacity", "public"));
    }
    if !o.fq.iter().any(|f| f.contains("+state")) {
        let mut states = vec![Query::term("state", "active")];
        if o.include_drafts {
            states.push(Query::term("state", "draft"));
        }
        if o.include_deleted {
            states.push(Query::term("state", "deleted"));
        }
        filters.push(Query::or(states));
    }
    filters.extend(label_filter(ctx).await?);
    let facet_fields = if o.facet {
        o.facet_fields.clone()
    } else {
        Vec::new()
    };
    let req = SearchRequest {
        query,
        filters,
        sort: parse_sort(&o.sort)?,
        start: o.start,
        rows: o.rows,
        facet_fields,
        facet_limit: o.facet_limit,
        facet_mincount: o.facet_mincount,
    };
    let hits = ctx.search(&req).await?;
    let mut results = Vec::with_capacity(hits.docs.len());
    for d in &hits.docs {
        let mut dict: Value =
            serde_json::from_str(d).map_err(|e| internal(format!("stored search dict: {e}")))?;
        // As package_show: relationships only with datasets the caller may read.
        authz::hide_unreadable_relationships(ctx, &mut dict).await?;
        results.push(match &o.fl {
            Some(fl) => restrict(&dict, fl),
            None => dict,
        });
    }
    let mut facets = Map::new();
    let mut search_facets = Map::new();
    for (field, values) in &hits.facets {
        let mut counts = Map::new();
        for (v, c) in values {
            counts.insert(v.clone(), json!(c));
        }
        facets.insert(field.clone(), Value::Object(counts));
        let titles = group_titles(ctx, field, values).await?;
        let mut items = Vec::new();
        for (v, c) in values {
            items.push(json!({
                "count": c,
                "display_name": display_name(&titles, field, v),
                "name": v,
            }));
        }
        items.sort_by(|a, b| {
            b["display_name"]
                .as_str()
                .unwrap_or("")
                .cmp(a["display_name"].as_str().unwrap_or(""))
        });
        search_facets.insert(field.clone(), json!({"items": items, "title": field}));
    }
    Ok(json!({
        "count": hits.count,
        "facets": facets,
        "results": results,
        "sort": o.sort,
        "search_facets": search_facets,
    }))
}

/// `fl` results: only the named fields; `extras_<k>` from the extras without the prefix.
fn restrict(dict: &Value, fl: &[String]) -> Value {
    let mut out = Map::new();
    for f in fl {
        if let Some(k) = f.strip_prefix("extras_") {
            let found = dict["extras"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["key"] == k)
                .map(|e| e["value"].clone());
            if let Some(v) = found {
                out.insert(k.to_string(), v);
            }
        } else if let Some(v) = dict.get(f) {
            out.insert(f.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// The titles of the groups or organizations a `groups` / `organization` facet names, by name,
/// in one query per facet.
async fn group_titles(
    ctx: &mut ActionContext,
    field: &str,
    values: &[(String, u64)],
) -> CkanResult<std::collections::HashMap<String, String>> {
    if !matches!(field, "groups" | "organization") || values.is_empty() {
        return Ok(Default::default());
    }
    let names: Vec<&str> = values.iter().map(|(v, _)| v.as_str()).collect();
    let rows = catalog_framework::store::group_titles_by_name(ctx.db().await?, &names).await?;
    Ok(rows
        .into_iter()
        .filter_map(|(name, title)| title.filter(|t| !t.trim().is_empty()).map(|t| (name, t)))
        .collect())
}

/// A facet item's `display_name`: group and organization titles, license titles, else the value.
fn display_name(
    titles: &std::collections::HashMap<String, String>,
    field: &str,
    value: &str,
) -> String {
    match field {
        "groups" | "organization" => titles.get(value).cloned(),
        "license_id" => licenses::find(value).map(|l| l.title.to_string()),
        _ => None,
    }
    .unwrap_or_else(|| value.to_string())
}
