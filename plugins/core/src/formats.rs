//! Resource format normalisation (a subset of CKAN's `resource_formats.json`).

/// (canonical name, mimetype, alternative names / extensions)
const FORMATS: &[(&str, &str, &[&str])] = &[
    ("CSV", "text/csv", &["csv", "comma separated values"]),
    ("TSV", "text/tab-separated-values", &["tsv"]),
    ("JSON", "application/json", &["json"]),
    ("GeoJSON", "application/geo+json", &["geojson"]),
    ("JSON-LD", "application/ld+json", &["jsonld", "json-ld"]),
    ("XML", "application/xml", &["xml", "text/xml"]),
    ("RDF", "application/rdf+xml", &["rdf", "rdf/xml"]),
    ("TTL", "text/turtle", &["ttl", "turtle"]),
    ("HTML", "text/html", &["html", "htm"]),
    ("TXT", "text/plain", &["txt", "text"]),
    ("PDF", "application/pdf", &["pdf"]),
    ("XLS", "application/vnd.ms-excel", &["xls"]),
    (
        "XLSX",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        &["xlsx"],
    ),
    (
        "ODS",
        "application/vnd.oasis.opendocument.spreadsheet",
        &["ods"],
    ),
    ("DOC", "application/msword", &["doc"]),
    (
        "DOCX",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        &["docx"],
    ),
    ("ZIP", "application/zip", &["zip"]),
    ("GZ", "application/gzip", &["gz", "gzip"]),
    ("KML", "application/vnd.google-earth.kml+xml", &["kml"]),
    ("KMZ", "application/vnd.google-earth.kmz", &["kmz"]),
    (
        "SHP",
        "application/x-shapefile",
        &["shp", "shapefile", "esri shapefile"],
    ),
    ("PNG", "image/png", &["png"]),
    ("JPEG", "image/jpeg", &["jpeg", "jpg"]),
    ("GIF", "image/gif", &["gif"]),
    ("Parquet", "application/vnd.apache.parquet", &["parquet"]),
    ("API", "", &["api"]),
    ("WMS", "", &["wms"]),
    ("WFS", "", &["wfs"]),
];

/// The canonical name of a format, matched case-insensitively on name, mimetype or alternatives;
/// unknown formats pass through.
pub fn normalise(fmt: &str) -> String {
    let l = fmt.trim().to_ascii_lowercase();
    for (name, mime, alts) in FORMATS {
        if name.to_ascii_lowercase() == l
            || (!mime.is_empty() && *mime == l)
            || alts.contains(&l.as_str())
        {
            return (*name).to_string();
        }
    }
    fmt.to_string()
}

/// A format guessed from a URL's file extension, if it has a known one.
pub fn guess_from_url(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next()?;
    let last = path.rsplit('/').next()?;
    let (_, ext) = last.rsplit_once('.')?;
    let n = normalise(ext);
    (n != ext).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_normalise() {
        assert_eq!(normalise("csv"), "CSV");
        assert_eq!(normalise("application/json"), "JSON");
        assert_eq!(normalise("weird"), "weird");
        assert_eq!(
            guess_from_url("http://x.org/a/data.xlsx?x=1").as_deref(),
            Some("XLSX")
        );
        assert_eq!(guess_from_url("http://x.org/a/"), None);
    }
}
