//! The catalog (§6).

use crate::rdf::graph::{absolute_iri, bnode, date_literal, lit, mailto};
use crate::rdf::CatalogInfo;
use oxigraph::model::NamedOrBlankNode;

use super::Writer;

impl Writer<'_, '_> {
    pub(super) fn catalog(&mut self, catalog: &CatalogInfo, node: &NamedOrBlankNode) {
        let config = self.cx.config;
        let settings = self.cx.settings;
        self.g.add_type(node, "dcat:Catalog");
        self.add(node, "dct:title", lit(&self.cx.site_title));
        self.add(node, "dct:description", lit(&settings.catalog_description));
        let site_url = config.catalog.site_url.trim();
        if let Some(home) = absolute_iri(site_url) {
            self.g.add_type(&home.clone().into(), "foaf:Document");
            self.add(node, "foaf:homepage", home);
        }
        for l in settings
            .catalog_language
            .split([' ', ','])
            .filter(|l| !l.is_empty())
        {
            let o = self.language(l);
            self.add(node, "dct:language", o);
        }
        if let Some(m) = catalog.modified.as_deref().filter(|m| !m.is_empty()) {
            self.add(node, "dct:modified", date_literal(m));
        }
        let p = &settings.catalog_publisher;
        let agent: NamedOrBlankNode = match p.uri.as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&agent, "foaf:Agent");
        let name = if p.name.trim().is_empty() {
            self.cx.site_title.clone()
        } else {
            p.name.clone()
        };
        self.add(&agent, "foaf:name", lit(&name));
        if let Some(e) = p.email.as_deref().filter(|e| !e.trim().is_empty()) {
            self.add(&agent, "foaf:mbox", mailto(e));
        }
        if let Some(u) = p.url.as_deref().and_then(absolute_iri) {
            self.g.add_type(&u.clone().into(), "foaf:Document");
            self.add(&agent, "foaf:homepage", u);
        }
        if let Some(t) = p.type_uri.as_deref().filter(|t| !t.trim().is_empty()) {
            let o = self.concept(t);
            self.add(&agent, "dct:type", o);
        }
        self.add(node, "dct:publisher", agent);
    }
}
