//! The application and the context one action call runs in.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use sqlx::AnyConnection;

use crate::config::Config;
use crate::db::Db;
use crate::error::{not_authorized, not_found, CkanError, CkanResult, ErrorKind};
use crate::events::DomainEvent;
use crate::registry::Registry;
use crate::store::Store;
use crate::store::{self as q, GroupRow, Lock, PackageBundle, PackageRow, Params, UserRow};

pub use crate::store::Principal;

/// Everything shared by all requests: config, store, frozen registry, data directory.
pub struct App {
    pub config: Config,
    pub store: Store,
    pub registry: Registry,
    pub data_dir: PathBuf,
    /// Where uploaded files live (`catalog.storage.*`).
    pub files: crate::files::FileStore,
    /// The client of server-side fetches (the registered fetcher `http`).
    pub fetcher: Arc<Box<dyn crate::fetch::Fetcher>>,
    /// What sends mail (the registered mailer `smtp`).
    pub mailer: Arc<Box<dyn crate::mail::Mailer>>,
    /// The search index: the backend chosen by `catalog.search.backend`, kept in step with
    /// the store by the host's indexer.
    pub search: Arc<dyn crate::search_index::SearchIndex>,
    /// What hears every committed write (the host's indexer), in order.
    pub commit_hooks: Vec<Arc<dyn crate::search_index::CommitHook>>,
    /// Rendered `package_show` dicts (embedded deployment only).
    pub package_cache: crate::cache::PackageCache,
    /// Committed writes the search index (and the `package_show` cache) may not have yet.
    pub index_lag: crate::search_index::IndexLag,
    /// What the enabled plugins keep for the app's lifetime (their settings, clients …).
    pub extensions: crate::plugin::Extensions,
    /// The site settings changed at run time (`config_option_update`).
    pub runtime: crate::runtime::RuntimeConfig,
    /// The background jobs' wake-up and chores of this process (its workers share them).
    pub jobs: crate::jobs::Jobs,
}

impl App {
    /// A runtime-editable site setting (`catalog.site_title` …) as it stands now.
    pub fn site_setting(&self, key: &str) -> String {
        self.runtime.get(&self.config, key).unwrap_or_default()
    }

    /// The site's title as it stands now (`config_option_update` may change it).
    pub fn site_title(&self) -> String {
        self.site_setting("catalog.site_title")
    }

    /// The site's description as it stands now.
    pub fn site_description(&self) -> String {
        self.site_setting("catalog.site_description")
    }

    /// A value a plugin kept at start-up ([`crate::plugin::Setup::insert`]).
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }
}

/// What axum handlers and plugin routes receive as state.
pub type AppState = Arc<App>;

/// A file sent in a multipart body, streamed to a temporary file under the data directory
/// (removed when the last clone is dropped).
#[derive(Debug, Clone)]
pub struct Upload {
    pub field: String,
    pub filename: String,
    pub content_type: Option<String>,
    /// Bytes received.
    pub size: u64,
    pub path: Arc<tempfile::TempPath>,
}

