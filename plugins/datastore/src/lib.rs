//! The DataStore (CKAN's `datastore` extension): the rows of a tabular resource in a table of
//! their own, written with `datastore_create` / `datastore_upsert` / `datastore_delete` /
//! `datastore_records_delete` and read with `datastore_search` and `datastore_info`, on SQLite
//! (a table per resource plus an FTS5 index) and PostgreSQL (a table per resource in the
//! schema `datastore`, a `_full_text` tsvector kept by a trigger, with a GIN index).
//!
//! Who may do what follows CKAN: writing needs `package_update` on the resource's dataset,
//! reading needs read access to the dataset (a private dataset's rows stay private). A
//! resource or dataset that is deleted loses its tables. See docs/DATASTORE.md.
//!
//! # Where things live
//!
//! - An action is in the file named by it, under `actions/`: `datastore_create.rs`,
//!   `datastore_upsert.rs`, `datastore_delete.rs` (with `datastore_records_delete`, one
//!   implementation), `datastore_info.rs`; `datastore_search` is the folder
//!   `actions/datastore_search/`, its steps one file each (`params`, `parse`, `plan`, `run`,
//!   `shape`). What the actions share is `actions/common.rs`.
//! - `datastore_search_sql` is `sql/`: the action in `sql/mod.rs`, the lexer `lex.rs`, the
//!   settings `settings.rs`, the tables a query names and who may read them `tables.rs`
//!   (its auth), a run per store `postgres.rs` and `sqlite.rs`, their answer `answer.rs`.
//! - `xloader_submit` and `xloader_status`, and the queueing of loads, are `loader/mod.rs`;
//!   the load job is `loader/job.rs`, its record `loader/state.rs`, the first pass over a
//!   file `loader/read.rs` (column types `loader/guess.rs`), the filling of the table
//!   `loader/write.rs`.
//! - The dump route (`/datastore/dump/{resource_id}`) is `dump.rs`; who may read or write is
//!   `auth.rs`; the tables themselves (create, alter, drop, rows, the table of tables) are
//!   `table.rs`, the field types and their values `types.rs`, and `filters` as SQL
//!   `filters.rs`; `params.rs` has the two field kinds the actions' parameters need that keep
//!   a `null` apart from a key not sent.
//!
//! Files import one way: the actions, `dump` and `sql` go down to `table`, `filters` and
//! `types`; `dump` and `sql` use the search's paging (`actions::search`, `rows_max`); the
//! steps of a search import only earlier steps. This file registers everything.
#![forbid(unsafe_code)]

mod actions;
mod auth;
mod dump;
mod filters;
mod loader;
mod params;
mod sql;
mod table;
mod types;

use catalog_framework::events::{Change, DomainEvent, Entity, EventSubscriber};
use catalog_framework::prelude::*;

/// The plugin: its migration (the table of tables, and on PostgreSQL the schema and the
/// full-text trigger function).
pub struct DatastorePlugin;

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: "0001_datastore",
        sqlite: include_str!("../migrations/0001_sqlite.sql"),
        postgres: include_str!("../migrations/0001_postgres.sql"),
    },
    Migration {
        version: "0002_datastore_load",
        // The same SQL on both stores.
        sqlite: include_str!("../migrations/0002_datastore_load.sql"),
        postgres: include_str!("../migrations/0002_datastore_load.sql"),
    },
    Migration {
        version: "0003_postgres_text",
        // PostgreSQL only: the loader's immutable text of a value.
        sqlite: "",
        postgres: include_str!("../migrations/0003_postgres_text.sql"),
    },
    Migration {
        version: "0004_datastore_alias",
        sqlite: include_str!("../migrations/0004_datastore_alias.sql"),
        postgres: include_str!("../migrations/0004_datastore_alias.sql"),
    },
];

impl Plugin for DatastorePlugin {
    fn name(&self) -> &'static str {
        "datastore"
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn switched_off_actions(&self, config: &Config) -> Vec<&'static str> {
        if sql::enabled(config) {
            Vec::new()
        } else {
            vec!["datastore_search_sql"]
        }
    }

    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        setup.insert(sql::SqlSearch::load(setup.config)?);
        Ok(())
    }
}

register_plugin!(DatastorePlugin);
register_routes!("datastore_dump", dump::routes);
register_auth!("datastore_create", auth::WriteAuth);
register_auth!("datastore_upsert", auth::WriteAuth);
register_auth!("datastore_delete", auth::WriteAuth);
register_auth!("datastore_records_delete", auth::WriteAuth);
register_auth!("datastore_search", auth::ReadAuth);
register_auth!("datastore_info", auth::ReadAuth);
register_auth!("datastore_search_sql", sql::SqlAuth);
register_auth!("xloader_submit", auth::WriteAuth);
register_auth!("xloader_status", auth::WriteAuth);

register_typed_actions! {
    write datastore_create(actions::DatastoreCreateParams) => actions::datastore_create;
    write datastore_upsert(actions::DatastoreUpsertParams) => actions::datastore_upsert;
    write datastore_delete(actions::DatastoreDeleteParams) => actions::datastore_delete;
    write datastore_records_delete(actions::DatastoreRecordsDeleteParams) => actions::datastore_records_delete;
    read datastore_info(actions::DatastoreInfoParams) => actions::datastore_info;
    read datastore_search(actions::DatastoreSearchParams) => actions::datastore_search;
    read datastore_search_sql(sql::DatastoreSearchSqlParams) => sql::datastore_search_sql;
    write xloader_submit(loader::XloaderSubmitParams) => loader::xloader_submit;
    read xloader_status(loader::XloaderStatusParams) => loader::xloader_status;
}

/// Drops the tables of resources that are deleted, directly or with their dataset, in the
/// deleting call's transaction.
struct DropTables;

#[async_trait]
impl EventSubscriber for DropTables {
    async fn on_event(&self, ctx: &mut ActionContext, event: &DomainEvent) -> CkanResult<()> {
        if !matches!(event.change, Change::Deleted | Change::Purged) {
            return Ok(());
        }
        let ids: Vec<String> = match event.entity {
            Entity::Resource => vec![event.id.clone()],
            Entity::Package => event
                .before
                .as_ref()
                .and_then(|d| d["resources"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|r| r["id"].as_str().map(str::to_string))
                .collect(),
            _ => return Ok(()),
        };
        let backend = ctx.app.store.backend;
        for id in ids {
            if let Some(meta) = table::load(ctx.db().await?, &id).await? {
                table::drop(ctx.db().await?, backend, &meta).await?;
            }
            loader::forget(ctx.db().await?, backend, &id).await?;
        }
        Ok(())
    }
}

register_event_subscriber!("datastore", DropTables);
