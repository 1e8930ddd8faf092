//! `catalog-conformance`: run the CKAN conformance cases against any deployment.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Runs the CKAN Action API conformance cases against a live catalog (or CKAN) deployment.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Site root, e.g. http://localhost:5000
    #[arg(long, env = "CATALOG_BASE_URL")]
    base_url: String,
    /// A sysadmin's API token, sent in the Authorization header
    #[arg(long, env = "CATALOG_TOKEN", hide_env_values = true)]
    token: String,
    /// Directory of case files (default: the cases shipped with this crate)
    #[arg(long)]
    cases: Option<PathBuf>,
    /// Only run scenarios whose name or file name contains this text
    #[arg(long)]
    filter: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let dir = args
        .cases
        .unwrap_or_else(catalog_conformance::default_cases_dir);
    let (scenarios, known) = catalog_conformance::load_suite(&dir, args.filter.as_deref())?;
    let runner = catalog_conformance::Runner::new(&args.base_url, &args.token)?;
    println!(
        "running {} scenarios against {} (run suffix {})",
        scenarios.len(),
        runner.base_url(),
        runner.run_suffix()
    );
    let report = runner.run_all(&scenarios, &known).await;
    println!("{report}");
    Ok(if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
