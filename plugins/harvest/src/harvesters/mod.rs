//! The harvesters this plugin brings: `dcat_rdf`, `ckan`, `dcat_json`.

pub(crate) mod ckan;
pub(crate) mod dcat_json;
pub(crate) mod dcat_rdf;

crate::register_harvester!("ckan", ckan::CkanHarvester);
crate::register_harvester!("dcat_rdf", dcat_rdf::DcatRdfHarvester);
crate::register_harvester!("dcat_json", dcat_json::DcatJsonHarvester);
