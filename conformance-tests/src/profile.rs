//! What a run takes the deployment to be: the settings it assumes (`--assume`), and the
//! profile whose expectations it holds the deployment to (`--profile`).
//!
//! A case declares the settings it needs (`"needs": ["catalog.auth.create_unowned_dataset=true"]`);
//! a run reports it as skipped unless it assumes them, so a run against a deployment in its
//! default configuration has nothing to fail for settings it does not have. A profile is a
//! file of expectation overrides (`profiles/<name>.json` beside the cases), each with its
//! reason: the one readable list of where a product answers differently from the cases.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context as _};
use serde::Deserialize;
use serde_json::Value;

use crate::case::{parse_need, unknown_steps, Scenario};

/// The profile the cases are written for (our catalog service): no overrides.
pub const DEFAULT_PROFILE: &str = "catalog";

/// Settings a run takes the deployment to have, as `key=value` pairs. Keys are compared in the
/// seeds' spelling: CKAN's `ckan.*` / `ckanext.*` are read as `catalog.*` / `catalogext.*`.
/// Values compare case-insensitively, and `true`/`yes`/`on`/`1` (and their opposites) as
/// booleans.
#[derive(Debug, Clone, Default)]
pub struct Assumptions {
    values: BTreeMap<String, String>,
}

impl Assumptions {
    pub fn new() -> Assumptions {
        Assumptions::default()
    }

    /// Adds one `key=value`; an existing value for the key is replaced.
    pub fn set(&mut self, key: &str, value: &str) {
        self.values
            .insert(normalize_key(key), value.trim().to_string());
    }

    /// Adds a value only if the key has none (what a run detects never overrides what the
    /// operator said).
    pub fn set_default(&mut self, key: &str, value: &str) {
        self.values
            .entry(normalize_key(key))
            .or_insert_with(|| value.trim().to_string());
    }

    /// Parses one `key=value` argument.
    pub fn add_arg(&mut self, arg: &str) -> anyhow::Result<()> {
        let Some((k, v)) = parse_need(arg) else {
            bail!("--assume {arg:?}: expected key=value");
        };
        self.set(k, v);
        Ok(())
    }

    /// Reads a file of `key=value` lines (blank lines and `#` comments ignored), as an
    /// operator would write down a deployment's settings.
    pub fn add_file(&mut self, path: &Path) -> anyhow::Result<()> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading assumptions file {}", path.display()))?;
        for (n, line) in text.lines().enumerate() {
            let line = line.split_once('#').map_or(line, |(l, _)| l).trim();
            if line.is_empty() {
                continue;
            }
            self.add_arg(line)
                .with_context(|| format!("{} line {}", path.display(), n + 1))?;
        }
        Ok(())
    }

    /// Whether one `key=value` need holds.
    pub fn holds(&self, need: &str) -> bool {
        let Some((k, want)) = parse_need(need) else {
            return false;
        };
        self.values
            .get(&normalize_key(k))
            .is_some_and(|have| same_value(have, want))
    }

    /// The first of `needs` that does not hold.
    pub fn unmet<'a>(&self, needs: &'a [String]) -> Option<&'a str> {
        needs.iter().map(String::as_str).find(|n| !self.holds(n))
    }

    /// Every assumption, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

fn normalize_key(key: &str) -> String {
    let key = key.trim();
    if let Some(rest) = key.strip_prefix("ckanext.") {
        format!("catalogext.{rest}")
    } else if let Some(rest) = key.strip_prefix("ckan.") {
        format!("catalog.{rest}")
    } else {
        key.to_string()
    }
}

fn same_value(a: &str, b: &str) -> bool {
    fn boolean(s: &str) -> Option<bool> {
        match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        }
    }
    match (boolean(a), boolean(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}

/// One step's expectation as a profile changes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    /// Why this product answers differently (required: the file is the list of differences).
    pub reason: String,
    /// The step cannot run on this product (an action it does not have): reported as skipped.
    #[serde(default)]
    pub skip: bool,
    #[serde(default)]
    pub expect_status: Option<u16>,
    #[serde(default)]
    pub expect: Option<Value>,
    #[serde(default)]
    pub expect_contains: Option<Value>,
    #[serde(default)]
    pub expect_excludes: Option<Value>,
    /// Replaces the headers the step expects (`{}`: none).
    #[serde(default)]
    pub expect_headers: Option<BTreeMap<String, String>>,
}

