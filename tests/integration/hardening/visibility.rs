//! What a caller may not read stays out of every rendering of an activity stream: the HTML
//! snippets of the older release and the legacy API's activity register, not only the JSON
//! lists the conformance cases check. And the text of the answers is CKAN's.

use serde_json::json;

use super::support::{stores, Server};

/// A dataset created private with secret notes, then cleaned and published; another patched
/// to a draft. Anonymous callers see neither secret in any activity stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activity_streams_leave_out_private_and_draft_versions() {
    for kind in stores().await {
        let s = Server::start(kind, &[]).await;
        s.ok("organization_create", json!({"name": "vis-org"}))
            .await;
        s.ok("group_create", json!({"name": "vis-group"})).await;
        s.ok(
            "package_create",
            json!({"name": "was-private", "owner_org": "vis-org", "private": true,
                   "notes": "SECRET-NOTES", "groups": [{"name": "vis-group"}]}),
        )
        .await;
        s.ok(
            "package_patch",
            json!({"id": "was-private", "notes": "clean", "private": false}),
        )
        .await;
        s.ok(
            "package_create",
            json!({"name": "drafted", "owner_org": "vis-org", "notes": "public"}),
        )
        .await;
        s.ok(
            "package_patch",
            json!({"id": "drafted", "state": "draft", "notes": "DRAFT-NOTES"}),
        )
        .await;
        let lists = [
            ("package_activity_list", json!({"id": "was-private"})),
            ("package_activity_list_html", json!({"id": "was-private"})),
            ("organization_activity_list", json!({"id": "vis-org"})),
            ("organization_activity_list_html", json!({"id": "vis-org"})),
            ("group_activity_list", json!({"id": "vis-group"})),
            ("group_activity_list_html", json!({"id": "vis-group"})),
            ("recently_changed_packages_activity_list", json!({})),
            ("recently_changed_packages_activity_list_html", json!({})),
            ("package_revision_list", json!({"id": "was-private"})),
        ];
        for (action, params) in lists {
            let (status, body) = s.call_as(None, action, params.clone()).await;
            assert_eq!(status, 200, "{kind}: {action}: {body}");
            let text = body.to_string();
            for secret in ["SECRET-NOTES", "DRAFT-NOTES"] {
                assert!(
                    !text.contains(secret),
                    "{kind}: {action} shows {secret}: {text}"
                );
            }
            // The sysadmin sees every version.
            let (_, all) = s.call(action, params).await;
            if action == "package_activity_list" {
                assert!(all.to_string().contains("SECRET-NOTES"), "{kind}: {action}");
            }
        }
        let activities = s
            .ok("package_activity_list", json!({"id": "was-private"}))
            .await;
        for activity in activities.as_array().unwrap() {
            let (status, body) = s
                .call_as(None, "activity_show", json!({"id": activity["id"]}))
                .await;
            if body.to_string().contains("SECRET-NOTES") {
                panic!("{kind}: activity_show {status}: {body}");
            }
        }
        for path in [
            "/api/rest/dataset/was-private/activity",
            "/api/2/rest/dataset/was-private/activity",
            "/api/rest/group/vis-group/activity",
        ] {
            let r = s
                .client
                .get(format!("{}{path}", s.base))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 200, "{kind}: {path}");
            let text = r.text().await.unwrap();
            assert!(!text.contains("SECRET-NOTES"), "{kind}: {path}: {text}");
            assert!(!text.contains("DRAFT-NOTES"), "{kind}: {path}: {text}");
        }
    }
}

/// CKAN writes JSON as Python's `json.dumps` does: a space after every `:` and `,`. Scripts
/// that match the text (`grep '"success": true'`) depend on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_written_in_ckans_json_layout() {
    for kind in stores().await {
        let s = Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        s.ok(
            "package_create",
            json!({"name": "layout", "tags": [{"name": "aa"}, {"name": "bb"}]}),
        )
        .await;
        let get = |path: String| {
            let client = s.client.clone();
            async move {
                let r = client.get(path).send().await.unwrap();
                (r.status().as_u16(), r.text().await.unwrap())
            }
        };
        let base = &s.base;
        for round in ["a miss of the package_show cache", "a hit"] {
            let (status, text) = get(format!("{base}/api/3/action/package_show?id=layout")).await;
            assert_eq!(status, 200, "{kind}");
            assert!(
                text.starts_with(r#"{"help": ""#)
                    && text
                        .contains(r#"help_show?name=package_show", "success": true, "result": {"#),
                "{kind}: {round}: {text}"
            );
            assert!(text.contains(r#""name": "layout""#), "{kind}: {text}");
            assert!(text.contains("}, {"), "{kind}: a list of dicts: {text}");
            assert!(!text.contains("\":\""), "{kind}: {round}: {text}");
        }
        let (status, text) = get(format!("{base}/api/3/action/package_show?id=nothing")).await;
        assert_eq!(status, 404);
        assert!(
            text.contains(r#""error": {"#) && text.ends_with(r#", "success": false}"#),
            "{kind}: {text}"
        );
        let (_, text) = get(format!("{base}/api/3/action/status_show?callback=cb")).await;
        assert!(text.starts_with(r#"cb({"help": "#), "{kind}: JSONP: {text}");
        // The legacy API: bare JSON, JSONP and its errors.
        let (status, text) = get(format!("{base}/api/rest/dataset/layout")).await;
        assert_eq!(status, 200);
        assert!(
            text.contains(r#""name": "layout""#) && text.contains(r#""tags": ["#),
            "{kind}: {text}"
        );
        let (_, text) = get(format!("{base}/api/2/rest/dataset/layout?callback=cb")).await;
        assert!(text.starts_with("cb({\""), "{kind}: {text}");
        assert!(!text.contains("\":\""), "{kind}: {text}");
        let (_, text) = get(format!("{base}/api/2/search/dataset?q=name:layout")).await;
        assert!(
            text.starts_with(r#"{"count": 1, "results": ["#),
            "{kind}: {text}"
        );
    }
}

/// A newcomer's first minutes: `serve` logs one short line of what is registered before
/// "listening", and an admin command logs nothing unless asked with `-v`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_log_is_one_line_and_commands_are_quiet() {
    let s = Server::start(super::support::StoreKind::Sqlite, &[]).await;
    let log = s.log_text();
    let registered: Vec<&str> = log.lines().filter(|l| l.contains("registered")).collect();
    assert_eq!(registered.len(), 1, "{log}");
    assert!(
        registered[0].len() < 1000 && registered[0].contains("plugins: "),
        "{}",
        registered[0]
    );
    let listening = log.lines().position(|l| l.contains("listening")).unwrap();
    assert!(listening < 10, "{log}");
    for args in [
        &[
            "user",
            "add",
            "quiet",
            "--email",
            "q@example.org",
            "--password",
            "password-q",
        ][..],
        &["user", "token", "add", "quiet", "t"],
    ] {
        let (ok, output) = s.cli_status_without_log_env(args);
        assert!(ok, "{output}");
        assert!(!output.contains("INFO"), "{args:?}: {output}");
        assert!(!output.contains("registered"), "{args:?}: {output}");
    }
    let (ok, output) = s.cli_status_without_log_env(&["-v", "user", "token", "add", "quiet", "t2"]);
    assert!(
        ok && output.contains("INFO") && output.contains("registered"),
        "{output}"
    );
}
