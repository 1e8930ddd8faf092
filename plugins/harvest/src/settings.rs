//! `catalog.harvest.*` (CKAN's `ckan.harvest.*`), read once at start-up.

use catalog_framework::prelude::*;
use catalog_framework::store::config::FetchConfig;

/// The harvest settings (docs/HARVEST.md lists them with their defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct HarvestSettings {
    /// `allow_hosts`: `host` or `host:port` entries a harvest may fetch although they are
    /// internal (loopback, private …), besides `catalog.fetch.allowed_hosts`.
    pub allow_hosts: Vec<String>,
    /// `connect_timeout_secs`, `read_timeout_secs`, `page_timeout_secs`: one page's fetch.
    pub connect_timeout_secs: u64,
    pub read_timeout_secs: u64,
    pub page_timeout_secs: u64,
    /// `parse_timeout_secs`: how long reading one fetched page (parsing it) may take before
    /// the page is a gather error.
    pub parse_timeout_secs: u64,
    /// `max_page_triples`: the most triples one RDF page may hold (each costs about 1 KB of
    /// memory while the page is read).
    pub max_page_triples: u64,
    /// `max_page_bytes`: the largest page (document) read, counted after decompression
    /// (ckanext-dcat's `max_file_size`, 50 MB).
    pub max_page_bytes: u64,
    /// `max_pages`: pages one run reads at most.
    pub max_pages: u64,
    /// `max_delete_share`: the largest share of a source's datasets one run deletes without
    /// `force` (0.0–1.0).
    pub max_delete_share: f64,
    /// `timeout` (minutes, CKAN's `ckan.harvest.timeout`): a running job with no activity for
    /// this long is finished with an error. 0: never.
    pub timeout_minutes: u64,
    /// `schedule_interval_secs`: how often `serve` looks for due sources and stuck jobs.
    pub schedule_interval_secs: u64,
    /// `batch_size`: datasets written in one transaction.
    pub batch_size: usize,
    /// `clear_inline_max`: a `harvest_source_clear` of more datasets than this runs as a
    /// background job, a batch per transaction.
    pub clear_inline_max: usize,
    /// `harvest_source_limit` (CKAN's): sources `harvest_source_list` returns at most.
    pub source_limit: i64,
    /// `default_dataset_name_append` (ckanext-harvest's): `number-sequence` or `random-hex`.
    pub name_append_random: bool,
    /// `catalogext.harvest.user_name` (ckanext-harvest's `ckanext.harvest.user_name`): the
    /// user harvests write as; the site user when unset.
    pub user_name: Option<String>,
}

impl Default for HarvestSettings {
    fn default() -> Self {
        HarvestSettings {
            allow_hosts: Vec::new(),
            connect_timeout_secs: 10,
            read_timeout_secs: 60,
            page_timeout_secs: 300,
            parse_timeout_secs: 30,
            max_page_triples: 40_000,
            max_page_bytes: 50 * 1024 * 1024,
            max_pages: 10_000,
            max_delete_share: 0.5,
            timeout_minutes: 24 * 60,
            schedule_interval_secs: 60,
            batch_size: 25,
            clear_inline_max: 1000,
            source_limit: 100,
            name_append_random: false,
            user_name: None,
        }
    }
}

