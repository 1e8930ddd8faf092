//! Publishing through the web forms, on SQLite and PostgreSQL: the two-stage creation with an
//! upload, the actions' messages at their fields, edits, follows, deletes, and the rules of the
//! API holding on every form (CSRF, login, permission) — a refused form changes nothing.

use crate::common;

use catalog_host::testkit::{stores, StoreKind, TestServer};
use common::{client, Browser};
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn server(kind: StoreKind, open_registration: bool) -> TestServer {
    let s = TestServer::start(kind, "admin", |config| {
        config.catalog.auth.create_user_via_web = open_registration;
    })
    .await;
    s.user("editor").await;
    s.user("outsider").await;
    s.ok(
        "organization_create",
        json!({"name": "water-board", "title": "Water Board",
               "users": [{"name": "editor", "capacity": "editor"}]}),
    )
    .await;
    s.ok(
        "package_create",
        json!({"name": "air-quality", "title": "Air quality", "owner_org": "water-board"}),
    )
    .await;
    s
}

fn location(r: &reqwest::Response) -> String {
    r.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

async fn show(s: &TestServer, id: &str) -> Option<Value> {
    s.call(Some(&s.admin), "package_show", json!({"id": id}))
        .await
        .ok()
}

#[tokio::test]
async fn create_a_dataset_in_two_stages_with_an_upload() {
    for kind in stores().await {
        let s = server(kind, false).await;
        let org = show(&s, "air-quality").await.unwrap()["owner_org"].clone();
        let org = org.as_str().unwrap();

        // Anonymous: to the login page, and back afterwards.
        let r = client()
            .get(format!("{}/dataset/new", s.base_url))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(location(&r), "/user/login?came_from=%2Fdataset%2Fnew");
        // A form that takes a file is not read for an anonymous visitor: to the login page.
        let r = client()
            .post(format!("{}/dataset/air-quality/resource/new", s.base_url))
            .multipart(reqwest::multipart::Form::new().part(
                "upload",
                reqwest::multipart::Part::bytes(vec![b'x'; 200_000]).file_name("big.csv"),
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert!(location(&r).starts_with("/user/login?came_from="), "{kind}");

        let b = Browser::logged_in(&s, "editor").await;
        let form = b.text("/dataset/new").await;
        for name in [
            "title",
            "name",
            "notes",
            "tag_string",
            "owner_org",
            "license_id",
        ] {
            assert!(form.contains(&format!("name=\"{name}\"")), "{kind}: {name}");
        }
        assert!(form.contains(&format!("<option value=\"{org}\"")), "{kind}");

        // Without the CSRF token: 403, nothing made.
        let r =
            b.c.post(format!("{}/dataset/new", s.base_url))
                .header("Cookie", &b.cookies)
                .form(&[("title", "Forged"), ("owner_org", org)])
                .send()
                .await
                .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{kind}");
        assert!(show(&s, "forged").await.is_none(), "{kind}");

        // Nothing filled in: the action's message at the name field, nothing made.
        let r = b
            .post("/dataset/new", "/dataset/new", &[("title", "")])
            .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{kind}");
        let page = r.text().await.unwrap();
        assert!(
            page.contains("id=\"field-name-error\">Missing value<"),
            "{kind}: {page}"
        );
        assert!(page.contains("aria-invalid=\"true\""), "{kind}");

        // Stage one: a draft, its name made from the title.
        let r = b
            .post(
                "/dataset/new",
                "/dataset/new",
                &[
                    ("title", "Rain gauges <b>"),
                    ("name", ""),
                    ("notes", "Hourly."),
                    ("tag_string", "rain, weather"),
                    ("owner_org", org),
                    ("private", "False"),
                    ("save", "continue"),
                ],
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(location(&r), "/dataset/rain-gauges-b/resource/new");
        let d = show(&s, "rain-gauges-b").await.unwrap();
        assert_eq!(d["state"], "draft", "{kind}");
        assert_eq!(d["private"], false, "{kind}");
        assert_eq!(d["tags"].as_array().unwrap().len(), 2, "{kind}");
        let (status, _) = (
            client()
                .get(format!("{}/dataset/rain-gauges-b", s.base_url))
                .send()
                .await
                .unwrap()
                .status(),
            (),
        );
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{kind}: a draft is not public"
        );

        // The same name again: CKAN's message.
        let r = b
            .post(
                "/dataset/new",
                "/dataset/new",
                &[
                    ("title", "Again"),
                    ("name", "rain-gauges-b"),
                    ("owner_org", org),
                ],
            )
            .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{kind}");
        assert!(r
            .text()
            .await
            .unwrap()
            .contains("That URL is already in use."));

        // Finishing without data: refused, the dataset stays a draft.
        let r = b
            .post(
                "/dataset/rain-gauges-b/resource/new",
                "/dataset/rain-gauges-b/resource/new",
                &[("save", "go-metadata")],
            )
            .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{kind}");
        assert_eq!(
            show(&s, "rain-gauges-b").await.unwrap()["state"],
            "draft",
            "{kind}"
        );

        // Stage two: a file, then finish.
        let csv = "station,mm\nA,1.5\n";
        let form = reqwest::multipart::Form::new()
            .part(
                "upload",
                reqwest::multipart::Part::bytes(csv.as_bytes().to_vec()).file_name("rain.csv"),
            )
            .text("url", "")
            .text("name", "Rain CSV")
            .text("save", "go-metadata");
        let r = b
            .post_multipart(
                "/dataset/rain-gauges-b/resource/new",
                "/dataset/rain-gauges-b/resource/new",
                form,
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(location(&r), "/dataset/rain-gauges-b");
        let d = show(&s, "rain-gauges-b").await.unwrap();
        assert_eq!(d["state"], "active", "{kind}");
        let res = &d["resources"][0];
        assert_eq!(res["url_type"], "upload", "{kind}");
        assert_eq!(res["name"], "Rain CSV", "{kind}");
        let download = client()
            .get(res["url"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(download.text().await.unwrap(), csv, "{kind}");

        // The page now: escaped title, manage and follow for the editor, neither for others.
        let page = b.text("/dataset/rain-gauges-b").await;
        assert!(
            page.contains("Rain gauges &lt;b&gt;") && !page.contains("Rain gauges <b>"),
            "{kind}"
        );
        assert!(
            page.contains("href=\"/dataset/edit/rain-gauges-b\""),
            "{kind}"
        );
        assert!(
            page.contains("action=\"/dataset/follow/rain-gauges-b\""),
            "{kind}"
        );
        let anon = client()
            .get(format!("{}/dataset/rain-gauges-b", s.base_url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(!anon.contains("/dataset/edit/"), "{kind}");
        assert!(!anon.contains("_csrf_token"), "{kind}");
    }
}

#[tokio::test]
async fn edit_follow_and_delete_and_the_rules_hold() {
    for kind in stores().await {
        let s = server(kind, false).await;
        let editor = Browser::logged_in(&s, "editor").await;
        let outsider = Browser::logged_in(&s, "outsider").await;

        // Someone who may not edit: the form is a 404 page, a forged post changes nothing.
        let r = outsider.get("/dataset/edit/air-quality").await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{kind}");
        let token_page = outsider.text("/user/outsider/api-tokens").await;
        let r = outsider
            .c
            .post(format!("{}/dataset/edit/air-quality", s.base_url))
            .header("Cookie", &outsider.cookies)
            .form(&[
                ("title", "Defaced"),
                ("_csrf_token", &common::csrf_token(&token_page)),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{kind}");
        assert_eq!(
            show(&s, "air-quality").await.unwrap()["title"],
            "Air quality"
        );

        // The editor edits: the form shows the values, the edit keeps what it does not show.
        let form = editor.text("/dataset/edit/air-quality").await;
        assert!(form.contains("value=\"Air quality\""), "{kind}");
        let r = editor
            .post(
                "/dataset/edit/air-quality",
                "/dataset/edit/air-quality",
                &[
                    ("title", "Air quality, hourly"),
                    ("name", "air-quality"),
                    ("tag_string", "air"),
                    ("private", "False"),
                    ("save", "update"),
                ],
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        let d = show(&s, "air-quality").await.unwrap();
        assert_eq!(d["title"], "Air quality, hourly", "{kind}");
        assert!(d["owner_org"].as_str().is_some(), "{kind}: kept");
        // A bad name: the message, nothing changed.
        let r = editor
            .post(
                "/dataset/edit/air-quality",
                "/dataset/edit/air-quality",
                &[("title", "X"), ("name", "Bad Name!")],
            )
            .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{kind}");
        assert!(r.text().await.unwrap().contains("field-name-error"));
        assert_eq!(
            show(&s, "air-quality").await.unwrap()["title"],
            "Air quality, hourly"
        );

        // Follow and unfollow.
        let r = editor
            .post("/dataset/air-quality", "/dataset/follow/air-quality", &[])
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        let page = editor.text("/dataset/air-quality").await;
        assert!(page.contains("/dataset/unfollow/air-quality"), "{kind}");

        // A resource added to an active dataset, edited, deleted.
        let form = reqwest::multipart::Form::new()
            .text("url", "http://example.org/air.json")
            .text("name", "Air JSON")
            .text("save", "go-metadata");
        let r = editor
            .post_multipart(
                "/dataset/air-quality/resource/new",
                "/dataset/air-quality/resource/new",
                form,
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        let rid = show(&s, "air-quality").await.unwrap()["resources"][0]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let edit = format!("/dataset/air-quality/resource/{rid}/edit");
        let form = reqwest::multipart::Form::new()
            .text("url", "http://example.org/air2.json")
            .text("name", "Air JSON v2")
            .text("format", "JSON");
        let r = editor.post_multipart(&edit, &edit, form).await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        let res = &show(&s, "air-quality").await.unwrap()["resources"][0];
        assert_eq!(res["name"], "Air JSON v2", "{kind}");
        assert_eq!(res["url"], "http://example.org/air2.json", "{kind}");
        let del = format!("/dataset/air-quality/resource/{rid}/delete");
        assert!(editor.text(&del).await.contains("Air JSON v2"), "{kind}");
        let r = editor.post(&del, &del, &[]).await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(
            show(&s, "air-quality").await.unwrap()["resources"],
            json!([]),
            "{kind}"
        );

        // The dataset deleted after the confirmation page.
        let confirm = editor.text("/dataset/delete/air-quality").await;
        assert!(confirm.contains("Air quality, hourly"), "{kind}");
        let r = editor
            .post(
                "/dataset/delete/air-quality",
                "/dataset/delete/air-quality",
                &[],
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(location(&r), "/dataset/");
        assert_eq!(
            show(&s, "air-quality").await.unwrap()["state"],
            "deleted",
            "{kind}"
        );

        // The sysadmin's trash lists it and purges it; the editor may not see the trash.
        assert_eq!(
            editor.get("/ckan-admin/trash").await.status(),
            StatusCode::FORBIDDEN,
            "{kind}"
        );
        let admin = Browser::logged_in(&s, "admin").await;
        assert!(
            admin
                .text("/ckan-admin/trash")
                .await
                .contains("air-quality"),
            "{kind}"
        );
        let r = admin
            .post(
                "/ckan-admin/trash",
                "/ckan-admin/trash",
                &[("action", "package")],
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert!(show(&s, "air-quality").await.is_none(), "{kind}: purged");

        // Site settings: the title changes on the pages.
        let r = admin
            .post(
                "/ckan-admin/config",
                "/ckan-admin/config",
                &[("catalog.site_title", "Rivers & Rain")],
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        let home = client()
            .get(format!("{}/", s.base_url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(home.contains("Rivers &amp; Rain"), "{kind}");
        assert_eq!(
            editor.get("/ckan-admin/config").await.status(),
            StatusCode::FORBIDDEN,
            "{kind}"
        );
    }
}

#[tokio::test]
async fn registration_only_when_open() {
    for kind in stores().await {
        let closed = server(kind, false).await;
        let b = Browser::anonymous(&closed).await;
        assert_eq!(
            b.get("/user/register").await.status(),
            StatusCode::FORBIDDEN,
            "{kind}"
        );
        drop(closed);

        let s = server(kind, true).await;
        let b = Browser::anonymous(&s).await;
        let form = b.text("/user/register").await;
        for name in ["name", "fullname", "email", "password1", "password2"] {
            assert!(form.contains(&format!("name=\"{name}\"")), "{kind}: {name}");
        }
        let r = b
            .post(
                "/user/register",
                "/user/register",
                &[
                    ("name", "newbie"),
                    ("email", "newbie@example.org"),
                    ("password1", "long-enough-1"),
                    ("password2", "different-22"),
                ],
            )
            .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{kind}");
        assert!(s
            .call(Some(&s.admin), "user_show", json!({"id": "newbie"}))
            .await
            .is_err());
        let r = b
            .post(
                "/user/register",
                "/user/register",
                &[
                    ("name", "newbie"),
                    ("email", "newbie@example.org"),
                    ("password1", "short"),
                    ("password2", "short"),
                ],
            )
            .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{kind}");
        assert!(r
            .text()
            .await
            .unwrap()
            .contains("Your password must be 8 characters or longer"));
        let r = b
            .post(
                "/user/register",
                "/user/register",
                &[
                    ("name", "newbie"),
                    ("fullname", "New Bie"),
                    ("email", "newbie@example.org"),
                    ("password1", "long-enough-1"),
                    ("password2", "long-enough-1"),
                ],
            )
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(location(&r), "/dashboard");
        assert!(
            common::set_cookie(&r, "catalog_session").is_some(),
            "{kind}"
        );
        let u = s.ok("user_show", json!({"id": "newbie"})).await;
        assert_eq!(u["fullname"], "New Bie", "{kind}");
        assert_eq!(u["sysadmin"], false, "{kind}");
    }
}

#[tokio::test]
async fn hostile_forms_get_pages_not_errors_and_change_nothing() {
    for kind in stores().await {
        let s = server(kind, true).await;
        let editor = Browser::logged_in(&s, "editor").await;
        let admin = Browser::logged_in(&s, "admin").await;
        let before = show(&s, "air-quality").await.unwrap();
        let big = "x".repeat(70 * 1024);
        let hostile: Vec<Vec<(&str, &str)>> = vec![
            vec![("title", "\u{0}nul"), ("name", "nul\u{0}name")],
            vec![
                ("title", "<script>alert(1)</script>"),
                ("name", "UPPER case!"),
            ],
            vec![("name", &big)],
            vec![
                ("tag_string", ",,,\u{0},<b>,"),
                ("owner_org", "no-such-org"),
            ],
            vec![
                ("private", "maybe"),
                ("license_id", "<svg onload=alert(1)>"),
            ],
            vec![("save", "<script>"), ("url", "javascript:alert(1)")],
        ];
        let forms = [
            ("/dataset/new", "/dataset/new", &editor),
            (
                "/dataset/edit/air-quality",
                "/dataset/edit/air-quality",
                &editor,
            ),
            (
                "/dataset/air-quality/resource/new",
                "/dataset/air-quality/resource/new",
                &editor,
            ),
            ("/dataset/new", "/dataset/delete/no-such-dataset", &editor),
            ("/dataset/new", "/dataset/follow/no-such-dataset", &editor),
            ("/user/register", "/user/register", &editor),
            ("/ckan-admin/config", "/ckan-admin/config", &admin),
            ("/ckan-admin/trash", "/ckan-admin/trash", &admin),
        ];
        for (page, action, who) in forms {
            for fields in &hostile {
                let r = who.post(page, action, fields).await;
                let status = r.status();
                let body = r.text().await.unwrap();
                assert!(
                    status.as_u16() < 500,
                    "{kind}: {action} {fields:?}: {status}"
                );
                assert!(
                    !body.contains("<script>alert") && !body.contains("<svg onload"),
                    "{kind}: {action}: unescaped markup"
                );
            }
            // A file sent to a form that takes none: over the form limit, refused.
            let token_page = who.text(page).await;
            let r = who
                .c
                .post(format!("{}{action}", s.base_url))
                .header("Cookie", &who.cookies)
                .multipart(
                    reqwest::multipart::Form::new()
                        .text("_csrf_token", common::csrf_token(&token_page))
                        .part(
                            "upload",
                            reqwest::multipart::Part::bytes(vec![b'x'; 100_000]).file_name("x.csv"),
                        ),
                )
                .send()
                .await
                .unwrap();
            if !action.contains("/resource/") {
                assert_eq!(r.status(), StatusCode::FORBIDDEN, "{kind}: {action}");
            } else {
                assert!(r.status().as_u16() < 500, "{kind}: {action}");
            }
            // A broken multipart body and a body far over the form limit.
            let r = who
                .c
                .post(format!("{}{action}", s.base_url))
                .header("Cookie", &who.cookies)
                .header("Content-Type", "multipart/form-data; boundary=zzz")
                .body("--zzz\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nunterminated")
                .send()
                .await
                .unwrap();
            assert!(
                r.status().as_u16() < 500,
                "{kind}: {action}: {}",
                r.status()
            );
            let r = who
                .c
                .post(format!("{}{action}", s.base_url))
                .header("Cookie", &who.cookies)
                .form(&[("title", "y".repeat(1024 * 1024))])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::FORBIDDEN, "{kind}: {action}");
        }
        let after = show(&s, "air-quality").await.unwrap();
        assert_eq!(before["title"], after["title"], "{kind}");
        assert_eq!(before["name"], after["name"], "{kind}");
        // The resource form took what a resource may be (any name, any URL), but the page never
        // makes a stored `javascript:` link run.
        let page = editor.text("/dataset/air-quality").await;
        assert!(!page.contains("href=\"javascript:"), "{kind}");
        assert_eq!(
            s.ok("package_list", json!({})).await,
            json!(["air-quality"]),
            "{kind}: nothing was created"
        );
    }
}
