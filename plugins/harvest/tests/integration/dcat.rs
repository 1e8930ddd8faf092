//! The `dcat_rdf` harvester: another catalog's `/catalog.<ext>` through its Hydra pages, each
//! harvested dataset's RDF isomorphic to the source's (URIs kept); resources keep their ids
//! across runs; a run that fails on a page deletes nothing; a paging loop is stopped. And the
//! `dcat_json` harvester on a DCAT-US data.json, deletions included.

use std::collections::HashMap;

use catalog_host::testkit::{stores, StoreKind, TestServer};
use catalog_plugin_dcat::rdf::serialize::{canonical_ntriples, parse, RdfFormat};
use serde_json::{json, Value};

use crate::support::{extra, harvested, harvester, run_job, source, Answer, Files};

async fn rdf_catalog(kind: StoreKind, n: usize, per_page: i64) -> TestServer {
    let a = TestServer::start(kind, "admin", |c| {
        c.catalogext
            .values
            .insert("dcat".into(), json!({"datasets_per_page": per_page}));
    })
    .await;
    a.ok(
        "organization_create",
        json!({"name": "agency", "title": "The Agency"}),
    )
    .await;
    for i in 0..n {
        a.ok(
            "package_create",
            json!({
                "name": format!("rdf-{i:03}"),
                "title": format!("RDF dataset {i}"),
                "notes": format!("Described {i}"),
                "owner_org": "agency",
                "license_id": "cc-by",
                "version": "2.0",
                "url": format!("https://agency.example.org/{i}"),
                "tags": [{"name": "zulu"}, {"name": "alpha"}, {"name": format!("k{}", i % 5)}],
                "extras": [
                    {"key": "contact_name", "value": "Data Desk"},
                    {"key": "contact_email", "value": "desk@agency.example.org"},
                    {"key": "temporal_start", "value": "2020-01-01"},
                ],
                "resources": [
                    {"name": "Data", "url": format!("https://agency.example.org/{i}.csv"),
                     "format": "CSV", "description": "rows"}
                ],
            }),
        )
        .await;
    }
    a
}

