#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod case;
pub mod matcher;
pub mod profile;
pub mod rdf;
pub mod redact;
pub mod report;
pub mod runner;
pub mod vars;

pub use case::{
    is_read_action, load_cases, parse_cases, KnownFailures, Method, Scenario, Step, UserSpec,
};
pub use profile::{Assumptions, Profile, DEFAULT_PROFILE};
pub use redact::Redactor;
pub use report::{Outcome, Report, RunInfo, StepReport};
pub use runner::{RunOptions, Runner};

use std::path::{Path, PathBuf};

use anyhow::Context as _;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_cases.rs"));
}

/// Where a run's cases come from.
#[derive(Debug, Clone)]
pub enum CaseSource {
    /// The cases built into this binary (the crate's `cases/` when it was built).
    Embedded,
    /// A directory laid out as `cases/`: `*.json` scenarios, optional `known-failures.txt`
    /// and `profiles/<name>.json`.
    Dir(PathBuf),
}

impl CaseSource {
    /// A file's text by its path under the cases directory; `None` when it does not exist.
    fn read(&self, rel: &str) -> anyhow::Result<Option<String>> {
        match self {
            CaseSource::Embedded => Ok(embedded::EMBEDDED
                .iter()
                .find(|(p, _)| *p == rel)
                .map(|(_, t)| t.to_string())),
            CaseSource::Dir(d) => match std::fs::read_to_string(d.join(rel)) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e).with_context(|| format!("reading {}", d.join(rel).display())),
            },
        }
    }

    fn scenarios(&self) -> anyhow::Result<Vec<Scenario>> {
        match self {
            CaseSource::Dir(d) => load_cases(d),
            CaseSource::Embedded => parse_cases(
                embedded::EMBEDDED
                    .iter()
                    .filter(|(p, _)| !p.contains('/') && p.ends_with(".json"))
                    .map(|(p, t)| (PathBuf::from(p), t.to_string()))
                    .collect(),
            ),
        }
    }

    /// The profiles this source has, by name (`catalog` always).
    pub fn profiles(&self) -> anyhow::Result<Vec<String>> {
        let mut names = vec![DEFAULT_PROFILE.to_string()];
        let found: Vec<String> = match self {
            CaseSource::Embedded => embedded::EMBEDDED
                .iter()
                .filter_map(|(p, _)| p.strip_prefix("profiles/")?.strip_suffix(".json"))
                .map(str::to_string)
                .collect(),
            CaseSource::Dir(d) => match std::fs::read_dir(d.join("profiles")) {
                Ok(rd) => rd
                    .flatten()
                    .filter_map(|e| {
                        let n = e.file_name().to_string_lossy().into_owned();
                        n.strip_suffix(".json").map(str::to_string)
                    })
                    .collect(),
                Err(_) => Vec::new(),
            },
        };
        for n in found {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names.sort();
        Ok(names)
    }
}

/// Loads a suite for a profile: the scenarios with the profile's overrides applied, and the
/// known-failures list (ours, so only for the `catalog` profile), then keeps the scenarios
/// whose name or file name contains `filter`.
pub fn load_suite_from(
    source: &CaseSource,
    filter: Option<&str>,
    profile: &str,
) -> anyhow::Result<(Vec<Scenario>, KnownFailures)> {
    let mut scenarios = source.scenarios()?;
    let known = if profile == DEFAULT_PROFILE {
        KnownFailures::parse(&source.read("known-failures.txt")?.unwrap_or_default())
    } else {
        KnownFailures::default()
    };
    known.check_against(&scenarios)?;
    match source.read(&format!("profiles/{profile}.json"))? {
        Some(text) => Profile::parse(profile, &text)?.apply(&mut scenarios)?,
        None if profile == DEFAULT_PROFILE => {}
        None => anyhow::bail!(
            "no profile {profile:?} (profiles: {})",
            source.profiles()?.join(", ")
        ),
    }
    Ok((filter_scenarios(scenarios, filter), known))
}

fn filter_scenarios(scenarios: Vec<Scenario>, filter: Option<&str>) -> Vec<Scenario> {
    match filter {
        None => scenarios,
        Some(f) => scenarios
            .into_iter()
            .filter(|sc| {
                sc.name.contains(f)
                    || sc
                        .file
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().contains(f))
            })
            .collect(),
    }
}

/// The cases shipped with this crate.
pub fn default_cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases")
}

/// The known-failures list that belongs to a cases directory.
pub fn known_failures_path(cases_dir: &Path) -> PathBuf {
    cases_dir.join("known-failures.txt")
}

/// Loads the cases in `dir` and its known-failures list, checks the list against all cases,
/// then keeps the scenarios whose name or file name contains `filter`.
pub fn load_suite(
    dir: &Path,
    filter: Option<&str>,
) -> anyhow::Result<(Vec<Scenario>, KnownFailures)> {
    load_suite_from(&CaseSource::Dir(dir.to_path_buf()), filter, DEFAULT_PROFILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_cases_load_and_known_failures_name_real_steps() {
        let (scenarios, _known) = load_suite(&default_cases_dir(), None).expect("cases load");
        assert!(scenarios.len() >= 10);
        let steps: usize = scenarios.iter().map(|s| s.steps.len()).sum();
        assert!(steps >= 150, "only {steps} steps");
    }

    #[test]
    fn every_shipped_profile_applies_to_the_shipped_cases() {
        let profiles = CaseSource::Embedded.profiles().unwrap();
        assert!(profiles.contains(&"ckan-2.12".to_string()), "{profiles:?}");
        for name in profiles {
            // Stale entries (a step renamed or removed) and entries without reasons fail here.
            let (scenarios, _) = load_suite_from(&CaseSource::Embedded, None, &name)
                .unwrap_or_else(|e| panic!("profile {name}: {e:#}"));
            let overridden = scenarios
                .iter()
                .flat_map(|s| &s.steps)
                .filter(|st| st.profile_reason.is_some())
                .count();
            if name != DEFAULT_PROFILE {
                assert!(overridden > 0, "profile {name} overrides nothing");
            }
        }
    }

    #[test]
    fn the_embedded_cases_are_the_shipped_cases() {
        let (dir, _) = load_suite(&default_cases_dir(), None).unwrap();
        let (built_in, _) = load_suite_from(&CaseSource::Embedded, None, DEFAULT_PROFILE).unwrap();
        let names = |s: &[Scenario]| s.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&dir), names(&built_in));
        let steps = |s: &[Scenario]| s.iter().map(|s| s.steps.len()).sum::<usize>();
        assert_eq!(steps(&dir), steps(&built_in));
        assert!(load_suite_from(&CaseSource::Embedded, None, "no-such-profile").is_err());
    }

    #[test]
    fn filter_matches_scenario_or_file_name() {
        let (only, _) = load_suite(&default_cases_dir(), Some("01-site")).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].name, "site");
    }
}
