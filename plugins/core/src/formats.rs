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

/// Extension → mimetype, as Python's `mimetypes.guess_type` answers on a Debian-based CKAN
/// image (its built-in table plus `/etc/mime.types`), for the extensions data portals see.
const MIMETYPES: &[(&str, &str)] = &[
    ("csv", "text/csv"),
    ("tsv", "text/tab-separated-values"),
    ("json", "application/json"),
    ("geojson", "application/geo+json"),
    ("jsonld", "application/ld+json"),
    ("xml", "application/xml"),
    ("rdf", "application/rdf+xml"),
    ("ttl", "text/turtle"),
    ("html", "text/html"),
    ("htm", "text/html"),
    ("txt", "text/plain"),
    ("pdf", "application/pdf"),
    ("xls", "application/vnd.ms-excel"),
    (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    ("ods", "application/vnd.oasis.opendocument.spreadsheet"),
    ("doc", "application/msword"),
    (
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ("zip", "application/zip"),
    ("kml", "application/vnd.google-earth.kml+xml"),
    ("kmz", "application/vnd.google-earth.kmz"),
    ("png", "image/png"),
    ("jpeg", "image/jpeg"),
    ("jpg", "image/jpeg"),
    ("gif", "image/gif"),
];

/// CKAN's mimetype guess (`ckan.mimetype_guess = file_ext`): the extension of a URL or file
/// name, taken as `mimetypes.guess_type` does (the last `.` after the last `/`, query included;
/// exact case first, then lowercased).
pub fn guess_mimetype(url_or_filename: &str) -> Option<&'static str> {
    let last = url_or_filename.rsplit('/').next()?;
    let (stem, ext) = last.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    MIMETYPES
        .iter()
        .find(|(e, _)| *e == ext || *e == ext.to_ascii_lowercase())
        .map(|(_, m)| *m)
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
        assert_eq!(
            guess_mimetype("https://x.org/a/b.json"),
            Some("application/json")
        );
        assert_eq!(guess_mimetype("Bike Counts.CSV"), Some("text/csv"));
        assert_eq!(guess_mimetype("https://x.org/a.csv?x=1"), None);
        assert_eq!(guess_mimetype("https://x.org/"), None);
        assert_eq!(guess_mimetype(".csv"), None);
    }
}
