//! The DataStore plugin's integration tests, one binary: the actions (`datastore`), the loader
//! (`loader`) and `datastore_search_sql` (`search_sql`), each on SQLite and PostgreSQL.

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_datastore as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;

mod datastore;
mod loader;
mod search_sql;
