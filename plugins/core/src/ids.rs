//! Ids of new records (datasets, resources, tags, groups, members, users).

pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
