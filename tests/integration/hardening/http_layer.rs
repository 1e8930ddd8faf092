//! The HTTP layer: JSON answers under `/api` even for requests hyper itself refuses, idle and
//! slowloris connections closed, a connection limit that keeps the server reachable, and
//! uploads streamed to disk.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::support::{Server, StoreKind};

/// Sends raw bytes and reads the answer until the server closes or the body is complete:
/// `(status, head, body)`.
async fn raw(addr: &str, request: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    // A server may answer and close before it has read the whole of an oversized request: the
    // write may then fail, and the answer is still there to read.
    let _ = s.write_all(request).await;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n = match tokio::time::timeout_at(deadline.into(), s.read(&mut chunk)).await {
            Ok(Ok(n)) => n,
            _ => break,
        };
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(usize::MAX);
            if body.len() >= len {
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

fn assert_json(what: &str, head: &str, body: &str) -> Value {
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{what}: not JSON:\n{head}\n\n{body}"
    );
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{what}: {e}: {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_under_api_is_json() {
    let server = Server::start(StoreKind::Sqlite, &[]).await;
    let addr = server.addr();
    let host = format!("Host: {addr}\r\n");
    let cases: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "invalid UTF-8 in the action name",
            format!("GET /api/3/action/%FF HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            400,
        ),
        (
            "invalid UTF-8 in a Util API path",
            format!("GET /api/util/%FF HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            404,
        ),
        (
            "invalid UTF-8 in a version 1 Util API path",
            format!("GET /api/1/util/%FF HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            404,
        ),
        (
            "invalid UTF-8 in a version 2 Util API path",
            format!("GET /api/2/util/dataset/%FF%FE HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            404,
        ),
        (
            "invalid UTF-8 in a Search API register",
            format!("GET /api/search/%FF HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            404,
        ),
        (
            "invalid UTF-8 in a DCAT dataset path",
            format!("GET /dataset/%FF.ttl HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            404,
        ),
        (
            "PUT",
            format!("PUT /api/3/action/package_show HTTP/1.1\r\n{host}Content-Length: 0\r\nConnection: close\r\n\r\n").into_bytes(),
            405,
        ),
        (
            "DELETE",
            format!("DELETE /api/3/action/package_show HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            405,
        ),
        (
            "PATCH on a version probe",
            format!("PATCH /api/3 HTTP/1.1\r\n{host}Content-Length: 0\r\nConnection: close\r\n\r\n").into_bytes(),
            405,
        ),
        (
            "an unknown path under /api",
            format!("GET /api/nothing/here HTTP/1.1\r\n{host}Connection: close\r\n\r\n").into_bytes(),
            404,
        ),
        (
            "a control character in Content-Type",
            format!("POST /api/3/action/package_list HTTP/1.1\r\n{host}Content-Type: application/json\x01\r\nContent-Length: 2\r\n\r\n{{}}").into_bytes(),
            400,
        ),
        (
            "a URL over 64 KB",
            format!(
                "GET /api/3/action/package_search?q={} HTTP/1.1\r\n{host}\r\n",
                "a".repeat(70_000)
            )
            .into_bytes(),
            414,
        ),
        (
            "headers over the server's buffer",
            format!(
                "GET /api/3/action/status_show HTTP/1.1\r\n{host}X-Big: {}\r\n\r\n",
                // Over twice hyper's 400 KB read buffer: one read never holds the whole head,
                // however the bytes arrive.
                "b".repeat(1_000_000)
            )
            .into_bytes(),
            431,
        ),
        (
            "a request line that is not HTTP",
            b"\x00\x01\x02 garbage\r\n\r\n".to_vec(),
            400,
        ),
    ];
    for (what, request, status) in cases {
        let (got, head, body) = raw(&addr, &request).await;
        assert_eq!(got, status, "{what}:\n{head}\n\n{body}");
        let v = assert_json(what, &head, &body);
        assert!(
            v.is_string() || v.get("success") == Some(&json!(false)),
            "{what}: {v}"
        );
    }
    // A keep-alive connection keeps working after an error answer of the application.
    let mut s = TcpStream::connect(&addr).await.unwrap();
    for _ in 0..2 {
        s.write_all(
            format!("PUT /api/3/action/x HTTP/1.1\r\n{host}Content-Length: 0\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
        let mut buf = [0u8; 4096];
        let n = s.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 405"));
    }
    // The server is still up.
    let (status, _) = server.call("status_show", json!({})).await;
    assert_eq!(status, 200);
}

/// True when the server closed the connection within `within`.
async fn closed_by_server(s: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline.into(), s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slowloris_connections_are_closed() {
    let server = Server::start(
        StoreKind::Sqlite,
        &[
            ("CATALOG__SERVER__KEEP_ALIVE_TIMEOUT_SECS", "2"),
            ("CATALOG__SERVER__HEADER_READ_TIMEOUT_SECS", "2"),
        ],
    )
    .await;
    let addr = server.addr();
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    // Keep-alive connections after one request.
    let mut kept = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(&addr).await.unwrap();
        s.write_all(
            format!("GET /api/3/action/status_show HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
        let mut buf = [0u8; 8192];
        let n = s.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        kept.push(s);
    }
    // Slowloris: a header byte every half second, never finishing.
    let slow = (0..20).map(|_| {
        let addr = addr.clone();
        tokio::spawn(async move {
            let mut s = TcpStream::connect(&addr).await.unwrap();
            let _ = s
                .write_all(b"GET /api/3/action/status_show HTTP/1.1\r\n")
                .await;
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(10) {
                if s.write_all(b"X").await.is_err() {
                    return true;
                }
                let mut buf = [0u8; 64];
                match tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => return true,
                    _ => {}
                }
            }
            false
        })
    });
    let slow: Vec<_> = slow.collect();
    for (i, s) in idle.iter_mut().chain(kept.iter_mut()).enumerate() {
        assert!(
            closed_by_server(s, Duration::from_secs(8)).await,
            "connection {i} still open"
        );
    }
    for s in slow {
        assert!(s.await.unwrap(), "a slowloris connection stayed open");
    }
    let (status, _) = server.call("status_show", json!({})).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_at_the_limit_do_not_lock_anyone_out() {
    let server = Server::start(
        StoreKind::Sqlite,
        &[
            ("CATALOG__SERVER__MAX_CONNECTIONS", "64"),
            ("CATALOG__SERVER__KEEP_ALIVE_TIMEOUT_SECS", "600"),
            ("CATALOG__SERVER__HEADER_READ_TIMEOUT_SECS", "600"),
        ],
    )
    .await;
    let addr = server.addr();
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    for i in 0..20 {
        let started = Instant::now();
        let (status, body) = server.call("status_show", json!({})).await;
        assert_eq!(status, 200, "request {i}: {body}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "request {i} waited {:?}",
            started.elapsed()
        );
    }
    // The server holds at most its limit: the longest-idle connections were closed.
    let mut open = 0;
    for s in idle.iter_mut() {
        if !closed_by_server(s, Duration::from_millis(20)).await {
            open += 1;
        }
    }
    assert!(open <= 64, "{open} idle connections still open");
    assert!(server.log_count("connection limit reached") <= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_larger_than_two_mebibytes_stream_to_disk() {
    for kind in super::support::stores().await {
        let server =
            Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        let ds = server
            .ok("package_create", json!({"name": "uploads"}))
            .await;
        // The create's index pass runs after its answer (up to the commit delay later) and
        // fills the index writer's buffers: background work, not part of the upload.
        server.settle().await;
        server.reset_peak_rss();
        let before = server.peak_rss_kib();
        let size = 48 * 1024 * 1024;
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let (status, body) = server
            .upload(
                &[("package_id", ds["id"].as_str().unwrap()), ("name", "big")],
                "big.bin",
                data.clone(),
            )
            .await;
        assert_eq!(status, 200, "{kind}: {body}");
        assert_eq!(body["result"]["size"], json!(size), "{kind}");
        let grown = server.peak_rss_kib().saturating_sub(before);
        assert!(
            grown < 40 * 1024,
            "{kind}: the server's peak memory grew by {grown} KiB for a 48 MiB upload"
        );
        // The URL names `catalog.site_url`; the server runs on an ephemeral port.
        let url = body["result"]["url"].as_str().unwrap();
        let path = &url[url.find("/dataset/").expect("a download URL")..];
        let url = format!("{}{path}", server.base);
        let got = server.client.get(&url).send().await.unwrap();
        assert_eq!(got.status().as_u16(), 200, "{kind}: {url}");
        assert!(
            got.bytes().await.unwrap().as_ref() == data.as_slice(),
            "{kind}"
        );
        // Over the limit: refused in JSON, nothing stored.
        let small = Server::start(
            kind,
            &[
                ("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true"),
                ("CATALOG__MAX_REQUEST_BYTES", "1048576"),
            ],
        )
        .await;
        let ds = small.ok("package_create", json!({"name": "uploads"})).await;
        let form = reqwest::multipart::Form::new()
            .text("package_id", ds["id"].as_str().unwrap().to_string())
            .part(
                "upload",
                reqwest::multipart::Part::bytes(vec![7u8; 2 * 1024 * 1024]).file_name("x.bin"),
            );
        let resp = small
            .client
            .post(format!("{}/api/3/action/resource_create", small.base))
            .header("Authorization", &small.token)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 413, "{kind}");
        let v: Value = resp.json().await.unwrap();
        assert!(v.is_string(), "{kind}: {v}");
        let shown = small.ok("package_show", json!({"id": ds["id"]})).await;
        assert_eq!(shown["num_resources"], json!(0), "{kind}");
    }
}

/// A `package_show` answered from the cache (its JSON written into the envelope as it is) is
/// byte for byte the answer built as a value: the same dataset read with `use_default_schema`
/// (never cached) and through JSONP; on both stores (PostgreSQL nodes follow the feed and
/// cache too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_package_show_is_byte_identical_to_a_fresh_one() {
    for kind in super::support::stores().await {
        let server =
            Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        let addr = server.addr();
        server
            .ok(
                "package_create",
                json!({"name": "bytes", "title": "Ünïcode \"quoted\" <b>", "notes": "line\nbreak\ttab",
                       "tags": [{"name": "économie"}], "extras": [{"key": "k", "value": "v\u{1}"}],
                       "resources": [{"url": "http://example.org/a.csv", "format": "CSV"}]}),
            )
            .await;
        let get = |query: &str| {
            format!("GET /api/3/action/package_show?{query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .into_bytes()
        };
        let (s1, _, miss) = raw(&addr, &get("id=bytes")).await;
        let (s2, _, hit) = raw(&addr, &get("id=bytes")).await;
        let (s3, _, fresh) = raw(&addr, &get("id=bytes&use_default_schema=true")).await;
        assert_eq!((s1, s2, s3), (200, 200, 200), "{kind}");
        assert_eq!(miss, hit, "{kind}: miss and hit differ");
        assert_eq!(hit, fresh, "{kind}: cached and uncached answers differ");
        let v: Value = serde_json::from_str(&hit).expect("JSON");
        assert_eq!(v["result"]["title"], "Ünïcode \"quoted\" <b>", "{kind}");
        let (s4, head, jsonp) = raw(&addr, &get("id=bytes&callback=cb")).await;
        assert_eq!(s4, 200, "{kind}");
        assert!(head.contains("application/javascript"), "{kind}: {head}");
        assert_eq!(jsonp, format!("cb({fresh});"), "{kind}: JSONP");
    }
}

/// An answer given before the request's body was read (here to an unknown action) says
/// `Connection: close`: the server then closes the connection instead of reading the rest, and
/// a client that kept the connection for its next request would have that request fail while
/// writing it. An answer given after the body was read keeps the connection open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_before_the_body_was_read_closes_the_connection() {
    let server = Server::start(StoreKind::Sqlite, &[]).await;
    let addr = server.addr();
    let host = format!("Host: {addr}\r\n");
    // A body announced at 1 MB of which only its start is sent: the answer comes first.
    let (status, head, body) = raw(
        &addr,
        format!(
            "POST /api/3/action/no_such_action HTTP/1.1\r\n{host}\
             Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{{\"id\": \""
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(status, 400, "{head}\n\n{body}");
    assert!(
        head.to_ascii_lowercase().contains("connection: close"),
        "{head}"
    );
    let (status, head, body) = raw(
        &addr,
        format!(
            "POST /api/3/action/status_show HTTP/1.1\r\n{host}\
             Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(status, 200, "{head}\n\n{body}");
    assert!(
        !head.to_ascii_lowercase().contains("connection: close"),
        "{head}"
    );
}
