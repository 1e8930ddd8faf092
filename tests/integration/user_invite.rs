//! `user_invite` against a fake SMTP server started in the test (the invite mail, its reset
//! link, the pending user and its membership), and without one (CKAN's 409, no user left), on
//! SQLite and on PostgreSQL.

use base64::Engine as _;
use catalog_framework::prelude::Config;
use catalog_host::testkit::{stores, StoreKind, TestApp};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

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

/// CKAN's mail settings, with `server` as the SMTP server.
fn smtp(config: &mut Config, server: &str) {
    config.catalog.site_url = "http://catalog.example.org".into();
    config.catalog.smtp.server = server.into();
    config.catalog.smtp.mail_from = Some("portal@example.org".into());
}

async fn check(kind: StoreKind) {
    // A port nothing listens on: bound, then closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let (addr, server) = fake_smtp().await;
    let t = TestApp::start_with(kind, |c| smtp(c, &addr)).await;
    t.ok(
        "organization_create",
        json!({"name": "inv-org", "title": "Invited Org"}),
    )
    .await;

    let user = t
        .ok(
            "user_invite",
            json!({"email": "New.Person+x@example.com", "group_id": "inv-org", "role": "editor"}),
        )
        .await;
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
    let mut conn = t.app.store.pool.acquire().await.unwrap();
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
    let shown = t.ok("user_show", json!({"id": id})).await;
    assert_eq!(shown["state"], "pending", "{kind}");
    let members = t
        .ok(
            "member_list",
            json!({"id": "inv-org", "object_type": "user"}),
        )
        .await;
    assert!(
        members
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m[0] == id && m[2].as_str().unwrap().eq_ignore_ascii_case("editor")),
        "{kind}: {members}"
    );

    // An org admin may invite; a plain member may not (CKAN's message).
    let bob = t.user("bob").await;
    let e = t
        .err(
            Some(&bob),
            "user_invite",
            json!({"email": "x@example.com", "group_id": "inv-org", "role": "member"}),
        )
        .await;
    assert_eq!(
        e["message"], "Access denied: User bob not authorized to add members",
        "{kind}"
    );

    // An organization admin who names the organization (not its id) may invite too.
    t.ok(
        "organization_member_create",
        json!({"id": "inv-org", "username": "bob", "role": "admin"}),
    )
    .await;
    let (addr, server) = fake_smtp().await;
    let admin_app = t.another(|c| smtp(c, &addr)).await;
    let invited = admin_app
        .call(
            Some(&bob),
            "user_invite",
            json!({"email": "by-name@example.com", "group_id": "inv-org", "role": "member"}),
        )
        .await
        .unwrap_or_else(|e| {
            panic!(
                "{kind}: an org admin naming the org: {}",
                e.to_error_object()
            )
        });
    assert_eq!(invited["state"], "pending", "{kind}");
    assert_eq!(
        server.await.unwrap().rcpt,
        ["RCPT TO:<by-name@example.com>"],
        "{kind}"
    );
    drop(admin_app);

    // No SMTP server: CKAN's 409 and no user left behind.
    // Another app on the same store (its own search index directory).
    let app = t.another(|c| smtp(c, &closed)).await;
    let before = app.ok("user_list", json!({"all_fields": false})).await;
    let e = app
        .err(
            Some(&app.admin),
            "user_invite",
            json!({"email": "nobody@example.com", "group_id": "inv-org", "role": "member"}),
        )
        .await;
    let message = e["message"].as_str().unwrap();
    assert_eq!(e["__type"], "Validation Error", "{kind}: {e}");
    assert!(
        message.starts_with(&format!(
            "Error sending the invite email, the user was not created: SMTP server could not be connected to: \"{closed}\" [Errno 111] "
        )),
        "{kind}: {message}"
    );
    let after = app.ok("user_list", json!({"all_fields": false})).await;
    assert_eq!(before, after, "{kind}: no user remains");
    let found = catalog_framework::store::users_where(
        &mut app.app.store.pool.acquire().await.unwrap(),
        "email = $1",
        &["nobody@example.com".to_string()],
    )
    .await
    .unwrap();
    assert!(found.is_empty(), "{kind}: no row of any state");
}

#[tokio::test]
async fn user_invite_mails_a_reset_link_or_creates_nothing() {
    for kind in stores().await {
        check(kind).await;
    }
}
