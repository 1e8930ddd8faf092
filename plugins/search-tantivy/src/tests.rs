use super::*;
use crate::facets::FacetCollector;
use crate::generation::{merge_policy, MERGE_MAX_DOCS};
use crate::schema::schema;
use crate::search::{general_top_docs, top_docs};
use catalog_framework::search::query::{parse_lucene, parse_q};
use catalog_framework::search::{SortField, SortKey};
use chrono::Utc;
use tantivy::Index;

fn pkg(
    id: &str,
    name: &str,
    title: &str,
    tags: &[&str],
    org: &str,
    modified: &str,
) -> IndexDocument {
    let dict = json!({
        "id": id, "name": name, "title": title, "type": "dataset", "private": false,
        "state": "active", "notes": format!("Notes about {title}"),
        "metadata_created": "2024-01-01T00:00:00", "metadata_modified": modified,
        "tags": tags.iter().map(|t| json!({"name": t})).collect::<Vec<_>>(),
        "organization": {"name": org}, "groups": [],
        "resources": [{"format": "CSV", "name": "data file", "url": "http://x/a.csv"}],
        "extras": [{"key": "theme", "value": "health care"}],
    });
    IndexDocument::from_package(&dict, &["public".to_string()], "default", &[])
}

fn req(q: &str, fq: &[&str]) -> SearchRequest {
    let now = Utc::now();
    SearchRequest {
        query: parse_q(q, now).unwrap(),
        filters: fq.iter().map(|f| parse_lucene(f, now).unwrap()).collect(),
        sort: vec![SortKey {
            field: SortField::Field("name".into()),
            descending: false,
        }],
        start: 0,
        rows: 10,
        facet_fields: vec!["tags".into(), "organization".into()],
        facet_limit: Some(50),
        facet_mincount: 1,
    }
}

