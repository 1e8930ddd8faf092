//! `catalog-conformance`: run the CKAN conformance cases against any deployment.
//!
//! Exit codes: 0 every step passed (or was skipped or a known failure); 1 a step failed;
//! 2 the invocation or the cases are wrong (unknown option or profile, a case file that does
//! not parse); 3 the deployment could not be reached.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use catalog_conformance::{
    load_suite_from, Assumptions, CaseSource, RunOptions, Runner, DEFAULT_PROFILE,
};

/// Runs the CKAN Action API conformance cases against a live catalog (or CKAN) deployment.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Site root, e.g. http://localhost:5000
    #[arg(long, env = "CATALOG_BASE_URL")]
    base_url: String,
    /// A sysadmin's API token, sent in the Authorization header (needed unless --read-only,
    /// where it only widens what is read)
    #[arg(long, env = "CATALOG_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Directory of case files (default: the cases built into this binary)
    #[arg(long)]
    cases: Option<PathBuf>,
    /// Only run scenarios whose name or file name contains this text
    #[arg(long)]
    filter: Option<String>,
    /// Whose answers to expect: `catalog` (this project) or a profile file's name under the
    /// cases' profiles/ (`ckan-2.12`)
    #[arg(long, default_value = DEFAULT_PROFILE)]
    profile: String,
    /// A setting the deployment has (`key=value`, e.g. ckan.auth.create_unowned_dataset=true);
    /// cases that need a setting not assumed are skipped. Repeatable.
    #[arg(long = "assume", value_name = "KEY=VALUE")]
    assume: Vec<String>,
    /// A file of `key=value` lines to assume
    #[arg(long, value_name = "FILE")]
    assume_file: Vec<PathBuf>,
    /// Only read the deployment's existing content: GET requests of paths and read actions,
    /// nothing else is ever sent (safe against a live portal)
    #[arg(long)]
    read_only: bool,
    /// At most this many requests (default 1000 with --read-only); later steps are skipped
    #[arg(long)]
    max_requests: Option<u64>,
    /// At most this many requests a second (default 5 with --read-only)
    #[arg(long)]
    rate: Option<f64>,
    /// Also write the report as JSON (schema catalog-conformance-report/1) to this file
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write the report as JUnit XML to this file
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write the report as an HTML page to this file
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// List the profiles the cases have and exit
    #[arg(long)]
    list_profiles: bool,
}

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_UNREACHABLE: u8 = 3;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("catalog-conformance: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let source = match &args.cases {
        Some(dir) => CaseSource::Dir(dir.clone()),
        None => CaseSource::Embedded,
    };
    if args.list_profiles {
        for p in source.profiles()? {
            println!("{p}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.token.is_none() && !args.read_only {
        anyhow::bail!("--token (a sysadmin's API token) is needed unless --read-only");
    }
    let mut assumptions = Assumptions::new();
    for f in &args.assume_file {
        assumptions.add_file(f)?;
    }
    for a in &args.assume {
        assumptions.add_arg(a)?;
    }
    let (scenarios, known) = load_suite_from(&source, args.filter.as_deref(), &args.profile)?;
    let opts = RunOptions {
        token: args.token.clone(),
        assumptions,
        read_only: args.read_only,
        max_requests: args.max_requests.or(args.read_only.then_some(1000)),
        rate: args.rate.or(args.read_only.then_some(5.0)),
        profile: args.profile.clone(),
    };
    let mut runner = Runner::with_options(&args.base_url, opts)?;
    if let Err(why) = runner.probe().await {
        eprintln!(
            "catalog-conformance: cannot reach {}: {why}",
            runner.base_url()
        );
        return Ok(ExitCode::from(EXIT_UNREACHABLE));
    }
    let count = scenarios
        .iter()
        .filter(|s| s.read_only || !args.read_only)
        .count();
    println!(
        "running {count} scenarios against {} (profile {}, {}; run suffix {})",
        runner.base_url(),
        args.profile,
        if args.read_only {
            "read-only"
        } else {
            "writes"
        },
        runner.run_suffix()
    );
    let report = runner.run_all(&scenarios, &known).await;
    println!("{report}");
    if let Some(p) = &args.json {
        std::fs::write(p, serde_json::to_string_pretty(&report.to_json())? + "\n")?;
    }
    if let Some(p) = &args.junit {
        std::fs::write(p, report.to_junit())?;
    }
    if let Some(p) = &args.html {
        std::fs::write(p, report.to_html())?;
    }
    Ok(if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    })
}
