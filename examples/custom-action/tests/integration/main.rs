//! The example plugin in a real server: its action over HTTP and in-process, and the
//! `status_show` override.

// An integration test is its own binary: name every plugin crate it needs, or the linker
// drops it and its registrations with it.
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;
use example_custom_action as _;

use catalog_framework::prelude::ActionContext;
use catalog_host::testkit::{StoreKind, TestServer};
use serde_json::{json, Map, Value};

/// The server, and an HTTP client with a sysadmin token.
struct Api {
    server: TestServer,
    token: String,
    http: reqwest::Client,
}

impl Api {
    /// SQLite in a temporary directory, on an ephemeral port, with a sysadmin token.
    async fn start() -> Api {
        let server = TestServer::start(StoreKind::Sqlite, "admin", |config| {
            // What `catalogext.custom_action.contact = "…"` in catalog.toml gives.
            config.catalogext.values.insert(
                "custom_action".into(),
                json!({"contact": "data@example.org"}),
            );
        })
        .await;
        let token = server.token("admin", "tests").await;
        Api {
            server,
            token,
            http: reqwest::Client::new(),
        }
    }

    /// POSTs an action as the sysadmin and returns its result; panics on failure.
    async fn admin_call(&self, action: &str, body: Value) -> Value {
        let resp = self
            .http
            .post(format!("{}/api/3/action/{action}", self.server.base_url))
            .header("Authorization", &self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(status, 200, "{action}: {body}");
        body["result"].clone()
    }

    /// GETs an action anonymously: (status, envelope).
    async fn anon_get(&self, action: &str, query: &str) -> (u16, Value) {
        let resp = self
            .http
            .get(format!(
                "{}/api/3/action/{action}?{query}",
                self.server.base_url
            ))
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), resp.json().await.unwrap())
    }

    /// Three organizations: alpha (two public datasets and a private one), beta (one), gamma
    /// (none, so it is not counted).
    async fn seed(&self) {
        for (name, title) in [("alpha", "Alpha"), ("beta", "Beta"), ("gamma", "Gamma")] {
            self.admin_call("organization_create", json!({"name": name, "title": title}))
                .await;
        }
        for (name, org, private) in [
            ("a-one", "alpha", false),
            ("a-two", "alpha", false),
            ("a-secret", "alpha", true),
            ("b-one", "beta", false),
        ] {
            self.admin_call(
                "package_create",
                json!({"name": name, "owner_org": org, "private": private}),
            )
            .await;
        }
    }
}

fn params(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[tokio::test]
async fn counts_public_datasets_per_organization_for_anonymous_callers() {
    let api = Api::start().await;
    api.seed().await;

    let (status, body) = api.anon_get("dataset_count_by_organization", "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success"], json!(true));
    assert_eq!(
        body["result"],
        json!([
            {"name": "alpha", "title": "Alpha", "package_count": 2},
            {"name": "beta", "title": "Beta", "package_count": 1},
        ])
    );

    let (status, body) = api
        .anon_get("dataset_count_by_organization", "organization=beta")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"],
        json!([{"name": "beta", "title": "Beta", "package_count": 1}])
    );

    let (_, body) = api
        .anon_get("dataset_count_by_organization", "limit=1")
        .await;
    assert_eq!(body["result"].as_array().map(Vec::len), Some(1));
    assert_eq!(body["result"][0]["name"], json!("alpha"));

    // In-process, without HTTP: the same action through an ActionContext (anonymous caller).
    let result = ActionContext::new(api.server.app.clone(), None)
        .run_top(
            "dataset_count_by_organization",
            params(json!({"organization": "alpha"})),
        )
        .await
        .unwrap();
    assert_eq!(result[0]["package_count"], json!(2));
}

#[tokio::test]
async fn bad_parameters_get_ckan_shaped_errors() {
    let api = Api::start().await;
    api.seed().await;

    let (status, body) = api
        .anon_get("dataset_count_by_organization", "organization=nowhere")
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["success"], json!(false));
    assert_eq!(
        body["error"],
        json!({"message": "Not found: Organization", "__type": "Not Found Error"})
    );

    let (status, body) = api
        .anon_get("dataset_count_by_organization", "limit=many")
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body["error"],
        json!({"limit": ["Invalid integer"], "__type": "Validation Error"})
    );

    // The same error in-process.
    let err = ActionContext::new(api.server.app.clone(), None)
        .run_top(
            "dataset_count_by_organization",
            params(json!({"limit": -1})),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind, catalog_framework::prelude::ErrorKind::Validation);
    assert_eq!(
        err.to_error_object(),
        json!({"limit": ["Must be a natural number"], "__type": "Validation Error"})
    );
}

#[tokio::test]
async fn status_show_is_overridden_with_a_contact_field() {
    let api = Api::start().await;

    let (status, body) = api.anon_get("status_show", "").await;
    assert_eq!(status, 200, "{body}");
    let result = &body["result"];
    assert_eq!(result["portal_contact"], json!("data@example.org"));
    // The fields of the default answer are still there.
    assert_eq!(result["site_title"], json!("Catalog"));
    assert_eq!(result["ckan_version"], json!("2.12.0"));
    let extensions = result["extensions"].as_array().unwrap();
    assert!(
        extensions.contains(&json!("example_custom_action")),
        "{extensions:?}"
    );

    // help_show reads the doc of the winning registration.
    let (_, body) = api.anon_get("help_show", "name=status_show").await;
    assert!(
        body["result"].as_str().unwrap().contains("portal_contact"),
        "{body}"
    );
}

/// The plugin's conformance cases (`conformance/`), run by the conformance suite's library as
/// `catalog-conformance --cases examples/custom-action/conformance` would run them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plugins_conformance_cases_pass() {
    let api = Api::start().await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let (scenarios, known) =
        catalog_conformance::load_suite(&dir, None).expect("the plugin's cases load");
    let mut runner =
        catalog_conformance::Runner::new(&api.server.base_url, &api.token).expect("a runner");
    runner.probe().await.expect("status_show");
    let report = runner.run_all(&scenarios, &known).await;
    println!("{report}");
    assert!(report.is_success(), "{report}");
    assert_eq!(report.skipped(), 0, "{report}");
    assert_eq!(report.passed(), 9, "{report}");
}
