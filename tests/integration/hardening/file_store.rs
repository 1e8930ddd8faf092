//! The file store (docs/FILE-STORE.md): downloads stream, with `Range` and `Content-Length`;
//! an S3-compatible store shared by two nodes; a store lost in the middle of an upload gives a
//! CKAN-shaped error and leaves no resource pointing at a missing file. The S3 server is
//! `s3s-fs` (crates.io), a real S3 implementation on disk, started here on loopback;
//! `./test.sh` installs it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::support::{stores, Server};

const KEY: &str = "catalog-test";
const SECRET: &str = "catalog-test-secret";
const BUCKET: &str = "catalog";

fn s3s_fs_bin() -> PathBuf {
    let bin = std::env::var_os("S3S_FS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/s3s-fs/bin/s3s-fs")
        });
    assert!(
        bin.exists(),
        "no s3s-fs at {} (./test.sh installs it; or set S3S_FS_BIN)",
        bin.display()
    );
    bin
}

/// An S3 server on loopback, its data in a temporary directory, one bucket.
struct S3 {
    child: Child,
    endpoint: String,
    root: tempfile::TempDir,
}

impl S3 {
    async fn start() -> S3 {
        let root = tempfile::tempdir().expect("a directory");
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(s3s_fs_bin())
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--access-key", KEY, "--secret-key", SECRET])
            .arg(root.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting s3s-fs");
        // Dropped (killed and waited for) on every path from here.
        let s3 = S3 {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            root,
        };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return s3;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("s3s-fs did not start on port {port}");
    }

    /// Files the bucket holds (s3s-fs keeps objects as files under the bucket's directory).
    fn objects(&self) -> Vec<PathBuf> {
        fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.push(p);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root.path().join(BUCKET).join("resources"), &mut out);
        out
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn s3_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true".into()),
        ("CATALOG__STORAGE__BACKEND", "s3".into()),
        ("CATALOG__STORAGE__BUCKET", BUCKET.into()),
        ("CATALOG__STORAGE__ENDPOINT", endpoint.into()),
        ("CATALOG__STORAGE__ACCESS_KEY_ID", KEY.into()),
        ("CATALOG__STORAGE__SECRET_ACCESS_KEY", SECRET.into()),
        ("CATALOG__STORAGE__ALLOW_HTTP", "true".into()),
        ("CATALOG__STORAGE__TIMEOUT_SECS", "10".into()),
        ("CATALOG__STORAGE__MAX_RETRIES", "1".into()),
    ]
}

