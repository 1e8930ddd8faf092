//! Activity streams, as CKAN 2.12's `activity` plugin keeps them: every committed change of a
//! dataset (its resources included), group, organization or user is recorded as one activity,
//! in the changing call's transaction, from the domain events; the list and show actions read
//! them back with CKAN's shapes, validation and visibility. See book/src/user-guide/activity.md.
//!
//! The dashboard: a user's own stream with those of what they follow, which of it is new
//! (`dashboard_*`).
//!
//! Followers: users follow users, datasets, groups and organizations (`follow_*`,
//! `unfollow_*`, `am_following_*`, `*_follower_count`).
//!
//! The data of an activity (the dataset as `package_show` showed it after the change) is stored
//! compactly: a patch against the previous activity of the same object, with a whole copy at
//! regular intervals ([`patch`]); reads rebuild it exactly.
//!
//! # Where things live
//!
//! - `actions`: the activity lists (`package_activity_list`, `group_`, `organization_`,
//!   `user_`, `recently_changed_packages_activity_list`), `activity_show`,
//!   `activity_data_show` and `activity_diff` (with [`difflib`]), and the auth they share;
//!   `params`: the list parameters' shapes (`limit`, `before`/`after`, the type lists).
//! - `dashboard`: `dashboard_*`; `followers`: `follow_*`, `unfollow_*`, `am_following_*`,
//!   the follower and followee counts and lists; `maintenance`: `activity_delete*`.
//! - The older release's actions: `details` (`activity_detail_list`), `html` (the
//!   `*_activity_list_html` snippets) and `revisions` (`revision_*`, `*_revision_list`).
//! - `record`: recording activities from the domain events; `store`: the `activity` table
//!   (its files listed in `store/mod.rs`); [`patch`]: the compact data.
#![forbid(unsafe_code)]

mod actions;
mod dashboard;
mod details;
pub mod difflib;
mod followers;
mod html;
mod maintenance;
mod params;
pub mod patch;
mod record;
mod revisions;
mod store;

use catalog_framework::migration;
use catalog_framework::prelude::*;

/// The plugin: its table and its settings.
pub struct ActivityPlugin;

/// `catalog.activity_list_limit` (default 31) and `catalog.activity_list_limit_max` (100),
/// read at start-up.
#[derive(Debug, Clone, Copy)]
pub struct ActivitySettings {
    pub list_limit: i64,
    pub list_limit_max: i64,
}

/// `catalog.hide_activity_from_users`: the users whose activity the lists leave out (CKAN's
/// `ckan.hide_activity_from_users`); unset, the site user.
#[derive(Debug, Clone, Default)]
pub struct HiddenUsers(pub Vec<String>);

const MIGRATIONS: &[Migration] = &[
    migration!("../migrations", "0001_activity"),
    migration!("../migrations", "0002_follower", portable),
    migration!("../migrations", "0003_dashboard", portable),
];

/// A positive integer setting (a TOML integer or, from the environment, a string).
fn setting(setup: &Setup<'_>, key: &str, default: i64) -> anyhow::Result<i64> {
    match setup.section(key) {
        Value::Null => Ok(default),
        v => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .filter(|n| *n > 0)
            .ok_or_else(|| anyhow::anyhow!("{key} must be a positive integer, not {v}")),
    }
}

impl Plugin for ActivityPlugin {
    fn name(&self) -> &'static str {
        "activity"
    }

    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        let list_limit = setting(setup, "catalog.activity_list_limit", 31)?;
        let list_limit_max = setting(setup, "catalog.activity_list_limit_max", 100)?;
        setup.insert(ActivitySettings {
            list_limit,
            list_limit_max,
        });
        let key = "catalog.hide_activity_from_users";
        let hidden: Vec<String> = match setup.section(key) {
            // CKAN's default: the site user (`get_site_user`), named after catalog.site_id.
            Value::Null => vec![setup.config.catalog.site_id.clone()],
            Value::String(s) => s
                .split([' ', ',', '\n', '\t'])
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect(),
            Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| anyhow::anyhow!("{key} must list user names, not {i}"))
                })
                .collect::<anyhow::Result<_>>()?,
            v => anyhow::bail!("{key} must be a list of user names, not {v}"),
        };
        setup.insert(HiddenUsers(hidden));
        setup.insert(store::LastActivities::default());
        Ok(())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }
}

register_plugin!(ActivityPlugin);
register_event_subscriber!("activity", record::RecordActivity);
