//! The `catalog` binary: assembles the default plugins and runs the server or an admin command.
#![forbid(unsafe_code)]

mod cli;

// The linker drops plugin crates nothing names: keep every default plugin.
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

/// mimalloc rather than glibc's malloc: the server allocates on every request from many
/// threads, and glibc's arena locks were a tenth of package_show's CPU (docs/BENCHMARKS.md,
/// "Scale (issue 14)").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    cli::main()
}
