//! The web pages over HTTP, on SQLite and PostgreSQL: what a visitor sees, in which language,
//! what stays hidden, what crawlers get, caching, and hostile query strings.

use crate::common;

use catalog_host::testkit::{stores, StoreKind, TestServer};
use common::{client, csrf_token, set_cookie, Browser};
use reqwest::header::{ACCEPT, ACCEPT_LANGUAGE, ETAG, IF_NONE_MATCH, LAST_MODIFIED};
use reqwest::StatusCode;
use serde_json::json;

async fn server(kind: StoreKind) -> TestServer {
    let s = TestServer::start(kind, "admin", |config| {
        config
            .catalogext
            .values
            .insert("dcat".into(), json!({"enable_content_negotiation": true}));
        // The harvest pages' source reads a port nothing listens on.
        config
            .catalog
            .other
            .insert("harvest".into(), json!({"allow_hosts": ["127.0.0.1"]}));
        config.catalog.jobs.poll_interval_ms = 100;
    })
    .await;
    s.ok(
        "organization_create",
        json!({"name": "water-board", "title": "Water Board", "description": "We measure *rivers*."}),
    )
    .await;
    s.ok(
        "group_create",
        json!({"name": "environment", "title": "Environment"}),
    )
    .await;
    s.ok(
        "package_create",
        json!({
            "name": "river-levels", "title": "River levels </script><b>bold</b>",
            "owner_org": "water-board",
            "notes": "Daily **levels**.\n\n<script>alert(1)</script>\n\n[bad](javascript:alert(1))",
            "tags": [{"name": "water"}, {"name": "rivers"}],
            "groups": [{"name": "environment"}],
            "license_id": "cc-by",
            "extras": [{"key": "frequency", "value": "daily"}],
            "resources": [
                {"name": "Levels CSV", "url": "http://example.org/levels.csv", "format": "CSV", "size": 2048},
                {"name": "Chart", "url": "http://example.org/chart.png", "format": "PNG"},
            ],
        }),
    )
    .await;
    s.ok(
        "package_create",
        json!({"name": "air-quality", "title": "Air quality", "owner_org": "water-board",
               "tags": [{"name": "air"}], "resources": [{"url": "http://example.org/a.json", "format": "JSON"}]}),
    )
    .await;
    s.ok(
        "package_create",
        json!({"name": "secret-plans", "title": "Secret plans", "owner_org": "water-board", "private": true}),
    )
    .await;
    s
}

async fn get(s: &TestServer, path: &str) -> (StatusCode, String) {
    let r = client()
        .get(format!("{}{path}", s.base_url))
        .send()
        .await
        .unwrap();
    let status = r.status();
    (status, r.text().await.unwrap())
}

async fn get_with(s: &TestServer, path: &str, header: (&str, &str)) -> (StatusCode, String) {
    let r = client()
        .get(format!("{}{path}", s.base_url))
        .header(header.0, header.1)
        .send()
        .await
        .unwrap();
    let status = r.status();
    (status, r.text().await.unwrap())
}

