//! `user_invite` against a fake SMTP server started in the test (the invite mail, its reset
//! link, the pending user and its membership), and without one (CKAN's 409, no user left), on
//! SQLite and on PostgreSQL.

use base64::Engine as _;
use catalog_framework::prelude::{ActionContext, AppState, Config, Principal};
use catalog_framework::testkit::ScratchDb;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;

async fn call(
    app: &AppState,
    user: Option<Principal>,
    action: &str,
    params: Value,
) -> Result<Value, Value> {
    ActionContext::new(app.clone(), user)
        .run_top(action, params.as_object().cloned().unwrap_or_default())
        .await
        .map_err(|e| e.to_error_object())
}

/// What the fake server received: the envelope recipients and the message after `DATA`.
#[derive(Debug, Default)]
struct Received {
    rcpt: Vec<String>,
    data: String,
}

/// A minimal SMTP server for one connection: 220, EHLO → 250, MAIL/RCPT → 250,
/// DATA → 354 … 250, QUIT → 221. Returns its address and what it received.
async fn fake_smtp() -> (String, tokio::task::JoinHandle<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        let (r, mut w) = sock.into_split();
        let mut r = BufReader::new(r);
        let mut got = Received::default();
        w.write_all(b"220 fake ESMTP\r\n").await.unwrap();
        let mut in_data = false;
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).await.unwrap() == 0 {
                break;
            }
            if in_data {
                if line == ".\r\n" {
                    in_data = false;
                    w.write_all(b"250 queued\r\n").await.unwrap();
                } else {
                    got.data.push_str(&line);
                }
                continue;
            }
            let upper = line.to_ascii_uppercase();
            let reply: &[u8] = if upper.starts_with("EHLO") {
                b"250-fake\r\n250 8BITMIME\r\n"
            } else if upper.starts_with("MAIL FROM") {
                b"250 ok\r\n"
            } else if upper.starts_with("RCPT TO") {
                got.rcpt.push(line.trim_end().to_string());
                b"250 ok\r\n"
            } else if upper.starts_with("DATA") {
                in_data = true;
                b"354 go ahead\r\n"
            } else if upper.starts_with("QUIT") {
                w.write_all(b"221 bye\r\n").await.unwrap();
                break;
            } else {
                b"502 not implemented\r\n"
            };
            w.write_all(reply).await.unwrap();
        }
        got
    });
    (addr, task)
}

async fn app_with_smtp(
    kind: &str,
    database_url: &str,
    dir: &std::path::Path,
    server: &str,
) -> AppState {
    let mut config = Config::default();
    if kind == "postgres" {
        config.catalog.search.backend = "postgres".into();
    }
    config.catalog.site_url = "http://catalog.example.org".into();
    config.catalog.smtp.server = server.into();
    config.catalog.smtp.mail_from = Some("portal@example.org".into());
    catalog_framework::build_app(config, database_url, dir.into())
        .await
        .unwrap()
}

fn principal(u: &Value, sysadmin: bool) -> Option<Principal> {
    Some(Principal {
        id: u["id"].as_str().unwrap().to_string(),
        name: u["name"].as_str().unwrap().to_string(),
        sysadmin,
        state: "active".into(),
    })
}

