use catalog_framework::error::{search_error, search_query_error};
use catalog_framework::params::truthy;
use catalog_framework::prelude::*;
use catalog_framework::typed::{InDict, Natural as N};

use crate::search::{run, SearchOptions};

/// Parameters package_search accepts; anything else is a Search Query Error, as in CKAN.
const ALLOWED: &[&str] = &[
    "q",
    "fq",
    "fq_list",
    "sort",
    "rows",
    "start",
    "facet",
    "facet.field",
    "facet.limit",
    "facet.mincount",
    "fl",
    "include_private",
    "include_drafts",
    "include_deleted",
    "use_default_schema",
    "qf",
    "wt",
    "bf",
    "boost",
    "tie",
    "defType",
    "mm",
    "df",
];

/// Parameters Solr would read as text, where `{!…}` local parameters are refused.
const STRING_PARAMS: &[&str] = &[
    "q", "fq", "sort", "qf", "bf", "boost", "defType", "mm", "df",
];

action_params! {
    /// Search for datasets with CKAN's query language.
    ///
    /// :param q: the query (Solr syntax; default `*:*`)
    /// :param fq: a filter query
    /// :param fq_list: more filter queries
    /// :param sort: e.g. `metadata_modified desc` (default `score desc, metadata_modified desc`)
    /// :param rows: results per page (default 10, at most catalog.search.rows_max)
    /// :param start: offset of the first result
    /// :param facet.field: fields to facet on (a list)
    /// :param facet.limit: values per facet (default 50; negative for all)
    /// :param facet.mincount: least count of a facet value (default 1)
    /// :param include_private: include the private datasets the caller may read
    /// :param include_drafts: include drafts the caller may read
    /// :param include_deleted: include deleted datasets (when they are indexed)
    /// :param use_default_schema: show the results of a custom dataset type with the default
    ///     schema instead of the type's
    /// :rtype: dictionary with count, results, facets, search_facets and sort
    pub struct PackageSearchParams {
        /// the query, in Solr's syntax (default `*:*`)
        q: InDict<String>,
        /// a filter query
        fq: InDict<String>,
        /// more filter queries
        fq_list: InDict<Vec<String>>,
        /// the order of the results: `<field> asc|desc`, comma-separated (default
        /// `score desc, metadata_modified desc`)
        sort: InDict<String>,
        /// how many results (default 10, at most `catalog.search.rows_max`)
        rows: InDict<N>,
        /// how many results to skip
        start: InDict<N>,
        /// count facets (default true)
        facet: InDict<bool>,
        /// the fields to count facets of
        facet_field: InDict<Vec<String>> as "facet.field",
        /// how many values of each facet (default 50; negative: all)
        facet_limit: InDict<i64> as "facet.limit",
        /// the least count of a facet's value (default 1)
        facet_mincount: InDict<i64> as "facet.mincount",
        /// the fields of each result (`id`, `name` …; default: the whole dataset)
        fl: InDict<Value>,
        /// include the private datasets the caller may read (default false)
        include_private: InDict<bool>,
        /// include the drafts the caller may read (default false)
        include_drafts: InDict<bool>,
        /// include the deleted datasets the caller may read (default false)
        include_deleted: InDict<bool>,
        /// show the results of a custom dataset type with the default schema instead of the
        /// type's (default false)
        use_default_schema: InDict<bool>,
        /// the fields the query searches (Solr's `qf`)
        qf: InDict<String>,
        /// accepted for Solr clients and ignored (the search backend has its own scoring)
        def_type: InDict<String> as "defType",
        /// accepted for Solr clients and ignored
        mm: InDict<String>,
        /// accepted for Solr clients and ignored
        tie: InDict<String>,
        /// accepted for Solr clients and ignored
        bf: InDict<String>,
        /// accepted for Solr clients and ignored
        boost: InDict<String>,
        /// accepted for Solr clients and ignored
        df: InDict<String>,
    }
}

pub(crate) async fn package_search(
    ctx: &mut ActionContext,
    p: PackageSearchParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    let unknown: Vec<&String> = p
        .keys()
        .filter(|k| !ALLOWED.contains(&k.as_str()) && !k.starts_with("ext_"))
        .collect();
    if !unknown.is_empty() {
        let list: Vec<String> = unknown.iter().map(|k| format!("'{k}'")).collect();
        return Err(search_query_error(format!(
            "Invalid search parameters: [{}]",
            list.join(", ")
        )));
    }
    for key in STRING_PARAMS {
        if let Some(Value::String(s)) = p.get(*key) {
            if s.trim_start().starts_with("{!") {
                return Err(search_error(format!(
                    "Local parameters are not supported in param '{key}'."
                )));
            }
        }
    }
    let opts = SearchOptions::parse(ctx, &p)?;
    ctx.check_access("package_search", &p).await?;
    let fl_given = opts.fl.is_some();
    let mut out = run(ctx, opts).await?;
    if truthy(p.get("use_default_schema")) && !fl_given {
        default_schema_results(ctx, &mut out).await?;
    }
    Ok(out)
}

/// CKAN's `use_default_schema` in search (its `data_dict` instead of `validated_data_dict`):
/// the index keeps each dataset as its type's schema shows it, so the results of a custom type
/// are dictized again with the default schema. Datasets of type `dataset` are left as they are.
async fn default_schema_results(ctx: &mut ActionContext, out: &mut Value) -> CkanResult<()> {
    let Some(results) = out.get_mut("results").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    for r in results.iter_mut() {
        if r.get("type")
            .and_then(Value::as_str)
            .is_none_or(|t| t == "dataset")
        {
            continue;
        }
        let Some(id) = r.get("id").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        if let Some(row) = ctx.package_row(&id).await? {
            *r = crate::dictize::package_dict_as(ctx, &row, true).await?;
        }
    }
    Ok(())
}

action_params! {
    /// Rebuild the search index online and return {indexed, failed}. Sysadmins only.
    pub struct SearchIndexRebuildParams {}
}

/// Rebuilds the search index inside the running server (sysadmins only): the old index serves
/// until the new one swaps in, and changes made meanwhile are replayed into it.
pub(crate) async fn search_index_rebuild(
    ctx: &mut ActionContext,
    p: SearchIndexRebuildParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("search_index_rebuild", &p).await?;
    let app = ctx.app.clone();
    let report = app
        .search
        .rebuild(&app, &|_, _| {})
        .await
        .map_err(internal)?;
    Ok(json!({
        "indexed": report.indexed,
        "failed": report
            .failed
            .iter()
            .map(|(id, e)| json!({"id": id, "error": e}))
            .collect::<Vec<_>>(),
    }))
}