#[tokio::test]
async fn home_and_search_pages() {
    for kind in stores().await {
        let s = server(kind).await;
        let (status, home) = get(&s, "/").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(
            home.contains("<html lang=\"en\" dir=\"ltr\">"),
            "{kind}: {home}"
        );
        assert!(home.contains("<main id=\"content\">") && home.matches("<main").count() == 1);
        assert!(home.contains("href=\"#content\""), "a skip link");
        assert!(
            home.contains(&format!(
                "rel=\"alternate\" type=\"text/turtle\" href=\"{}/catalog.ttl\"",
                s.base_url
            )),
            "{home}"
        );
        assert!(
            home.contains("<strong>2</strong> Datasets"),
            "{kind}: anonymous counts public datasets: {home}"
        );
        assert!(!home.contains("Secret plans"), "{kind}");

        // The search page: a facet filter, its counts, a sort, the result count.
        let (status, page) = get(&s, "/dataset/?tags=water&sort=title_string+asc").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(page.contains("1 dataset found"), "{kind}: {page}");
        assert!(page.contains("/dataset/river-levels"), "{kind}");
        assert!(
            !page.contains("/dataset/air-quality\""),
            "{kind}: filtered out"
        );
        assert!(
            page.contains("<option value=\"title_string asc\" selected>"),
            "{kind}"
        );
        assert!(
            page.contains("href=\"?sort=title_string+asc\""),
            "{kind}: the filter's remove link: {page}"
        );
        let (_, all) = get(&s, "/dataset/").await;
        assert!(all.contains("2 datasets found"), "{kind}: {all}");
        assert!(
            all.contains("?tags=water\">water (1)</a>"),
            "{kind}: a facet link with its count: {all}"
        );
        assert!(
            all.contains("Water Board (2)"),
            "{kind}: organization facet by display name"
        );
        assert!(
            !all.contains("secret-plans"),
            "{kind}: private hidden from the anonymous"
        );
        assert!(all.contains("/catalog.ttl\""), "{kind}");
        let (_, filtered) = get(&s, "/dataset/?q=levels&tags=water").await;
        assert!(
            filtered.contains("/catalog.ttl?q=levels&amp;fq=tags%3A%22water%22\""),
            "{kind}: the catalog's RDF with the same search: {filtered}"
        );

        // The sysadmin (by API token, as a script would) sees the private dataset.
        let token = s.token("admin", "web").await;
        let (_, mine) = get_with(&s, "/dataset/", ("Authorization", &token)).await;
        assert!(mine.contains("/dataset/secret-plans"), "{kind}");
        assert!(mine.contains("3 datasets found"), "{kind}");
    }
}