/// A profile: a name and its expectation overrides by `scenario/step`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    #[serde(default)]
    pub name: String,
    /// What the profile is for (the product and release it describes).
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub overrides: BTreeMap<String, Override>,
}

impl Profile {
    /// Parses a profile file's text.
    pub fn parse(name: &str, text: &str) -> anyhow::Result<Profile> {
        let mut p: Profile =
            serde_json::from_str(text).with_context(|| format!("parsing profile {name}"))?;
        if p.name.is_empty() {
            p.name = name.to_string();
        }
        for (key, o) in &p.overrides {
            if o.reason.trim().is_empty() {
                bail!("profile {name}: the override of {key} gives no reason");
            }
        }
        Ok(p)
    }

    /// Applies the overrides to the scenarios; an override naming no step is an error (a
    /// stale entry would hide nothing and mislead its readers).
    pub fn apply(&self, scenarios: &mut [Scenario]) -> anyhow::Result<()> {
        let stale = unknown_steps(self.overrides.keys(), scenarios);
        if !stale.is_empty() {
            bail!(
                "profile {} overrides steps that do not exist: {}",
                self.name,
                stale.join(", ")
            );
        }
        for sc in scenarios.iter_mut() {
            let name = sc.name.clone();
            for st in &mut sc.steps {
                let Some(o) = self.overrides.get(&format!("{name}/{}", st.name)) else {
                    continue;
                };
                st.profile_reason = Some(o.reason.clone());
                st.profile_skip = o.skip;
                if let Some(s) = o.expect_status {
                    st.expect_status = s;
                }
                if let Some(h) = &o.expect_headers {
                    st.expect_headers.clone_from(h);
                }
                for (to, from) in [
                    (&mut st.expect, &o.expect),
                    (&mut st.expect_contains, &o.expect_contains),
                    (&mut st.expect_excludes, &o.expect_excludes),
                ] {
                    if from.is_some() {
                        to.clone_from(from);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assumptions_read_ckans_spelling_and_booleans() {
        let mut a = Assumptions::new();
        a.add_arg("ckan.auth.create_unowned_dataset=True").unwrap();
        a.add_arg("catalogext.dcat.datasets_per_page = 2").unwrap();
        assert!(a.holds("catalog.auth.create_unowned_dataset=true"));
        assert!(a.holds("catalog.auth.create_unowned_dataset=yes"));
        assert!(!a.holds("catalog.auth.create_unowned_dataset=false"));
        assert!(a.holds("ckanext.dcat.datasets_per_page=2"));
        assert!(!a.holds("catalogext.dcat.datasets_per_page=5"));
        let needs = vec![
            "catalogext.dcat.datasets_per_page=2".to_string(),
            "x=1".into(),
        ];
        assert_eq!(a.unmet(&needs), Some("x=1"));
        a.set_default("x", "1");
        a.set_default("x", "2");
        assert_eq!(a.unmet(&needs), None);
        assert!(a.add_arg("no-value").is_err());
    }

    #[test]
    fn profiles_override_steps_and_refuse_stale_or_unexplained_entries() {
        let mut scs: Vec<Scenario> = vec![serde_json::from_str(
            r#"{"name":"site","steps":[{"name":"a","action":"site_read","expect_status":200},{"name":"b","action":"gone","expect_status":200}]}"#,
        )
        .unwrap()];
        let p = Profile::parse(
            "ckan-x",
            r#"{"overrides":{"site/a":{"reason":"answers 500","expect_status":500},"site/b":{"reason":"removed","skip":true}}}"#,
        )
        .unwrap();
        p.apply(&mut scs).unwrap();
        assert_eq!(scs[0].steps[0].expect_status, 500);
        assert!(scs[0].steps[1].profile_skip);
        let stale =
            Profile::parse("ckan-x", r#"{"overrides":{"site/zzz":{"reason":"r"}}}"#).unwrap();
        assert!(stale.apply(&mut scs).is_err());
        assert!(Profile::parse("p", r#"{"overrides":{"site/a":{"reason":" "}}}"#).is_err());
    }
}
