//! The built-in equivalents of the schema and presets files ckanext-scheming and ckanext-dcat
//! ship, under their `module:file` names, so a CKAN config's `scheming.dataset_schemas =
//! ckanext.dcat.schemas:dcat_ap_full.yaml` works unchanged. The files in `schemas/` are our own,
//! written from the published field lists.

/// `(module:file name, our file name, text)`.
const FILES: &[(&str, &str, &str)] = &[
    (
        "ckanext.scheming:presets.json",
        "scheming-presets.yaml",
        include_str!("../schemas/scheming-presets.yaml"),
    ),
    (
        "ckanext.scheming:ckan_dataset.yaml",
        "ckan-dataset.yaml",
        include_str!("../schemas/ckan-dataset.yaml"),
    ),
    (
        "ckanext.dcat.schemas:presets.yaml",
        "dcat-presets.yaml",
        include_str!("../schemas/dcat-presets.yaml"),
    ),
    (
        "ckanext.dcat.schemas:dcat_ap_full.yaml",
        "dcat-ap-full.yaml",
        include_str!("../schemas/dcat-ap-full.yaml"),
    ),
];

/// The presets ckanext-scheming reads when `scheming.presets` is not set.
pub const DEFAULT_PRESETS: &str = "ckanext.scheming:presets.json";

/// A built-in file by its `module:file` name: our file's name (its ending says YAML or JSON)
/// and text.
pub fn file(name: &str) -> Option<(&'static str, &'static str)> {
    FILES
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|(_, ours, text)| (*ours, *text))
}

/// Every built-in `module:file` name.
pub fn names() -> Vec<&'static str> {
    FILES.iter().map(|(n, ..)| *n).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_parses() {
        for (name, ours, text) in super::FILES {
            crate::yaml::parse(text).unwrap_or_else(|e| panic!("{name} ({ours}): {e}"));
        }
    }
}