#[tokio::test]
async fn the_dataset_page() {
    for kind in stores().await {
        let s = server(kind).await;
        let r = client()
            .get(format!("{}/dataset/river-levels", s.base_url))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{kind}");
        assert!(r.headers().contains_key(LAST_MODIFIED), "{kind}");
        let page = r.text().await.unwrap();
        // Escaped title, sanitised Markdown, no live script.
        assert!(
            page.contains("River levels &lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;"),
            "{kind}: {page}"
        );
        assert!(page.contains("<strong>levels</strong>"), "{kind}");
        assert!(!page.contains("<script>alert"), "{kind}");
        assert!(!page.contains("href=\"javascript:"), "{kind}");
        // Resources, tags, extras, organization, groups, license.
        assert!(
            page.contains("Levels CSV") && page.contains("2.0 KiB"),
            "{kind}"
        );
        assert!(
            page.contains("href=\"http://example.org/levels.csv\""),
            "{kind}"
        );
        assert!(page.contains("/dataset/?tags=water"), "{kind}");
        assert!(
            page.contains("frequency") && page.contains("daily"),
            "{kind}"
        );
        assert!(page.contains("/organization/water-board") && page.contains("/group/environment"));
        // RDF links, canonical, and schema.org JSON-LD that cannot close its script.
        assert!(
            page.contains(&format!("href=\"{}/dataset/river-levels.ttl\"", s.base_url)),
            "{kind}"
        );
        assert!(page.contains(&format!(
            "<link rel=\"canonical\" href=\"{}/dataset/river-levels\">",
            s.base_url
        )));
        let start = page
            .find("<script type=\"application/ld+json\">")
            .expect("JSON-LD")
            + 35;
        let end = start + page[start..].find("</script>").unwrap();
        let jsonld: serde_json::Value =
            serde_json::from_str(&page[start..end]).expect("JSON-LD parses");
        assert!(
            jsonld
                .to_string()
                .contains("River levels </script><b>bold</b>"),
            "{kind}: {jsonld}"
        );
        assert!(page[start..end].contains("\\u003c/script\\u003e"));
        // The JSON-LD kept from the first view follows an edit and an organization's new title.
        s.ok(
            "package_patch",
            json!({"id": "river-levels", "title": "Renamed levels"}),
        )
        .await;
        s.ok(
            "organization_patch",
            json!({"id": "water-board", "title": "Rivers Authority"}),
        )
        .await;
        let (_, edited) = get(&s, "/dataset/river-levels").await;
        let start = edited
            .find("<script type=\"application/ld+json\">")
            .unwrap()
            + 35;
        let end = start + edited[start..].find("</script>").unwrap();
        let jsonld = &edited[start..end];
        assert!(
            jsonld.contains("Renamed levels") && jsonld.contains("Rivers Authority"),
            "{kind}: {jsonld}"
        );
        // The activity stream has a page of its own, linked from the dataset's.
        assert!(
            page.contains("href=\"/dataset/activity/river-levels\""),
            "{kind}"
        );
        let (status, stream) = get(&s, "/dataset/activity/river-levels").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(
            stream.contains("changed package") && stream.contains("new package"),
            "{kind}: {stream}"
        );
        let (status, _) = get(&s, "/dataset/activity/secret-plans").await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{kind}: a private dataset's stream is hidden too"
        );
        // Not changed: 304.
        let etag = client()
            .get(format!("{}/dataset/river-levels", s.base_url))
            .send()
            .await
            .unwrap()
            .headers()[ETAG]
            .to_str()
            .unwrap()
            .to_string();
        let again = client()
            .get(format!("{}/dataset/river-levels", s.base_url))
            .header(IF_NONE_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{kind}");
        // RDF is still served on the same path, by extension and by Accept.
        let (status, ttl) = get(&s, "/dataset/river-levels.ttl").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(ttl.contains("dcat:Dataset"), "{kind}: {ttl}");
        let (status, ttl) = get_with(
            &s,
            "/dataset/river-levels",
            (ACCEPT.as_str(), "text/turtle"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert!(ttl.contains("dcat:Dataset"), "{kind}: {ttl}");
        let (status, html) =
            get_with(&s, "/dataset/river-levels", (ACCEPT.as_str(), "text/html")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("<h1>Renamed levels"), "{kind}");
        let (_, catalog) = get_with(&s, "/", (ACCEPT.as_str(), "text/turtle")).await;
        assert!(
            catalog.contains("dcat:Catalog"),
            "{kind}: the catalog by negotiation on /"
        );
        // Private: a 404 page to the anonymous, the page to the sysadmin.
        let (status, hidden) = get(&s, "/dataset/secret-plans").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{kind}");
        assert!(
            hidden.contains("Dataset not found") && !hidden.contains("Secret plans"),
            "{kind}"
        );
        let token = s.token("admin", "web").await;
        let (status, shown) =
            get_with(&s, "/dataset/secret-plans", ("Authorization", &token)).await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(
            shown.contains("Secret plans") && shown.contains("Private"),
            "{kind}"
        );
        let (status, _) = get(&s, "/dataset/no-such-thing").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{kind}");
    }
}

#[tokio::test]
async fn resource_organization_and_group_pages() {
    for kind in stores().await {
        let s = server(kind).await;
        let d = s.ok("package_show", json!({"id": "river-levels"})).await;
        let rid = d["resources"][1]["id"].as_str().unwrap().to_string();
        let (status, page) = get(&s, &format!("/dataset/river-levels/resource/{rid}")).await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(page.contains("<h1>Chart</h1>"), "{kind}: {page}");
        assert!(
            page.contains("<img src=\"http://example.org/chart.png\""),
            "{kind}: the default image view: {page}"
        );
        let (status, _) = get(&s, "/dataset/river-levels/resource/not-a-resource").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{kind}");
        let (status, _) = get(&s, &format!("/dataset/air-quality/resource/{rid}")).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{kind}: a resource of another dataset"
        );

        let (_, orgs) = get(&s, "/organization/").await;
        assert!(
            orgs.contains("/organization/water-board") && orgs.contains("2 datasets"),
            "{kind}: {orgs}"
        );
        let (status, org) = get(&s, "/organization/water-board?tags=air").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(
            org.contains("<em>rivers</em>"),
            "{kind}: the description as Markdown"
        );
        assert!(
            org.contains("1 dataset found") && org.contains("/dataset/air-quality"),
            "{kind}: {org}"
        );
        let (_, group) = get(&s, "/group/environment").await;
        assert!(
            group.contains("1 dataset found") && group.contains("/dataset/river-levels"),
            "{kind}"
        );
        let (status, _) = get(&s, "/group/nope").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{kind}");
    }
}

#[tokio::test]
async fn languages_by_prefix_and_header() {
    for kind in stores().await {
        let s = server(kind).await;
        let (status, de) = get(&s, "/de/dataset/").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(de.contains("<html lang=\"de\" dir=\"ltr\">"), "{kind}");
        assert!(
            de.contains("Datensätze") && de.contains("Organisationen"),
            "{kind}: {de}"
        );
        assert!(
            de.contains("href=\"/de/dataset/river-levels\""),
            "{kind}: links keep the prefix"
        );
        let (_, by_header) = get_with(&s, "/", (ACCEPT_LANGUAGE.as_str(), "fr, de-AT;q=0.9")).await;
        assert!(by_header.contains("lang=\"de\"") && by_header.contains("Zum Inhalt springen"));
        // Counts take the locale's plural forms (issue 46): one dataset, several datasets.
        let (_, one) = get(&s, "/de/dataset/?tags=water").await;
        assert!(one.contains("1 Datensatz gefunden"), "{kind}: {one}");
        let (_, several) = get(&s, "/de/dataset/").await;
        assert!(several.contains("Datensätze gefunden"), "{kind}");
        let (_, one_en) = get(&s, "/dataset/?tags=water").await;
        assert!(one_en.contains("1 dataset found"), "{kind}");
        let (status, page) = get(&s, "/de/dataset/river-levels").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(page.contains("Daten und Ressourcen"), "{kind}");
        let (_, rtl) = get(&s, "/ar/").await;
        assert!(rtl.contains("<html lang=\"ar\" dir=\"rtl\">"), "{kind}");
    }
}

#[tokio::test]
async fn robots_and_sitemap_list_public_datasets_only() {
    for kind in stores().await {
        let s = server(kind).await;
        let (_, robots) = get(&s, "/robots.txt").await;
        assert!(
            robots.contains(&format!("Sitemap: {}/sitemap.xml", s.base_url)),
            "{kind}"
        );
        let (_, index) = get(&s, "/sitemap.xml").await;
        assert!(
            index.contains("/sitemap/datasets-1.xml") && !index.contains("datasets-2"),
            "{kind}: {index}"
        );
        let (status, urls) = get(&s, "/sitemap/datasets-1.xml").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(
            urls.contains("/dataset/river-levels</loc>")
                && urls.contains("/dataset/air-quality</loc>")
        );
        assert!(!urls.contains("secret-plans"), "{kind}");
        let (status, _) = get(&s, "/sitemap/datasets-0.xml").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{kind}");
    }
}

#[tokio::test]
async fn hostile_query_strings_get_pages_not_errors() {
    for kind in stores().await {
        let s = server(kind).await;
        let long = "x".repeat(20_000);
        let paths = [
            "/dataset/?q=title:(((((".to_string(),
            "/dataset/?q=%00%01&tags=%00".to_string(),
            "/dataset/?page=-1&sort=drop+table".to_string(),
            "/dataset/?page=99999999999999999999999".to_string(),
            format!("/dataset/?q={long}&tags={long}"),
            "/dataset/?tags=%22%5C%22&organization=%3Cscript%3Ealert(1)%3C/script%3E".to_string(),
            "/organization/?q=%3Cb%3E&page=abc".to_string(),
            "/dataset/%3Cscript%3E".to_string(),
            "/dataset/river-levels/resource/%00".to_string(),
            "/de/group/%22%3E%3Cx".to_string(),
        ];
        for p in &paths {
            let (status, body) = get(&s, p).await;
            assert!(status.as_u16() < 500, "{kind} {p}: {status}");
            assert!(
                !body.contains("<script>alert"),
                "{kind} {p}: unescaped markup"
            );
            assert!(
                !body.contains("<b>") || p.contains("river-levels"),
                "{kind} {p}"
            );
        }
        // A 1 MB form is not read: refused, no session.
        let big = client()
            .post(format!("{}/user/login", s.base_url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(format!("login=admin&password={}", "x".repeat(1 << 20)))
            .send()
            .await
            .unwrap();
        assert_eq!(big.status(), StatusCode::FORBIDDEN, "{kind}");
        assert!(big
            .headers()
            .get("set-cookie")
            .is_none_or(|c| !c.to_str().unwrap().starts_with("catalog_session")));
        // Nothing changed.
        assert_eq!(
            s.ok("package_list", json!({}))
                .await
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
}

#[tokio::test]
async fn log_in_make_a_token_use_it_revoke_it_log_out() {
    for kind in stores().await {
        let s = server(kind).await;
        let c = client();
        let url = |p: &str| format!("{}{p}", s.base_url);
        let form = c.get(url("/user/login")).send().await.unwrap();
        let csrf_cookie = set_cookie(&form, "catalog_csrf").expect("a CSRF cookie");
        let csrf_pair = csrf_cookie.split(';').next().unwrap().to_string();
        let page = form.text().await.unwrap();
        assert!(
            page.contains("name=\"login\"") && page.contains("name=\"password\""),
            "{kind}"
        );
        let token = csrf_token(&page);

        // Without the token: 403, no session.
        let r = c
            .post(url("/user/login"))
            .header("Cookie", &csrf_pair)
            .form(&[
                ("login", "admin"),
                ("password", catalog_host::testkit::PASSWORD),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{kind}");
        assert!(set_cookie(&r, "catalog_session").is_none());
        // A wrong password: CKAN's message, no session.
        let r = c
            .post(url("/user/login"))
            .header("Cookie", &csrf_pair)
            .form(&[
                ("login", "admin"),
                ("password", "wrong"),
                ("_csrf_token", &token),
            ])
            .send()
            .await
            .unwrap();
        assert!(set_cookie(&r, "catalog_session").is_none());
        assert!(r
            .text()
            .await
            .unwrap()
            .contains("Login failed. Bad username or password."));
        // The right one: a session cookie and the user's page.
        let r = c
            .post(url("/user/login"))
            .header("Cookie", &csrf_pair)
            .form(&[
                ("login", "admin"),
                ("password", catalog_host::testkit::PASSWORD),
                ("_csrf_token", &token),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(r.headers()["location"], "/user/admin");
        let session = set_cookie(&r, "catalog_session").expect("a session");
        assert!(
            session.contains("HttpOnly") && session.contains("SameSite=Lax"),
            "{session}"
        );
        let cookies = format!("{}; {csrf_pair}", session.split(';').next().unwrap());
        let get_as = |p: String| c.get(url(&p)).header("Cookie", cookies.clone()).send();
        let r = get_as("/dataset/secret-plans".into()).await.unwrap();
        assert_eq!(
            r.status(),
            StatusCode::OK,
            "{kind}: the session's user sees the private dataset"
        );
        assert!(r.text().await.unwrap().contains("/user/_logout"));

        // A token, shown once, that works against the API.
        let page = get_as("/user/admin/api-tokens".into())
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let r = c
            .post(url("/user/admin/api-tokens"))
            .header("Cookie", &cookies)
            .form(&[
                ("name", "from-the-web"),
                ("_csrf_token", &csrf_token(&page)),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()["cache-control"], "no-store");
        let made = r.text().await.unwrap();
        let at = made.find("<code id=\"new-token\">").expect("the new token") + 21;
        let api_token = made[at..at + made[at..].find('<').unwrap()].to_string();
        let api = |t: String| {
            c.get(url("/api/3/action/package_show?id=secret-plans"))
                .header("Authorization", t)
                .send()
        };
        assert_eq!(
            api(api_token.clone()).await.unwrap().status(),
            StatusCode::OK,
            "{kind}: {api_token}"
        );
        let list = get_as("/user/admin/api-tokens".into())
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            list.contains("from-the-web") && !list.contains(&api_token),
            "{kind}: shown once"
        );
        // Revoked: the API refuses it.
        let at = list.find("/api-tokens/").unwrap() + 12;
        let jti = &list[at..at + list[at..].find('/').unwrap()];
        let r = c
            .post(url(&format!("/user/admin/api-tokens/{jti}/revoke")))
            .header("Cookie", &cookies)
            .form(&[("_csrf_token", csrf_token(&list))])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(
            api(api_token).await.unwrap().status(),
            StatusCode::FORBIDDEN,
            "{kind}"
        );

        // Logging out ends the session cookie; without it the private dataset is hidden.
        let r = get_as("/user/_logout".into()).await.unwrap();
        assert!(set_cookie(&r, "catalog_session")
            .unwrap()
            .contains("Max-Age=0"));
        let (status, _) = get(&s, "/dataset/secret-plans").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{kind}");
        // The session ended: a copy of the cookie kept from before is nobody now.
        let r = get_as("/dataset/secret-plans".into()).await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{kind}: a saved cookie");
        // A forged session is nobody.
        let forged = cookies.replacen("catalog_session=v2.", "catalog_session=v2.x", 1);
        let r = c
            .get(url("/dataset/secret-plans"))
            .header("Cookie", forged)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{kind}");

        // Ten failed logins for an account, then it waits.
        for _ in 0..10 {
            c.post(url("/user/login"))
                .header("Cookie", &csrf_pair)
                .form(&[
                    ("login", "mallory"),
                    ("password", "x"),
                    ("_csrf_token", &token),
                ])
                .send()
                .await
                .unwrap();
        }
        let r = c
            .post(url("/user/login"))
            .header("Cookie", &csrf_pair)
            .form(&[
                ("login", "mallory"),
                ("password", "x"),
                ("_csrf_token", &token),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS, "{kind}");
    }
}

/// Sessions end with a password change and with a sysadmin's delete (every session of the
/// user); `came_from` goes nowhere but this site; parallel wrong passwords are all counted.
#[tokio::test]
async fn sessions_end_redirects_stay_local_and_logins_are_counted() {
    for kind in stores().await {
        let s = server(kind).await;
        let editor = s.user("editor").await;
        s.ok(
            "organization_member_create",
            json!({"id": "water-board", "username": "editor", "role": "editor"}),
        )
        .await;
        // Two browsers; a password change ends both.
        let (one, two) = (
            Browser::logged_in(&s, "editor").await,
            Browser::logged_in(&s, "editor").await,
        );
        assert!(sees_secret(&one).await && sees_secret(&two).await, "{kind}");
        s.ok(
            "user_patch",
            json!({"id": editor.id, "password": "another-pass-5678"}),
        )
        .await;
        assert!(!sees_secret(&one).await, "{kind}: password changed");
        assert!(!sees_secret(&two).await, "{kind}: password changed");
        // Deleted: its sessions end.
        s.ok(
            "user_patch",
            json!({"id": "editor", "password": catalog_host::testkit::PASSWORD}),
        )
        .await;
        let three = Browser::logged_in(&s, "editor").await;
        assert!(sees_secret(&three).await, "{kind}");
        s.ok("user_delete", json!({"id": "editor"})).await;
        assert!(!sees_secret(&three).await, "{kind}: deleted");

        // came_from: only a local path.
        let b = Browser::anonymous(&s).await;
        for (came_from, to) in [
            ("/dataset/river-levels", "/dataset/river-levels"),
            ("/\t/evil.example", "/user/admin"),
            ("/\n/evil.example", "/user/admin"),
            ("/\u{7f}/evil.example", "/user/admin"),
            ("/\\evil.example", "/user/admin"),
            ("//evil.example", "/user/admin"),
        ] {
            let r = b
                .post(
                    "/user/login",
                    "/user/login",
                    &[
                        ("login", "admin"),
                        ("password", catalog_host::testkit::PASSWORD),
                        ("came_from", came_from),
                    ],
                )
                .await;
            assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}: {came_from:?}");
            assert_eq!(r.headers()["location"], to, "{kind}: {came_from:?}");
        }

        // 40 wrong passwords at once: ten are checked, the rest wait.
        let page = b.text("/user/login").await;
        let token = csrf_token(&page);
        let tries = (0..40).map(|_| {
            b.c.post(format!("{}/user/login", b.base))
                .header("Cookie", &b.cookies)
                .form(&[
                    ("login", "admin"),
                    ("password", "wrong"),
                    ("_csrf_token", &token),
                ])
                .send()
        });
        let answers = futures::future::join_all(tries).await;
        let checked = answers
            .iter()
            .filter(|r| r.as_ref().unwrap().status() == StatusCode::OK)
            .count();
        let refused = answers
            .iter()
            .filter(|r| r.as_ref().unwrap().status() == StatusCode::TOO_MANY_REQUESTS)
            .count();
        assert_eq!((checked, refused), (10, 30), "{kind}");
    }
}

async fn sees_secret(b: &Browser) -> bool {
    b.get("/dataset/secret-plans").await.status() == StatusCode::OK
}

/// Every answer carries anti-framing and anti-sniffing headers.
#[tokio::test]
async fn pages_and_api_answers_refuse_framing_and_sniffing() {
    for kind in stores().await {
        let s = server(kind).await;
        for path in [
            "/",
            "/dataset/river-levels",
            "/api/3/action/package_list",
            "/nowhere",
        ] {
            let r = client()
                .get(format!("{}{path}", s.base_url))
                .send()
                .await
                .unwrap();
            assert_eq!(
                r.headers()["x-frame-options"],
                "SAMEORIGIN",
                "{kind}: {path}"
            );
            assert_eq!(
                r.headers()["x-content-type-options"],
                "nosniff",
                "{kind}: {path}"
            );
        }
    }
}

/// The harvest pages: the list, a source's page (its jobs and "Harvest now" for those who may
/// run it, a form that needs the CSRF token and makes a job), a job's report; a private
/// source stays hidden; an unknown source is a 404 page.
#[tokio::test]
async fn harvest_pages() {
    for kind in stores().await {
        let s = server(kind).await;
        s.ok(
            "harvest_source_create",
            json!({"name": "city-feed", "title": "City <feed>", "url": "http://127.0.0.1:9/catalog.ttl",
                   "source_type": "dcat_rdf", "owner_org": "water-board", "notes": "The *city's* catalog."}),
        )
        .await;
        s.ok(
            "harvest_source_create",
            json!({"name": "hidden-feed", "url": "http://127.0.0.1:9/other.ttl", "private": true,
                   "source_type": "dcat_rdf", "owner_org": "water-board"}),
        )
        .await;
        let (status, page) = get(&s, "/harvest").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(page.contains("City &lt;feed&gt;"), "{kind}: escaped title");
        assert!(
            !page.contains("hidden-feed"),
            "{kind}: a private source is not listed"
        );
        let (status, page) = get(&s, "/harvest/city-feed").await;
        assert_eq!(status, StatusCode::OK, "{kind}");
        assert!(
            page.contains("<em>city's</em>"),
            "{kind}: notes as Markdown"
        );
        assert!(
            page.contains("This source has not been harvested yet."),
            "{kind}"
        );
        assert!(
            !page.contains("Harvest now"),
            "{kind}: anonymous visitors cannot run it"
        );
        let (status, _) = get(&s, "/harvest/hidden-feed").await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{kind}: as a private dataset's page"
        );
        let (status, page) = get(&s, "/harvest/no-such-source").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{kind}");
        assert!(page.contains("Harvest source not found"), "{kind}");
        let (_, page) = get_with(&s, "/harvest/city-feed", (ACCEPT_LANGUAGE.as_str(), "de")).await;
        assert!(
            page.contains("Diese Quelle wurde noch nicht geharvestet."),
            "{kind}"
        );

        let admin = Browser::logged_in(&s, "admin").await;
        let page = admin.text("/harvest/city-feed").await;
        assert!(page.contains("Harvest now"), "{kind}");
        // Without the token: refused, no job.
        let r = admin
            .c
            .post(format!("{}/harvest/refresh/city-feed", s.base_url))
            .header("Cookie", &admin.cookies)
            .form(&[("x", "y")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{kind}");
        let status = s
            .ok("harvest_source_show_status", json!({"id": "city-feed"}))
            .await;
        assert_eq!(status["job_count"], 0, "{kind}");
        let r = admin
            .post("/harvest/city-feed", "/harvest/refresh/city-feed", &[])
            .await;
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{kind}");
        assert_eq!(r.headers()["location"], "/harvest/city-feed", "{kind}");
        let job = s
            .ok("harvest_job_list", json!({"source_id": "city-feed"}))
            .await;
        let job_id = job[0]["id"].as_str().unwrap().to_string();
        // The job fails (nothing listens on port 9): its report says why.
        for _ in 0..100 {
            let j = s.ok("harvest_job_show", json!({"id": job_id})).await;
            if j["status"] == "Finished" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let page = admin
            .text(&format!("/harvest/city-feed/job/{job_id}"))
            .await;
        assert!(page.contains("Job report"), "{kind}");
        assert!(
            page.contains("Could not get content from"),
            "{kind}: {page}"
        );
        // The status in words and the time to the minute, in UTC.
        assert!(
            page.contains("Job status: Finished · Finished 20"),
            "{kind}: {page}"
        );
        assert!(page.contains(" UTC</caption>"), "{kind}: {page}");
        let (_, page) = get_with(&s, "/harvest/city-feed", (ACCEPT_LANGUAGE.as_str(), "de")).await;
        assert!(page.contains("Auftragsstatus: Beendet"), "{kind}: {page}");
        let page = admin.text("/harvest/city-feed").await;
        assert!(
            page.contains(&format!("/harvest/city-feed/job/{job_id}")),
            "{kind}"
        );
        let (status, _) = get(&s, &format!("/harvest/city-feed/job/{job_id}")).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{kind}: jobs are for the source's editors"
        );
    }
}
