//! The ceiling of the read benchmarks (issue 14): what this machine can serve over HTTP with
//! axum and tokio when the answer costs nothing. It answers every GET with the bytes of one
//! file (a `package_show` response saved by the benchmark) and its content type, so a
//! benchmark can compare `package_show` with the same body served by a minimal handler, in the
//! same run.
//!
//!   bench-ceiling 127.0.0.1:5099 body.json [content-type]

use std::sync::Arc;

use axum::http::header;
use axum::routing::get;
use axum::Router;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(addr), Some(file)) = (args.next(), args.next()) else {
        eprintln!("usage: bench-ceiling ADDR BODY_FILE [CONTENT_TYPE]");
        std::process::exit(2);
    };
    let content_type = args
        .next()
        .unwrap_or_else(|| "application/json;charset=utf-8".into());
    let body: Arc<[u8]> = std::fs::read(&file)?.into();
    let app = Router::new().fallback(get(move || {
        let body = body.clone();
        let content_type = content_type.clone();
        async move { ([(header::CONTENT_TYPE, content_type)], body.to_vec()) }
    }));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await
}
