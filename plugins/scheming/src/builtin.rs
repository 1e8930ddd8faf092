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
    (
        "ckanext.dcat.schemas:croissant.yaml",
        "dcat-croissant.yaml",
        include_str!("../schemas/dcat-croissant.yaml"),
    ),
    (
        "ckanext.dcat.schemas:dcat_ap_dataset_series.yaml",
        "dcat-ap-dataset-series.yaml",
        include_str!("../schemas/dcat-ap-dataset-series.yaml"),
    ),
    (
        "ckanext.dcat.schemas:dcat_ap_in_series.yaml",
        "dcat-ap-in-series.yaml",
        include_str!("../schemas/dcat-ap-in-series.yaml"),
    ),
    (
        "ckanext.dcat.schemas:dcat_ap_multilingual.yaml",
        "dcat-ap-multilingual.yaml",
        include_str!("../schemas/dcat-ap-multilingual.yaml"),
    ),
    (
        "ckanext.dcat.schemas:dcat_ap_recommended.yaml",
        "dcat-ap-recommended.yaml",
        include_str!("../schemas/dcat-ap-recommended.yaml"),
    ),
    (
        "ckanext.dcat.schemas:dcat_us_full.yaml",
        "dcat-us-full.yaml",
        include_str!("../schemas/dcat-us-full.yaml"),
    ),
    (
        "ckanext.dcat.schemas:dcat_us_recommended.yaml",
        "dcat-us-recommended.yaml",
        include_str!("../schemas/dcat-us-recommended.yaml"),
    ),
    (
        "ckanext.dcat.schemas:health_dcat_ap.yaml",
        "dcat-health-dcat-ap.yaml",
        include_str!("../schemas/dcat-health-dcat-ap.yaml"),
    ),
    (
        "ckanext.dcat.schemas:health_dcat_ap_multilingual.yaml",
        "dcat-health-dcat-ap-multilingual.yaml",
        include_str!("../schemas/dcat-health-dcat-ap-multilingual.yaml"),
    ),
    (
        "ckanext.dcat.schemas:publisher_organization.yaml",
        "dcat-publisher-organization.yaml",
        include_str!("../schemas/dcat-publisher-organization.yaml"),
    ),
    (
        "ckanext.scheming:camel_photos.yaml",
        "camel-photos.yaml",
        include_str!("../schemas/camel-photos.yaml"),
    ),
    (
        "ckanext.scheming:subfields.yaml",
        "subfields.yaml",
        include_str!("../schemas/subfields.yaml"),
    ),
    (
        "ckanext.scheming:ckan_formpages.yaml",
        "ckan-formpages.yaml",
        include_str!("../schemas/ckan-formpages.yaml"),
    ),
    (
        "ckanext.scheming:ckan_formpages_draft.yaml",
        "ckan-formpages-draft.yaml",
        include_str!("../schemas/ckan-formpages-draft.yaml"),
    ),
    (
        "ckanext.scheming:custom_group_with_status.json",
        "custom-group-with-status.yaml",
        include_str!("../schemas/custom-group-with-status.yaml"),
    ),
    (
        "ckanext.scheming:custom_org_with_address.json",
        "custom-org-with-address.yaml",
        include_str!("../schemas/custom-org-with-address.yaml"),
    ),
    (
        "ckanext.scheming:group_with_bookface.json",
        "group-with-bookface.yaml",
        include_str!("../schemas/group-with-bookface.yaml"),
    ),
    (
        "ckanext.scheming:org_with_dept_id.json",
        "org-with-dept-id.yaml",
        include_str!("../schemas/org-with-dept-id.yaml"),
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

/// Every built-in file, for tests: `(module:file name, text)`.
#[cfg(test)]
pub(crate) fn all() -> Vec<(&'static str, &'static str)> {
    FILES.iter().map(|(n, _, t)| (*n, *t)).collect()
}