/// One top-level action call and the actions it calls in turn: one caller, one transaction.
pub struct ActionContext {
    pub app: AppState,
    pub user: Option<Principal>,
    /// CKAN's `ignore_auth`: set only by internal callers, never from HTTP.
    pub ignore_auth: bool,
    /// False for bulk internal readers (the search indexer): what they read is not kept in the
    /// shared `package_show` cache, where it would only push out what clients read.
    pub fill_caches: bool,
    /// CKAN's `allow_state_change`: a dataset's `state` may be set by a caller who is no
    /// sysadmin (the web's two-stage creation makes a draft and then activates it); set only
    /// by internal callers, never from HTTP.
    pub allow_state_change: bool,
    /// A background job's bulk write (a harvest's batch of datasets): no caller reads right
    /// after it, so the commit hooks that only serve read-your-writes (the search index's sync)
    /// are skipped, and the host's periodic sync applies many such writes at once. Set only by
    /// internal callers, never from HTTP.
    pub background: bool,
    pub uploads: Vec<Upload>,
    /// A read request's change-feed position (`X-Catalog-Seq` or the `catalog_seq` cookie:
    /// the client's last write, on this node or another) and when the request arrived. Its
    /// first search waits until this node's index has applied it, and until then the
    /// node-local `package_show` cache does not answer it (the store, shared by the nodes,
    /// does). Reads that touch neither wait for nothing: before, every read with the cookie
    /// waited for an index pass, so a client that keeps cookies (ckanapi's session) paid a
    /// pass on each read after each write.
    pub read_after: Option<(i64, std::time::Instant)>,
    /// True once a write action ran: the call then needs a transaction.
    write: bool,
    /// Action calls in progress in this context (nested calls included).
    depth: u32,
    /// Chained actions (wrappers) in progress: an action run by a wrapper may not commit
    /// before its answer, since the wrapper may write after it.
    wrappers: u32,
    /// The call's writes committed before its answer was built
    /// ([`ActionContext::commit_before_answer`]): it writes nothing more.
    committed: bool,
    /// Events delivered at that commit, for the after-commit subscribers at the call's end.
    delivered: Vec<DomainEvent>,
    /// The action called from outside (what domain events name as their cause).
    top_action: String,
    /// Domain events of this call, handed to the subscribers when it succeeds.
    events: Vec<DomainEvent>,
    /// Datasets this read call has read (found again by id or name), so that an action, its
    /// auth function and its dictization share one store read. At most `ROW_CACHE_ENTRIES`.
    bundles: Vec<Arc<PackageBundle>>,
    /// A SQLite write call's last dataset bundle read, good until its next statement (see
    /// [`ActionContext::package_bundle`]).
    last_bundle: Option<Arc<PackageBundle>>,
    /// True once the call enqueued a background job: the workers are woken after the commit.
    enqueued_jobs: bool,
    db: Db,
    _write_guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    /// Counts this call among the writes in progress (a group commit waits for them).
    _writer: Option<crate::store::WriterGuard>,
    /// When the call began writing and when it got the store's write lock (for the log; the
    /// same instant until its first query).
    write_times: Option<(std::time::Instant, std::time::Instant)>,
}

impl ActionContext {
    pub fn new(app: AppState, user: Option<Principal>) -> ActionContext {
        ActionContext {
            app,
            user,
            ignore_auth: false,
            fill_caches: true,
            allow_state_change: false,
            background: false,
            uploads: Vec::new(),
            read_after: None,
            write: false,
            depth: 0,
            wrappers: 0,
            committed: false,
            delivered: Vec::new(),
            top_action: String::new(),
            events: Vec::new(),
            bundles: Vec::new(),
            last_bundle: None,
            enqueued_jobs: false,
            db: Db::None,
            _write_guard: None,
            _writer: None,
            write_times: None,
        }
    }

    pub fn config(&self) -> &Config {
        &self.app.config
    }

