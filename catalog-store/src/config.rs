//! Configuration: built-in defaults < a TOML file < environment variables.
//!
//! Keys are written with the seeds' dotted names (`catalog.auth.allow_dataset_collaborators`).
//! In TOML a dotted key is a nested table, so both `catalog.site_url = "…"` and a `[catalog]`
//! table work. Environment variables map by replacing each `.` with `__` and upper-casing:
//! `CATALOG__AUTH__ALLOW_DATASET_COLLABORATORS=true`.
//!
//! CKAN's spelling is accepted too: `ckan.*` and `ckanext.*` keys (and `CKAN__*` /
//! `CKANEXT__*` variables) are read as `catalog.*` and `catalogext.*`; where both spellings
//! set a key, the seeds' spelling wins.

use std::path::Path;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Config {
    pub catalog: CatalogConfig,
    pub catalogext: CatalogExtConfig,
    /// CKAN's `app_instance_uuid`: the last fallback of the DCAT catalog URI.
    pub app_instance_uuid: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct CatalogConfig {
    pub site_url: String,
    pub site_title: String,
    pub site_description: String,
    pub site_id: String,
    pub locale_default: String,
    pub email_to: Option<String>,
    pub hide_version: bool,
    pub auth: AuthConfig,
    pub search: SearchConfig,
    pub group_and_organization_list_max: i64,
    pub group_and_organization_list_all_fields_max: i64,
    pub extra_resource_fields: Vec<String>,
    /// Largest accepted request body, in bytes (uploads included).
    pub max_request_bytes: usize,
    /// Longest accepted string value of any dataset, group or user field, in characters.
    pub max_field_chars: usize,
    /// Connection limits and timeouts of the HTTP server.
    pub server: ServerConfig,
    /// Bounds on what one request may hold (list lengths).
    pub limits: LimitsConfig,
    /// Memory the in-process caches may hold.
    pub cache: CacheConfig,
    /// Background jobs: the server's workers and the job queue's settings.
    pub jobs: JobsConfig,
    /// Fetches the server makes itself (the DataStore loader, harvesters): timeouts, size cap
    /// and which addresses may be reached.
    pub fetch: FetchConfig,
    /// Outgoing mail (`user_invite`): CKAN's `smtp.*` settings.
    pub smtp: SmtpConfig,
    /// Where uploaded files live: the local directory (default) or an S3-compatible object
    /// store shared by every node.
    pub storage: StorageConfig,
    /// CKAN's `ckan.storage_path`: the local file store's directory (files under
    /// `<storage_path>/resources/`); unset: the data directory.
    pub storage_path: Option<std::path::PathBuf>,
    /// The plugins to enable (CKAN's `ckan.plugins`); unset: every plugin enabled by default.
    pub plugins: Option<crate::model::PluginList>,
    /// The other `catalog.*` keys, kept for the plugins that read them in their `configure`
    /// hook (`catalog.activity_list_limit` …).
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl Default for CatalogConfig {
    fn default() -> Self {
        CatalogConfig {
            site_url: "http://127.0.0.1:5000".into(),
            site_title: "Catalog".into(),
            site_description: String::new(),
            site_id: "default".into(),
            locale_default: "en".into(),
            email_to: None,
            hide_version: false,
            auth: AuthConfig::default(),
            search: SearchConfig::default(),
            group_and_organization_list_max: 1000,
            group_and_organization_list_all_fields_max: 25,
            extra_resource_fields: Vec::new(),
            max_request_bytes: 100 * 1024 * 1024,
            max_field_chars: 100_000,
            server: ServerConfig::default(),
            limits: LimitsConfig::default(),
            cache: CacheConfig::default(),
            jobs: JobsConfig::default(),
            fetch: FetchConfig::default(),
            smtp: SmtpConfig::default(),
            storage: StorageConfig::default(),
            storage_path: None,
            plugins: None,
            other: serde_json::Map::new(),
        }
    }
}

/// `catalog.smtp.*` (CKAN's `smtp.*`): the SMTP server mail is sent through.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct SmtpConfig {
    /// `host` or `host:port` (`[::1]:587` for IPv6); CKAN's default `localhost`, port 25.
    pub server: String,
    /// Upgrade the connection with STARTTLS before authenticating (the server must offer it).
    pub starttls: bool,
    /// Log in with `AUTH PLAIN` when set (with `password`).
    pub user: Option<String>,
    pub password: Option<String>,
    /// The sender address; unset: `noreply@<host of site_url>`.
    pub mail_from: Option<String>,
    /// The `Reply-To` header, when set.
    pub reply_to: Option<String>,
    /// Seconds the whole SMTP conversation may take (connect, send, quit).
    pub timeout_secs: u64,
}

impl Default for SmtpConfig {
    fn default() -> Self {
        SmtpConfig {
            server: "localhost".into(),
            starttls: false,
            user: None,
            password: None,
            mail_from: None,
            reply_to: None,
            timeout_secs: 10,
        }
    }
}

/// `catalog.cache.*`: the in-process caches' memory budgets.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheConfig {
    /// Bytes (estimated) the `package_show` cache of the embedded deployment may hold; 0 turns
    /// it off.
    pub package_show_bytes: usize,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            package_show_bytes: 64 * 1024 * 1024,
        }
    }
}

