//! The outcome of a run: one line per step, then the totals.

use std::fmt;

use serde_json::Value;

/// What happened to one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed(String),
    /// Failed, and listed in `known-failures.txt`: reported, not counted as a failure.
    KnownFailure(String),
    /// Listed in `known-failures.txt` but passed: the list is stale, which counts as a failure.
    UnexpectedPass,
}

impl Outcome {
    pub fn is_failure(&self) -> bool {
        matches!(self, Outcome::Failed(_) | Outcome::UnexpectedPass)
    }
}

/// One step's result, with the response it got (for snapshots and debugging).
#[derive(Debug, Clone)]
pub struct StepReport {
    pub scenario: String,
    pub step: String,
    pub action: String,
    pub outcome: Outcome,
    /// HTTP status received, if the request got that far.
    pub status: Option<u16>,
    /// Response body: JSON, or the raw text as a JSON string when it was not JSON.
    pub body: Option<Value>,
    /// Whether the case wants this response snapshotted.
    pub snapshot: bool,
}

impl StepReport {
    /// The `scenario/step` key.
    pub fn key(&self) -> String {
        format!("{}/{}", self.scenario, self.step)
    }
}

/// Every step's result, in run order.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub steps: Vec<StepReport>,
}

impl Report {
    pub fn passed(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.outcome == Outcome::Passed)
            .count()
    }

    pub fn failed(&self) -> usize {
        self.steps.iter().filter(|s| s.outcome.is_failure()).count()
    }

    pub fn known_failures(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::KnownFailure(_)))
            .count()
    }

    pub fn is_success(&self) -> bool {
        self.failed() == 0
    }

    /// The totals line that ends every report.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed(), self.failed())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.steps {
            match &s.outcome {
                Outcome::Passed => writeln!(f, "ok    {} ({})", s.key(), s.action)?,
                Outcome::Failed(why) => writeln!(f, "FAIL  {} ({}): {why}", s.key(), s.action)?,
                Outcome::KnownFailure(why) => {
                    writeln!(f, "xfail {} ({}): known failure: {why}", s.key(), s.action)?
                }
                Outcome::UnexpectedPass => writeln!(
                    f,
                    "FAIL  {} ({}): passed but is listed in known-failures.txt; remove it there",
                    s.key(),
                    s.action
                )?,
            }
        }
        let known = self.known_failures();
        if known > 0 {
            writeln!(f, "{known} known failures (listed in known-failures.txt)")?;
        }
        write!(f, "{}", self.summary())
    }
}
