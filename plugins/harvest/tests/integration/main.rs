//! The harvest plugin on SQLite and PostgreSQL: sources and their checks, the three
//! harvesters against real servers (another catalog over HTTP, files on a loopback server),
//! incremental runs and deletions, and the safety rules (addresses, sizes, bombs, loops,
//! timeouts).

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_dcat as _;
use catalog_plugin_harvest as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;

mod ckan;
mod dcat;
mod safety;
mod sources;
mod support;
