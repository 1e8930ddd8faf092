//! Runs the shared search-backend cases (`conformance-tests/search-backend-cases.json`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use catalog_framework::error::ErrorKind;
use catalog_framework::prelude::*;
use catalog_framework::search::query::parse_instant;
use catalog_framework::search::query::{parse_lucene, parse_q};
use catalog_plugin_search_postgres::PostgresBackend;
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::scratch::with_store;

const BACKEND: &str = "postgres";

#[derive(Deserialize)]
struct Suite {
    now: String,
    site_id: String,
    datasets: Vec<Value>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    fq: Vec<String>,
    sort: Option<String>,
    #[serde(default)]
    start: usize,
    rows: Option<usize>,
    #[serde(default)]
    facet_fields: Vec<String>,
    facet_limit: Option<usize>,
    facet_mincount: Option<u64>,
    expect_ids: Option<Vec<String>>,
    expect_count: Option<u64>,
    expect_facets: Option<BTreeMap<String, Vec<(String, u64)>>>,
    expect_error: Option<String>,
    #[serde(default)]
    xfail: BTreeMap<String, String>,
}

pub fn cases_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance-tests/search-backend-cases.json")
}

fn labels(d: &Value) -> Vec<String> {
    if d["private"].as_bool().unwrap_or(false) {
        vec![format!("member-{}", d["owner_org"].as_str().unwrap_or(""))]
    } else {
        vec!["public".into()]
    }
}

fn parse_sort(s: &str) -> Vec<SortKey> {
    s.split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(|k| {
            let mut parts = k.split_whitespace();
            let field = parts.next().expect("sort field");
            let descending = parts.next() == Some("desc");
            SortKey {
                field: if field == "score" {
                    SortField::Score
                } else {
                    SortField::Field(field.into())
                },
                descending,
            }
        })
        .collect()
}

/// Runs one case; `Err` describes how it failed.
async fn run(b: &PostgresBackend, now: DateTime<Utc>, c: &Case) -> Result<(), String> {
    let req = SearchRequest {
        query: parse_q(&c.q, now).map_err(|e| format!("q does not parse: {e}"))?,
        filters: c
            .fq
            .iter()
            .map(|f| parse_lucene(f, now))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("fq does not parse: {e}"))?,
        sort: parse_sort(c.sort.as_deref().unwrap_or("score desc")),
        start: c.start,
        rows: c.rows.unwrap_or(1000),
        facet_fields: c.facet_fields.clone(),
        facet_limit: c.facet_limit,
        facet_mincount: c.facet_mincount.unwrap_or(1),
    };
    let hits = match (b.search(&req).await, &c.expect_error) {
        (Err(e), Some(kind)) if kind == "search" && e.kind == ErrorKind::Search => return Ok(()),
        (Err(e), _) => return Err(format!("error {e}")),
        (Ok(_), Some(kind)) => return Err(format!("expected a {kind} error, got results")),
        (Ok(h), None) => h,
    };
    let mut ids: Vec<String> = hits
        .docs
        .iter()
        .map(|d| {
            serde_json::from_str::<Value>(d).expect("stored data is JSON")["id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    if let Some(expected) = &c.expect_ids {
        let mut expected = expected.clone();
        if c.sort.is_none() {
            ids.sort();
            expected.sort();
        }
        if ids != expected {
            return Err(format!("ids {ids:?}, expected {expected:?}"));
        }
        let count = c.expect_count.unwrap_or(expected.len() as u64);
        if hits.count != count {
            return Err(format!("count {}, expected {count}", hits.count));
        }
    } else if let Some(count) = c.expect_count {
        if hits.count != count {
            return Err(format!("count {}, expected {count}", hits.count));
        }
    }
    if let Some(expected) = &c.expect_facets {
        let got: BTreeMap<String, Vec<(String, u64)>> = hits.facets.into_iter().collect();
        if &got != expected {
            return Err(format!("facets {got:?}, expected {expected:?}"));
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_search_backend_cases() {
    let text = std::fs::read_to_string(cases_path()).expect("reading the cases");
    let suite: Suite = serde_json::from_str(&text).expect("parsing the cases");
    with_store(|store, _| async move {
        let b = PostgresBackend::open(store.pool.clone(), store.backend)
            .await
            .expect("opening the backend");
        let docs: Vec<IndexDocument> = suite
            .datasets
            .iter()
            .map(|d| IndexDocument::from_package(d, &labels(d), &suite.site_id, &[]))
            .collect();
        b.apply(docs, vec![]).await.expect("indexing");
        let now = parse_instant(&suite.now).expect("`now` is an instant");
        let mut report = Vec::new();
        let (mut passed, mut failed) = (0, 0);
        for c in &suite.cases {
            let outcome = run(&b, now, c).await;
            match (outcome, c.xfail.get(BACKEND)) {
                (Ok(()), None) => passed += 1,
                (Err(e), Some(why)) => {
                    passed += 1;
                    println!("xfail {}: {e} ({why})", c.name);
                }
                (Ok(()), Some(why)) => {
                    failed += 1;
                    report.push(format!(
                        "{}: passes but is listed as a known failure ({why}); remove its xfail",
                        c.name
                    ));
                }
                (Err(e), None) => {
                    failed += 1;
                    report.push(format!("{}: {e}", c.name));
                }
            }
        }
        println!("search backend cases: {passed} passed, {failed} failed");
        assert!(report.is_empty(), "failing cases:\n{}", report.join("\n"));
    })
    .await;
}
