//! The outcome of a run: one line per step, then the totals; and the same as JSON, JUnit XML
//! and an HTML page (`docs/CONFORMANCE-REPORT.md` describes the JSON).

use std::fmt;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Value};

/// The JSON report's schema name and version (`schema`): bumped when a field changes meaning
/// or goes; new fields may appear without a bump.
pub const JSON_SCHEMA: &str = "catalog-conformance-report/1";

/// What happened to one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed(String),
    /// Failed, and listed in `known-failures.txt`: reported, not counted as a failure.
    KnownFailure(String),
    /// Listed in `known-failures.txt` but passed: the list is stale, which counts as a failure.
    UnexpectedPass,
    /// Not run: a setting the run does not assume, a profile's skip, a step it depends on was
    /// skipped, or the request budget was spent. The reason says which.
    Skipped(String),
}

impl Outcome {
    pub fn is_failure(&self) -> bool {
        matches!(self, Outcome::Failed(_) | Outcome::UnexpectedPass)
    }

    /// The outcome's name in the JSON report.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed(_) => "failed",
            Outcome::KnownFailure(_) => "known_failure",
            Outcome::UnexpectedPass => "unexpected_pass",
            Outcome::Skipped(_) => "skipped",
        }
    }

    /// The reason, for every outcome but a pass.
    pub fn message(&self) -> Option<String> {
        match self {
            Outcome::Passed => None,
            Outcome::Failed(w) | Outcome::KnownFailure(w) | Outcome::Skipped(w) => Some(w.clone()),
            Outcome::UnexpectedPass => {
                Some("passed but is listed in known-failures.txt; remove it there".to_string())
            }
        }
    }
}

