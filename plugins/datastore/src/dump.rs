//! `GET /datastore/dump/{resource_id}`: a DataStore table as a file (CKAN's
//! ckanext/datastore/blueprint.py `dump`), streamed page by page so memory stays flat however
//! large the table: `format` csv (default) | tsv | json | xml, `bom`, `offset`, `limit`, and
//! `datastore_search`'s `filters`, `q`, `distinct`, `plain`, `language`, `fields`, `sort`.
//!
//! Pages follow `_id` (each starts after the last `_id` sent, so the millionth row costs what
//! the first did) unless a `sort`, `distinct`, or a `fields` without `_id` asks for offset
//! paging.

use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use catalog_framework::escape;
use catalog_framework::prelude::*;
use catalog_framework::typed::ActionParams;

use crate::actions::{self, DatastoreSearchParams};
use crate::table;

/// Rows per page (CKAN's `PAGINATE_BY`).
const PAGE: i64 = 32_000;
const FORMATS: [&str; 4] = ["csv", "tsv", "json", "xml"];

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/datastore/dump/{resource_id}", get(dump))
}

fn plain(status: StatusCode, msg: impl Into<String>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        msg.into(),
    )
        .into_response()
}

fn not_found() -> Response {
    plain(StatusCode::NOT_FOUND, "DataStore resource not found")
}

/// The request's parameters, checked as CKAN's `dump_schema` checks them; `Err` is the 400's
/// text (`field: message` lines).
#[derive(Debug)]
struct DumpRequest {
    format: String,
    bom: bool,
    offset: i64,
    limit: Option<i64>,
    search: Params,
    keyset: bool,
}

fn parse(query: &str) -> Result<DumpRequest, String> {
    let all = catalog_framework::web::query_to_params(query);
    let text = |k: &str| match all.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(a)) => a.last().and_then(Value::as_str).map(str::to_string),
        _ => None,
    };
    let mut errors = Vec::new();
    let int = |k: &str, errors: &mut Vec<String>| -> Option<i64> {
        let v = text(k)?;
        match v.trim().parse::<i64>() {
            Ok(n) if n >= 0 => Some(n),
            _ => {
                errors.push(format!("{k}: Invalid integer"));
                None
            }
        }
    };
    let offset = int("offset", &mut errors).unwrap_or(0);
    let limit = int("limit", &mut errors);
    let format = text("format").unwrap_or_else(|| "csv".into());
    if !FORMATS.contains(&format.as_str()) {
        errors.push("format: Value must be one of ('csv', 'tsv', 'json', 'xml')".into());
    }
    let bom = match text("bom") {
        None => false,
        Some(b) => match b.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => true,
            "false" | "0" | "no" | "off" | "" => false,
            _ => {
                errors.push("bom: Value must be one of: true, false".into());
                false
            }
        },
    };
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    let mut search = Params::new();
    for k in [
        "filters", "q", "distinct", "plain", "language", "fields", "sort",
    ] {
        if let Some(v) = text(k) {
            search.insert(k.into(), json!(v));
        }
    }
    let fields_have_id =
        text("fields").is_none_or(|f| f.split(',').any(|n| n.trim().trim_matches('"') == "_id"));
    let sort_is_id = text("sort").is_none_or(|s| {
        let s = s.trim().trim_matches('"').to_ascii_lowercase();
        s == "_id" || s == "_id asc"
    });
    let distinct =
        text("distinct").is_some_and(|d| catalog_framework::params::truthy(Some(&json!(d))));
    Ok(DumpRequest {
        keyset: fields_have_id && sort_is_id && !distinct,
        format,
        bom,
        offset,
        limit,
        search,
    })
}

/// A CSV/TSV header as Python's csv module writes it (quoted only when it must be, `\r\n`).
fn header_line(fields: &[Value], sep: char) -> String {
    let names: Vec<String> = fields
        .iter()
        .map(|f| {
            let id = f["id"].as_str().unwrap_or_default();
            if id.contains([sep, '"', '\n', '\r']) {
                format!("\"{}\"", id.replace('"', "\"\""))
            } else {
                id.to_string()
            }
        })
        .collect();
    format!("{}\r\n", names.join(&sep.to_string()))
}

/// An XML element name from a field id, by CKAN's rules (no leading digits or `xml`, no
/// spaces, word characters, `.` and `-` only).
fn element_name(id: &str) -> String {
    let mut s: String = id
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_")
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .collect();
    loop {
        let lower = s.to_ascii_lowercase();
        let digits = lower.chars().take_while(char::is_ascii_digit).count();
        if lower[digits..].starts_with("xml") {
            let rest = &lower[digits + 3..];
            let more = rest.chars().take_while(char::is_ascii_digit).count();
            s = s[digits + 3 + more..].to_string();
        } else if digits > 0 || s.starts_with(['.', '-']) {
            s = s
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
                .to_string();
        } else {
            break;
        }
    }
    s
}