/// `catalog.jobs.*`: background jobs (docs/JOBS.md). `timeout` and `default_list_limit` are
/// CKAN's `ckan.jobs.*` settings of the same names.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct JobsConfig {
    /// Workers the server process runs; 0 leaves jobs to `catalog jobs worker` processes.
    pub workers: usize,
    /// The queues the server's workers take jobs from, the first emptied first.
    pub queues: Vec<String>,
    /// Milliseconds an idle worker waits before looking for jobs again (a job enqueued by
    /// this process wakes its workers at once).
    pub poll_interval_ms: u64,
    /// Seconds without a heartbeat after which a running job counts as abandoned (its worker
    /// crashed or was killed) and runs again. Workers heartbeat every third of it.
    pub stale_after_secs: u64,
    /// Seconds a job may run before it fails (CKAN's `ckan.jobs.timeout`).
    pub timeout: u64,
    /// Attempts a job gets when its enqueuer does not say.
    pub max_attempts: u32,
    /// Milliseconds before a failed job's retry, doubled per attempt made.
    pub retry_base_ms: u64,
    /// Seconds a stopping worker lets its job finish before giving it back to the queue.
    pub shutdown_grace_secs: u64,
    /// Jobs `job_list` returns when no `limit` is given (CKAN's `ckan.jobs.default_list_limit`).
    pub default_list_limit: i64,
    /// Seconds a finished job is kept (`job_show` still finds it), RQ's `result_ttl`.
    pub keep_finished_secs: u64,
    /// Seconds a failed job is kept with its error, RQ's `failure_ttl`.
    pub keep_failed_secs: u64,
}

impl Default for JobsConfig {
    fn default() -> Self {
        JobsConfig {
            workers: 1,
            queues: vec!["default".into()],
            poll_interval_ms: 1000,
            stale_after_secs: 60,
            timeout: 180,
            max_attempts: 3,
            retry_base_ms: 10_000,
            shutdown_grace_secs: 10,
            default_list_limit: 200,
            keep_finished_secs: 24 * 3600,
            keep_failed_secs: 30 * 24 * 3600,
        }
    }
}

/// `catalog.fetch.*`: what the server may fetch on its own (docs/SECURITY.md, "Server-side
/// fetches"). Only `http` and `https` addresses are fetched, and never one that resolves (at
/// first or after a redirect) to a loopback, private, link-local, shared or metadata address,
/// unless its host is listed in `allowed_hosts`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct FetchConfig {
    /// Seconds to open a connection.
    pub connect_timeout_secs: u64,
    /// Seconds the peer may stay silent while a response is read.
    pub read_timeout_secs: u64,
    /// Seconds one fetch may take in all, redirects included.
    pub total_timeout_secs: u64,
    /// Slowest transfer kept, in bytes per second on average, checked once a body has been
    /// read for `min_rate_after_secs` (a peer that trickles a byte now and then is dropped);
    /// 0: no minimum.
    pub min_bytes_per_sec: u64,
    /// Seconds of a body's reading before `min_bytes_per_sec` applies.
    pub min_rate_after_secs: u64,
    /// Largest body kept, in bytes, counted as received.
    pub max_bytes: u64,
    /// Redirects followed, each checked like the first address.
    pub max_redirects: usize,
    /// Hosts (names, addresses or CIDR ranges such as `10.0.0.0/8`) that may be fetched even
    /// though they are loopback or private: an operator's own file server.
    pub allowed_hosts: Vec<String>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            connect_timeout_secs: 10,
            read_timeout_secs: 30,
            total_timeout_secs: 300,
            min_bytes_per_sec: 1024,
            min_rate_after_secs: 30,
            max_bytes: 1024 * 1024 * 1024,
            max_redirects: 5,
            allowed_hosts: Vec::new(),
        }
    }
}