async fn fetch_graph(url: &str, format: RdfFormat) -> String {
    let body = reqwest::get(url).await.unwrap().bytes().await.unwrap();
    let g = parse(&body, format, None).unwrap_or_else(|e| panic!("{url}: {e}"));
    canonical_ntriples(&g)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_catalogs_rdf_round_trips_in_every_format() {
    for kind in stores().await {
        let a = rdf_catalog(kind, 200, 50).await;
        for (ext, format) in [
            ("ttl", RdfFormat::Turtle),
            ("rdf", RdfFormat::RdfXml),
            ("jsonld", RdfFormat::JsonLd),
        ] {
            let b = harvester(kind, json!({})).await;
            let url = format!("{}/catalog.{ext}", a.base_url);
            let src = source(&b, "agency-rdf", &url, "dcat_rdf", Value::Null).await;
            let job = run_job(&b, &src, json!({})).await;
            assert_eq!(job["stats"]["added"], 200, "{kind} {ext}: {job}");
            assert_eq!(job["stats"]["errored"], 0, "{kind} {ext}: {job}");
            if ext == "ttl" {
                // The same graph read again is the same records (RDF values have no order).
                let again = run_job(&b, &src, json!({})).await;
                assert_eq!(again["stats"]["not modified"], 200, "{kind}: {again}");
                assert_eq!(again["stats"]["updated"], 0, "{kind}: {again}");
            }
            let got = harvested(&b, &src).await;
            assert_eq!(got.len(), 200, "{kind} {ext}");
            let by_uri: HashMap<String, Value> = got
                .iter()
                .map(|d| (extra(d, "uri").expect("a uri"), d.clone()))
                .collect();
            for i in [0usize, 49, 50, 137, 199] {
                let theirs = a
                    .ok("package_show", json!({"id": format!("rdf-{i:03}")}))
                    .await;
                let uri = format!("{}/dataset/{}", a.base_url, theirs["id"].as_str().unwrap());
                let ours = by_uri
                    .get(&uri)
                    .unwrap_or_else(|| panic!("{kind} {ext}: {uri} kept"));
                let a_rdf = fetch_graph(&format!("{uri}.ttl"), RdfFormat::Turtle).await;
                let b_rdf = fetch_graph(
                    &format!(
                        "{}/dataset/{}.ttl",
                        b.base_url,
                        ours["id"].as_str().unwrap()
                    ),
                    RdfFormat::Turtle,
                )
                .await;
                assert_eq!(
                    b_rdf, a_rdf,
                    "{kind} {ext}: dataset {i} is not the same graph"
                );
                let _ = format;
            }
        }
    }
}

/// A paged Turtle catalog served from files: page `k` lists `names[k]` and links to the
/// next page unless it is the last (or to `next_override`).
fn turtle_page(
    base: &str,
    k: usize,
    names: &[&str],
    last: bool,
    next_override: Option<&str>,
) -> Answer {
    let mut ttl = String::from(
        "@prefix dcat: <http://www.w3.org/ns/dcat#> .\n@prefix dct: <http://purl.org/dc/terms/> .\n\
         @prefix hydra: <http://www.w3.org/ns/hydra/core#> .\n",
    );
    for n in names {
        ttl.push_str(&format!(
            "<{base}/ds/{n}> a dcat:Dataset ; dct:title \"Title {n}\" ; dct:identifier \"{n}\" ;\n\
             dcat:distribution <{base}/ds/{n}/csv> .\n<{base}/ds/{n}/csv> a dcat:Distribution ; \
             dct:title \"CSV of {n}\" ; dcat:accessURL <{base}/files/{n}.csv> .\n"
        ));
    }
    let next = next_override
        .map(str::to_string)
        .or_else(|| (!last).then(|| format!("{base}/cat.ttl?page={}", k + 2)));
    ttl.push_str(&format!(
        "<{base}/cat.ttl?page={}> a hydra:PagedCollection",
        k + 1
    ));
    if let Some(n) = next {
        ttl.push_str(&format!(" ; hydra:next <{n}>"));
    }
    ttl.push_str(" .\n");
    Answer::ok("text/turtle", ttl)
}

fn serve_pages(files: &Files, pages: &[Vec<&str>]) {
    for (k, names) in pages.iter().enumerate() {
        let path = if k == 0 {
            "/cat.ttl".to_string()
        } else {
            format!("/cat.ttl?page={}", k + 1)
        };
        files.put(
            &path,
            turtle_page(&files.base, k, names, k + 1 == pages.len(), None),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resources_keep_their_ids_and_a_failed_run_deletes_nothing() {
    for kind in stores().await {
        let files = Files::start().await;
        serve_pages(&files, &[vec!["a", "b"], vec!["c", "d"], vec!["e", "f"]]);
        let b = harvester(kind, json!({})).await;
        let src = source(
            &b,
            "paged",
            &format!("{}/cat.ttl", files.base),
            "dcat_rdf",
            Value::Null,
        )
        .await;
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["added"], 6, "{kind}: {job}");
        let before = harvested(&b, &src).await;
        let res_id = |ds: &[Value], guid: &str| {
            ds.iter()
                .find(|d| extra(d, "guid").as_deref() == Some(&format!("{}/ds/{guid}", files.base)))
                .map(|d| d["resources"][0]["id"].clone())
                .unwrap()
        };

        // `c` changes its title; its resource keeps its id.
        serve_pages(&files, &[vec!["a", "b"], vec!["c", "d"], vec!["e", "f"]]);
        let mut page2 = turtle_page(&files.base, 1, &["c", "d"], false, None);
        page2.body = String::from_utf8(page2.body)
            .unwrap()
            .replace("Title c", "New title c")
            .into_bytes();
        files.put("/cat.ttl?page=2", page2);
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["updated"], 1, "{kind}: {job}");
        assert_eq!(job["stats"]["not modified"], 5, "{kind}: {job}");
        let after = harvested(&b, &src).await;
        assert_eq!(
            res_id(&before, "c"),
            res_id(&after, "c"),
            "{kind}: the resource kept its id"
        );

        // `a` is gone from page 1 and page 3 fails: nothing is deleted.
        files.put("/cat.ttl", turtle_page(&files.base, 0, &["b"], false, None));
        files.put(
            "/cat.ttl?page=3",
            Answer {
                status: 500,
                content_type: "text/plain".into(),
                body: b"boom".to_vec(),
                ..Answer::default()
            },
        );
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["deleted"], 0, "{kind}: {job}");
        let summary = job["gather_error_summary"].to_string();
        assert!(
            summary.contains("Server responded with 500"),
            "{kind}: {summary}"
        );
        assert_eq!(harvested(&b, &src).await.len(), 6, "{kind}");

        // Page 3 back: `a` goes.
        files.put(
            "/cat.ttl?page=3",
            turtle_page(&files.base, 2, &["e", "f"], true, None),
        );
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["deleted"], 1, "{kind}: {job}");
        assert_eq!(harvested(&b, &src).await.len(), 5, "{kind}");

        // Page 2 leads back to page 1: stopped with a gather error, nothing deleted.
        files.put(
            "/cat.ttl?page=2",
            turtle_page(
                &files.base,
                1,
                &["c"],
                false,
                Some(&format!("{}/cat.ttl", files.base)),
            ),
        );
        let job = run_job(&b, &src, json!({})).await;
        assert!(
            job["gather_error_summary"]
                .to_string()
                .contains("comes back to a page already read"),
            "{kind}: {job}"
        );
        assert_eq!(job["stats"]["deleted"], 0, "{kind}: {job}");
        assert_eq!(harvested(&b, &src).await.len(), 5, "{kind}");
    }
}

