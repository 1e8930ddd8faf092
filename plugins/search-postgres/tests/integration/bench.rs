//! A load check at catalog scale, not run by default:
//! `SEARCH_PG_BENCH_DOCS=300000 cargo test -p catalog-plugin-search-postgres --test integration
//! -- --ignored --nocapture bench`. Prints the time of typical searches.

use std::time::Instant;

use catalog_framework::prelude::*;
use catalog_framework::search::query::{parse_lucene, parse_q};
use catalog_framework::search::{IndexDocument, SearchBackend, SearchRequest, SortField, SortKey};
use catalog_plugin_search_postgres::PostgresBackend;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::scratch::with_store;

fn word(rng: &mut StdRng, vocab: &[String]) -> String {
    // Roughly Zipfian: low indexes are much more frequent.
    let x: f64 = rng.gen();
    let i = ((vocab.len() as f64).powf(x) as usize).saturating_sub(1);
    vocab[i.min(vocab.len() - 1)].clone()
}

fn words(rng: &mut StdRng, vocab: &[String], n: usize) -> String {
    (0..n)
        .map(|_| word(rng, vocab))
        .collect::<Vec<_>>()
        .join(" ")
}

fn dataset(i: usize, rng: &mut StdRng, vocab: &[String]) -> Value {
    let formats = [
        "CSV", "JSON", "XLSX", "PDF", "XML", "GeoJSON", "ZIP", "HTML", "API", "WMS",
    ];
    let nres = rng.gen_range(0..5);
    let year = rng.gen_range(2015..2025);
    let modified = format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}",
        rng.gen_range(1..13),
        rng.gen_range(1..29),
        rng.gen_range(0..24),
        rng.gen_range(0..60),
        rng.gen_range(0..60),
        rng.gen_range(0..1_000_000)
    );
    let title_len = rng.gen_range(2..8);
    let notes_len = rng.gen_range(20..150);
    let ntags = rng.gen_range(1..6);
    let license = ["cc-by", "cc-by-sa", "odc-pddl", "other-open"][i % 4];
    json!({
        "id": format!("{i:08}-0000-0000-0000-000000000000"),
        "name": format!("dataset-{i}"),
        "title": words(rng, vocab, title_len),
        "notes": words(rng, vocab, notes_len),
        "type": "dataset", "state": if i % 50 == 0 { "draft" } else { "active" },
        "private": i % 10 == 0,
        "license_id": license,
        "owner_org": format!("org-{}", i % 300),
        "metadata_created": modified, "metadata_modified": modified,
        "tags": (0..ntags).map(|_| json!({"name": format!("tag-{}", word(rng, vocab))})).collect::<Vec<_>>(),
        "groups": (0..rng.gen_range(0..3)).map(|_| json!({"name": format!("group-{}", rng.gen_range(0..50))})).collect::<Vec<_>>(),
        "organization": {"name": format!("org-{}", i % 300)},
        "resources": (0..nres).map(|r| json!({
            "name": format!("resource {r} {}", word(rng, vocab)),
            "format": formats[rng.gen_range(0..formats.len())],
            "url": format!("http://data.example.org/{i}/{r}.csv"),
            "description": words(rng, vocab, 10),
        })).collect::<Vec<_>>(),
        "extras": [{"key": "spatial_coverage", "value": words(rng, vocab, 2)}],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a load check; run it explicitly"]
async fn bench() {
    let n: usize = std::env::var("SEARCH_PG_BENCH_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    // `SEARCH_PG_BENCH_URL` names a database to keep (loaded once) instead of a scratch one.
    if let Ok(url) = std::env::var("SEARCH_PG_BENCH_URL") {
        let store = catalog_framework::store::Store::connect(&url)
            .await
            .unwrap();
        store.migrate().await.unwrap();
        run(store, n).await;
        return;
    }
    with_store(move |store, _| run(store, n)).await;
}

async fn run(store: catalog_framework::store::Store, n: usize) {
    {
        let b = PostgresBackend::open(store.pool.clone(), store.backend)
            .await
            .unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        let vocab: Vec<String> = (0..8000)
            .map(|i| {
                let len = rng.gen_range(3..10);
                let w: String = (0..len)
                    .map(|_| rng.gen_range(b'a'..=b'z') as char)
                    .collect();
                format!("{w}{}", ["", "s", "ing", "ed"][i % 4])
            })
            .collect();
        let t = Instant::now();
        let loaded = b.indexed().await.unwrap().len();
        let mut rebuild = b.rebuild().await.unwrap();
        for chunk in (0..if loaded == n { 0 } else { n })
            .collect::<Vec<_>>()
            .chunks(500)
        {
            let docs: Vec<IndexDocument> = chunk
                .iter()
                .map(|i| {
                    let d = dataset(*i, &mut rng, &vocab);
                    let labels = if i % 10 == 0 {
                        vec![format!("member-org-{}", i % 300)]
                    } else {
                        vec!["public".to_string()]
                    };
                    IndexDocument::from_package(&d, &labels, "default", &[])
                })
                .collect();
            rebuild.add(docs).await.unwrap();
        }
        if loaded != n {
            rebuild.finish().await.unwrap();
        } else {
            drop(rebuild);
        }
        println!("indexed {n} datasets in {:?}", t.elapsed());
        let size: String =
            sqlx::query_scalar("SELECT pg_size_pretty(pg_total_relation_size('search_doc'))")
                .fetch_one(&store.pool)
                .await
                .unwrap();
        println!("search_doc with indexes and TOAST: {size}");

        let now = chrono::Utc::now();
        let w1 = vocab[3].clone();
        let w2 = vocab[40].clone();
        let w3 = vocab[700].clone();
        println!("words: {w1} {w2} {w3}");
        let anon = ["+capacity:public +state:active", "+site_id:\"default\""];
        let user = [
            "+state:active",
            "+site_id:\"default\"",
            "+permission_labels:(\"public\" OR \"member-org-7\" OR \"creator-x\")",
        ];
        let facets = ["organization", "groups", "tags", "res_format", "license_id"];
        let cases: Vec<(String, String, Vec<&str>, &str, bool)> = vec![
            (
                "front page".into(),
                "".into(),
                anon.to_vec(),
                "score desc, metadata_modified desc",
                true,
            ),
            (
                "front page, no facets".into(),
                "".into(),
                anon.to_vec(),
                "score desc, metadata_modified desc",
                false,
            ),
            (
                "common word".into(),
                w1.clone(),
                anon.to_vec(),
                "score desc, metadata_modified desc",
                true,
            ),
            (
                "rare word".into(),
                w3.clone(),
                anon.to_vec(),
                "score desc, metadata_modified desc",
                true,
            ),
            (
                "two words".into(),
                format!("{w2} {w3}"),
                user.to_vec(),
                "score desc, metadata_modified desc",
                true,
            ),
            (
                "three words (mm)".into(),
                format!("{w1} {w2} {w3}"),
                anon.to_vec(),
                "score desc, metadata_modified desc",
                true,
            ),
            (
                "tag filter".into(),
                format!("tags:tag-{w1}"),
                anon.to_vec(),
                "metadata_modified desc",
                true,
            ),
            (
                "org + format".into(),
                "organization:org-7 AND res_format:CSV".into(),
                user.to_vec(),
                "name asc",
                true,
            ),
            (
                "date range".into(),
                "metadata_modified:[NOW-5YEARS TO NOW-4YEARS]".into(),
                anon.to_vec(),
                "metadata_modified desc",
                false,
            ),
            (
                "name wildcard".into(),
                "name:dataset-1234*".into(),
                anon.to_vec(),
                "name asc",
                false,
            ),
            (
                "title phrase".into(),
                format!("title:\"{w1} {w2}\""),
                anon.to_vec(),
                "score desc",
                false,
            ),
            (
                "deep page".into(),
                "".into(),
                anon.to_vec(),
                "title_string asc",
                false,
            ),
        ];
        for (label, q, fq, sort, with_facets) in cases {
            let req = SearchRequest {
                query: parse_q(&q, now).unwrap(),
                filters: fq.iter().map(|f| parse_lucene(f, now).unwrap()).collect(),
                sort: sort
                    .split(',')
                    .map(|k| {
                        let mut p = k.split_whitespace();
                        let f = p.next().unwrap();
                        SortKey {
                            field: if f == "score" {
                                SortField::Score
                            } else {
                                SortField::Field(f.into())
                            },
                            descending: p.next() == Some("desc"),
                        }
                    })
                    .collect(),
                start: if label == "deep page" { 5000 } else { 0 },
                rows: 20,
                facet_fields: if with_facets {
                    facets.iter().map(|s| s.to_string()).collect()
                } else {
                    vec![]
                },
                facet_limit: Some(50),
                facet_mincount: 1,
            };
            // The first run computes counts and facets; the next ones find them cached.
            let t = Instant::now();
            let count = b.search(&req).await.unwrap().count;
            let first = t.elapsed().as_secs_f64() * 1000.0;
            let t = Instant::now();
            let runs = 3;
            for _ in 0..runs {
                b.search(&req).await.unwrap();
            }
            let cached = t.elapsed().as_secs_f64() * 1000.0 / runs as f64;
            println!("{label:<24} {count:>8} hits  {first:>8.1} ms  cached {cached:>7.1} ms");
        }
    }
}
