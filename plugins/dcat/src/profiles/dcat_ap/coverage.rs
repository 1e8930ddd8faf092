//! Time and space: `dct:temporal` and `dct:spatial`.

use crate::profiles::geo;
use crate::rdf::graph::{
    absolute_iri, bnode, date_literal, field, field_objects, field_str, lang_lit, lit, typed,
    value_str,
};
use catalog_framework::prelude::*;
use oxigraph::model::NamedOrBlankNode;

use super::{texts, Version, Writer};

impl Writer<'_, '_> {
    fn period(&mut self, start: Option<&str>, end: Option<&str>) -> NamedOrBlankNode {
        let b = bnode();
        self.g.add_type(&b, "dct:PeriodOfTime");
        let (sp, ep) = if self.v == Version::V1 {
            ("schema:startDate", "schema:endDate")
        } else {
            ("dcat:startDate", "dcat:endDate")
        };
        if let Some(s) = start {
            self.add(&b, sp, date_literal(s));
        }
        if let Some(e) = end {
            self.add(&b, ep, date_literal(e));
        }
        b
    }

    pub(super) fn temporal(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let start = field_str(d, &["temporal_start"]);
        let end = field_str(d, &["temporal_end"]);
        if start.is_some() || end.is_some() {
            let p = self.period(start.as_deref(), end.as_deref());
            self.add(ds, "dct:temporal", p);
        }
        if self.v == Version::V3 {
            for item in field_objects(d, "temporal_coverage") {
                let s = field_str(&item, &["start"]);
                let e = field_str(&item, &["end"]);
                if s.is_some() || e.is_some() {
                    let p = self.period(s.as_deref(), e.as_deref());
                    self.add(ds, "dct:temporal", p);
                }
            }
        }
    }

    /// Geometry literals of a GeoJSON value (text or object), one per configured format.
    fn geometry(&mut self, s: &NamedOrBlankNode, p: &str, value: &Value) {
        let text = match value {
            Value::String(t) => t.clone(),
            Value::Object(_) => value.to_string(),
            _ => return,
        };
        let Some(geom) = geo::parse_geojson(&text) else {
            return;
        };
        for f in &self.cx.settings.output_spatial_formats {
            let o = match f.as_str() {
                "geojson" => typed(&geo::python_json(&geom), geo::GEOJSON_LITERAL),
                _ => match geo::to_wkt(&geom) {
                    Some(w) => typed(&w, geo::WKT_LITERAL),
                    None => continue,
                },
            };
            self.add(s, p, o);
        }
    }

    pub(super) fn spatial(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let uri = field_str(d, &["spatial_uri"]);
        let text = field(d, "spatial_text").cloned();
        let geom = field(d, "spatial").cloned();
        let (bbox, centroid) = if self.v >= Version::V2 {
            (
                field(d, "spatial_bbox").cloned(),
                field(d, "spatial_centroid").cloned(),
            )
        } else {
            (None, None)
        };
        if uri.is_some() || text.is_some() || geom.is_some() || bbox.is_some() || centroid.is_some()
        {
            let loc: NamedOrBlankNode = match uri.as_deref().and_then(absolute_iri) {
                Some(u) => u.into(),
                None => bnode(),
            };
            self.g.add_type(&loc, "dct:Location");
            if let Some(t) = text {
                match &t {
                    Value::Object(tr) => {
                        for (l, v) in tr {
                            if let Some(x) = value_str(v) {
                                self.add(&loc, "skos:prefLabel", lang_lit(&x, l));
                            }
                        }
                    }
                    other => {
                        if let Some(x) = value_str(other) {
                            self.add(&loc, "skos:prefLabel", lit(&x));
                        }
                    }
                }
            }
            if let Some(gv) = geom {
                self.geometry(&loc, "locn:geometry", &gv);
            }
            if let Some(b) = bbox {
                self.geometry(&loc, "dcat:bbox", &b);
            }
            if let Some(c) = centroid {
                self.geometry(&loc, "dcat:centroid", &c);
            }
            self.add(ds, "dct:spatial", loc);
        }
        if self.v == Version::V3 {
            for item in field_objects(d, "spatial_coverage") {
                let loc: NamedOrBlankNode =
                    match field_str(&item, &["uri"]).as_deref().and_then(absolute_iri) {
                        Some(u) => u.into(),
                        None => bnode(),
                    };
                self.g.add_type(&loc, "dct:Location");
                let labels = texts(&item, "text");
                self.add_all(&loc, "skos:prefLabel", labels);
                for (key, p) in [
                    ("geom", "locn:geometry"),
                    ("bbox", "dcat:bbox"),
                    ("centroid", "dcat:centroid"),
                ] {
                    if let Some(v) = field(&item, key).cloned() {
                        self.geometry(&loc, p, &v);
                    }
                }
                self.add(ds, "dct:spatial", loc);
            }
        }
    }
}