impl HarvestSettings {
    /// Reads `catalog.harvest` (and `catalogext.harvest.user_name`); a value of the wrong type
    /// or out of range stops start-up with its key named.
    pub fn from_config(config: &Config) -> anyhow::Result<HarvestSettings> {
        let mut s = HarvestSettings::default();
        let section = config
            .catalog
            .other
            .get("harvest")
            .cloned()
            .unwrap_or(Value::Null);
        let get = |key: &str| section.get(key).filter(|v| !v.is_null());
        let uint = |key: &str, default: u64| -> anyhow::Result<u64> {
            match get(key) {
                None => Ok(default),
                Some(v) => v
                    .as_u64()
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                    .ok_or_else(|| {
                        anyhow::anyhow!("catalog.harvest.{key}: a whole number, not {v}")
                    }),
            }
        };
        if let Some(v) = get("allow_hosts") {
            s.allow_hosts = match v {
                Value::Array(items) => items
                    .iter()
                    .map(|i| {
                        i.as_str().map(str::to_string).ok_or_else(|| {
                            anyhow::anyhow!("catalog.harvest.allow_hosts: strings, not {i}")
                        })
                    })
                    .collect::<anyhow::Result<_>>()?,
                Value::String(text) => text
                    .split([',', ' '])
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| p.trim().to_string())
                    .collect(),
                other => anyhow::bail!("catalog.harvest.allow_hosts: a list, not {other}"),
            };
        }
        s.connect_timeout_secs = uint("connect_timeout_secs", s.connect_timeout_secs)?.max(1);
        s.read_timeout_secs = uint("read_timeout_secs", s.read_timeout_secs)?.max(1);
        s.page_timeout_secs = uint("page_timeout_secs", s.page_timeout_secs)?.max(1);
        s.parse_timeout_secs = uint("parse_timeout_secs", s.parse_timeout_secs)?.max(1);
        s.max_page_triples = uint("max_page_triples", s.max_page_triples)?.max(1);
        s.max_page_bytes = uint("max_page_bytes", s.max_page_bytes)?.max(1024);
        s.max_pages = uint("max_pages", s.max_pages)?.max(1);
        s.timeout_minutes = uint("timeout", s.timeout_minutes)?;
        s.schedule_interval_secs = uint("schedule_interval_secs", s.schedule_interval_secs)?.max(1);
        s.batch_size = (uint("batch_size", s.batch_size as u64)?.clamp(1, 500)) as usize;
        s.clear_inline_max =
            uint("clear_inline_max", s.clear_inline_max as u64)?.min(100_000) as usize;
        s.source_limit = uint("harvest_source_limit", s.source_limit as u64)?.max(1) as i64;
        if let Some(v) = get("max_delete_share") {
            let share = v
                .as_f64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .filter(|f| (0.0..=1.0).contains(f))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "catalog.harvest.max_delete_share: a number from 0 to 1, not {v}"
                    )
                })?;
            s.max_delete_share = share;
        }
        if let Some(v) = get("default_dataset_name_append") {
            s.name_append_random = match v.as_str().map(str::trim) {
                Some("number-sequence") => false,
                Some("random-hex") => true,
                _ => anyhow::bail!(
                    "catalog.harvest.default_dataset_name_append: number-sequence or random-hex, not {v}"
                ),
            };
        }
        s.user_name = config
            .catalogext
            .values
            .get("harvest")
            .and_then(|h| h.get("user_name"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        Ok(s)
    }

    /// The fetch rules of one page: `catalog.fetch.*` with this section's timeouts, size cap
    /// and allowed hosts.
    pub fn fetch_config(&self, base: &FetchConfig) -> FetchConfig {
        let mut f = base.clone();
        f.connect_timeout_secs = self.connect_timeout_secs;
        f.read_timeout_secs = self.read_timeout_secs;
        f.total_timeout_secs = self.page_timeout_secs;
        f.max_bytes = self.max_page_bytes;
        f.allowed_hosts.extend(self.allow_hosts.iter().cloned());
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_their_keys_and_refuse_bad_values() {
        let mut c = Config::default();
        c.catalog.other.insert(
            "harvest".into(),
            json!({"allow_hosts": ["127.0.0.1:8080", "files.local"], "max_delete_share": 0.2,
                   "timeout": "30", "batch_size": 1000, "clear_inline_max": 0}),
        );
        let s = HarvestSettings::from_config(&c).unwrap();
        assert_eq!(s.allow_hosts, vec!["127.0.0.1:8080", "files.local"]);
        assert_eq!(s.max_delete_share, 0.2);
        assert_eq!(s.timeout_minutes, 30);
        assert_eq!(s.batch_size, 500);
        assert_eq!(s.clear_inline_max, 0);
        let f = s.fetch_config(&FetchConfig::default());
        assert!(f.allowed_hosts.contains(&"127.0.0.1:8080".to_string()));
        assert_eq!(f.max_bytes, 50 * 1024 * 1024);

        c.catalog
            .other
            .insert("harvest".into(), json!({"max_delete_share": 2}));
        let e = HarvestSettings::from_config(&c).unwrap_err().to_string();
        assert!(e.contains("max_delete_share"), "{e}");
        c.catalog
            .other
            .insert("harvest".into(), json!({"timeout": "soon"}));
        assert!(HarvestSettings::from_config(&c).is_err());
    }
}