fn data_json(ids: &[&str]) -> Vec<u8> {
    let datasets: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({
                "@type": "dcat:Dataset",
                "identifier": format!("https://example.gov/id/{id}"),
                "title": format!("Federal {id}"),
                "description": "A federal dataset",
                "keyword": ["transport"],
                "modified": "2024-01-31",
                "publisher": {"name": "Example Agency"},
                "contactPoint": {"fn": "Jane Doe", "hasEmail": "mailto:jane@example.gov"},
                "accessLevel": "public",
                "distribution": [{"title": "CSV", "downloadURL": format!("https://example.gov/{id}.csv"),
                                  "mediaType": "text/csv", "format": "CSV"}]
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "@type": "dcat:Catalog",
        "conformsTo": "https://project-open-data.cio.gov/v1.1/schema",
        "dataset": datasets,
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dcat_us_data_json_is_harvested_and_kept_in_sync() {
    for kind in stores().await {
        let files = Files::start().await;
        files.put(
            "/data.json",
            Answer::ok("application/json", data_json(&["one", "two", "three"])),
        );
        let b = harvester(kind, json!({})).await;
        let src = source(
            &b,
            "federal",
            &format!("{}/data.json", files.base),
            "dcat_json",
            Value::Null,
        )
        .await;
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["added"], 3, "{kind}: {job}");
        let got = harvested(&b, &src).await;
        let one = got
            .iter()
            .find(|d| d["title"] == "Federal one")
            .expect("one");
        assert_eq!(
            extra(one, "guid").as_deref(),
            Some("https://example.gov/id/one"),
            "{kind}"
        );
        assert_eq!(
            extra(one, "contact_email").as_deref(),
            Some("jane@example.gov"),
            "{kind}"
        );
        assert_eq!(one["resources"][0]["mimetype"], "text/csv", "{kind}");
        files.put(
            "/data.json",
            Answer::ok("application/json", data_json(&["one", "three"])),
        );
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["deleted"], 1, "{kind}: {job}");
        assert_eq!(job["stats"]["not modified"], 2, "{kind}: {job}");
        assert_eq!(harvested(&b, &src).await.len(), 2, "{kind}");
    }
}
