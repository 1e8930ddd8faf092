//! The application's integration tests, one binary (linking the whole application once rather
//! than once per suite). Each module is a suite of its own; `cargo test --test integration
//! <module>::` runs one. Every plugin of the default binary is linked, so every suite runs with
//! the default plugin set, as `catalog serve` does (a suite that needs fewer names them in
//! `catalog.plugins`).

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_datastore as _;
use catalog_plugin_dcat as _;
use catalog_plugin_harvest as _;
use catalog_plugin_legacy_api as _;
use catalog_plugin_related as _;
use catalog_plugin_schema as _;
use catalog_plugin_scheming as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;
use catalog_plugin_web as _;

mod ckan_action_tests;
mod commit_before_answer;
mod dropped_writes;
mod hardening;
mod index_passes;
mod jobs;
mod layout;
mod multinode;
mod openapi;
mod owner_org;
mod planner_stats;
mod registry;
mod relationship_race;
mod resource_writes;
mod scheming;
mod store_reads;
mod test_plugin;
mod tokens;
mod user_invite;
