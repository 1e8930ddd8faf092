//! Geometry literals (spec/dcat.md §7.7): GeoJSON → WKT with exactly four decimals (as
//! ckanext-dcat's shapely output), GeoJSON in Python's `json.dumps` spacing, and WKT back to
//! GeoJSON for the reverse mapping.

use serde_json::{json, Value};

pub const WKT_LITERAL: &str = "http://www.opengis.net/ont/geosparql#wktLiteral";
pub const GEOJSON_LITERAL: &str =
    "https://www.iana.org/assignments/media-types/application/vnd.geo+json";

/// The geometry of a GeoJSON text (a geometry, or a Feature holding one); `None` when the text is
/// not JSON or not a geometry.
pub fn parse_geojson(text: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    let geom = match v.get("type")?.as_str()? {
        "Feature" => v.get("geometry")?.clone(),
        _ => v,
    };
    to_wkt(&geom)?;
    Some(geom)
}

/// WKT of a GeoJSON geometry, coordinates with four decimals; `None` if it is not a geometry.
pub fn to_wkt(g: &Value) -> Option<String> {
    let kind = g.get("type")?.as_str()?;
    if kind == "GeometryCollection" {
        let parts: Option<Vec<String>> = g
            .get("geometries")?
            .as_array()?
            .iter()
            .map(to_wkt)
            .collect();
        return Some(format!("GEOMETRYCOLLECTION ({})", parts?.join(", ")));
    }
    let c = g.get("coordinates")?;
    let body = match kind {
        "Point" => format!("({})", position(c)?),
        "LineString" => ring(c)?,
        "Polygon" => rings(c)?,
        "MultiPoint" => format!(
            "({})",
            c.as_array()?
                .iter()
                .map(|p| position(p).map(|s| format!("({s})")))
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        "MultiLineString" => rings(c)?,
        "MultiPolygon" => format!(
            "({})",
            c.as_array()?
                .iter()
                .map(rings)
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        _ => return None,
    };
    Some(format!("{} {body}", kind.to_ascii_uppercase()))
}

fn position(p: &Value) -> Option<String> {
    let nums: Option<Vec<f64>> = p.as_array()?.iter().map(Value::as_f64).collect();
    let nums = nums?;
    (nums.len() >= 2).then(|| {
        nums.iter()
            .map(|x| format!("{x:.4}"))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

fn ring(c: &Value) -> Option<String> {
    let pts: Option<Vec<String>> = c.as_array()?.iter().map(position).collect();
    Some(format!("({})", pts?.join(", ")))
}

fn rings(c: &Value) -> Option<String> {
    let rs: Option<Vec<String>> = c.as_array()?.iter().map(ring).collect();
    Some(format!("({})", rs?.join(", ")))
}

/// JSON text with Python's `json.dumps` separators (`", "`, `": "`).
pub fn python_json(v: &Value) -> String {
    match v {
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(python_json).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 1e16 {
                format!("{f:.1}")
            } else {
                n.to_string()
            }
        }
        other => other.to_string(),
    }
}

/// GeoJSON of a WKT text (the forms [`to_wkt`] writes, optionally with a `<crs>` prefix).
pub fn wkt_to_geojson(wkt: &str) -> Option<Value> {
    let mut s = wkt.trim();
    if s.starts_with('<') {
        s = s[s.find('>')? + 1..].trim();
    }
    let open = s.find('(')?;
    let kind = s[..open].trim().to_ascii_uppercase();
    let body = s[open..].trim();
    let nested = parse_parens(body)?;
    let geojson_type = match kind.as_str() {
        "POINT" => "Point",
        "LINESTRING" => "LineString",
        "POLYGON" => "Polygon",
        "MULTIPOINT" => "MultiPoint",
        "MULTILINESTRING" => "MultiLineString",
        "MULTIPOLYGON" => "MultiPolygon",
        _ => return None,
    };
    // parse_parens gives one level of nesting per parenthesis; a Point's body is "(x y)".
    let coords = match geojson_type {
        "Point" => nested.as_array()?.first()?.clone(),
        "MultiPoint" => Value::Array(
            nested
                .as_array()?
                .iter()
                .map(|p| match p {
                    Value::Array(inner) if inner.len() == 1 && inner[0].is_array() => {
                        inner[0].clone()
                    }
                    other => other.clone(),
                })
                .collect(),
        ),
        _ => nested,
    };
    Some(json!({"type": geojson_type, "coordinates": coords}))
}

/// `((1 2, 3 4), (5 6))` → `[[[1,2],[3,4]],[[5,6]]]`: each parenthesis a list, each
/// comma-separated run of numbers a position.
fn parse_parens(s: &str) -> Option<Value> {
    fn group(chars: &[char], i: &mut usize) -> Option<Value> {
        // at '('
        *i += 1;
        let mut items = Vec::new();
        let mut token = String::new();
        let flush = |token: &mut String, items: &mut Vec<Value>| -> Option<()> {
            let t = token.trim();
            if !t.is_empty() {
                let nums: Option<Vec<Value>> = t
                    .split_whitespace()
                    .map(|x| x.parse::<f64>().ok().map(|f| json!(f)))
                    .collect();
                items.push(Value::Array(nums?));
            }
            token.clear();
            Some(())
        };
        while *i < chars.len() {
            match chars[*i] {
                '(' => items.push(group(chars, i)?),
                ')' => {
                    flush(&mut token, &mut items)?;
                    *i += 1;
                    return Some(Value::Array(items));
                }
                ',' => {
                    flush(&mut token, &mut items)?;
                    *i += 1;
                }
                c => {
                    token.push(c);
                    *i += 1;
                }
            }
        }
        None
    }
    let chars: Vec<char> = s.chars().collect();
    if chars.first() != Some(&'(') {
        return None;
    }
    let mut i = 0;
    group(&chars, &mut i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wkt_has_four_decimals() {
        let poly = parse_geojson(
            r#"{"type":"Polygon","coordinates":[[[1.18714,41.0786],[1.1871,41.16553],[1.2,41.1],[1.18714,41.0786]]]}"#,
        )
        .unwrap();
        assert_eq!(
            to_wkt(&poly).unwrap(),
            "POLYGON ((1.1871 41.0786, 1.1871 41.1655, 1.2000 41.1000, 1.1871 41.0786))"
        );
        assert_eq!(
            to_wkt(&json!({"type": "Point", "coordinates": [2, 42]})).unwrap(),
            "POINT (2.0000 42.0000)"
        );
        assert_eq!(
            to_wkt(&json!({"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [0, 1], [0, 0]]]]}))
                .unwrap(),
            "MULTIPOLYGON (((0.0000 0.0000, 1.0000 0.0000, 0.0000 1.0000, 0.0000 0.0000)))"
        );
        assert!(parse_geojson("not json").is_none());
        assert!(parse_geojson(r#"{"type": "Nope"}"#).is_none());
    }

    #[test]
    fn wkt_reads_back_as_geojson() {
        for g in [
            json!({"type": "Point", "coordinates": [2.0, 42.0]}),
            json!({"type": "LineString", "coordinates": [[2.0, 42.0], [3.0, 43.5]]}),
            json!({"type": "Polygon", "coordinates": [[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]]}),
            json!({"type": "MultiPoint", "coordinates": [[2.0, 42.0], [3.0, 43.5]]}),
            json!({"type": "MultiPolygon", "coordinates": [[[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]]]}),
        ] {
            assert_eq!(wkt_to_geojson(&to_wkt(&g).unwrap()).unwrap(), g);
        }
    }

    #[test]
    fn python_spacing() {
        assert_eq!(
            python_json(&json!({"type": "Point", "coordinates": [2.0, 42]})),
            r#"{"type": "Point", "coordinates": [2.0, 42]}"#
        );
    }
}
