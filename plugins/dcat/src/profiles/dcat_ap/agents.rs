//! Contact points (§7.4) and agents (§7.5).

use crate::rdf::graph::{absolute_iri, bnode, field_objects, field_str, iri, lit, mailto};
use catalog_framework::prelude::*;
use oxigraph::model::{NamedOrBlankNode, Term};

use super::{texts, Version, Writer};

impl Writer<'_, '_> {
    pub(super) fn contacts(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let keys = [
            "contact_uri",
            "contact_name",
            "contact_email",
            "maintainer",
            "maintainer_email",
            "author",
            "author_email",
        ];
        if keys.iter().any(|k| field_str(d, &[k]).is_some()) {
            let c: NamedOrBlankNode = match field_str(d, &["contact_uri"])
                .as_deref()
                .and_then(absolute_iri)
            {
                Some(u) => u.into(),
                None => bnode(),
            };
            self.g.add_type(&c, "vcard:Organization");
            self.g.add_type(&c, "vcard:Kind");
            if let Some(name) = field_str(d, &["contact_name", "maintainer", "author"]) {
                self.add(&c, "vcard:fn", lit(&name));
            }
            if let Some(e) = field_str(d, &["contact_email", "maintainer_email", "author_email"]) {
                self.add(&c, "vcard:hasEmail", mailto(&e));
            }
            self.add(ds, "dcat:contactPoint", c);
        }
        if self.v == Version::V3 {
            for item in field_objects(d, "contact") {
                let c = self.contact_object(&item);
                self.add(ds, "dcat:contactPoint", c);
            }
        }
    }

    pub(super) fn contact_object(&mut self, item: &Map<String, Value>) -> NamedOrBlankNode {
        let c: NamedOrBlankNode = match field_str(item, &["uri"]).as_deref().and_then(absolute_iri)
        {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&c, "vcard:Kind");
        let names = texts(item, "name");
        self.add_all(&c, "vcard:fn", names);
        if let Some(e) = field_str(item, &["email"]) {
            self.add(&c, "vcard:hasEmail", mailto(&e));
        }
        if let Some(uid) = field_str(item, &["identifier"]) {
            self.add(&c, "vcard:hasUID", lit(uid.trim()));
        }
        if let Some(u) = field_str(item, &["url"]).as_deref().and_then(absolute_iri) {
            self.add(&c, "vcard:hasURL", u);
        }
        c
    }

    pub(super) fn agents(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        // Publisher: scheming list (v3, first item: dct:publisher is max 1), else the flat
        // publisher_* keys, else the organization.
        let scheming = if self.v == Version::V3 {
            field_objects(d, "publisher")
        } else {
            Vec::new()
        };
        if let Some(p) = scheming.first() {
            let a = self.agent_object(p);
            self.add(ds, "dct:publisher", a);
        } else if let Some(a) = self.flat_agent(d, "publisher") {
            self.add(ds, "dct:publisher", a);
        } else if let (Some(org), Some(uri)) = (
            d.get("organization").and_then(Value::as_object),
            self.cx.organization_uri(d),
        ) {
            // `foaf:Agent` only, as ckanext-dcat types it (and as the flat `publisher_*` keys a
            // harvester reads it back into are written), so the graph survives a round trip.
            let a: NamedOrBlankNode = iri(&uri).into();
            self.g.add_type(&a, "foaf:Agent");
            if let Some(name) = field_str(org, &["title", "name"]) {
                self.add(&a, "foaf:name", lit(&name));
            }
            if let Some(e) = field_str(org, &["email"]) {
                self.add(&a, "foaf:mbox", mailto(&e));
            }
            if let Some(u) = field_str(org, &["url"]).as_deref().and_then(absolute_iri) {
                self.g.add_type(&u.clone().into(), "foaf:Document");
                self.add(&a, "foaf:homepage", u);
            }
            if let Some(t) = field_str(org, &["dcat_type"]) {
                let o = self.concept(&t);
                self.add(&a, "dct:type", o);
            }
            if let Some(i) = field_str(org, &["identifier"]) {
                self.add(&a, "dct:identifier", lit(i.trim()));
            }
            self.add(ds, "dct:publisher", a);
        }

        let scheming = if self.v == Version::V3 {
            field_objects(d, "creator")
        } else {
            Vec::new()
        };
        if !scheming.is_empty() {
            for c in &scheming {
                let a = self.agent_object(c);
                self.add(ds, "dct:creator", a);
            }
        } else if let Some(a) = self.flat_agent(d, "creator") {
            self.add(ds, "dct:creator", a);
        }
    }

    /// An agent from the flat `<prefix>_uri`, `_name`, `_email`, `_url`, `_type`, `_identifier`.
    fn flat_agent(&mut self, d: &Map<String, Value>, prefix: &str) -> Option<NamedOrBlankNode> {
        let get = |k: &str| field_str(d, &[&format!("{prefix}_{k}")]);
        let uri = get("uri");
        let name = get("name");
        if uri.is_none() && name.is_none() {
            return None;
        }
        let a: NamedOrBlankNode = match uri.as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&a, "foaf:Agent");
        if let Some(name) = name {
            self.add(&a, "foaf:name", lit(&name));
        }
        if let Some(e) = get("email") {
            self.add(&a, "foaf:mbox", mailto(&e));
        }
        if let Some(u) = get("url").as_deref().and_then(absolute_iri) {
            self.g.add_type(&u.clone().into(), "foaf:Document");
            self.add(&a, "foaf:homepage", u);
        }
        if let Some(t) = get("type") {
            let o = self.concept(&t);
            self.add(&a, "dct:type", o);
        }
        if let Some(i) = get("identifier") {
            self.add(&a, "dct:identifier", lit(i.trim()));
        }
        Some(a)
    }

    /// An agent from a scheming object (`uri`, `name`/`name_translated`, `email`, `url`, `type`,
    /// `identifier`).
    pub(super) fn agent_object(&mut self, o: &Map<String, Value>) -> NamedOrBlankNode {
        let a: NamedOrBlankNode = match field_str(o, &["uri"]).as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&a, "foaf:Agent");
        let mut names = texts(o, "name");
        if o.get("name_translated").is_some() {
            if let Some(plain) = field_str(o, &["name"]) {
                if !names.iter().any(|t| match t {
                    Term::Literal(l) => l.value() == plain,
                    _ => false,
                }) {
                    names.push(lit(&plain));
                }
            }
        }
        self.add_all(&a, "foaf:name", names);
        if let Some(e) = field_str(o, &["email"]) {
            self.add(&a, "vcard:hasEmail", mailto(&e));
        }
        if let Some(u) = field_str(o, &["url", "homepage"])
            .as_deref()
            .and_then(absolute_iri)
        {
            self.g.add_type(&u.clone().into(), "foaf:Document");
            self.add(&a, "foaf:homepage", u);
        }
        if let Some(t) = field_str(o, &["type"]) {
            let c = self.concept(&t);
            self.add(&a, "dct:type", c);
        }
        if let Some(i) = field_str(o, &["identifier"]) {
            self.add(&a, "dct:identifier", lit(i.trim()));
        }
        a
    }
}