/// `catalog.storage.*`: the file store of uploaded resources (docs/FILE-STORE.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct StorageConfig {
    /// `local` (a directory of this node: `catalog.storage_path`, else the data directory) or
    /// `s3` (an S3-compatible object store, for several nodes).
    pub backend: String,
    /// The S3 bucket (it must exist).
    pub bucket: String,
    /// The S3 region (`us-east-1` when the store does not care).
    pub region: String,
    /// The S3 endpoint for stores other than AWS (`http://127.0.0.1:9000`); unset: AWS.
    pub endpoint: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    /// Allow `http://` endpoints (a store on the same host or network).
    pub allow_http: bool,
    /// A key prefix inside the bucket (`catalog/`), so one bucket can hold several catalogs.
    pub prefix: String,
    /// Seconds one request to the store may take (a 5 MiB part of an upload, a read).
    pub timeout_secs: u64,
    /// Times a failed request to the store is tried again.
    pub max_retries: usize,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            backend: "local".into(),
            bucket: String::new(),
            region: "us-east-1".into(),
            endpoint: None,
            access_key_id: None,
            secret_access_key: None,
            allow_http: false,
            prefix: String::new(),
            timeout_secs: 60,
            max_retries: 2,
        }
    }
}

/// `catalog.server.*`: the HTTP server's connection limits and timeouts (docs/SECURITY.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerConfig {
    /// Open connections at most; the server also stays below the process's descriptor limit.
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers.
    pub header_read_timeout_secs: u64,
    /// Seconds an idle keep-alive connection stays open.
    pub keep_alive_timeout_secs: u64,
    /// Seconds a request body may pause between two chunks.
    pub body_read_timeout_secs: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_connections: 4096,
            header_read_timeout_secs: 10,
            keep_alive_timeout_secs: 15,
            body_read_timeout_secs: 30,
        }
    }
}

/// `catalog.limits.*`: how many items the lists of one dataset may hold (docs/SECURITY.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitsConfig {
    pub max_tags_per_dataset: usize,
    pub max_resources_per_dataset: usize,
    pub max_extras_per_dataset: usize,
    pub max_groups_per_dataset: usize,
    /// Items of any other list parameter (ids to act on, member lists …).
    pub max_list_items: usize,
    /// A request body that is not a multipart upload (JSON, a form), in bytes: it is held in
    /// memory and decoded whole, unlike an upload, which streams to disk.
    pub max_json_bytes: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_tags_per_dataset: 1000,
            max_resources_per_dataset: 1000,
            max_extras_per_dataset: 1000,
            max_groups_per_dataset: 1000,
            max_list_items: 10_000,
            max_json_bytes: 16 * 1024 * 1024,
        }
    }
}

/// The `catalog.auth.*` options, with CKAN master's defaults (spec/ckan-write-auth-legacy.md §7.3).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthConfig {
    pub anon_create_dataset: bool,
    pub create_unowned_dataset: bool,
    pub create_dataset_if_not_in_organization: bool,
    pub user_create_groups: bool,
    pub user_create_organizations: bool,
    pub user_delete_groups: bool,
    pub user_delete_organizations: bool,
    pub create_user_via_api: bool,
    pub create_user_via_web: bool,
    pub roles_that_cascade_to_sub_groups: Vec<String>,
    pub public_user_details: bool,
    pub public_activity_stream_detail: bool,
    pub allow_dataset_collaborators: bool,
    pub allow_admin_collaborators: bool,
    pub allow_collaborators_to_change_owner_org: bool,
    pub create_default_api_keys: bool,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            anon_create_dataset: false,
            create_unowned_dataset: false,
            create_dataset_if_not_in_organization: true,
            user_create_groups: true,
            user_create_organizations: false,
            user_delete_groups: true,
            user_delete_organizations: true,
            create_user_via_api: false,
            create_user_via_web: false,
            roles_that_cascade_to_sub_groups: vec!["admin".into()],
            public_user_details: true,
            public_activity_stream_detail: false,
            allow_dataset_collaborators: false,
            allow_admin_collaborators: false,
            allow_collaborators_to_change_owner_org: false,
            create_default_api_keys: false,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchConfig {
    /// The search backend plugin: `tantivy` (embedded, the default) or `postgres`.
    pub backend: String,
    pub rows_max: i64,
    pub remove_deleted_packages: bool,
    pub default_package_sort: String,
    pub facets_limit: i64,
    /// How many of the newest change-feed rows are kept for nodes that follow the feed (a
    /// node further behind rebuilds its index from the store).
    pub feed_retention: i64,
    /// How often (seconds) a node applies the retention and checks it has not fallen behind it.
    pub feed_gc_interval_secs: u64,
    /// At most this long (milliseconds) a read waits for this node's index to apply a write
    /// made on another node (the `X-Catalog-Seq` header or `catalog_seq` cookie).
    pub read_your_writes_wait_ms: u64,
    /// Group commit of the search index: when other writes are in progress, the index pass
    /// that makes a write searchable waits this long (milliseconds) first, so that one index
    /// commit covers them all (a search does not wait for it: it runs a pass itself). 0 turns
    /// it off.
    pub commit_delay_ms: u64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            backend: "tantivy".into(),
            rows_max: 1000,
            remove_deleted_packages: true,
            default_package_sort: "score desc, metadata_modified desc".into(),
            facets_limit: 50,
            feed_retention: 100_000,
            feed_gc_interval_secs: 60,
            read_your_writes_wait_ms: 2_000,
            commit_delay_ms: 100,
        }
    }
}

