//! What a source cannot do to the harvester: send an entity bomb, a compressed bomb or a page
//! over the size cap, accept the connection and never answer, redirect to an internal
//! address. Each ends the job with a gather error, writes no dataset and deletes nothing.

use std::io::Write;
use std::time::{Duration, Instant};

use catalog_host::testkit::stores;
use serde_json::{json, Value};

use crate::support::{harvested, harvester, run_job, source, Answer, Files};

/// A job that ended with a gather error containing `needle`, having written nothing.
fn refused(job: &Value, needle: &str) {
    let summary = job["gather_error_summary"].to_string();
    assert!(summary.contains(needle), "expected «{needle}» in {summary}");
    assert_eq!(job["stats"]["added"], 0, "{job}");
    assert_eq!(job["stats"]["deleted"], 0, "{job}");
}

const BOMB: &str = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:dct="http://purl.org/dc/terms/"
  xmlns:dcat="http://www.w3.org/ns/dcat#">
  <dcat:Dataset rdf:about="http://x/ds/1"><dct:title>&lol4;</dct:title></dcat:Dataset>
</rdf:RDF>"#;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_sources_end_their_jobs_with_errors() {
    for kind in stores().await {
        let files = Files::start().await;
        let b = harvester(
            kind,
            json!({"max_page_bytes": 1_048_576, "read_timeout_secs": 1, "page_timeout_secs": 3}),
        )
        .await;

        files.put("/bomb.rdf", Answer::ok("application/rdf+xml", BOMB));
        let src = source(
            &b,
            "bomb",
            &format!("{}/bomb.rdf", files.base),
            "dcat_rdf",
            Value::Null,
        )
        .await;
        refused(&run_job(&b, &src, json!({})).await, "DOCTYPE");

        // 20 MB of zeros, 20 KB on the wire: stopped at the 1 MiB cap after decompression.
        let mut zipped = Answer::ok("text/turtle", gzip(&vec![b' '; 20 * 1024 * 1024]));
        zipped
            .headers
            .push(("Content-Encoding".into(), "gzip".into()));
        files.put("/zipped.ttl", zipped);
        let src = source(
            &b,
            "zipped",
            &format!("{}/zipped.ttl", files.base),
            "dcat_rdf",
            Value::Null,
        )
        .await;
        refused(&run_job(&b, &src, json!({})).await, "too big");

        files.put(
            "/big.ttl",
            Answer::ok("text/turtle", vec![b'#'; 2 * 1024 * 1024]),
        );
        let src = source(
            &b,
            "big",
            &format!("{}/big.ttl", files.base),
            "dcat_rdf",
            Value::Null,
        )
        .await;
        refused(&run_job(&b, &src, json!({})).await, "too big");

        files.put(
            "/hang.ttl",
            Answer {
                hang: true,
                ..Answer::default()
            },
        );
        let src = source(
            &b,
            "hang",
            &format!("{}/hang.ttl", files.base),
            "dcat_rdf",
            Value::Null,
        )
        .await;
        let started = Instant::now();
        refused(&run_job(&b, &src, json!({})).await, "timed out");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{kind}: {:?}",
            started.elapsed()
        );

        files.put(
            "/not.json",
            Answer::ok("application/json", "{\"dataset\": [{\"title\": \"x\"}"),
        );
        let src = source(
            &b,
            "broken-json",
            &format!("{}/not.json", files.base),
            "dcat_json",
            Value::Null,
        )
        .await;
        refused(&run_job(&b, &src, json!({})).await, "Error parsing file");
        assert!(harvested(&b, &src).await.is_empty(), "{kind}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redirects_to_internal_addresses_reach_nothing() {
    for kind in stores().await {
        // The watched listener: nothing may connect to it.
        let watched = Files::start().await;
        watched.put("/catalog.ttl", Answer::ok("text/turtle", ""));
        let files = Files::start().await;
        let mut redirect = Answer {
            status: 302,
            ..Answer::default()
        };
        redirect
            .headers
            .push(("Location".into(), format!("{}/catalog.ttl", watched.base)));
        files.put("/moved.ttl", redirect);
        let mut to_localhost = Answer {
            status: 302,
            ..Answer::default()
        };
        to_localhost.headers.push((
            "Location".into(),
            format!("http://localhost:{}/catalog.ttl", watched.port),
        ));
        files.put("/moved-name.ttl", to_localhost);
        // Only the redirecting server's host:port is allowed.
        let b = harvester(
            kind,
            json!({"allow_hosts": [format!("127.0.0.1:{}", files.port)]}),
        )
        .await;
        for path in ["/moved.ttl", "/moved-name.ttl"] {
            let src = source(
                &b,
                &path[1..path.len() - 4],
                &format!("{}{path}", files.base),
                "dcat_rdf",
                Value::Null,
            )
            .await;
            refused(&run_job(&b, &src, json!({})).await, "internal");
        }
        // A source on the watched port itself is refused when it is made.
        let e = b
            .err(
                Some(&b.admin),
                "harvest_source_create",
                json!({"name": "direct", "url": format!("{}/catalog.ttl", watched.base),
                       "source_type": "dcat_rdf", "owner_org": "harvested"}),
            )
            .await;
        assert!(e["url"].is_array(), "{kind}: {e}");
        assert_eq!(
            watched.hits(),
            0,
            "{kind}: the internal listener was reached"
        );
    }
}

/// A dataset with 10,000 distributions: past `max_page_triples` the page is refused whole;
/// within it, the dataset is refused as one record (more resources than a dataset may have),
/// the others of its page imported.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dataset_with_ten_thousand_distributions_is_one_errored_record() {
    for kind in stores().await {
        let files = Files::start().await;
        let base = &files.base;
        let mut ttl = String::from(
            "@prefix dcat: <http://www.w3.org/ns/dcat#> .\n@prefix dct: <http://purl.org/dc/terms/> .\n",
        );
        ttl.push_str(&format!(
            "<{base}/ds/huge> a dcat:Dataset ; dct:title \"Huge\" .\n"
        ));
        for i in 0..10_000 {
            ttl.push_str(&format!(
                "<{base}/ds/huge> dcat:distribution <{base}/d/{i}> .\n<{base}/d/{i}> a dcat:Distribution ; \
                 dct:title \"Part {i}\" ; dcat:accessURL <{base}/files/{i}.csv> .\n"
            ));
        }
        for n in ["small-a", "small-b"] {
            ttl.push_str(&format!(
                "<{base}/ds/{n}> a dcat:Dataset ; dct:title \"{n}\" .\n"
            ));
        }
        files.put("/big-dataset.ttl", Answer::ok("text/turtle", ttl));
        // The page's 40,000 triples are past the default bound: the whole page is refused.
        let a = harvester(kind, json!({})).await;
        let src = source(
            &a,
            "huge",
            &format!("{base}/big-dataset.ttl"),
            "dcat_rdf",
            Value::Null,
        )
        .await;
        refused(&run_job(&a, &src, json!({})).await, "max_page_triples");
        let b = harvester(kind, json!({"max_page_triples": 100_000})).await;
        let src = source(
            &b,
            "huge",
            &format!("{base}/big-dataset.ttl"),
            "dcat_rdf",
            Value::Null,
        )
        .await;
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["added"], 2, "{kind}: {job}");
        assert_eq!(job["stats"]["errored"], 1, "{kind}: {job}");
        let summary = job["object_error_summary"].to_string();
        assert!(summary.contains("resources"), "{kind}: {summary}");
        assert_eq!(harvested(&b, &src).await.len(), 2, "{kind}");
    }
}
