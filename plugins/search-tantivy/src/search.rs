//! Answering a search on a generation: the query and filters, the page by the requested sort,
//! and the facets.

use catalog_framework::error::search_error;
use catalog_framework::prelude::*;
use catalog_framework::search::fields::{kind, FieldKind, SORTABLE};
use catalog_framework::search::{SearchHits, SearchRequest, SortField};
use tantivy::aggregation::agg_req::Aggregations;
use tantivy::aggregation::agg_result::AggregationResults;
use tantivy::aggregation::{AggContextParams, AggregationCollector, AggregationLimitsGuard};
use tantivy::collector::sort_key::SortByErasedType;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, Occur};
use tantivy::schema::Value as _;
use tantivy::{Order, TantivyDocument};

use crate::compact;
use crate::facets::{FacetCollector, FacetFruit};
use crate::generation::Generation;
use crate::query::{self, engine_error};

pub(crate) fn search_blocking(gen: &Generation, req: &SearchRequest) -> CkanResult<SearchHits> {
    let searcher = gen.reader.searcher();
    let generation = searcher.generation().generation_id();
    let key = format!("{req:?}");
    if let Some(hits) = gen.answers.get(generation, &key) {
        return Ok(hits);
    }
    let hits = search_uncached(gen, &searcher, req)?;
    gen.answers.put(generation, key, &hits);
    Ok(hits)
}

fn search_uncached(
    gen: &Generation,
    searcher: &tantivy::Searcher,
    req: &SearchRequest,
) -> CkanResult<SearchHits> {
    let builder = query::Builder::new(&gen.f);
    let main = builder.build(&req.query)?;
    let mut clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)> = vec![(Occur::Must, main)];
    for fq in &req.filters {
        clauses.push((
            Occur::Must,
            Box::new(tantivy::query::ConstScoreQuery::new(
                builder.build(fq)?,
                0.0,
            )),
        ));
    }
    let q = BooleanQuery::new(clauses);
    // Count, page and string facets in one pass over the matches.
    let facet_columns: Vec<String> = req
        .facet_fields
        .iter()
        .filter(|f| kind(f) == FieldKind::String)
        .map(|f| format!("s.{f}"))
        .collect();
    gen.uninverted.retain_segments(searcher);
    let facets_wanted = FacetCollector {
        columns: facet_columns,
        uninverted: gen.uninverted.clone(),
    };
    let (count, addrs, mut by_column) = if req.rows == 0 {
        let (count, fruit) = searcher
            .search(&q, &(Count, facets_wanted))
            .map_err(engine_error)?;
        (count, Vec::new(), fruit)
    } else {
        top_docs(searcher, &q, req, facets_wanted)?
    };
    let mut docs = Vec::with_capacity(addrs.len());
    for a in addrs {
        let d: TantivyDocument = searcher.doc(a).map_err(engine_error)?;
        docs.push(
            d.get_first(gen.f.data)
                .and_then(|v| v.as_str())
                .unwrap_or("{}")
                .to_string(),
        );
    }
    // Date facets (rare) by tantivy's aggregation; text fields hold tokens, not values: none.
    let dated: Vec<String> = req
        .facet_fields
        .iter()
        .filter(|f| kind(f) == FieldKind::Date)
        .cloned()
        .collect();
    let mut dated_counts = if dated.is_empty() || count == 0 {
        Vec::new()
    } else {
        facet_counts(searcher, &q, req, &dated)?
    };
    let mut facets = Vec::with_capacity(req.facet_fields.len());
    // The string facets' counts, in the order of their columns.
    let mut string_counts = by_column.iter_mut();
    for field in &req.facet_fields {
        let values = match kind(field) {
            FieldKind::String => {
                let counts = string_counts.next().map(std::mem::take).unwrap_or_default();
                ranked(counts.into_iter().collect(), req)
            }
            FieldKind::Date => dated_counts
                .iter_mut()
                .find(|(f, _)| f == field)
                .map(|(_, v)| std::mem::take(v))
                .unwrap_or_default(),
            FieldKind::Text | FieldKind::TextGeneral => Vec::new(),
        };
        facets.push((field.clone(), values));
    }
    Ok(SearchHits {
        count: count as u64,
        docs,
        facets,
    })
}

/// The column a sort key reads.
fn sort_column(field: &SortField) -> CkanResult<SortByErasedType> {
    match field {
        SortField::Score => Ok(SortByErasedType::for_score()),
        SortField::Field(f) if f == "metadata_modified" || f == "metadata_created" => {
            Ok(SortByErasedType::for_field(f))
        }
        SortField::Field(f) if SORTABLE.contains(&f.as_str()) => {
            Ok(SortByErasedType::for_field(format!("o.{f}")))
        }
        SortField::Field(f) => Err(search_error(format!(
            "Search engine returned an error running query: can not sort on undefined field: {f}"
        ))),
    }
}

fn order(desc: bool) -> Order {
    if desc {
        Order::Desc
    } else {
        Order::Asc
    }
}

