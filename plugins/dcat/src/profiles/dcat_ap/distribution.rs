//! Distributions (§7.8), with their licence, format and media type, checksum and access
//! services.

use crate::profiles::vocab;
use crate::rdf::graph::{
    absolute_iri, bnode, field, field_list, field_objects, field_str, iri, is_http, lit, n, typed,
};
use catalog_framework::prelude::*;
use oxigraph::model::{NamedNode, NamedOrBlankNode, Term};

use super::{decimal, decimal_text, texts, Version, Writer};

impl Writer<'_, '_> {
    pub(super) fn distribution(
        &mut self,
        d: &Map<String, Value>,
        r: &Map<String, Value>,
        dist: &NamedOrBlankNode,
        landing: Option<&str>,
    ) {
        let v = self.v;
        self.g.add_type(dist, "dcat:Distribution");
        let t = texts(r, "name");
        self.add_all(dist, "dct:title", t);
        let t = texts(r, "description");
        self.add_all(dist, "dct:description", t);
        if let Some(s) = field_str(r, &["status"]) {
            let o = self.concept(&s);
            self.add(dist, "adms:status", o);
        }

        // License (§7.9), inherited from the dataset when configured.
        let mut license = field_str(r, &["license"]);
        if license.is_none() && self.cx.settings.inherit_license {
            license = field_str(d, &["license_id"])
                .filter(|l| is_http(l))
                .or_else(|| field_str(d, &["license_url"]).filter(|l| is_http(l)));
        }
        if let Some(l) = license {
            let o = self.resource_ref(&l, Some("dct:LicenseDocument"));
            if let Term::NamedNode(node) = &o {
                self.add(
                    &node.clone().into(),
                    "dct:type",
                    n("http://purl.org/adms/licencetype/UnknownIPR"),
                );
            }
            self.add(dist, "dct:license", o);
        }

        // URLs: the matrix of §7.8; an accessURL is always written (DCAT-AP mandatory).
        let url = field_str(r, &["url"]);
        let access = field_str(r, &["access_url"]);
        let download = field_str(r, &["download_url"]);
        let access_target = access
            .clone()
            .or_else(|| url.clone())
            .or_else(|| download.clone())
            .or_else(|| landing.map(str::to_string));
        let access_node: NamedNode = access_target
            .as_deref()
            .and_then(absolute_iri)
            .unwrap_or_else(|| match dist {
                NamedOrBlankNode::NamedNode(nn) => nn.clone(),
                _ => iri(self.cx.catalog_uri()),
            });
        self.g
            .add_type(&access_node.clone().into(), "rdfs:Resource");
        self.add(dist, "dcat:accessURL", access_node);
        if let Some(dl) = download.as_deref().and_then(absolute_iri) {
            self.g.add_type(&dl.clone().into(), "rdfs:Resource");
            self.add(dist, "dcat:downloadURL", dl);
        }

        for p in field_list(r, &["documentation"]) {
            let o = self.resource_ref(&p, Some("foaf:Document"));
            self.add(dist, "foaf:page", o);
        }
        for l in field_list(r, &["language"]) {
            let o = self.language(&l);
            self.add(dist, "dct:language", o);
        }
        for c in field_list(r, &["conforms_to"]) {
            let o = self.resource_ref(&c, Some("dct:Standard"));
            self.add(dist, "dct:conformsTo", o);
        }
        self.statement(
            dist,
            "dct:rights",
            field(r, "rights"),
            "dct:RightsStatement",
        );
        self.dates(dist, "dct:issued", r, &["issued", "created"]);
        self.dates(dist, "dct:modified", r, &["modified", "metadata_modified"]);
        if let Some(size) = field_str(r, &["size"]) {
            if let Some(o) = byte_size(&size, v) {
                self.add(dist, "dcat:byteSize", o);
            }
        }
        if let Some(hash) = field_str(r, &["hash"]) {
            self.checksum(r, &hash, dist);
        }
        self.format(r, dist);

        if v >= Version::V2 {
            if let Some(a) = field_str(r, &["availability"]) {
                let o = self.concept(&a);
                self.add(dist, "dcatap:availability", o);
            }
            for (key, p) in [
                ("compress_format", "dcat:compressFormat"),
                ("package_format", "dcat:packageFormat"),
            ] {
                if let Some(f) = field_str(r, &[key]) {
                    let o = self.media_type(&f);
                    self.add(dist, p, o);
                }
            }
            if let Some(t) = field_str(r, &["temporal_resolution"]) {
                self.add(
                    dist,
                    "dcat:temporalResolution",
                    typed(t.trim(), "xsd:duration"),
                );
            }
            if let Some(s) = field_list(r, &["spatial_resolution_in_meters"]).first() {
                self.add(dist, "dcat:spatialResolutionInMeters", decimal(s));
            }
            self.legislation(r, dist);
            for svc in field_objects(r, "access_services") {
                self.access_service(&svc, dist);
            }
        }
    }