/// `catalogext.*`: options of extensions, kept as free-form values until their plugin reads them.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct CatalogExtConfig {
    #[serde(flatten)]
    pub values: serde_json::Map<String, serde_json::Value>,
}

impl Config {
    /// Loads defaults, then the TOML file (if given), then `CATALOG__*` / `CATALOGEXT__*` variables.
    pub fn load(file: Option<&Path>) -> Result<Config, Box<figment::Error>> {
        Self::figment(file).extract().map_err(Box::new)
    }

    pub fn figment(file: Option<&Path>) -> Figment {
        let mut fig = Figment::from(Serialized::defaults(Config::default()));
        if let Some(f) = file {
            fig = fig.merge(CkanSpelling(Toml::file_exact(f)));
        }
        let env = |prefixes: [&'static str; 2]| {
            Env::raw()
                .filter(move |k| {
                    let k = k.as_str().to_ascii_uppercase();
                    prefixes.iter().any(|p| k.starts_with(p))
                })
                .split("__")
                .lowercase(true)
        };
        fig.merge(CkanSpelling(env(["CKAN__", "CKANEXT__"])))
            .merge(env(["CATALOG__", "CATALOGEXT__"]))
    }

    /// `site_url` without a trailing slash.
    pub fn site_url(&self) -> &str {
        self.catalog.site_url.trim_end_matches('/')
    }
}

/// A provider whose `ckan` / `ckanext` keys are read as `catalog` / `catalogext` (CKAN's
/// spelling of the same settings); keys already spelt the seeds' way win over them.
struct CkanSpelling<P>(P);

impl<P: figment::Provider> figment::Provider for CkanSpelling<P> {
    fn metadata(&self) -> figment::Metadata {
        self.0.metadata()
    }

    fn data(
        &self,
    ) -> Result<figment::value::Map<figment::Profile, figment::value::Dict>, figment::Error> {
        let mut data = self.0.data()?;
        for dict in data.values_mut() {
            // CKAN's top-level `smtp.*` and `scheming.*` keys are `catalog.smtp.*` and
            // `catalog.scheming.*` here.
            for key in ["smtp", "scheming"] {
                let Some(section) = dict.remove(key) else {
                    continue;
                };
                let mut nested = figment::value::Dict::new();
                nested.insert(key.to_string(), section);
                let nested = figment::value::Value::from(nested);
                let merged = match dict.remove("catalog") {
                    Some(existing) => prefer(existing, nested),
                    None => nested,
                };
                dict.insert("catalog".to_string(), merged);
            }
            for (theirs, ours) in [("ckan", "catalog"), ("ckanext", "catalogext")] {
                let Some(value) = dict.remove(theirs) else {
                    continue;
                };
                let merged = match dict.remove(ours) {
                    Some(existing) => prefer(existing, value),
                    None => value,
                };
                dict.insert(ours.to_string(), merged);
            }
        }
        Ok(data)
    }
}