async fn start_with(
    kind: catalog_host::testkit::StoreKind,
    env: &[(&'static str, String)],
) -> Server {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start(kind, &env).await
}

fn data(size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| (i % 251) as u8 ^ (i / 251) as u8)
        .collect()
}

/// Uploads `data` as a new resource of `dataset`: the answer's status and body.
async fn upload(server: &Server, dataset: &str, data: &[u8]) -> (u16, Value) {
    server
        .upload(
            &[("package_id", dataset), ("name", "file")],
            "file.bin",
            data.to_vec(),
        )
        .await
}

/// The download path of a resource (its `url` names `catalog.site_url`, not this port).
fn download_path(resource: &Value) -> String {
    let url = resource["url"].as_str().expect("a url");
    url[url.find("/dataset/").expect("a download URL")..].to_string()
}

async fn get(server: &Server, path: &str, range: Option<&str>) -> reqwest::Response {
    let mut req = server.client.get(format!("{}{path}", server.base));
    if let Some(r) = range {
        req = req.header("Range", r);
    }
    req.send().await.unwrap()
}

fn header(resp: &reqwest::Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Whole file, a first range, a last range and one past the end, through `server`.
async fn check_download(server: &Server, path: &str, data: &[u8], what: &str) {
    let n = data.len();
    let whole = get(server, path, None).await;
    assert_eq!(whole.status().as_u16(), 200, "{what}");
    assert_eq!(
        header(&whole, "content-length"),
        Some(n.to_string()),
        "{what}"
    );
    assert_eq!(
        header(&whole, "accept-ranges").as_deref(),
        Some("bytes"),
        "{what}"
    );
    assert!(
        whole.bytes().await.unwrap().as_ref() == data,
        "{what}: the bytes differ"
    );

    let first = get(server, path, Some("bytes=0-99")).await;
    assert_eq!(first.status().as_u16(), 206, "{what}");
    assert_eq!(
        header(&first, "content-range"),
        Some(format!("bytes 0-99/{n}")),
        "{what}"
    );
    assert_eq!(
        header(&first, "content-length").as_deref(),
        Some("100"),
        "{what}"
    );
    assert!(
        first.bytes().await.unwrap().as_ref() == &data[..100],
        "{what}"
    );

    let from = n - 1000.min(n / 2);
    let tail = get(server, path, Some(&format!("bytes={from}-"))).await;
    assert_eq!(tail.status().as_u16(), 206, "{what}");
    assert!(
        tail.bytes().await.unwrap().as_ref() == &data[from..],
        "{what}"
    );

    let last = get(server, path, Some("bytes=-10")).await;
    assert_eq!(last.status().as_u16(), 206, "{what}");
    assert!(
        last.bytes().await.unwrap().as_ref() == &data[n - 10..],
        "{what}"
    );

    let past = get(server, path, Some(&format!("bytes={n}-"))).await;
    assert_eq!(past.status().as_u16(), 416, "{what}");
    assert_eq!(
        header(&past, "content-range"),
        Some(format!("bytes */{n}")),
        "{what}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_stream_with_ranges_from_the_local_store() {
    for kind in stores().await {
        let server =
            Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        let ds = server.ok("package_create", json!({"name": "files"})).await;
        let body = data(40 * 1024 * 1024);
        let (status, made) = upload(&server, ds["id"].as_str().unwrap(), &body).await;
        assert_eq!(status, 200, "{kind}: {made}");
        let path = download_path(&made["result"]);
        // The upload's index pass runs after its answer: not part of the download.
        server.settle().await;
        server.reset_peak_rss();
        let before = server.peak_rss_kib();
        check_download(&server, &path, &body, &format!("{kind}, local")).await;
        let grown = server.peak_rss_kib().saturating_sub(before);
        assert!(
            grown < 24 * 1024,
            "{kind}: the server's peak memory grew by {grown} KiB sending a 40 MiB file"
        );

        // Purging the dataset removes the file, once the purge has committed.
        let rid = made["result"]["id"].as_str().unwrap().to_string();
        let file = catalog_framework::files::resource_file_path(server.data_path(), &rid);
        assert!(file.is_file(), "{kind}: no file at {}", file.display());
        server.ok("dataset_purge", json!({"id": "files"})).await;
        assert!(
            eventually(|| !file.exists()).await,
            "{kind}: the purged resource's file is still there: {}",
            server.log_text()
        );
        assert_eq!(get(&server, &path, None).await.status().as_u16(), 404);
    }
}

/// Whether `done` holds within 15 s (checked every 50 ms): what a background job does.
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..300 {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_store_shares_files_across_nodes() {
    let s3 = S3::start().await;
    let env = s3_env(&s3.endpoint);
    for kind in stores().await {
        let a = start_with(kind, &env).await;
        let ds = a.ok("package_create", json!({"name": "shared"})).await;
        // Larger than a part (8 MiB): a multipart upload.
        let body = data(20 * 1024 * 1024 + 17);
        let (status, made) = upload(&a, ds["id"].as_str().unwrap(), &body).await;
        assert_eq!(status, 200, "{kind}: {made} {}", a.errors());
        assert_eq!(made["result"]["size"], json!(body.len()), "{kind}");
        assert_eq!(made["result"]["url_type"], "upload", "{kind}");
        let path = download_path(&made["result"]);
        check_download(&a, &path, &body, &format!("{kind}, node A")).await;
        // Nothing in the node's own data directory: the file is in the bucket.
        assert!(!s3.objects().is_empty(), "{kind}: no object in the bucket");
        if kind == catalog_host::testkit::StoreKind::Postgres {
            let b = a.another(&[]).await;
            check_download(&b, &path, &body, "node B").await;
            // And the other way round: a small file uploaded through B, read through A.
            let small = data(1000);
            let (status, made) = upload(&b, ds["id"].as_str().unwrap(), &small).await;
            assert_eq!(status, 200, "{made}");
            check_download(
                &a,
                &download_path(&made["result"]),
                &small,
                "node A, from B",
            )
            .await;
            let warning = "other node(s) serve this database";
            assert_eq!(
                a.log_count(warning) + b.log_count(warning),
                0,
                "{}",
                b.log_text()
            );
            // A third node with a local store beside them is told at start.
            let c = a.another(&[("CATALOG__STORAGE__BACKEND", "local")]).await;
            // Logged as the node registers, just after it listens.
            for _ in 0..100 {
                if c.log_count(warning) > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert_eq!(c.log_count(warning), 1, "{}", c.log_text());
        }
        // Purging the dataset empties the bucket of its files (its resources' on both nodes).
        a.ok("dataset_purge", json!({"id": "shared"})).await;
        assert!(
            eventually(|| s3.objects().is_empty()).await,
            "{kind}: objects left after the purge: {:?} {}",
            s3.objects(),
            a.log_text()
        );
    }
}

/// A TCP proxy that forwards at most `limit` bytes towards `upstream` in all, then drops every
/// connection and refuses new ones: an object store lost in the middle of an upload.
async fn cutting_proxy(upstream: String, limit: u64) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let sent = Arc::new(AtomicU64::new(0));
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            if sent.load(Ordering::SeqCst) >= limit {
                continue; // dropped: the connection is closed
            }
            let upstream = upstream.clone();
            let sent = sent.clone();
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await else {
                    return;
                };
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let up = async {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = cr.read(&mut buf).await.unwrap_or(0);
                        if n == 0 || sent.fetch_add(n as u64, Ordering::SeqCst) + n as u64 > limit {
                            return;
                        }
                        if sw.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                };
                let down = async {
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                };
                tokio::select! {
                    _ = up => {}
                    _ = down => {}
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_lost_mid_upload_leaves_an_error_and_no_resource() {
    let s3 = S3::start().await;
    let upstream = s3.endpoint.trim_start_matches("http://").to_string();
    for kind in stores().await {
        // The store takes 12 MiB of a 24 MiB upload, then goes away.
        let proxy = cutting_proxy(upstream.clone(), 12 * 1024 * 1024).await;
        let server = start_with(kind, &s3_env(&proxy)).await;
        let ds = server.ok("package_create", json!({"name": "lost"})).await;
        let (status, answer) =
            upload(&server, ds["id"].as_str().unwrap(), &data(24 * 1024 * 1024)).await;
        assert_eq!(status, 500, "{kind}: {answer}");
        assert_eq!(answer["success"], false, "{kind}");
        assert_eq!(
            answer["error"]["__type"], "Internal Server Error",
            "{kind}: {answer}"
        );
        let shown = server.ok("package_show", json!({"id": "lost"})).await;
        assert_eq!(shown["num_resources"], 0, "{kind}: {shown}");
        assert_eq!(shown["resources"], json!([]), "{kind}");
        assert!(
            server.errors().contains("storing an upload"),
            "{kind}: {}",
            server.errors()
        );
        // A small upload, once the store is unreachable: the same error, nothing made.
        let (status, answer) = upload(&server, "lost", &data(1000)).await;
        assert_eq!(status, 500, "{kind}: {answer}");
        let shown = server.ok("package_show", json!({"id": "lost"})).await;
        assert_eq!(shown["num_resources"], 0, "{kind}: {shown}");
    }
    // The interrupted multipart uploads were aborted: no object was made.
    assert!(s3.objects().is_empty(), "{:?}", s3.objects());
}

/// Uploads cannot run script on the catalog's origin: a type that could (HTML, XHTML, SVG) or
/// any type off the short safe list is an attachment; every download says `nosniff` and
/// `sandbox`. A mimetype that is no media type (CR/LF, control characters) is refused at write
/// time, and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_are_served_so_that_they_cannot_script_the_site() {
    for kind in stores().await {
        let server =
            Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        let ds = server.ok("package_create", json!({"name": "files"})).await;
        let id = ds["id"].as_str().unwrap();
        for (mimetype, name, disposition) in [
            ("text/html", "page.html", "attachment"),
            ("application/xhtml+xml", "page.xhtml", "attachment"),
            ("image/svg+xml", "logo.svg", "attachment"),
            ("image/png", "chart.png", "inline"),
            ("text/csv", "levels.csv", "inline"),
        ] {
            let (status, made) = server
                .upload(
                    &[("package_id", id), ("name", name), ("mimetype", mimetype)],
                    name,
                    b"<script>alert(document.domain)</script>".to_vec(),
                )
                .await;
            assert_eq!(status, 200, "{kind}: {made}");
            let r = get(&server, &download_path(&made["result"]), None).await;
            assert_eq!(r.status().as_u16(), 200, "{kind}: {mimetype}");
            assert_eq!(header(&r, "content-type").as_deref(), Some(mimetype));
            let d = header(&r, "content-disposition").unwrap_or_default();
            assert!(
                d.starts_with(&format!("{disposition}; filename=\"{name}\"")),
                "{kind}: {mimetype}: {d}"
            );
            assert_eq!(
                header(&r, "x-content-type-options").as_deref(),
                Some("nosniff")
            );
            assert_eq!(
                header(&r, "content-security-policy").as_deref(),
                Some("sandbox")
            );
        }
        let before = server.ok("package_show", json!({"id": id})).await;
        for bad in ["text/html\r\nX-Evil: 1", "text/csv\u{b}", "csv"] {
            let (status, made) = server
                .upload(
                    &[("package_id", id), ("name", "bad"), ("mimetype", bad)],
                    "bad.csv",
                    b"a,b\n".to_vec(),
                )
                .await;
            assert_eq!(status, 409, "{kind}: {bad:?}: {made}");
            assert_eq!(
                made["error"]["mimetype"],
                json!(["Must be a media type such as text/csv"]),
                "{kind}"
            );
        }
        let after = server.ok("package_show", json!({"id": id})).await;
        assert_eq!(before["num_resources"], after["num_resources"], "{kind}");
    }
}