fn xml_node(out: &mut String, name: &str, v: &Value, key: Option<&str>) {
    let key_attr = key.map_or(String::new(), |k| {
        format!(" key=\"{}\"", escape::xml_attr(k))
    });
    match v {
        Value::Null => out.push_str(&format!("<{name} xsi:nil=\"true\"{key_attr} />")),
        Value::Array(items) => {
            out.push_str(&format!("<{name}{key_attr}>"));
            for (i, item) in items.iter().enumerate() {
                xml_node(out, "value", item, Some(&i.to_string()));
            }
            out.push_str(&format!("</{name}>"));
        }
        Value::Object(m) => {
            out.push_str(&format!("<{name}{key_attr}>"));
            for (k, item) in m {
                xml_node(out, "value", item, Some(k));
            }
            out.push_str(&format!("</{name}>"));
        }
        other => {
            let text = match other {
                Value::String(s) => s.clone(),
                Value::Bool(b) => {
                    if *b {
                        "True".into()
                    } else {
                        "False".into()
                    }
                }
                o => o.to_string(),
            };
            out.push_str(&format!(
                "<{name}{key_attr}>{}</{name}>",
                escape::xml_text(&text)
            ));
        }
    }
}

/// Writes one page of rows (`lists` records, in `fields` order) in the dump's format.
struct Writer {
    format: String,
    fields: Vec<Value>,
    elements: Vec<String>,
    first: bool,
}

impl Writer {
    fn new(format: &str, fields: Vec<Value>) -> Writer {
        let mut elements: Vec<String> = Vec::new();
        for f in &fields {
            let base = element_name(f["id"].as_str().unwrap_or_default());
            let mut name = base.clone();
            let mut n = 0;
            while elements.contains(&name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            elements.push(name);
        }
        Writer {
            format: format.to_string(),
            fields,
            elements,
            first: true,
        }
    }

    fn start(&self, bom: bool) -> String {
        let mut out = if bom {
            "\u{feff}".to_string()
        } else {
            String::new()
        };
        match self.format.as_str() {
            "csv" => out.push_str(&header_line(&self.fields, ',')),
            "tsv" => out.push_str(&header_line(&self.fields, '\t')),
            "json" => out.push_str(&format!(
                "{{\n  \"fields\": {},\n  \"records\": [",
                Value::Array(self.fields.clone())
            )),
            _ => out.push_str("<data xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n"),
        }
        out
    }

    fn rows(&mut self, rows: &[Value]) -> String {
        let mut out = String::new();
        for row in rows {
            let cells = row.as_array().map(Vec::as_slice).unwrap_or_default();
            match self.format.as_str() {
                "csv" | "tsv" => {
                    let sep = if self.format == "csv" { ',' } else { '\t' };
                    let line: Vec<String> =
                        cells.iter().map(|v| actions::csv_field(v, sep)).collect();
                    out.push_str(&line.join(&sep.to_string()));
                    out.push('\n');
                }
                "json" => {
                    out.push_str(if self.first { "\n    " } else { ",\n    " });
                    self.first = false;
                    out.push_str(&Value::Array(cells.to_vec()).to_string());
                }
                _ => {
                    let id_col = self.fields.first().is_some_and(|f| f["id"] == "_id");
                    out.push_str("<row");
                    if id_col {
                        let id = cells.first().map(|v| v.to_string()).unwrap_or_default();
                        out.push_str(&format!(" _id=\"{}\"", escape::xml_attr(&id)));
                    }
                    out.push('>');
                    let skip = usize::from(id_col);
                    for (v, name) in cells.iter().zip(&self.elements).skip(skip) {
                        xml_node(&mut out, name, v, None);
                    }
                    out.push_str("</row>\n");
                }
            }
        }
        out
    }

    fn end(&self) -> &'static str {
        match self.format.as_str() {
            "json" => "\n]}\n",
            "xml" => "</data>\n",
            _ => "",
        }
    }
}

