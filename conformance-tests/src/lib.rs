#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod case;
pub mod matcher;
pub mod rdf;
pub mod redact;
pub mod report;
pub mod runner;
pub mod vars;

pub use case::{load_cases, KnownFailures, Method, Scenario, Step, UserSpec};
pub use redact::Redactor;
pub use report::{Outcome, Report, StepReport};
pub use runner::Runner;

use std::path::{Path, PathBuf};

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
    let scenarios = load_cases(dir)?;
    let known = KnownFailures::load(&known_failures_path(dir))?;
    known.check_against(&scenarios)?;
    let scenarios = match filter {
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
    };
    Ok((scenarios, known))
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
    fn filter_matches_scenario_or_file_name() {
        let (only, _) = load_suite(&default_cases_dir(), Some("01-site")).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].name, "site");
    }
}