/// `ours` with what only `theirs` sets added, table by table.
fn prefer(ours: figment::value::Value, theirs: figment::value::Value) -> figment::value::Value {
    use figment::value::Value;
    match (ours, theirs) {
        (Value::Dict(tag, mut a), Value::Dict(_, b)) => {
            for (k, v) in b {
                let merged = match a.remove(&k) {
                    Some(existing) => prefer(existing, v),
                    None => v,
                };
                a.insert(k, merged);
            }
            Value::Dict(tag, a)
        }
        (ours, _) => ours,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(
        clippy::result_large_err,
        reason = "figment::Jail's closure type is figment's own"
    )]
    fn ckan_spelling_is_read_as_catalog_and_the_seeds_spelling_wins() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "catalog.toml",
                r#"
                ckan.site_title = "From CKAN's spelling"
                ckan.site_description = "Only in CKAN's spelling"
                catalog.site_title = "From ours"
                ckan.auth.allow_dataset_collaborators = true
                ckanext.dcat.base_uri = "https://ckan.example.org"
            "#,
            )?;
            jail.set_env("CKAN__SITE_ID", "from-ckan-env");
            jail.set_env("CKAN__LOCALE_DEFAULT", "fr");
            jail.set_env("CATALOG__LOCALE_DEFAULT", "de");
            let c = Config::load(Some(Path::new("catalog.toml"))).map_err(|e| e.to_string())?;
            assert_eq!(c.catalog.site_title, "From ours");
            assert_eq!(c.catalog.site_description, "Only in CKAN's spelling");
            assert!(c.catalog.auth.allow_dataset_collaborators);
            assert_eq!(c.catalog.site_id, "from-ckan-env");
            assert_eq!(c.catalog.locale_default, "de");
            let dcat = serde_json::to_value(&c.catalogext).unwrap();
            assert_eq!(
                dcat["dcat"]["base_uri"], "https://ckan.example.org",
                "{dcat}"
            );
            Ok(())
        });
    }

    #[test]
    #[expect(
        clippy::result_large_err,
        reason = "figment::Jail's closure type is figment's own"
    )]
    fn toml_dotted_keys_override_defaults_and_env_overrides_toml() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("catalog.toml");
        std::fs::write(
            &file,
            "catalog.auth.allow_dataset_collaborators = true\ncatalog.site_title = \"From file\"\n",
        )
        .unwrap();
        figment::Jail::expect_with(|jail| {
            jail.set_env("CATALOG__SITE_TITLE", "From env");
            let c = Config::load(Some(&file)).map_err(|e| *e)?;
            assert!(c.catalog.auth.allow_dataset_collaborators);
            assert_eq!(c.catalog.site_title, "From env");
            assert!(!c.catalog.auth.create_unowned_dataset);
            assert_eq!(c.catalog.search.rows_max, 1000);
            Ok(())
        });
    }

    #[test]
    #[expect(
        clippy::result_large_err,
        reason = "figment::Jail's closure type is figment's own"
    )]
    fn ckan_smtp_keys_are_read_as_catalog_smtp() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "catalog.toml",
                r#"
                smtp.server = "mail.example.org:2525"
                smtp.starttls = true
                smtp.mail_from = "theirs@example.org"
                catalog.smtp.mail_from = "ours@example.org"
            "#,
            )?;
            let c = Config::load(Some(Path::new("catalog.toml"))).map_err(|e| e.to_string())?;
            assert_eq!(c.catalog.smtp.server, "mail.example.org:2525");
            assert!(c.catalog.smtp.starttls);
            assert_eq!(
                c.catalog.smtp.mail_from.as_deref(),
                Some("ours@example.org")
            );
            assert_eq!(c.catalog.smtp.timeout_secs, 10);
            assert!(!c.catalog.other.contains_key("smtp"));
            Ok(())
        });
        assert_eq!(Config::default().catalog.smtp.server, "localhost");
    }

    #[test]
    #[expect(
        clippy::result_large_err,
        reason = "figment::Jail's closure type is figment's own"
    )]
    fn ckan_scheming_keys_are_read_as_catalog_scheming() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "catalog.toml",
                r#"
                scheming.dataset_schemas = "ckanext.dcat.schemas:dcat_ap_full.yaml"
                scheming.presets = "theirs.json"
                catalog.scheming.presets = "ours.json"
            "#,
            )?;
            let c = Config::load(Some(Path::new("catalog.toml"))).map_err(|e| e.to_string())?;
            let s = &c.catalog.other["scheming"];
            assert_eq!(
                s["dataset_schemas"],
                "ckanext.dcat.schemas:dcat_ap_full.yaml"
            );
            assert_eq!(s["presets"], "ours.json");
            Ok(())
        });
    }
}
