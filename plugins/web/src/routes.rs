//! Which handler answers which URL: the routes of every page and form (each file's own, then
//! the pages' below, under every language prefix), and the web plugin's part of the pages it
//! shares with other plugins (`/` and `/dataset/{file}`).

use axum::http::request::Parts;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use catalog_framework::prelude::*;
use catalog_framework::web::SharedPage;

use crate::i18n;
use crate::pages::dataset::{dataset, dataset_activity, dataset_prefixed};
use crate::pages::group::{group, groups, organization, organizations};
use crate::pages::home::{home, home_prefixed};
use crate::pages::resource::resource;
use crate::pages::search::search;
use crate::pages::sitemap::{robots, sitemap_file, sitemap_index};
use crate::pages::stylesheet::stylesheet;
use crate::visit::{last_segment, visit};

pub(crate) fn routes() -> Router<AppState> {
    let mut r = crate::harvest::routes(crate::admin::routes(crate::publish::routes(
        crate::user::routes(Router::new()),
    )))
    .route("/robots.txt", get(robots))
    .route("/sitemap.xml", get(sitemap_index))
    .route("/sitemap/{file}", get(sitemap_file))
    .route("/static/web/catalog.css", get(stylesheet));
    for p in i18n::prefixes() {
        r = r
            .route(&format!("{p}/dataset/"), get(search))
            .route(&format!("{p}/dataset"), get(search))
            .route(
                &format!("{p}/dataset/{{id}}/resource/{{resource_id}}"),
                get(resource),
            )
            .route(
                &format!("{p}/dataset/activity/{{id}}"),
                get(dataset_activity),
            )
            .route(&format!("{p}/organization/"), get(organizations))
            .route(&format!("{p}/organization"), get(organizations))
            .route(&format!("{p}/organization/{{id}}"), get(organization))
            .route(&format!("{p}/group/"), get(groups))
            .route(&format!("{p}/group"), get(groups))
            .route(&format!("{p}/group/{{id}}"), get(group));
        if !p.is_empty() {
            r = r
                .route(&format!("{p}/"), get(home_prefixed))
                .route(&p, get(home_prefixed))
                .route(&format!("{p}/dataset/{{id}}"), get(dataset_prefixed));
        }
    }
    r
}

/// The web plugin's part of `/` and `/dataset/{file}`: the HTML page, after the DCAT plugin
/// had its turn (order 100).
pub(crate) struct SharedHtml {
    pub(crate) path: &'static str,
}

#[async_trait]
impl SharedPage for SharedHtml {
    fn path(&self) -> &'static str {
        self.path
    }
    fn order(&self) -> i32 {
        100
    }
    async fn answer(&self, app: &AppState, req: &Parts) -> Option<Response> {
        let visit = visit(app, &req.uri, &req.headers).await;
        if self.path == "/" {
            return Some(home(app, &visit, &req.headers).await);
        }
        let id = last_segment(&req.uri);
        let query = req.uri.query().unwrap_or_default();
        Some(dataset(app, &visit, &req.headers, &id, query).await)
    }
}