async fn check(kind: &str, database_url: &str, dir: &std::path::Path) {
    // A port nothing listens on: bound, then closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let (addr, server) = fake_smtp().await;
    let app = app_with_smtp(kind, database_url, dir, &addr).await;
    let admin =
        catalog_plugin_core::admin::create_user(&app, "admin", "a@example.org", "pass1234", true)
            .await
            .unwrap();
    let sysadmin = principal(&admin, true);
    call(
        &app,
        sysadmin.clone(),
        "organization_create",
        json!({"name": "inv-org", "title": "Invited Org"}),
    )
    .await
    .unwrap();

    let user = call(
        &app,
        sysadmin.clone(),
        "user_invite",
        json!({"email": "New.Person+x@example.com", "group_id": "inv-org", "role": "editor"}),
    )
    .await
    .unwrap();
    let got = server.await.unwrap();
    let id = user["id"].as_str().unwrap();
    let name = user["name"].as_str().unwrap();
    assert!(name.starts_with("new-person-x-"), "{kind}: {name}");
    assert_eq!(user["state"], "pending", "{kind}: {user}");
    assert_eq!(got.rcpt, ["RCPT TO:<New.Person+x@example.com>"], "{kind}");
    assert!(
        got.data.contains("Subject: Invite for Catalog\r\n"),
        "{kind}: {}",
        got.data
    );
    assert!(
        got.data
            .contains("From: \"Catalog\" <portal@example.org>\r\n"),
        "{kind}"
    );
    let body = got
        .data
        .split("\r\n\r\n")
        .nth(1)
        .unwrap()
        .replace("\r\n", "");
    let body = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap(),
    )
    .unwrap();
    let mut conn = app.store.pool.acquire().await.unwrap();
    let key = catalog_framework::store::user_reset_key(&mut conn, id)
        .await
        .unwrap()
        .expect("a reset key is stored");
    drop(conn);
    assert_eq!(key.len(), 32, "{kind}");
    assert!(
        body.contains(&format!(
            "http://catalog.example.org/user/reset/{id}?key={key}"
        )),
        "{kind}: {body}"
    );
    assert!(
        body.contains("the organization Invited Org with the following role: Editor."),
        "{kind}: {body}"
    );
    let shown = call(&app, sysadmin.clone(), "user_show", json!({"id": id}))
        .await
        .unwrap();
    assert_eq!(shown["state"], "pending", "{kind}");
    let members = call(
        &app,
        sysadmin.clone(),
        "member_list",
        json!({"id": "inv-org", "object_type": "user"}),
    )
    .await
    .unwrap();
    assert!(
        members
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m[0] == id && m[2].as_str().unwrap().eq_ignore_ascii_case("editor")),
        "{kind}: {members}"
    );

    // An org admin may invite; a plain member may not (CKAN's message).
    let bob = call(
        &app,
        sysadmin.clone(),
        "user_create",
        json!({"name": "bob", "email": "bob@example.org", "password": "pass1234"}),
    )
    .await
    .unwrap();
    let e = call(
        &app,
        principal(&bob, false),
        "user_invite",
        json!({"email": "x@example.com", "group_id": "inv-org", "role": "member"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        e["message"], "Access denied: User bob not authorized to add members",
        "{kind}"
    );

    // An organization admin who names the organization (not its id) may invite too.
    call(
        &app,
        sysadmin.clone(),
        "organization_member_create",
        json!({"id": "inv-org", "username": "bob", "role": "admin"}),
    )
    .await
    .unwrap();
    let (addr, server) = fake_smtp().await;
    let admin_dir = tempfile::tempdir().unwrap();
    let admin_app = app_with_smtp(kind, database_url, admin_dir.path(), &addr).await;
    let invited = call(
        &admin_app,
        principal(&bob, false),
        "user_invite",
        json!({"email": "by-name@example.com", "group_id": "inv-org", "role": "member"}),
    )
    .await
    .unwrap_or_else(|e| panic!("{kind}: an org admin naming the org: {e}"));
    assert_eq!(invited["state"], "pending", "{kind}");
    assert_eq!(
        server.await.unwrap().rcpt,
        ["RCPT TO:<by-name@example.com>"],
        "{kind}"
    );
    drop(admin_app);

    // No SMTP server: CKAN's 409 and no user left behind.
    // Another app on the same store (its own search index directory).
    let other_dir = tempfile::tempdir().unwrap();
    let app = app_with_smtp(kind, database_url, other_dir.path(), &closed).await;
    let before = call(
        &app,
        sysadmin.clone(),
        "user_list",
        json!({"all_fields": false}),
    )
    .await
    .unwrap();
    let e = call(
        &app,
        sysadmin.clone(),
        "user_invite",
        json!({"email": "nobody@example.com", "group_id": "inv-org", "role": "member"}),
    )
    .await
    .unwrap_err();
    let message = e["message"].as_str().unwrap();
    assert_eq!(e["__type"], "Validation Error", "{kind}: {e}");
    assert!(
        message.starts_with(&format!(
            "Error sending the invite email, the user was not created: SMTP server could not be connected to: \"{closed}\" [Errno 111] "
        )),
        "{kind}: {message}"
    );
    let after = call(
        &app,
        sysadmin.clone(),
        "user_list",
        json!({"all_fields": false}),
    )
    .await
    .unwrap();
    assert_eq!(before, after, "{kind}: no user remains");
    let found = catalog_framework::store::users_where(
        &mut app.store.pool.acquire().await.unwrap(),
        "email = $1",
        &["nobody@example.com".to_string()],
    )
    .await
    .unwrap();
    assert!(found.is_empty(), "{kind}: no row of any state");
}

#[tokio::test]
async fn user_invite_mails_a_reset_link_or_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let url = catalog_framework::store::Store::sqlite_url_in(dir.path());
    check("sqlite", &url, dir.path()).await;
    let db = ScratchDb::create("catalog_user_invite")
        .await
        .expect("PostgreSQL at 127.0.0.1:5432");
    let dir = tempfile::tempdir().unwrap();
    check("postgres", &db.url, dir.path()).await;
}
