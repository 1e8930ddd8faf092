//! Harvest sources: the `harvest` dataset type's checks and messages, who may do what, the api
//! key kept out of the dataset, sources hidden from dataset searches, jobs refused while one
//! is new or running.

use catalog_host::testkit::{stores, TestServer};
use serde_json::{json, Value};

use crate::support::harvester;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sources_are_checked_as_ckanext_harvest_checks_them() {
    for kind in stores().await {
        let s = harvester(kind, json!({})).await;
        let e = s
            .err(
                Some(&s.admin),
                "harvest_source_create",
                json!({"owner_org": "harvested"}),
            )
            .await;
        assert_eq!(e["__type"], "Validation Error", "{kind}: {e}");
        for f in ["name", "url", "source_type"] {
            assert_eq!(e[f], json!(["Missing value"]), "{kind}: {f} in {e}");
        }
        let base = json!({"name": "src", "url": "http://127.0.0.1:9/catalog.ttl", "owner_org": "harvested"});
        let with = |extra: Value| {
            let mut p = base.clone();
            p.as_object_mut()
                .unwrap()
                .extend(extra.as_object().cloned().unwrap());
            p
        };
        let e = s
            .err(
                Some(&s.admin),
                "harvest_source_create",
                with(json!({"source_type": "oai"})),
            )
            .await;
        assert_eq!(
            e["source_type"],
            json!([
                "Unknown harvester type: oai. Registered types: ['ckan', 'dcat_json', 'dcat_rdf']"
            ]),
            "{kind}: {e}"
        );
        let e = s
            .err(
                Some(&s.admin),
                "harvest_source_create",
                with(json!({"source_type": "ckan", "frequency": "hourly"})),
            )
            .await;
        assert_eq!(
            e["frequency"],
            json!(["Frequency hourly not recognised"]),
            "{kind}: {e}"
        );
        let e = s
            .err(
                Some(&s.admin),
                "harvest_source_create",
                with(json!({"source_type": "ckan", "config": "{not json"})),
            )
            .await;
        assert!(
            e["config"][0]
                .as_str()
                .unwrap()
                .starts_with("Error parsing the configuration options: "),
            "{kind}: {e}"
        );
        let e = s
            .err(
                Some(&s.admin),
                "harvest_source_create",
                with(json!({"source_type": "ckan", "config": "{\"api_version\": \"2\"}"})),
            )
            .await;
        assert_eq!(
            e["config"],
            json!(["Error parsing the configuration options: api_version must be an integer"]),
            "{kind}: {e}"
        );
        // Nothing of the refused ones was written.
        let list = s.ok("harvest_source_list", json!({})).await;
        assert_eq!(list, json!([]), "{kind}");

        let made = s
            .ok(
                "harvest_source_create",
                with(json!({"source_type": "dcat_rdf", "frequency": "weekly"})),
            )
            .await;
        assert_eq!(made["type"], "harvest", "{kind}");
        assert_eq!(made["frequency"], "WEEKLY", "{kind}");
        assert_eq!(
            made["status"],
            json!({"job_count": 0, "last_job": null, "total_datasets": 0}),
            "{kind}"
        );
        for gone in ["author", "license_id", "num_resources", "version"] {
            assert!(
                made.get(gone).is_none(),
                "{kind}: the show schema drops {gone}"
            );
        }
        // The same url (normalised) with the same config is refused; another config is not.
        let e = s
            .err(
                Some(&s.admin),
                "harvest_source_create",
                json!({"name": "src2", "url": "http://127.0.0.1:9/catalog.ttl/?x=1", "owner_org": "harvested",
                       "source_type": "dcat_rdf"}),
            )
            .await;
        assert_eq!(
            e["url"],
            json!(["There already is a Harvest Source for this URL (& config): url=http://127.0.0.1:9/catalog.ttl config="]),
            "{kind}: {e}"
        );
        s.ok(
            "harvest_source_create",
            json!({"name": "src3", "url": "http://127.0.0.1:9/catalog.ttl", "owner_org": "harvested",
                   "source_type": "dcat_rdf", "config": "{\"rdf_format\": \"turtle\"}"}),
        )
        .await;

        let shown = s
            .ok(
                "harvest_source_show",
                json!({"url": "http://127.0.0.1:9/catalog.ttl"}),
            )
            .await;
        assert_eq!(shown["active"], true, "{kind}");
        let info = s.ok("harvesters_info_show", json!({})).await;
        let names: Vec<&str> = info
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["ckan", "dcat_json", "dcat_rdf"], "{kind}");

        // Sources are no datasets to a plain search; asked for, they are found.
        let plain = s.ok("package_search", json!({})).await;
        assert_eq!(plain["count"], 0, "{kind}: {plain}");
        let asked = s
            .ok("package_search", json!({"fq": "dataset_type:harvest"}))
            .await;
        assert_eq!(asked["count"], 2, "{kind}: {asked}");

        // A job, then another while it is new: refused.
        let job = s
            .ok(
                "harvest_job_create",
                json!({"source_id": "src", "run": false}),
            )
            .await;
        assert_eq!(job["status"], "New", "{kind}");
        let e = s
            .err(
                Some(&s.admin),
                "harvest_job_create",
                json!({"source_id": "src"}),
            )
            .await;
        assert_eq!(
            e["message"], "There already is an unrun job for this source",
            "{kind}: {e}"
        );
        // A deleted source is inactive, its new job aborted, and takes no job.
        s.ok("harvest_source_delete", json!({"id": "src"})).await;
        let job = s.ok("harvest_job_show", json!({"id": job["id"]})).await;
        assert_eq!(job["status"], "Aborted", "{kind}");
        let e = s
            .err(
                Some(&s.admin),
                "harvest_job_create",
                json!({"source_id": "src"}),
            )
            .await;
        assert_eq!(
            e["message"], "Can not create jobs on inactive sources",
            "{kind}: {e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editors_manage_their_sources_and_only_sysadmins_see_the_api_key() {
    for kind in stores().await {
        let s = harvester(kind, json!({})).await;
        let editor = s.user("editor").await;
        let outsider = s.user("outsider").await;
        s.ok(
            "organization_member_create",
            json!({"id": "harvested", "username": "editor", "role": "editor"}),
        )
        .await;
        let made = s
            .ok_as(
                Some(&editor),
                "harvest_source_create",
                json!({"name": "remote", "url": "http://127.0.0.1:9/", "source_type": "ckan",
                       "owner_org": "harvested", "config": "{\"api_key\": \"s3cret-key\", \"rows\": 10}"}),
            )
            .await;
        assert_eq!(made["config"], "{\"rows\":10}", "{kind}: {made}");
        assert_eq!(made["rows"], 10, "{kind}: config keys are spread");
        for who in [Some(&editor), None] {
            let shown = s
                .ok_as(who, "harvest_source_show", json!({"id": "remote"}))
                .await;
            assert!(!shown.to_string().contains("s3cret-key"), "{kind}: {shown}");
        }
        let as_admin = s.ok("harvest_source_show", json!({"id": "remote"})).await;
        assert_eq!(as_admin["api_key"], "s3cret-key", "{kind}");
        assert!(
            as_admin["config"].as_str().unwrap().contains("s3cret-key"),
            "{kind}"
        );
        let pkg = s.ok("package_show", json!({"id": "remote"})).await;
        assert!(!pkg.to_string().contains("s3cret-key"), "{kind}: {pkg}");
        let listed = s.ok_as(None, "harvest_source_list", json!({})).await;
        assert!(
            !listed.to_string().contains("s3cret-key"),
            "{kind}: {listed}"
        );
        // An update without api_key keeps it; package_* cannot set one.
        s.ok_as(
            Some(&editor),
            "harvest_source_patch",
            json!({"id": "remote", "config": "{\"rows\": 20}"}),
        )
        .await;
        let as_admin = s.ok("harvest_source_show", json!({"id": "remote"})).await;
        assert_eq!(as_admin["api_key"], "s3cret-key", "{kind}");
        assert_eq!(as_admin["rows"], 20, "{kind}");
        let e = s
            .err(
                Some(&editor),
                "package_patch",
                json!({"id": "remote", "config": "{\"api_key\": \"other\"}"}),
            )
            .await;
        assert_eq!(e["__type"], "Validation Error", "{kind}: {e}");

        // An outsider may read the public source, not change it or run it.
        for (action, params) in [
            (
                "harvest_source_update",
                json!({"id": "remote", "url": "http://127.0.0.1:9/x", "source_type": "ckan"}),
            ),
            ("harvest_job_create", json!({"source_id": "remote"})),
            ("harvest_source_clear", json!({"id": "remote"})),
            ("harvest_jobs_run", json!({})),
        ] {
            let e = s.err(Some(&outsider), action, params).await;
            assert_eq!(e["__type"], "Authorization Error", "{kind}: {action}: {e}");
        }
        let e = s
            .err(None, "harvest_job_create", json!({"source_id": "remote"}))
            .await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}: {e}");
        // The editor may run it and read its jobs.
        let job = s
            .ok_as(
                Some(&editor),
                "harvest_job_create",
                json!({"source_id": "remote", "run": false}),
            )
            .await;
        let listed = s
            .ok_as(
                Some(&editor),
                "harvest_job_list",
                json!({"source_id": "remote"}),
            )
            .await;
        assert_eq!(listed[0]["id"], job["id"], "{kind}");
        assert!(
            listed[0].get("object_error_summary").is_none(),
            "{kind}: lists carry no summaries"
        );
        let e = s
            .err(
                Some(&outsider),
                "harvest_job_show",
                json!({"id": job["id"]}),
            )
            .await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}: {e}");
        let e = s.err(Some(&outsider), "harvest_job_list", json!({})).await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn internal_addresses_are_refused_when_a_source_is_made() {
    for kind in stores().await {
        // No allow-list here.
        let s = TestServer::start(kind, "admin", |_| {}).await;
        s.ok("organization_create", json!({"name": "org1"})).await;
        for url in [
            "http://127.0.0.1:8080/catalog.ttl",
            "http://localhost:8080/catalog.ttl",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]/x",
            "http://10.0.0.7/",
            "file:///etc/passwd",
            "gopher://example.org/",
        ] {
            let e = s
                .err(
                    Some(&s.admin),
                    "harvest_source_create",
                    json!({"name": "src-x", "url": url, "source_type": "dcat_rdf", "owner_org": "org1"}),
                )
                .await;
            assert_eq!(e["__type"], "Validation Error", "{kind}: {url}: {e}");
            assert!(e["url"].is_array(), "{kind}: {url}: {e}");
        }
        assert_eq!(
            s.ok("harvest_source_list", json!({})).await,
            json!([]),
            "{kind}"
        );
    }
}
