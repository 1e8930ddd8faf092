//! Controlled vocabularies DCAT-AP wants IRIs from, and the way back: language codes ↔ the EU
//! language authority (or ISO 639-1 at the Library of Congress), CKAN format names ↔ the EU
//! file-type authority, media types ↔ IANA, EU data-theme codes.

const EU_LANGUAGE: &str = "http://publications.europa.eu/resource/authority/language/";
const LOC_ISO639_1: &str = "http://id.loc.gov/vocabulary/iso639-1/";
const EU_FILE_TYPE: &str = "http://publications.europa.eu/resource/authority/file-type/";
const EU_DATA_THEME: &str = "http://publications.europa.eu/resource/authority/data-theme/";
const IANA: &str = "http://www.iana.org/assignments/media-types/";

/// ISO 639-1 code → EU language authority code: the EU's official languages and common others.
const LANGUAGES: &[(&str, &str)] = &[
    ("ar", "ARA"),
    ("bg", "BUL"),
    ("bs", "BOS"),
    ("ca", "CAT"),
    ("cs", "CES"),
    ("cy", "CYM"),
    ("da", "DAN"),
    ("de", "DEU"),
    ("el", "ELL"),
    ("en", "ENG"),
    ("es", "SPA"),
    ("et", "EST"),
    ("eu", "EUS"),
    ("fi", "FIN"),
    ("fr", "FRA"),
    ("ga", "GLE"),
    ("gl", "GLG"),
    ("he", "HEB"),
    ("hi", "HIN"),
    ("hr", "HRV"),
    ("hu", "HUN"),
    ("is", "ISL"),
    ("it", "ITA"),
    ("ja", "JPN"),
    ("ko", "KOR"),
    ("lb", "LTZ"),
    ("lt", "LIT"),
    ("lv", "LAV"),
    ("mk", "MKD"),
    ("mt", "MLT"),
    ("nb", "NOB"),
    ("nl", "NLD"),
    ("nn", "NNO"),
    ("no", "NOR"),
    ("pl", "POL"),
    ("pt", "POR"),
    ("ro", "RON"),
    ("ru", "RUS"),
    ("sk", "SLK"),
    ("sl", "SLV"),
    ("sq", "SQI"),
    ("sr", "SRP"),
    ("sv", "SWE"),
    ("tr", "TUR"),
    ("uk", "UKR"),
    ("zh", "ZHO"),
];

