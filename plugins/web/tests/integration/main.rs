//! The web plugin's integration tests, one binary: the reading pages (`pages`) and the
//! publishing pages (`publish`), on SQLite and PostgreSQL; `common` is what both use.

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_dcat as _;
use catalog_plugin_harvest as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;
use catalog_plugin_web as _;

mod common;
mod pages;
mod publish;