async fn dump(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let resource_id = uri
        .path()
        .rsplit('/')
        .next()
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    let req = match parse(uri.query().unwrap_or_default()) {
        Ok(r) => r,
        Err(msg) => return plain(StatusCode::BAD_REQUEST, msg),
    };
    let user = catalog_framework::web::identify(&app, &headers).await;
    let mut ctx = ActionContext::new(app.clone(), user);
    // 404 for a table that does not exist and for one the caller may not read, as CKAN; an
    // alias names its resource's table.
    let found = match ctx.db().await {
        Ok(conn) => table::load_by_name(conn, &resource_id).await.ok().flatten(),
        Err(_) => None,
    };
    let Some(meta) = found else {
        return not_found();
    };
    let resource_id = meta.resource_id;
    // Pages as large as a search may answer (CKAN's 32,000, or a smaller rows_max).
    let page_size = PAGE.min(actions::rows_max(&ctx));
    let first = match page(
        &mut ctx,
        &req,
        &resource_id,
        req.offset,
        first_limit(&req, page_size),
        None,
    )
    .await
    {
        Ok(p) => p,
        Err(e) if matches!(e.kind, ErrorKind::NotFound | ErrorKind::Authorization) => {
            return not_found()
        }
        Err(e) => {
            let msg = e
                .body
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string);
            return plain(
                StatusCode::BAD_REQUEST,
                msg.unwrap_or_else(|| Value::Object(e.body.clone()).to_string()),
            );
        }
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    let content_type = match req.format.as_str() {
        "csv" => "text/csv; charset=utf-8",
        "tsv" => "text/tab-separated-values; charset=utf-8",
        "json" => "application/json; charset=utf-8",
        _ => "text/xml; charset=utf-8",
    };
    let disposition = format!(
        "attachment; filename=\"{}.{}\"",
        resource_id.replace(['"', '\\', '\r', '\n'], "_"),
        req.format
    );
    tokio::spawn(async move {
        let fields = first["fields"].as_array().cloned().unwrap_or_default();
        let id_pos = fields.iter().position(|f| f["id"] == "_id");
        let mut w = Writer::new(&req.format, fields);
        let mut records = first["records"].as_array().cloned().unwrap_or_default();
        let mut chunk = w.start(req.bom);
        let mut remaining = req.limit;
        let mut offset = req.offset;
        let mut asked = first_limit(&req, page_size);
        loop {
            chunk.push_str(&w.rows(&records));
            // No connection is held while the client reads, and a client that stops reading
            // for a minute loses the dump.
            ctx.release_read_connection();
            let sent = tokio::time::timeout(
                std::time::Duration::from_secs(60),
                tx.send(Ok(Bytes::from(std::mem::take(&mut chunk)))),
            )
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                return; // the client went away or stalled
            }
            let got = records.len() as i64;
            if let Some(r) = remaining.as_mut() {
                *r -= got;
            }
            if got < asked || remaining.is_some_and(|r| r <= 0) {
                break;
            }
            offset += got;
            let after = if req.keyset {
                id_pos.and_then(|i| records.last().and_then(|r| r[i].as_i64()))
            } else {
                None
            };
            let limit = remaining.map_or(page_size, |r| r.min(page_size));
            asked = limit;
            match page(&mut ctx, &req, &resource_id, offset, limit, after).await {
                Ok(next) => records = next["records"].as_array().cloned().unwrap_or_default(),
                Err(e) => {
                    tracing::warn!(resource_id, error = ?e.body, "datastore dump stopped");
                    let _ = tx.send(Err(std::io::Error::other("the dump failed"))).await;
                    return;
                }
            }
        }
        chunk.push_str(w.end());
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            tx.send(Ok(Bytes::from(chunk))),
        )
        .await;
    });
    let body = Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    }));
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response()
}

fn first_limit(req: &DumpRequest, page: i64) -> i64 {
    req.limit.map_or(page, |l| l.min(page))
}

/// One page of the search, as `lists` records.
async fn page(
    ctx: &mut ActionContext,
    req: &DumpRequest,
    resource_id: &str,
    offset: i64,
    limit: i64,
    after: Option<i64>,
) -> CkanResult<Value> {
    let mut p = req.search.clone();
    p.insert("resource_id".into(), json!(resource_id));
    p.insert("records_format".into(), json!("lists"));
    p.insert("include_total".into(), json!(false));
    p.insert("limit".into(), json!(limit));
    if after.is_none() {
        p.insert("offset".into(), json!(offset));
    }
    let params = DatastoreSearchParams::decode(p)?;
    actions::search(ctx, params, after).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_names_follow_ckan() {
        assert_eq!(element_name("a b"), "a_b");
        assert_eq!(element_name("12abc"), "abc");
        assert_eq!(element_name("xmlfoo"), "foo");
        assert_eq!(element_name("2xml3bar"), "bar");
        assert_eq!(element_name("naïve"), "naïve");
        assert_eq!(element_name("a<b>"), "ab");
    }

    #[test]
    fn parameters_are_checked() {
        assert!(parse("format=pdf")
            .unwrap_err()
            .contains("format: Value must be one of"));
        assert!(parse("offset=x")
            .unwrap_err()
            .contains("offset: Invalid integer"));
        let r = parse("format=tsv&bom=true&sort=a%20desc").unwrap();
        assert!(r.bom && !r.keyset && r.format == "tsv");
        assert!(parse("").unwrap().keyset);
        assert!(!parse("fields=a,b").unwrap().keyset);
    }

    #[test]
    fn xml_rows() {
        let mut w = Writer::new(
            "xml",
            vec![
                json!({"id": "_id"}),
                json!({"id": "a b"}),
                json!({"id": "n"}),
            ],
        );
        let out = w.rows(&[json!([1, "x<y", null]), json!([2, ["p", "q"], 3])]);
        assert_eq!(
            out,
            "<row _id=\"1\"><a_b>x&lt;y</a_b><n xsi:nil=\"true\" /></row>\n\
             <row _id=\"2\"><a_b><value key=\"0\">p</value><value key=\"1\">q</value></a_b><n>3</n></row>\n"
        );
    }
}