    /// `spdx:checksum`. DCAT-AP requires the algorithm (2.1.1: SHA-1 only), so a checksum whose
    /// algorithm is unknown (or, before v3, not SHA-1) is left out.
    fn checksum(&mut self, r: &Map<String, Value>, hash: &str, dist: &NamedOrBlankNode) {
        let named = field_str(r, &["hash_algorithm"]);
        let algo = match &named {
            Some(a) => vocab::checksum_algorithm_iri(a),
            None => vocab::checksum_algorithm_for(hash).map(str::to_string),
        };
        let Some(algo) = algo else {
            return;
        };
        if self.v < Version::V3 && !algo.ends_with("#checksumAlgorithm_sha1") {
            return;
        }
        let c = bnode();
        self.g.add_type(&c, "spdx:Checksum");
        self.add(
            &c,
            "spdx:checksumValue",
            typed(hash.trim(), "xsd:hexBinary"),
        );
        let o = iri(&algo);
        self.g.add_type(&o.clone().into(), "spdx:ChecksumAlgorithm");
        self.add(&c, "spdx:algorithm", o);
        self.add(dist, "spdx:checksum", c);
    }

    /// A media type: the IANA IRI, the IRI given, or a blank `dct:MediaType` with a label.
    fn media_type(&mut self, mt: &str) -> Term {
        let iri_text = if is_http(mt) {
            Some(mt.trim().to_string())
        } else {
            vocab::media_type_iri(mt)
        };
        match iri_text {
            Some(i) => {
                let o = iri(&i);
                self.g.add_type(&o.clone().into(), "dct:MediaType");
                o.into()
            }
            None => self.resource_ref(mt, Some("dct:MediaType")),
        }
    }

    /// `dct:format` and `dcat:mediaType` (§7.10), as IRIs from the EU file-type authority and
    /// IANA when the values are known ones.
    fn format(&mut self, r: &Map<String, Value>, dist: &NamedOrBlankNode) {
        let mut fmt = field_str(r, &["format"]);
        let mut mt = field_str(r, &["mimetype"]);
        if let Some(f) = fmt.clone() {
            if mt.is_none() || mt.as_deref() == Some(f.as_str()) {
                if f.contains("iana.org/assignments/media-types")
                    || (!f.starts_with("http") && f.contains('/'))
                {
                    mt = Some(f);
                    fmt = None;
                } else {
                    mt = None;
                }
            }
        }
        if let Some(m) = mt {
            let o = self.media_type(&m);
            self.add(dist, "dcat:mediaType", o);
        }
        if let Some(f) = fmt {
            let o = if is_http(&f) {
                let o = iri(&f);
                self.g.add_type(&o.clone().into(), "dct:MediaTypeOrExtent");
                o.into()
            } else if let Some(i) = vocab::format_iri(&f) {
                let o = iri(&i);
                self.g.add_type(&o.clone().into(), "dct:MediaTypeOrExtent");
                o.into()
            } else {
                self.resource_ref(&f, Some("dct:MediaTypeOrExtent"))
            };
            self.add(dist, "dct:format", o);
        }
    }