fn names(h: &SearchHits) -> Vec<String> {
    h.docs
        .iter()
        .map(|d| {
            serde_json::from_str::<Value>(d).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// A new index holding three datasets, two of them `acme`'s.
async fn three_datasets() -> (tempfile::TempDir, TantivyBackend) {
    let dir = tempfile::tempdir().unwrap();
    let b = TantivyBackend::open(dir.path()).unwrap();
    b.apply(
        vec![
            pkg(
                "1",
                "air",
                "Air Quality Readings",
                &["Environment", "air"],
                "acme",
                "2024-03-01T00:00:00",
            ),
            pkg(
                "2",
                "water",
                "Running Water",
                &["Environment"],
                "acme",
                "2024-02-01T00:00:00",
            ),
            pkg(
                "3",
                "budget",
                "City Budget",
                &["economy"],
                "city",
                "2024-01-01T00:00:00",
            ),
        ],
        vec![],
    )
    .await
    .unwrap();
    (dir, b)
}

#[tokio::test]
async fn indexes_searches_and_facets() {
    let (_dir, b) = three_datasets().await;
    let h = b.search(&req("", &[])).await.unwrap();
    assert_eq!(h.count, 3);
    assert_eq!(names(&h), ["air", "budget", "water"]);
    assert_eq!(
        h.facets[0].1,
        vec![
            ("Environment".to_string(), 2),
            ("air".to_string(), 1),
            ("economy".to_string(), 1)
        ]
    );
    // Exact, case-sensitive string field; stemmed text; wildcard; range; negation; dismax.
    assert_eq!(
        names(&b.search(&req("tags:Environment", &[])).await.unwrap()),
        ["air", "water"]
    );
    assert_eq!(
        b.search(&req("tags:environment", &[])).await.unwrap().count,
        0
    );
    assert_eq!(
        names(&b.search(&req("title:run", &[])).await.unwrap()),
        ["water"]
    );
    assert_eq!(
        names(&b.search(&req("name:wat*", &[])).await.unwrap()),
        ["water"]
    );
    assert_eq!(
        names(&b.search(&req("title:read*", &[])).await.unwrap()),
        ["air"]
    );
    assert_eq!(
        names(
            &b.search(&req(
                "*:*",
                &["metadata_modified:[2024-02-01T00:00:00Z TO *]"]
            ))
            .await
            .unwrap()
        ),
        ["air", "water"]
    );
    assert_eq!(
        names(
            &b.search(&req("*:*", &["-organization:acme"]))
                .await
                .unwrap()
        ),
        ["budget"]
    );
    assert_eq!(
        names(&b.search(&req("budget city", &[])).await.unwrap()),
        ["budget"]
    );
    assert_eq!(
        names(&b.search(&req("extras_theme:care", &[])).await.unwrap()),
        ["air", "budget", "water"]
    );
    assert_eq!(
        names(&b.search(&req("theme:\"health care\"", &[])).await.unwrap()),
        ["air", "budget", "water"]
    );
    assert_eq!(b.search(&req("name:[b TO c]", &[])).await.unwrap().count, 1);
    assert_eq!(
        b.search(&req("extras_theme:*", &[])).await.unwrap().count,
        3
    );
    // Sort by date, paging.
    let mut r = req("*:*", &[]);
    r.sort = vec![SortKey {
        field: SortField::Field("metadata_modified".into()),
        descending: true,
    }];
    r.rows = 2;
    r.start = 1;
    let h = b.search(&r).await.unwrap();
    assert_eq!(
        (h.count, names(&h)),
        (3, vec!["water".to_string(), "budget".to_string()])
    );
}

#[tokio::test]
async fn deletes_and_rebuilds() {
    let (dir, b) = three_datasets().await;
    // Delete, indexed, rebuild.
    b.apply(vec![], vec!["3".into()]).await.unwrap();
    assert_eq!(b.indexed().await.unwrap().len(), 2);
    let mut rb = b.rebuild().await.unwrap();
    rb.add(vec![pkg(
        "9",
        "nine",
        "Nine",
        &[],
        "acme",
        "2024-01-01T00:00:00",
    )])
    .await
    .unwrap();
    assert_eq!(
        b.search(&req("", &[])).await.unwrap().count,
        2,
        "old index serves during a rebuild"
    );
    // A change replayed into the rebuild replaces what the rebuild added.
    rb.replace(vec![pkg(
        "9",
        "nine",
        "Nine again",
        &[],
        "acme",
        "2024-01-02T00:00:00",
    )])
    .await
    .unwrap();
    rb.finish().await.unwrap();
    assert_eq!(names(&b.search(&req("", &[])).await.unwrap()), ["nine"]);
    drop(b);
    let reopened = TantivyBackend::open(dir.path()).unwrap();
    assert_eq!(
        reopened.indexed().await.unwrap(),
        vec![("9".to_string(), "2024-01-02T00:00:00".to_string())]
    );
}

/// A process that opened the index while another held it (a server restarted before the old
/// one exited) takes the writer over once the other lets it go, unless the other swapped in a
/// rebuilt generation meanwhile.
#[tokio::test]
async fn a_read_only_open_takes_the_writer_when_it_is_let_go() {
    let dir = tempfile::tempdir().unwrap();
    let old = TantivyBackend::open(dir.path()).unwrap();
    old.apply(
        vec![pkg("1", "one", "One", &[], "acme", "2024-01-01T00:00:00")],
        vec![],
    )
    .await
    .unwrap();
    let new = TantivyBackend::open(dir.path()).unwrap();
    assert!(!new.writable(), "the old process still holds the writer");
    let two = || vec![pkg("2", "two", "Two", &[], "acme", "2024-01-02T00:00:00")];
    let refused = new.apply(two(), vec![]).await.unwrap_err();
    assert!(
        refused.to_string().contains("locked by another process"),
        "{refused}"
    );
    drop(old);
    assert!(
        new.writable(),
        "the writer is taken once the old process lets it go"
    );
    new.apply(two(), vec![]).await.unwrap();
    assert_eq!(
        names(&new.search(&req("", &[])).await.unwrap()),
        ["one", "two"],
        "what the old process wrote is read, and the new write applied"
    );

    // The holder rebuilds into a new generation, then exits: the stale one stays read-only.
    drop(new);
    let holder = TantivyBackend::open(dir.path()).unwrap();
    let stale = TantivyBackend::open(dir.path()).unwrap();
    holder.rebuild().await.unwrap().finish().await.unwrap();
    drop(holder);
    assert!(!stale.writable(), "a replaced generation is not written to");
    let reopened = TantivyBackend::open(dir.path()).unwrap();
    assert!(reopened.writable());
}

#[tokio::test]
async fn shared_search_backend_cases() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance-tests/search-backend-cases.json");
    let text = std::fs::read_to_string(path).expect("reading the cases");
    let dir = tempfile::tempdir().unwrap();
    let b = TantivyBackend::open(dir.path()).unwrap();
    let report = catalog_framework::search::testkit::run_cases(&b, "tantivy", &text).await;
    println!(
        "search backend cases: {} passed, {} failed",
        report.passed,
        report.failures.len()
    );
    assert!(
        report.failures.is_empty(),
        "failing cases:\n{}",
        report.failures.join("\n")
    );
}

/// Deep pages of score and date sorts take the compact top-k (`compact.rs`): the pages the
/// general sort gives, facets and count included.
#[tokio::test]
async fn deep_pages_match_the_general_sort() {
    let dir = tempfile::tempdir().unwrap();
    let b = TantivyBackend::open(dir.path()).unwrap();
    let docs: Vec<IndexDocument> = (0..1500)
        .map(|i| {
            let title = if i % 3 == 0 {
                "open data"
            } else {
                "open budget data"
            };
            pkg(
                &format!("00000000-0000-0000-0000-{i:012}"),
                &format!("ds-{i:04}"),
                title,
                &["economy", if i % 2 == 0 { "even" } else { "odd" }],
                if i % 5 == 0 { "org-a" } else { "org-b" },
                &format!(
                    "2024-{:02}-{:02}T{:02}:{:02}:00",
                    1 + i % 12,
                    1 + i % 28,
                    i % 24,
                    i % 60
                ),
            )
        })
        .collect();
    b.apply(docs, Vec::new()).await.unwrap();
    for sort in [
        vec![
            (SortField::Score, true),
            (SortField::Field("metadata_modified".into()), true),
        ],
        vec![(SortField::Field("metadata_modified".into()), false)],
    ] {
        let mut r = req("open data", &[]);
        r.sort = sort
            .iter()
            .map(|(f, d)| SortKey {
                field: f.clone(),
                descending: *d,
            })
            .collect();
        r.rows = 1500;
        let all = b.search(&r).await.unwrap();
        let full = names(&all);
        for start in [1000, 1234, 1490, 1500] {
            r.rows = 20;
            r.start = start;
            let deep = b.search(&r).await.unwrap();
            let want: Vec<String> = full.iter().skip(start).take(20).cloned().collect();
            assert_eq!(names(&deep), want, "start {start}");
            assert_eq!(deep.count, all.count);
            assert_eq!(deep.facets, all.facets);
        }
    }
}

/// Score and date sorts take the compact top-k (`compact.rs`): the same page and count as the
/// general sort, ties of score and date ordered by id, on shallow and deep pages, over several
/// segments and with many ties; facets from decoded columns (`facets.rs`) as from the columns.
#[tokio::test]
async fn compact_pages_match_the_general_sort() {
    let dir = tempfile::tempdir().unwrap();
    let b = TantivyBackend::open(dir.path()).unwrap();
    // Three segments; 7 dates and 3 titles, so that most matches tie on both keys.
    for batch in 0..3 {
        let docs: Vec<IndexDocument> = (0..400)
            .map(|j| {
                let i = batch * 400 + j;
                let title = ["open data", "open budget data", "data about open budgets"][i % 3];
                // Ids not in the order of the documents, so that index order is not id order.
                let id = format!(
                    "{:08x}-0000-0000-0000-{i:012}",
                    (i * 2_654_435_761) % (1 << 32)
                );
                pkg(
                    &id,
                    &format!("ds-{i:04}"),
                    title,
                    [&["economy"][..], &["economy", "health"], &[], &["Health"]][i % 4],
                    ["org-a", "org-b"][i % 5 / 4],
                    &format!("2024-01-{:02}T00:00:00", 1 + i % 7),
                )
            })
            .collect();
        b.apply(docs, Vec::new()).await.unwrap();
    }
    let gen = b.current();
    let searcher = gen.reader.searcher();
    assert!(searcher.segment_readers().len() > 1, "several segments");
    let key = |f: SortField, descending: bool| SortKey {
        field: f,
        descending,
    };
    let mm = || SortField::Field("metadata_modified".into());
    for sort in [
        vec![key(SortField::Score, true), key(mm(), true)],
        vec![key(mm(), false)],
        vec![key(mm(), true), key(SortField::Score, false)],
        vec![key(SortField::Score, false)],
    ] {
        for q in ["open data", "budget", ""] {
            let mut r = req(q, &[]);
            r.sort = sort.clone();
            for (start, rows) in [
                (0, 20),
                (0, 1),
                (15, 7),
                (0, 999),
                (990, 9),
                (1000, 50),
                (1199, 1),
                (1190, 20),
            ] {
                r.start = start;
                r.rows = rows;
                let main = query::Builder::new(&gen.f).build(&r.query).unwrap();
                // Facets from decoded columns (every segment) and from the columns.
                let facets = |min_docs| FacetCollector {
                    columns: vec!["s.tags".into(), "s.organization".into()],
                    uninverted: Arc::new(facets::UninvertedColumns::new(min_docs)),
                };
                let (count, page, fruit) = top_docs(&searcher, &*main, &r, facets(0)).unwrap();
                let (want_count, want, want_fruit) =
                    general_top_docs(&searcher, &*main, &r, facets(u32::MAX)).unwrap();
                assert_eq!(page, want, "{q:?} {sort:?} {start} {rows}");
                assert_eq!(count, want_count);
                assert_eq!(fruit, want_fruit);
            }
        }
    }
}

/// Documents rewritten by merges while `docs` documents arrive in commits of `per_commit`,
/// each merge the policy proposes done at once (as the server's writer does between commits).
fn merge_rewrites(policy: &dyn tantivy::indexer::MergePolicy, docs: u32, per_commit: u32) -> u64 {
    use tantivy::index::SegmentId;
    let index = Index::create_in_ram(schema().0);
    let mut segments = Vec::new();
    let mut rewritten = 0u64;
    for _ in 0..docs / per_commit {
        segments.push(index.new_segment_meta(SegmentId::generate_random(), per_commit));
        loop {
            let candidates = policy.compute_merge_candidates(&segments);
            let Some(c) = candidates.first() else { break };
            let merged: u32 = segments
                .iter()
                .filter(|s| c.0.contains(&s.id()))
                .map(|s| s.max_doc())
                .sum();
            rewritten += u64::from(merged);
            segments.retain(|s| !c.0.contains(&s.id()));
            segments.push(index.new_segment_meta(SegmentId::generate_random(), merged));
        }
    }
    rewritten
}

#[test]
fn live_merges_rewrite_each_document_a_few_times() {
    use tantivy::indexer::MergePolicy;
    // A bulk load: 20,000 datasets committed 4 at a time (the index follower's pace under
    // load). With tantivy's default floor of 10,000 documents, every eighth commit rewrote the
    // largest segment under 10,000 again: ~260 rewrites per document (a model of the policy
    // gives 5.2 million documents rewritten; with the floor of 200, ~133,000).
    let docs = 20_000;
    let ours = merge_rewrites(&merge_policy(8), docs, 4);
    let mut floor_10k = merge_policy(8);
    floor_10k.set_min_layer_size(10_000);
    let theirs = merge_rewrites(&floor_10k, docs, 4);
    assert!(
        ours <= 8 * u64::from(docs),
        "{ours} documents rewritten for {docs}"
    );
    assert!(theirs > 20 * ours, "default floor: {theirs}, ours: {ours}");
    // Segments over the cap are not merged again (tantivy's default cap would merge them).
    let index = Index::create_in_ram(schema().0);
    let large: Vec<_> = (0..8)
        .map(|_| {
            index.new_segment_meta(
                tantivy::index::SegmentId::generate_random(),
                MERGE_MAX_DOCS as u32 + 1,
            )
        })
        .collect();
    assert!(merge_policy(8).compute_merge_candidates(&large).is_empty());
    let mut uncapped = merge_policy(8);
    uncapped.set_max_docs_before_merge(10_000_000);
    assert_eq!(uncapped.compute_merge_candidates(&large).len(), 1);
}
