//! DCAT for the catalog: the RDF endpoints of ckanext-dcat (`/dataset/{id}.{ext}`,
//! `/catalog.{ext}`, content negotiation) and its profiles `euro_dcat_ap`, `euro_dcat_ap_2`,
//! `euro_dcat_ap_3` (the default) and `schemaorg`. See docs/DCAT.md.
#![forbid(unsafe_code)]

pub mod profiles;

use catalog_framework::prelude::*;

register_plugin!("dcat");
