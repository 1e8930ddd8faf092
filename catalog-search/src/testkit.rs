//! The shared search-backend cases (`conformance-tests/search-backend-cases.json`): datasets
//! and queries with the answers every [`SearchBackend`] must give. Backend crates run them from
//! their tests with [`run_cases`]; a case may list a backend under `xfail` with the reason.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::query::{parse_instant, parse_lucene, parse_q};
use super::{IndexDocument, SearchBackend, SearchRequest, SortField, SortKey};
use catalog_store::error::ErrorKind;

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
async fn run(b: &dyn SearchBackend, now: DateTime<Utc>, c: &Case) -> Result<(), String> {
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

/// The outcome of a run: how many cases passed (expected failures included) and a line per
/// unexpected result.
pub struct CaseReport {
    pub passed: usize,
    pub failures: Vec<String>,
}

/// Indexes the suite's datasets into `backend` (empty) and runs every case; `name` selects the
/// cases' `xfail` entries.
pub async fn run_cases(backend: &dyn SearchBackend, name: &str, suite_json: &str) -> CaseReport {
    let suite: Suite = serde_json::from_str(suite_json).expect("parsing the search cases");
    let docs: Vec<IndexDocument> = suite
        .datasets
        .iter()
        .map(|d| IndexDocument::from_package(d, &labels(d), &suite.site_id, &[]))
        .collect();
    backend
        .apply(docs, vec![])
        .await
        .expect("indexing the cases' datasets");
    let now = parse_instant(&suite.now).expect("`now` is an instant");
    let mut report = CaseReport {
        passed: 0,
        failures: Vec::new(),
    };
    for c in &suite.cases {
        match (run(backend, now, c).await, c.xfail.get(name)) {
            (Ok(()), None) | (Err(_), Some(_)) => report.passed += 1,
            (Ok(()), Some(why)) => report.failures.push(format!(
                "{}: passes but is listed as a known failure ({why}); remove its xfail",
                c.name
            )),
            (Err(e), None) => report.failures.push(format!("{}: {e}", c.name)),
        }
    }
    report
}