/// The IRI of a language given as a code (`en`, `pt_BR`, `de-AT`): the EU authority for the
/// codes of `LANGUAGES`, else ISO 639-1 at id.loc.gov for other two-letter codes. `None` for
/// anything that is not a language code.
pub fn language_iri(code: &str) -> Option<String> {
    let base = code
        .trim()
        .split(['_', '-'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if let Some((_, eu)) = LANGUAGES.iter().find(|(c, _)| *c == base) {
        return Some(format!("{EU_LANGUAGE}{eu}"));
    }
    let three = code.trim().to_ascii_uppercase();
    if let Some((_, eu)) = LANGUAGES.iter().find(|(_, eu)| *eu == three) {
        return Some(format!("{EU_LANGUAGE}{eu}"));
    }
    (base.len() == 2 && base.chars().all(|c| c.is_ascii_lowercase()))
        .then(|| format!("{LOC_ISO639_1}{base}"))
}

/// The code back from a language IRI made by [`language_iri`]; other IRIs stay as they are.
pub fn language_code(iri: &str) -> String {
    if let Some(eu) = iri.strip_prefix(EU_LANGUAGE) {
        if let Some((c, _)) = LANGUAGES.iter().find(|(_, e)| *e == eu) {
            return (*c).to_string();
        }
    }
    if let Some(c) = iri.strip_prefix(LOC_ISO639_1) {
        return c.to_string();
    }
    iri.to_string()
}

/// CKAN format name (as CKAN spells it) → EU file-type code. Matching is case-insensitive and
/// also tries the EU code itself and the aliases of [`FORMAT_ALIASES`].
const FORMATS: &[(&str, &str)] = &[
    ("7Z", "7Z"),
    ("ATOM", "ATOM"),
    ("CSV", "CSV"),
    ("DBF", "DBF"),
    ("DOC", "DOC"),
    ("DOCX", "DOCX"),
    ("EPUB", "EPUB"),
    ("GeoJSON", "GEOJSON"),
    ("GeoTIFF", "TIFF"),
    ("GIF", "GIF"),
    ("GML", "GML"),
    ("GPKG", "GPKG"),
    ("GZIP", "GZIP"),
    ("HDF", "HDF"),
    ("HTML", "HTML"),
    ("JPEG", "JPEG"),
    ("JSON", "JSON"),
    ("JSON-LD", "JSON_LD"),
    ("KML", "KML"),
    ("KMZ", "KMZ"),
    ("MDB", "MDB"),
    ("N3", "N3"),
    ("NetCDF", "NETCDF"),
    ("ODP", "ODP"),
    ("ODS", "ODS"),
    ("ODT", "ODT"),
    ("Parquet", "PARQUET"),
    ("PDF", "PDF"),
    ("PNG", "PNG"),
    ("PPT", "PPT"),
    ("PPTX", "PPTX"),
    ("RDF", "RDF_XML"),
    ("RSS", "RSS"),
    ("RTF", "RTF"),
    ("SHP", "SHP"),
    ("SPARQL", "SPARQLQ"),
    ("SQL", "SQL"),
    ("SVG", "SVG"),
    ("TAR", "TAR"),
    ("TIFF", "TIFF"),
    ("TSV", "TSV"),
    ("TTL", "RDF_TURTLE"),
    ("TXT", "TXT"),
    ("WFS", "WFS_SRVC"),
    ("WMS", "WMS_SRVC"),
    ("XLS", "XLS"),
    ("XLSX", "XLSX"),
    ("XML", "XML"),
    ("ZIP", "ZIP"),
];

/// Other spellings CKAN data uses for the formats above.
const FORMAT_ALIASES: &[(&str, &str)] = &[
    ("esri shapefile", "SHP"),
    ("shapefile", "SHP"),
    ("jpg", "JPEG"),
    ("tif", "TIFF"),
    ("turtle", "RDF_TURTLE"),
    ("rdf/xml", "RDF_XML"),
    ("text", "TXT"),
    ("gz", "GZIP"),
    ("jsonld", "JSON_LD"),
];

/// The EU file-type IRI of a CKAN format name, if it is a known one.
pub fn format_iri(format: &str) -> Option<String> {
    let f = format.trim();
    let code = FORMATS
        .iter()
        .find(|(name, code)| name.eq_ignore_ascii_case(f) || code.eq_ignore_ascii_case(f))
        .map(|(_, code)| *code)
        .or_else(|| {
            FORMAT_ALIASES
                .iter()
                .find(|(alias, _)| alias.eq_ignore_ascii_case(f))
                .map(|(_, code)| *code)
        })?;
    Some(format!("{EU_FILE_TYPE}{code}"))
}

/// The CKAN format name back from an EU file-type IRI; other IRIs stay as they are.
pub fn format_name(iri: &str) -> String {
    let Some(code) = iri.strip_prefix(EU_FILE_TYPE).or_else(|| {
        iri.strip_prefix("https://publications.europa.eu/resource/authority/file-type/")
    }) else {
        return iri.to_string();
    };
    FORMATS
        .iter()
        .find(|(_, c)| *c == code)
        .map(|(name, _)| (*name).to_string())
        .unwrap_or_else(|| code.to_string())
}

/// True for `type/subtype` media types (RFC 6838 characters, no parameters).
pub fn is_media_type(s: &str) -> bool {
    let ok = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    match s.trim().split_once('/') {
        Some((t, sub)) => ok(t) && ok(sub),
        None => false,
    }
}

/// The IANA IRI of a media type (`text/csv` → `http://www.iana.org/assignments/media-types/text/csv`).
pub fn media_type_iri(mt: &str) -> Option<String> {
    is_media_type(mt).then(|| format!("{IANA}{}", mt.trim().to_ascii_lowercase()))
}

/// The media type back from an IANA IRI (http or https); other IRIs stay as they are.
pub fn media_type_name(iri: &str) -> String {
    catalog_framework::validators::iana_media_type_name(iri).to_string()
}

const DATA_THEMES: &[&str] = &[
    "AGRI",
    "ECON",
    "EDUC",
    "ENER",
    "ENVI",
    "GOVE",
    "HEAL",
    "INTR",
    "JUST",
    "OP_DATPRO",
    "REGI",
    "SOCI",
    "TECH",
    "TRAN",
];

/// The IRI of a theme: an http(s) value as it is, an EU data-theme code (`ECON`) as its EU IRI,
/// anything else `None` (`dcat:theme` must be an IRI).
pub fn theme_iri(theme: &str) -> Option<String> {
    let t = theme.trim();
    if crate::rdf::graph::is_http(t) {
        return Some(t.to_string());
    }
    DATA_THEMES
        .iter()
        .find(|c| c.eq_ignore_ascii_case(t))
        .map(|c| format!("{EU_DATA_THEME}{c}"))
}

const SPDX_ALGORITHMS: &[&str] = &[
    "adler32",
    "blake2b256",
    "blake2b384",
    "blake2b512",
    "blake3",
    "md2",
    "md4",
    "md5",
    "md6",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3_256",
    "sha3_384",
    "sha3_512",
];

/// The SPDX IRI of a checksum algorithm named by an IRI (kept) or a name (`SHA-256`, `sha256`).
pub fn checksum_algorithm_iri(name: &str) -> Option<String> {
    let t = name.trim();
    if crate::rdf::graph::is_http(t) {
        return Some(t.to_string());
    }
    let key = t.to_ascii_lowercase().replace('-', "");
    let key = key.strip_prefix("checksumalgorithm_").unwrap_or(&key);
    SPDX_ALGORITHMS
        .iter()
        .find(|a| a.replace('_', "") == key.replace('_', ""))
        .map(|a| format!("http://spdx.org/rdf/terms#checksumAlgorithm_{a}"))
}

/// The SPDX checksum algorithm for a hex digest of a given length (when the resource names none).
pub fn checksum_algorithm_for(hash: &str) -> Option<&'static str> {
    let h = hash.trim();
    if !h.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    match h.len() {
        32 => Some("http://spdx.org/rdf/terms#checksumAlgorithm_md5"),
        40 => Some("http://spdx.org/rdf/terms#checksumAlgorithm_sha1"),
        64 => Some("http://spdx.org/rdf/terms#checksumAlgorithm_sha256"),
        128 => Some("http://spdx.org/rdf/terms#checksumAlgorithm_sha512"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_go_both_ways() {
        assert_eq!(
            language_iri("en").unwrap(),
            "http://publications.europa.eu/resource/authority/language/ENG"
        );
        assert_eq!(
            language_iri("pt_BR").unwrap(),
            "http://publications.europa.eu/resource/authority/language/POR"
        );
        assert_eq!(
            language_iri("yo").unwrap(),
            "http://id.loc.gov/vocabulary/iso639-1/yo"
        );
        assert_eq!(language_iri("English"), None);
        for code in ["en", "de", "ga", "yo"] {
            assert_eq!(language_code(&language_iri(code).unwrap()), code);
        }
        assert_eq!(language_code("http://x/lang"), "http://x/lang");
    }

    #[test]
    fn formats_and_media_types_go_both_ways() {
        assert_eq!(
            format_iri("csv").unwrap(),
            "http://publications.europa.eu/resource/authority/file-type/CSV"
        );
        assert_eq!(format_name(&format_iri("GeoJSON").unwrap()), "GeoJSON");
        assert_eq!(format_name(&format_iri("ttl").unwrap()), "TTL");
        assert_eq!(format_iri("myformat"), None);
        assert_eq!(
            media_type_iri("text/csv").unwrap(),
            "http://www.iana.org/assignments/media-types/text/csv"
        );
        assert_eq!(
            media_type_name(&media_type_iri("text/csv").unwrap()),
            "text/csv"
        );
        assert_eq!(media_type_iri("csv"), None);
        assert_eq!(
            theme_iri("econ").unwrap(),
            "http://publications.europa.eu/resource/authority/data-theme/ECON"
        );
        assert_eq!(theme_iri("economy"), None);
        assert!(checksum_algorithm_for(&"a".repeat(64))
            .unwrap()
            .ends_with("sha256"));
    }
}