/// The page of document addresses, by the requested sort keys then by id, with the count and
/// the facets of the same pass.
pub(crate) fn top_docs(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    req: &SearchRequest,
    facets: FacetCollector,
) -> CkanResult<(usize, Vec<tantivy::DocAddress>, FacetFruit)> {
    // Score and date sorts (at most two keys, a date among them) take the compact top-k of
    // [`compact`]. A sort by score alone stays general: without a `q` every match ties on it,
    // and the compact path reads the id of every tied match.
    let keys: Option<Vec<(compact::Key, bool)>> = req
        .sort
        .iter()
        .take(3)
        .map(|k| match &k.field {
            SortField::Score => Some((compact::Key::Score, k.descending)),
            SortField::Field(f) if f == "metadata_modified" || f == "metadata_created" => {
                Some((compact::Key::Date(f.clone()), k.descending))
            }
            SortField::Field(_) => None,
        })
        .collect();
    let dated = |k: &Vec<(compact::Key, bool)>| {
        k.len() <= 2 && k.iter().any(|(k, _)| matches!(k, compact::Key::Date(_)))
    };
    if let Some(keys) = keys.filter(dated) {
        let top = compact::TopCollector {
            keys,
            limit: req.start.saturating_add(req.rows),
        };
        let ((count, entries), fruit) = searcher.search(q, &(top, facets)).map_err(engine_error)?;
        let page = compact::page(searcher, entries, req.start, req.rows).map_err(engine_error)?;
        return Ok((count, page, fruit));
    }
    general_top_docs(searcher, q, req, facets)
}

/// [`top_docs`] for any sort, by tantivy's `TopDocs` on erased sort keys.
pub(crate) fn general_top_docs(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    req: &SearchRequest,
    facets: FacetCollector,
) -> CkanResult<(usize, Vec<tantivy::DocAddress>, FacetFruit)> {
    let mut keys: Vec<(SortByErasedType, Order)> = Vec::new();
    for k in req.sort.iter().take(3) {
        keys.push((sort_column(&k.field)?, order(k.descending)));
    }
    if !req
        .sort
        .iter()
        .take(3)
        .any(|k| k.field == SortField::Field("id".into()))
    {
        keys.push((SortByErasedType::for_field("o.id"), Order::Asc));
    }
    let top = TopDocs::with_limit(req.rows).and_offset(req.start);
    let mut it = keys.into_iter();
    let k1 = it.next().expect("at least the id key");
    match (it.next(), it.next(), it.next()) {
        (None, _, _) => collect(searcher, q, top.order_by(k1), facets),
        (Some(k2), None, _) => collect(searcher, q, top.order_by((k1, k2)), facets),
        (Some(k2), Some(k3), None) => collect(searcher, q, top.order_by((k1, k2, k3)), facets),
        (Some(k2), Some(k3), Some(k4)) => {
            collect(searcher, q, top.order_by((k1, k2, k3, k4)), facets)
        }
    }
}

fn collect<K, C>(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    collector: C,
    facets: FacetCollector,
) -> CkanResult<(usize, Vec<tantivy::DocAddress>, FacetFruit)>
where
    C: tantivy::collector::Collector<Fruit = Vec<(K, tantivy::DocAddress)>>,
{
    let (count, top, fruit) = searcher
        .search(q, &(Count, collector, facets))
        .map_err(engine_error)?;
    Ok((count, top.into_iter().map(|(_, a)| a).collect(), fruit))
}

/// A facet's values by count (descending) then value, cut at the limit, as Solr returns them.
fn ranked(mut values: Vec<(String, u64)>, req: &SearchRequest) -> Vec<(String, u64)> {
    values.retain(|(_, c)| *c >= req.facet_mincount.max(1));
    values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if let Some(l) = req.facet_limit {
        values.truncate(l);
    }
    values
}

/// One field's facet: `(field, [(value, count)])`.
type Facet = (String, Vec<(String, u64)>);

/// Facet counts of date fields by terms aggregations (string fields: [`FacetCollector`]).
fn facet_counts(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    req: &SearchRequest,
    fields: &[String],
) -> CkanResult<Vec<Facet>> {
    // Ask for more than the limit so that ties at the cut are broken by value, as Solr does.
    let size = req.facet_limit.map(|l| l + 100).unwrap_or(100_000);
    let mut aggs = serde_json::Map::new();
    for (i, field) in fields.iter().enumerate() {
        let column = match kind(field) {
            FieldKind::String => format!("s.{field}"),
            FieldKind::Date if field == "metadata_modified" || field == "metadata_created" => {
                field.clone()
            }
            FieldKind::Date => format!("d.{field}"),
            // Text fields hold tokens, not values: no facet (Solr would count tokens).
            FieldKind::Text | FieldKind::TextGeneral => continue,
        };
        aggs.insert(
            format!("f{i}"),
            json!({"terms": {"field": column, "size": size, "segment_size": size,
                   "min_doc_count": req.facet_mincount.max(1)}}),
        );
    }
    let parsed: Aggregations = serde_json::from_value(Value::Object(aggs)).map_err(engine_error)?;
    let collector = AggregationCollector::from_aggs(
        parsed,
        AggContextParams::new(AggregationLimitsGuard::default(), Default::default()),
    );
    let res: AggregationResults = searcher.search(q, &collector).map_err(engine_error)?;
    let res = serde_json::to_value(&res).map_err(engine_error)?;
    let mut out = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let values: Vec<(String, u64)> = res
            .get(format!("f{i}"))
            .and_then(|a| a.get("buckets"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| {
                let key = match b.get("key_as_string").or_else(|| b.get("key"))? {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some((key, b.get("doc_count")?.as_u64()?))
            })
            .collect();
        out.push((field.clone(), ranked(values, req)));
    }
    Ok(out)
}