    pub fn is_sysadmin(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.sysadmin)
    }

    pub fn user_id(&self) -> Option<&str> {
        self.user.as_ref().map(|u| u.id.as_str())
    }

    /// The caller's name, `""` for anonymous (as in CKAN's messages).
    pub fn user_name(&self) -> &str {
        self.user.as_ref().map(|u| u.name.as_str()).unwrap_or("")
    }

    /// True once the call writes: its reads then see uncommitted data and must bypass caches.
    pub fn in_write(&self) -> bool {
        self.write
    }

    /// True when some enabled plugin subscribes to domain events: an action may skip building
    /// an event's records otherwise.
    pub fn wants_events(&self) -> bool {
        crate::events::subscribers(&self.app).next().is_some()
    }

    /// Records a domain event of this call (see [`crate::events`]); the subscribers see it
    /// before the call commits. `action` and `actor` are filled in from the call.
    pub fn emit(
        &mut self,
        entity: crate::events::Entity,
        change: crate::events::Change,
        id: &str,
        before: Option<Value>,
        after: Option<Value>,
    ) {
        if self.committed {
            // The events were delivered at `commit_before_answer`; one emitted after it would
            // be dropped without a word.
            tracing::error!(action = %self.top_action, id, "an event was emitted after the call committed; it is not delivered");
            return;
        }
        if !self.wants_events() {
            return;
        }
        self.events.push(DomainEvent {
            entity,
            change,
            id: id.to_string(),
            actor: self.user.as_ref().map(|u| u.id.clone()),
            action: self.top_action.clone(),
            before,
            after,
        });
    }

    /// Hands the call's events to the subscribers, in its transaction. Events the subscribers
    /// emit in turn are handed on too, a few rounds deep.
    async fn deliver_events(&mut self) -> CkanResult<Vec<DomainEvent>> {
        let mut delivered = Vec::new();
        for _round in 0..EVENT_ROUNDS {
            let batch = std::mem::take(&mut self.events);
            if batch.is_empty() {
                break;
            }
            let subscribers: Vec<_> = crate::events::subscribers(&self.app).cloned().collect();
            // Subscribers' own action calls are nested calls of this one: the cause stays the
            // top-level action and their input is not checked again.
            self.depth += 1;
            let mut outcome = Ok(());
            'events: for event in &batch {
                for s in &subscribers {
                    outcome = s.on_event(self, event).await;
                    if outcome.is_err() {
                        break 'events;
                    }
                }
            }
            self.depth -= 1;
            outcome?;
            delivered.extend(batch);
        }
        if !self.events.is_empty() {
            return Err(crate::error::internal(
                "domain event subscribers kept emitting events",
            ));
        }
        Ok(delivered)
    }

    /// The lock a read takes in this call: none outside writes and on SQLite (whose write
    /// transaction excludes every other writer), `wanted` in a PostgreSQL write transaction.
    fn lock(&self, wanted: Lock) -> Lock {
        if self.write && self.app.store.backend == crate::store::Backend::Postgres {
            wanted
        } else {
            Lock::None
        }
    }

    /// A dataset's row by id or name, for reading: from the `package_show` cache when it can
    /// be trusted (outside write transactions), else from the store; in a write call the row
    /// is share-locked until commit, so it cannot change under the call.
    pub async fn package_row(&mut self, id_or_name: &str) -> CkanResult<Option<PackageRow>> {
        if !self.write {
            if self.local_copies_current() {
                if let Some(hit) = self.app.package_cache.get(id_or_name) {
                    return Ok(Some(hit.row.clone()));
                }
            }
            return Ok(self
                .package_bundle(id_or_name)
                .await?
                .map(|b| b.row.clone()));
        }
        let lock = self.lock(Lock::Share);
        if lock == Lock::None {
            if let Some(b) = self.last_bundle_of(id_or_name) {
                return Ok(Some(b.row.clone()));
            }
        }
        Ok(q::package_by_ref_locked(self.db().await?, id_or_name, lock).await?)
    }

    /// The write call's last bundle read when it is of this dataset and no statement ran since.
    fn last_bundle_of(&self, id_or_name: &str) -> Option<Arc<PackageBundle>> {
        self.last_bundle
            .as_ref()
            .filter(|b| b.row.id == id_or_name || b.row.name == id_or_name)
            .cloned()
    }

    /// Whether node-local copies of the store (the `package_show` cache, which the index
    /// follower invalidates) hold every write this call must see: the writes acknowledged by
    /// this process before it, and the client's last write on another node
    /// ([`ActionContext::read_after`]).
    pub fn local_copies_current(&self) -> bool {
        !self.app.index_lag.pending()
            && self
                .read_after
                .is_none_or(|(seq, _)| self.app.search.applied_through(seq))
    }

    /// Searches the index once it has every write acknowledged before this call (a search
    /// right after a write sees it; see [`crate::search_index::SearchIndex::settle`]) and
    /// the client's last write on another node ([`ActionContext::read_after`]).
    pub async fn search(
        &mut self,
        req: &crate::search::SearchRequest,
    ) -> CkanResult<crate::search::SearchHits> {
        let app = self.app.clone();
        if let Some((seq, arrived)) = self.read_after.take() {
            self.release_read_connection();
            let limit = std::time::Duration::from_millis(
                app.config.catalog.search.read_your_writes_wait_ms,
            );
            app.search.catch_up(&app, seq, arrived, limit).await;
        }
        // Before ADR 0012 the write itself waited for its index pass, without a bound; a
        // loaded machine can take seconds for one, so this waits longer than a cross-node read.
        let limit = std::time::Duration::from_millis(
            app.config
                .catalog
                .search
                .read_your_writes_wait_ms
                .max(SETTLE_WAIT_MS),
        );
        if app.index_lag.pending() {
            // Waiting holds no pooled connection: the pass it waits for reads the store, and
            // searches that waited holding connections could take them all.
            self.release_read_connection();
            app.search.settle(&app, limit).await;
        }
        app.search.search(req).await
    }

    /// A dataset's row with its organization and groups (what its dict shows beside the
    /// record), read once per read call by one statement; a write call reads it afresh once it
    /// ran any statement since its last read of the dataset.
    pub async fn package_bundle(
        &mut self,
        id_or_name: &str,
    ) -> CkanResult<Option<Arc<PackageBundle>>> {
        if !self.write {
            if let Some(b) = self
                .bundles
                .iter()
                .find(|b| b.row.id == id_or_name || b.row.name == id_or_name)
            {
                return Ok(Some(b.clone()));
            }
        } else if let Some(b) = self.last_bundle_of(id_or_name) {
            return Ok(Some(b));
        }
        let Some(bundle) = q::package_bundle_by_ref(self.db().await?, id_or_name).await? else {
            return Ok(None);
        };
        let bundle = Arc::new(bundle);
        if !self.write && self.bundles.len() < ROW_CACHE_ENTRIES {
            self.bundles.push(bundle.clone());
        }
        if self.write && self.lock(Lock::Share) == Lock::None {
            // SQLite: the write call's other reads of this dataset until its next statement
            // (a write in between would change it) are answered from this one: an event's
            // subscriber that reads the dataset and then its `package_show` reads it once.
            // Not on PostgreSQL, where a write call's row read takes a row lock.
            self.last_bundle = Some(bundle.clone());
        }
        Ok(Some(bundle))
    }

    /// Lets this read call use a bundle read beforehand (a batch read of many datasets) as if
    /// it had read it itself.
    pub fn remember_bundle(&mut self, bundle: Arc<PackageBundle>) {
        if !self.write && self.bundles.len() < ROW_CACHE_ENTRIES {
            self.bundles.push(bundle);
        }
    }

    /// A dataset's row by id or name, for changing it: locked until commit, so that concurrent
    /// read-modify-writes of one dataset (its resources live in its record) run one after the
    /// other and none is lost. In a call that does not write (a read call, or a write that
    /// committed before its answer) there is nothing to lock: it is [`ActionContext::package_row`],
    /// so the dictization after it reads the dataset from the same statement.
    pub async fn package_for_update(&mut self, id_or_name: &str) -> CkanResult<Option<PackageRow>> {
        if !self.write {
            return self.package_row(id_or_name).await;
        }
        let lock = self.lock(Lock::Update);
        Ok(q::package_by_ref_locked(self.db().await?, id_or_name, lock).await?)
    }

    /// A group's or organization's row, for reading (share-locked in a write call).
    pub async fn group_row(&mut self, id_or_name: &str) -> CkanResult<Option<GroupRow>> {
        let lock = self.lock(Lock::Share);
        Ok(q::group_by_ref_locked(self.db().await?, id_or_name, lock).await?)
    }

    /// [`ActionContext::group_row`] for a check before the call's first write that tolerates
    /// a change in between (the organization a dataset write names): on SQLite it runs outside
    /// the write lock ([`ActionContext::read_db`]); on PostgreSQL it is share-locked as
    /// `group_row`.
    pub async fn group_row_for_check(&mut self, id_or_name: &str) -> CkanResult<Option<GroupRow>> {
        let lock = self.lock(Lock::Share);
        Ok(q::group_by_ref_locked(self.read_db().await?, id_or_name, lock).await?)
    }

    /// A group's or organization's row, for changing it or its memberships (locked until commit).
    pub async fn group_for_update(&mut self, id_or_name: &str) -> CkanResult<Option<GroupRow>> {
        let lock = self.lock(Lock::Update);
        Ok(q::group_by_ref_locked(self.db().await?, id_or_name, lock).await?)
    }

    /// A user's row, for reading (share-locked in a write call).
    pub async fn user_row(&mut self, id_or_name: &str) -> CkanResult<Option<UserRow>> {
        let lock = self.lock(Lock::Share);
        Ok(q::user_by_ref_locked(self.db().await?, id_or_name, lock).await?)
    }

    /// A user's row, for changing it (locked until commit).
    pub async fn user_for_update(&mut self, id_or_name: &str) -> CkanResult<Option<UserRow>> {
        let lock = self.lock(Lock::Update);
        Ok(q::user_by_ref_locked(self.db().await?, id_or_name, lock).await?)
    }

    /// A connection for a read that may run before the call's first write. On SQLite, in a
    /// write call that has not begun its transaction yet, it is a pooled connection outside
    /// it: the single-writer lock is then taken at the call's first [`ActionContext::db`]
    /// instead, so that the checks before a write (is the name free, does the organization
    /// exist) run beside another call's writes rather than behind them (issue 28). What such
    /// a read saw may change before the write: a name taken meanwhile fails the write on the
    /// unique key and the call runs again ([`ActionContext::run_top`]); a read whose answer
    /// the write depends on (read-modify-write) must use `db` or a `*_for_update` reader.
    /// Otherwise (PostgreSQL, a read call, a transaction begun) it is [`ActionContext::db`].
    pub async fn read_db(&mut self) -> CkanResult<&mut AnyConnection> {
        let early_read = self.write
            && !self.committed
            && self.app.store.backend == crate::store::Backend::Sqlite
            && !matches!(self.db, Db::Tx(_));
        if !early_read {
            return self.db().await;
        }
        self.db
            .get(&self.app.store, false)
            .await
            .map_err(CkanError::from)
    }

    /// The connection of this call: a transaction if the call writes.
    pub async fn db(&mut self) -> CkanResult<&mut AnyConnection> {
        // The statement about to run may change the dataset last read.
        self.last_bundle = None;
        if self.committed && self.write {
            return Err(crate::error::internal(
                "an action wrote after its writes were committed",
            ));
        }
        if self.write && matches!(self.db, Db::Conn(_)) {
            // The connection of reads before the first write (`read_db`) goes back; the
            // transaction takes its own.
            self.db = Db::None;
        }
        let write = self.write;
        if write && self._write_guard.is_none() && matches!(self.db, Db::None) {
            // The single-writer lock (SQLite) is taken with the transaction, at the call's
            // first query: its checks of the input before that (validation, schemas) run
            // while another call writes.
            self._write_guard = self.app.store.lock_writes().await;
            if let Some((_, locked)) = self.write_times.as_mut() {
                *locked = std::time::Instant::now();
            }
        }
        self.db
            .get(&self.app.store, write)
            .await
            .map_err(CkanError::from)
    }

    /// Enqueues a background job in this call's transaction (the call becomes a write): the
    /// job exists exactly when the call's writes commit, and this process's workers are woken
    /// after the commit. `kind` must have a registered [`JobHandler`](crate::jobs::JobHandler).
    /// Returns the job's id.
    ///
    /// ```ignore
    /// ctx.enqueue_job("reindex_dataset", json!({"id": id}), JobOptions::default()).await?;
    /// ```
    pub async fn enqueue_job(
        &mut self,
        kind: &str,
        payload: Value,
        opts: crate::jobs::JobOptions,
    ) -> CkanResult<String> {
        self.begin_write().await;
        let app = self.app.clone();
        let row = crate::jobs::enqueue_on(self.db().await?, &app, kind, &payload, &opts).await?;
        self.enqueued_jobs = true;
        tracing::debug!(job = %row.id, kind, queue = %row.queue, "enqueued background job");
        Ok(row.id)
    }

    /// Gives a reading call's connection back to the pool, so that a long wait that needs no
    /// store (an SMTP server answering) holds none. The next query takes a connection again.
    /// A writing call keeps its transaction.
    pub fn release_read_connection(&mut self) {
        if !self.write {
            self.db = Db::None;
        }
    }

    /// Marks the call as writing, so that its queries from here on run in one transaction
    /// (committed when the top-level call succeeds) and, on SQLite, behind the single-writer
    /// lock (taken at the first query). Write actions begin so before their first query; an
    /// action registered without a transaction (it reads, waits on something outside the
    /// store, then writes) calls this before writing. A plain connection it read on is given
    /// back first.
    pub async fn begin_write(&mut self) {
        if !self.write {
            if matches!(self.db, Db::Conn(_)) {
                self.db = Db::None;
            }
            self.write = true;
            self._writer = Some(self.app.store.writer_started());
            // The store's write lock follows with the transaction, at the first query
            // (`db`).
            let began = std::time::Instant::now();
            self.write_times = Some((began, began));
        }
    }

    /// CKAN's `check_access`: ignore_auth, deleted users, the sysadmin bypass, anonymous access,
    /// then the registered auth function. An action without one is sysadmin-only.
    pub async fn check_access(&mut self, action: &str, data: &Params) -> CkanResult<()> {
        if self.ignore_auth {
            return Ok(());
        }
        if let Some(u) = &self.user {
            if u.state == "deleted" {
                return Err(not_authorized(format!(
                    "User {} not authorized to {action}",
                    u.name
                )));
            }
            if u.sysadmin {
                return Ok(());
            }
        }
        let registry_auth = self.app.registry.auth(action).cloned();
        let Some(auth) = registry_auth else {
            return Err(not_authorized(format!(
                "User {} not authorized to {action}",
                self.user_name()
            )));
        };
        if self.user.is_none() && !auth.allow_anonymous() {
            return Err(not_authorized(format!(
                "Action {action} requires an authenticated user"
            )));
        }
        auth.check(self, data).await
    }

    /// Calls another action in this context (same caller, same transaction).
    pub async fn call(&mut self, action: &str, params: Params) -> CkanResult<Value> {
        self.dispatch(action, params, false)
            .await
            .map(crate::registry::Answer::into_value)
    }

    /// Runs an action: its answer (`serialized`: as the action gives it, possibly serialized
    /// already; else as a value).
    async fn dispatch(
        &mut self,
        action: &str,
        params: Params,
        serialized: bool,
    ) -> CkanResult<crate::registry::Answer> {
        let act = self
            .app
            .registry
            .action(action)
            .cloned()
            .ok_or_else(|| not_found("Action function not found"))?;
        // What enters from outside is checked once; nested calls pass on what the outer action
        // built from checked input or from the store.
        if self.depth == 0 {
            action.clone_into(&mut self.top_action);
            crate::input::check_input(&params, self.app.config.catalog.limits.max_list_items)?;
        }
        if act.transactional() {
            self.begin_write().await;
        }
        self.depth += 1;
        let result = if serialized {
            act.answer(self, params).await
        } else {
            act.run(self, params)
                .await
                .map(crate::registry::Answer::Value)
        };
        self.depth -= 1;
        result
    }

    /// Calls another action as CKAN's internal calls with `ignore_auth` do: no auth check runs
    /// inside it (same caller, same transaction).
    pub async fn call_ignoring_auth(&mut self, action: &str, params: Params) -> CkanResult<Value> {
        let saved = std::mem::replace(&mut self.ignore_auth, true);
        let result = self.call(action, params).await;
        self.ignore_auth = saved;
        result
    }

    /// Whether an enabled plugin registered an action of this name (what another plugin's
    /// optional feature may call).
    pub fn has_action(&self, action: &str) -> bool {
        self.app.registry.action(action).is_some()
    }

    /// Runs a top-level action call and commits its transaction when it succeeds.
    ///
    /// A call that lost a race in the store (a deadlock, a serialization failure, a unique key
    /// taken by a concurrent commit) was rolled back whole; it runs again, from the start and
    /// in a new transaction, so it sees the winner's write: a name taken meanwhile then gets
    /// the action's own validation message instead of a database error.
    pub async fn run_top(self, action: &str, params: Params) -> CkanResult<Value> {
        self.run_top_answer(action, params)
            .await
            .map(crate::registry::Answer::into_value)
    }

    /// [`ActionContext::run_top`], with the action's answer as it gives it (serialized
    /// already, or a value): what the HTTP layer writes out.
    pub async fn run_top_answer(
        self,
        action: &str,
        params: Params,
    ) -> CkanResult<crate::registry::Answer> {
        // Only writes can lose a race: a read runs once, without keeping a copy of its params.
        let writes = self
            .app
            .registry
            .action(action)
            .is_some_and(|a| a.transactional());
        if !writes {
            return self.run_once(action, params).await;
        }
        let app = self.app.clone();
        let user = self.user.clone();
        let ignore_auth = self.ignore_auth;
        let fill_caches = self.fill_caches;
        let allow_state_change = self.allow_state_change;
        let background = self.background;
        let uploads = self.uploads.clone();
        let mut ctx = self;
        let mut attempt = 0u32;
        let mut last_was_duplicate = false;
        let started = std::time::Instant::now();
        loop {
            let e = match ctx.run_once(action, params.clone()).await {
                Err(e) if e.kind == ErrorKind::Conflict => e,
                other => return other,
            };
            // A unique key taken by a concurrent commit is settled by one more run (it then
            // sees the winner's row); a duplicate that persists run after run is not a race.
            // Counted apart from the other conflicts: a run that lost a deadlock first and then
            // met the winner's key still gets its one more run.
            let duplicate = e.message() == Some(crate::error::DUPLICATE_KEY);
            let persists = duplicate && last_was_duplicate;
            last_was_duplicate = duplicate;
            // The budget is in time as well as in runs: a call that keeps losing is answered
            // within seconds, whatever the delays and lock waits added up to.
            if persists || attempt >= CONFLICT_RETRIES || started.elapsed() > CONFLICT_RETRY_BUDGET
            {
                tracing::warn!(action, attempt, error = %e, "store conflict persisted");
                return Err(crate::error::validation_message(if duplicate {
                    "A record with this id or name already exists"
                } else {
                    "The data was changed by another request at the same time; please try again"
                }));
            }
            attempt += 1;
            tracing::debug!(action, attempt, "store conflict: running the call again");
            tokio::time::sleep(retry_delay(attempt)).await;
            ctx = ActionContext::new(app.clone(), user.clone());
            ctx.ignore_auth = ignore_auth;
            ctx.fill_caches = fill_caches;
            ctx.allow_state_change = allow_state_change;
            ctx.background = background;
            ctx.uploads = uploads.clone();
        }
    }

    async fn run_once(
        mut self,
        action: &str,
        params: Params,
    ) -> CkanResult<crate::registry::Answer> {
        let v = match self.dispatch(action, params, true).await {
            Ok(v) => v,
            // Its writes stand: running the call again would write them twice.
            Err(e) if self.committed && e.kind == ErrorKind::Conflict => {
                return Err(crate::error::internal(e.to_string()))
            }
            Err(e) => return Err(e),
        };
        self.commit_top(action).await?;
        Ok(v)
    }

    /// Commits the call's writes now, before the action builds its answer, when this is a
    /// top-level write action run by no wrapper: its events are delivered, the transaction
    /// commits, the write lock (SQLite's single writer) is let go and the commit hooks run, so
    /// that dictizing the answer (reading the written dataset back, its organization …) runs
    /// beside the next writer instead of ahead of it (issue 28). Anywhere else (a nested call,
    /// an action a plugin wraps, a call that wrote nothing) it does nothing and the commit
    /// comes when the top-level call ends, as always. After it the call reads (committed
    /// data, on a connection of its own) and may not write: a write fails.
    ///
    /// ```ignore
    /// write(ctx, &doc).await?;
    /// ctx.commit_before_answer().await?;
    /// show(ctx, &id).await
    /// ```
    pub async fn commit_before_answer(&mut self) -> CkanResult<()> {
        if self.depth != 1 || self.wrappers > 0 || !self.write || self.committed {
            return Ok(());
        }
        let action = self.top_action.clone();
        self.commit_writes(&action).await?;
        self.write = false;
        self.committed = true;
        self.bundles.clear();
        self.last_bundle = None;
        Ok(())
    }

    /// A chained action runs the action it wraps (see [`ActionContext::commit_before_answer`]).
    pub(crate) fn enter_wrapper(&mut self) {
        self.wrappers += 1;
    }

    pub(crate) fn leave_wrapper(&mut self) {
        self.wrappers -= 1;
    }

    /// Runs `work` as a top-level write of its own that is no action (a background job's
    /// write, such as the DataStore loader swapping in a loaded table): one transaction
    /// (behind SQLite's writer lock), the events it emits delivered in it, then the commit,
    /// the commit hooks and the after-commit subscribers, as for an action. An error rolls
    /// everything back. `name` stands for the action's name in events and logs.
    ///
    /// ```ignore
    /// ActionContext::new(app.clone(), None)
    ///     .run_write("datastore_load", |ctx| Box::pin(async move { /* ctx.db(), ctx.call… */ Ok(Value::Null) }))
    ///     .await?;
    /// ```
    pub async fn run_write<F>(mut self, name: &str, work: F) -> CkanResult<Value>
    where
        F: for<'c> FnOnce(
                &'c mut ActionContext,
            ) -> futures::future::BoxFuture<'c, CkanResult<Value>>
            + Send,
    {
        name.clone_into(&mut self.top_action);
        self.begin_write().await;
        self.depth += 1;
        let v = work(&mut self).await?;
        self.depth -= 1;
        self.commit_top(name).await?;
        Ok(v)
    }

    /// Ends a top-level call that succeeded: delivers its events, commits, lets the commit hooks
    /// and after-commit subscribers hear it, wakes the workers for the jobs it enqueued.
    async fn commit_top(mut self, action: &str) -> CkanResult<()> {
        if !self.committed {
            self.commit_writes(action).await?;
        }
        if self.enqueued_jobs {
            self.app.jobs.wake();
        }
        // Outside the write lock, once search sees the change.
        for event in &self.delivered {
            for s in crate::events::subscribers(&self.app) {
                s.after_commit(&self.app, event).await;
            }
        }
        Ok(())
    }

    /// Delivers the call's events, commits its transaction, lets the next writer in and the
    /// commit hooks hear the write; the delivered events are kept for the after-commit
    /// subscribers.
    async fn commit_writes(&mut self, action: &str) -> CkanResult<()> {
        let events = if self.events.is_empty() {
            Vec::new()
        } else {
            self.deliver_events().await?
        };
        let db = std::mem::take(&mut self.db);
        db.commit().await.map_err(CkanError::from)?;
        let committed = std::time::Instant::now();
        drop(self._writer.take());
        if self.write && !self.background {
            // Before the answer: a search or `package_show` from now on waits for the index
            // (and its cache invalidation) to have this write.
            self.app.index_lag.note_commit();
        }
        if self.write {
            // Let the next writer in, then let the commit hooks hear the write before
            // answering (the host's indexer brings the index up to it: read-your-writes).
            drop(self._write_guard.take());
            for hook in &self.app.commit_hooks {
                if self.background && hook.read_your_writes() {
                    continue;
                }
                if let Err(e) = hook.after_write_commit(&self.app).await {
                    tracing::error!(action, hook = hook.name(), error = %e, "a commit hook failed; the write stands");
                }
            }
            if let Some((began, locked)) = self.write_times {
                let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
                tracing::debug!(
                    action,
                    lock_wait_ms = ms(locked - began),
                    locked_ms = ms(committed - locked),
                    hooks_ms = ms(committed.elapsed()),
                    "write committed"
                );
            }
        }
        self.delivered = events;
        Ok(())
    }
}

/// Datasets a read call remembers (a search page dictizes at most `rows_max` of them).
const ROW_CACHE_ENTRIES: usize = 64;

/// How many rounds of events emitted by subscribers are delivered before giving up.
const EVENT_ROUNDS: usize = 4;

/// At least this long (ms) a search waits for the index to have the writes acknowledged before
/// it.
const SETTLE_WAIT_MS: u64 = 15_000;

/// How often a call that lost a race in the store runs again before giving up.
const CONFLICT_RETRIES: u32 = 10;
/// How long a call may keep running again after losing races.
const CONFLICT_RETRY_BUDGET: std::time::Duration = std::time::Duration::from_secs(20);

/// A short, growing, jittered pause before running a call again, so that racing calls
/// spread out instead of colliding again.
fn retry_delay(attempt: u32) -> std::time::Duration {
    let base = 2u64 << attempt.min(6);
    let jitter = rand::random::<u64>() % base;
    std::time::Duration::from_millis(base + jitter)
}
