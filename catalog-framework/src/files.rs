//! Where uploaded resource files live, so that every plugin that reads them (the core's
//! download, the DataStore loader) finds the same place.

use std::path::{Path, PathBuf};

/// The file of an uploaded resource: `<data>/resources/<id[0..3]>/<id[3..6]>/<id[6..]>`, like
/// CKAN's local storage. Only the id's ASCII letters, digits and `-` are used, so no id leads
/// out of the directory.
pub fn resource_file_path(data_dir: &Path, resource_id: &str) -> PathBuf {
    let id: String = resource_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let (a, rest) = id.split_at(id.len().min(3));
    let (b, c) = rest.split_at(rest.len().min(3));
    data_dir.join("resources").join(a).join(b).join(c)
}