    fn access_service(&mut self, svc: &Map<String, Value>, dist: &NamedOrBlankNode) {
        let s: NamedOrBlankNode = match field_str(svc, &["uri"]).as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&s, "dcat:DataService");
        if let Some(a) = field_str(svc, &["availability"]) {
            let o = self.concept(&a);
            self.add(&s, "dcatap:availability", o);
        }
        if let Some(l) = field_str(svc, &["license"]) {
            let o = self.resource_ref(&l, Some("dct:LicenseDocument"));
            self.add(&s, "dct:license", o);
        }
        self.statement(
            &s,
            "dct:accessRights",
            field(svc, "access_rights"),
            "dct:RightsStatement",
        );
        let t = texts(svc, "title");
        self.add_all(&s, "dct:title", t);
        let t = texts(svc, "description");
        self.add_all(&s, "dct:description", t);
        for x in field_list(svc, &["endpoint_description"]) {
            let o = self.resource_ref(&x, Some("rdfs:Resource"));
            self.add(&s, "dcat:endpointDescription", o);
        }
        for x in field_list(svc, &["endpoint_url"]) {
            let o = self.resource_ref(&x, Some("rdfs:Resource"));
            self.add(&s, "dcat:endpointURL", o);
        }
        for x in field_list(svc, &["serves_dataset"]) {
            let o = self.resource_ref(&x, None);
            self.add(&s, "dcat:servesDataset", o);
        }
        self.dates(&s, "dct:modified", svc, &["modified"]);
        for c in field_objects(svc, "contact") {
            let o = self.contact_object(&c);
            self.add(&s, "dcat:contactPoint", o);
        }
        if let Some(p) = field_objects(svc, "publisher").first() {
            let o = self.agent_object(p);
            self.add(&s, "dct:publisher", o);
        }
        for c in field_objects(svc, "creator") {
            let o = self.agent_object(&c);
            self.add(&s, "dct:creator", o);
        }
        for c in field_list(svc, &["conforms_to"]) {
            let o = self.resource_ref(&c, Some("dct:Standard"));
            self.add(&s, "dct:conformsTo", o);
        }
        for f in field_list(svc, &["format"]) {
            let o = match vocab::format_iri(&f) {
                Some(i) if !is_http(&f) => iri(&i).into(),
                _ => self.resource_ref(&f, Some("dct:MediaTypeOrExtent")),
            };
            self.add(&s, "dct:format", o);
        }
        for l in field_list(svc, &["language"]) {
            let o = self.language(&l);
            self.add(&s, "dct:language", o);
        }
        for x in field_list(svc, &["landing_page"]) {
            let o = self.resource_ref(&x, Some("foaf:Document"));
            self.add(&s, "dcat:landingPage", o);
        }
        self.legislation(svc, &s);
        for th in field_list(svc, &["theme"]) {
            if let Some(i) = vocab::theme_iri(&th) {
                self.add(&s, "dcat:theme", iri(&i));
            }
        }
        for i in field_list(svc, &["identifier"]) {
            self.add(&s, "dct:identifier", lit(i.trim()));
        }
        for k in field_list(svc, &["keyword"]) {
            self.add(&s, "dcat:keyword", lit(&k));
        }
        self.add(dist, "dcat:accessService", s);
    }
}

/// `dcat:byteSize`: `xsd:decimal` (v1, v2) or `xsd:nonNegativeInteger` (v3); `None` when the
/// size is not a number.
fn byte_size(size: &str, v: Version) -> Option<Term> {
    let s = size.trim();
    let f: f64 = s.parse().ok()?;
    if v == Version::V3 {
        (f >= 0.0).then(|| typed(&format!("{}", f.trunc() as u64), "xsd:nonNegativeInteger"))
    } else {
        Some(typed(&decimal_text(f), "xsd:decimal"))
    }
}
