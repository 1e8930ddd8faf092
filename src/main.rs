//! The `catalog` binary: assembles the default plugins and runs the server or an admin command.
#![forbid(unsafe_code)]

mod cli;

// The linker drops plugin crates nothing names: keep every default plugin.
use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_dcat as _;
use catalog_plugin_legacy_api as _;
use catalog_plugin_related as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;

fn main() -> anyhow::Result<()> {
    cli::main()
}