/// What was run against what.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub base_url: String,
    /// The suffix of every name the run made.
    pub run: String,
    pub profile: String,
    pub read_only: bool,
    /// RFC 3339, UTC.
    pub started: String,
    pub duration: Duration,
    /// Requests sent.
    pub requests: u64,
    /// The assumed settings, `key=value`.
    pub assumptions: Vec<String>,
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
    /// The request's time (0 for a step not sent).
    pub duration_ms: f64,
    /// Why the profile changed this step's expectation, if it did.
    pub profile_reason: Option<String>,
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
    /// Set by [`crate::Runner::run_all`].
    pub info: Option<RunInfo>,
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

    pub fn skipped(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Skipped(_)))
            .count()
    }

    pub fn is_success(&self) -> bool {
        self.failed() == 0
    }

    /// The totals line that ends every report.
    pub fn summary(&self) -> String {
        let mut s = format!("{} passed, {} failed", self.passed(), self.failed());
        let skipped = self.skipped();
        if skipped > 0 {
            let _ = write!(s, ", {skipped} skipped");
        }
        s
    }

    /// The JSON report (schema [`JSON_SCHEMA`]).
    pub fn to_json(&self) -> Value {
        let info = self.info.clone().unwrap_or_default();
        json!({
            "schema": JSON_SCHEMA,
            "tool": concat!("catalog-conformance ", env!("CARGO_PKG_VERSION")),
            "base_url": info.base_url,
            "run": info.run,
            "profile": info.profile,
            "read_only": info.read_only,
            "started": info.started,
            "duration_ms": (info.duration.as_secs_f64() * 1000.0).round(),
            "requests": info.requests,
            "assumptions": info.assumptions,
            "totals": {
                "steps": self.steps.len(),
                "passed": self.passed(),
                "failed": self.failed(),
                "known_failures": self.known_failures(),
                "skipped": self.skipped(),
            },
            "success": self.is_success(),
            "steps": self.steps.iter().map(|s| json!({
                "scenario": s.scenario,
                "step": s.step,
                "action": s.action,
                "outcome": s.outcome.name(),
                "message": s.outcome.message(),
                "status": s.status,
                "duration_ms": (s.duration_ms * 10.0).round() / 10.0,
                "profile_reason": s.profile_reason,
            })).collect::<Vec<_>>(),
        })
    }

    /// JUnit XML as CI systems read it (the common `testsuites` / `testsuite` / `testcase`
    /// schema): a suite per scenario, a case per step; a failure is `<failure>`, a skip and a
    /// known failure `<skipped>` (JUnit has no expected failure).
    pub fn to_junit(&self) -> String {
        let info = self.info.clone().unwrap_or_default();
        let mut scenarios: Vec<(&str, Vec<&StepReport>)> = Vec::new();
        for s in &self.steps {
            match scenarios.last_mut() {
                Some((name, steps)) if *name == s.scenario => steps.push(s),
                _ => scenarios.push((&s.scenario, vec![s])),
            }
        }
        let secs = |ms: f64| format!("{:.3}", ms / 1000.0);
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            x,
            "<testsuites name=\"catalog-conformance\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{}\">",
            self.steps.len(),
            self.failed(),
            secs(info.duration.as_secs_f64() * 1000.0)
        );
        for (id, (name, steps)) in scenarios.iter().enumerate() {
            let failures = steps.iter().filter(|s| s.outcome.is_failure()).count();
            let skipped = steps
                .iter()
                .filter(|s| matches!(s.outcome, Outcome::Skipped(_) | Outcome::KnownFailure(_)))
                .count();
            let time: f64 = steps.iter().map(|s| s.duration_ms).sum();
            let _ = writeln!(
                x,
                "  <testsuite id=\"{id}\" name=\"{}\" package=\"catalog-conformance\" hostname=\"{}\" timestamp=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{}\">",
                xml_escape(name),
                xml_escape(&info.base_url),
                xml_escape(info.started.trim_end_matches('Z')),
                steps.len(),
                secs(time)
            );
            let _ = writeln!(x, "    <properties>");
            let _ = writeln!(
                x,
                "      <property name=\"profile\" value=\"{}\"/>",
                xml_escape(&info.profile)
            );
            let _ = writeln!(
                x,
                "      <property name=\"read_only\" value=\"{}\"/>",
                info.read_only
            );
            let _ = writeln!(x, "    </properties>");
            for s in steps {
                let _ = write!(
                    x,
                    "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                    xml_escape(&format!("{} ({})", s.step, s.action)),
                    xml_escape(name),
                    secs(s.duration_ms)
                );
                match &s.outcome {
                    Outcome::Passed => x.push_str("/>\n"),
                    Outcome::Failed(_) | Outcome::UnexpectedPass => {
                        let why = s.outcome.message().unwrap_or_default();
                        let _ = writeln!(
                            x,
                            ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                            xml_escape(first_line(&why)),
                            s.outcome.name(),
                            xml_escape(&why)
                        );
                    }
                    Outcome::Skipped(why) | Outcome::KnownFailure(why) => {
                        let why = match &s.outcome {
                            Outcome::KnownFailure(_) => format!("known failure: {why}"),
                            _ => why.clone(),
                        };
                        let _ = writeln!(
                            x,
                            ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                            xml_escape(&why)
                        );
                    }
                }
            }
            let _ = writeln!(x, "    <system-out/>\n    <system-err/>\n  </testsuite>");
        }
        x.push_str("</testsuites>\n");
        x
    }

    /// A self-contained HTML page: the totals, then the failures, then every step.
    pub fn to_html(&self) -> String {
        let info = self.info.clone().unwrap_or_default();
        let mut h = String::new();
        let verdict = if self.is_success() {
            "passed"
        } else {
            "failed"
        };
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>Conformance report: {} ({verdict})</title><style>{CSS}</style></head><body><main>\
             <h1>Conformance report</h1><p class=\"verdict {verdict}\">{}</p><dl>",
            xml_escape(&info.base_url),
            xml_escape(&self.summary())
        );
        for (k, v) in [
            ("Deployment", info.base_url.clone()),
            ("Profile", info.profile.clone()),
            (
                "Mode",
                if info.read_only {
                    "read-only".into()
                } else {
                    "write".into()
                },
            ),
            ("Started", info.started.clone()),
            ("Duration", format!("{:.1} s", info.duration.as_secs_f64())),
            ("Requests", info.requests.to_string()),
            ("Assumed settings", info.assumptions.join(", ")),
            ("Known failures", self.known_failures().to_string()),
        ] {
            let _ = write!(h, "<dt>{k}</dt><dd>{}</dd>", xml_escape(&v));
        }
        h.push_str("</dl>");
        let failures: Vec<&StepReport> = self
            .steps
            .iter()
            .filter(|s| s.outcome.is_failure())
            .collect();
        if !failures.is_empty() {
            h.push_str("<h2>Failures</h2><ul class=\"failures\">");
            for s in failures {
                let _ = write!(
                    h,
                    "<li><strong>{}</strong> ({})<pre>{}</pre></li>",
                    xml_escape(&s.key()),
                    xml_escape(&s.action),
                    xml_escape(&s.outcome.message().unwrap_or_default())
                );
            }
            h.push_str("</ul>");
        }
        h.push_str(
            "<h2>Every step</h2><table><thead><tr><th scope=\"col\">Step</th>\
             <th scope=\"col\">Request</th><th scope=\"col\">Outcome</th>\
             <th scope=\"col\">Status</th><th scope=\"col\">Note</th></tr></thead><tbody>",
        );
        for s in &self.steps {
            let note = s
                .outcome
                .message()
                .or_else(|| s.profile_reason.clone().map(|r| format!("profile: {r}")))
                .unwrap_or_default();
            let _ = write!(
                h,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                s.outcome.name(),
                xml_escape(&s.key()),
                xml_escape(&s.action),
                s.outcome.name().replace('_', " "),
                s.status.map(|c| c.to_string()).unwrap_or_default(),
                xml_escape(first_line(&note))
            );
        }
        h.push_str("</tbody></table></main></body></html>\n");
        h
    }
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1b}\
main{max-width:72rem;margin:0 auto;padding:1rem}\
.verdict{font-size:1.25rem;font-weight:bold;padding:.5rem 1rem;border-radius:.25rem}\
.verdict.passed{background:#e3f4e6;color:#0b5a1e}.verdict.failed{background:#fde8e8;color:#8a1111}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:bold}\
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ccc;padding:.25rem .5rem;\
text-align:left;vertical-align:top;overflow-wrap:anywhere}td:last-child{max-width:32rem}tr.failed td,tr.unexpected_pass td{background:#fde8e8}\
tr.skipped td{color:#555}pre{white-space:pre-wrap;overflow-wrap:anywhere}";

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// Text and attribute escaping for XML and HTML; characters XML 1.0 cannot hold at all
/// (controls other than tab and newlines) become U+FFFD.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
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
                Outcome::Skipped(why) => writeln!(f, "skip  {} ({}): {why}", s.key(), s.action)?,
            }
        }
        let known = self.known_failures();
        if known > 0 {
            writeln!(f, "{known} known failures (listed in known-failures.txt)")?;
        }
        write!(f, "{}", self.summary())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(scenario: &str, step: &str, outcome: Outcome) -> StepReport {
        StepReport {
            scenario: scenario.into(),
            step: step.into(),
            action: "package_show".into(),
            outcome,
            status: Some(200),
            body: None,
            snapshot: false,
            duration_ms: 12.5,
            profile_reason: None,
        }
    }

    fn sample() -> Report {
        Report {
            steps: vec![
                step("site", "a", Outcome::Passed),
                step(
                    "site",
                    "b",
                    Outcome::Failed("expected <200>, got \"500\" & \u{1}".into()),
                ),
                step("datasets", "c", Outcome::Skipped("needs x=1".into())),
                step("datasets", "d", Outcome::KnownFailure("server bug".into())),
            ],
            info: Some(RunInfo {
                base_url: "http://127.0.0.1:5000".into(),
                profile: "catalog".into(),
                started: "2026-11-28T01:00:00Z".into(),
                ..RunInfo::default()
            }),
        }
    }

    #[test]
    fn the_json_report_counts_and_names_every_step() {
        let j = sample().to_json();
        assert_eq!(j["schema"], JSON_SCHEMA);
        assert_eq!(j["totals"]["passed"], 1);
        assert_eq!(j["totals"]["failed"], 1);
        assert_eq!(j["totals"]["skipped"], 1);
        assert_eq!(j["totals"]["known_failures"], 1);
        assert_eq!(j["success"], false);
        assert_eq!(j["steps"][2]["outcome"], "skipped");
        assert_eq!(j["steps"][2]["message"], "needs x=1");
        assert_eq!(sample().summary(), "1 passed, 1 failed, 1 skipped");
    }

    #[test]
    fn junit_groups_steps_by_scenario_and_escapes_messages() {
        let x = sample().to_junit();
        assert!(
            x.contains(
                r#"<testsuites name="catalog-conformance" tests="4" failures="1" errors="0" time="#
            ),
            "{x}"
        );
        assert!(x.contains(r#"failures="0" errors="0" skipped="2""#), "{x}");
        assert!(x.contains(r#"<testsuite id="0" name="site""#), "{x}");
        assert!(x.contains(r#"<testsuite id="1" name="datasets""#), "{x}");
        assert!(
            x.contains("&lt;200&gt;, got &quot;500&quot; &amp; \u{FFFD}"),
            "{x}"
        );
        assert!(
            x.contains(r#"<skipped message="known failure: server bug"/>"#),
            "{x}"
        );
        assert!(!x.contains('\u{1}'));
    }

    #[test]
    fn the_html_page_leads_with_the_verdict_and_lists_failures() {
        let h = sample().to_html();
        assert!(
            h.contains(r#"<p class="verdict failed">1 passed, 1 failed, 1 skipped</p>"#),
            "{h}"
        );
        assert!(h.contains("<h2>Failures</h2>"));
        assert!(h.contains("site/b"));
        assert!(!h.contains("<200>"), "escaped");
    }
}
