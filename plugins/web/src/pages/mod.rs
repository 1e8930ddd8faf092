//! The pages a person browses, one file per page family, and what they share. Each page file
//! holds its handlers (their routes are in [`crate::routes`]), the actions they call and the
//! values their template gets:
//!
//! - `home`: `/`;
//! - `search`: `/dataset/`, and the search that organization, group and dashboard pages run;
//! - `dataset`: `/dataset/<id>` and `/dataset/activity/<id>`;
//! - `resource`: `/dataset/<id>/resource/<resource id>`, with its table previews;
//! - `group`: `/organization/`, `/group/` and an organization's or group's page;
//! - `sitemap`: `/robots.txt`, `/sitemap.xml` and its files;
//! - `stylesheet`: `/static/web/catalog.css`.
//!
//! Shared here: pagination and the page's alternate representations.

use catalog_framework::prelude::*;
use catalog_framework::web::page_alternates;

use crate::render::Visit;

pub(crate) mod dataset;
pub(crate) mod group;
pub(crate) mod home;
pub(crate) mod resource;
pub(crate) mod search;
pub(crate) mod sitemap;
pub(crate) mod stylesheet;

/// Results per page of the search pages, and the deepest page offered.
const ROWS: usize = 20;
const MAX_PAGE: usize = 500;

/// The page's other representations (the DCAT plugin's RDF), as the templates list them.
fn alternates(app: &AppState, route: &str, path: &str, query: &str) -> Value {
    page_alternates(app, route, path, query)
        .into_iter()
        .map(|(media, href)| json!({"type": media, "href": href, "label": format_label(&media)}))
        .collect()
}

/// What people call an RDF serialization (the media type when we have no name for it).
fn format_label(media: &str) -> String {
    match media {
        "application/rdf+xml" => "RDF/XML",
        "text/turtle" => "Turtle",
        "text/n3" => "N3",
        "application/ld+json" => "JSON-LD",
        "application/n-triples" => "N-Triples",
        other => other,
    }
    .to_string()
}

/// The `page` parameter: 1 when missing or not a positive number, at most [`MAX_PAGE`].
fn page_number(visit: &Visit) -> usize {
    visit
        .param("page")
        .and_then(|p| p.parse::<usize>().ok())
        .filter(|p| *p >= 1)
        .unwrap_or(1)
        .min(MAX_PAGE)
}

/// The page numbers a pagination shows: the first, the last, and two either side of the
/// current page, with `null` for a gap.
fn page_numbers(current: usize, pages: usize) -> Vec<Option<usize>> {
    let mut out = Vec::new();
    let mut last = 0;
    for n in 1..=pages {
        if n == 1 || n == pages || n.abs_diff(current) <= 2 {
            if last != 0 && n > last + 1 {
                out.push(None);
            }
            out.push(Some(n));
            last = n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pagination_shows_ends_and_neighbours() {
        let shown = |c, p| {
            page_numbers(c, p)
                .into_iter()
                .map(|n| n.map_or("…".to_string(), |n| n.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(shown(1, 1), "1");
        assert_eq!(shown(5, 10), "1 … 3 4 5 6 7 … 10");
        assert_eq!(shown(1, 4), "1 2 3 4");
    }
}
