//! `catalog harvest …`: run harvests in the foreground (with a progress bar), list sources and
//! jobs, abort, clear, and purge old job history.

use std::time::Duration;

use catalog_framework::cli::{CliCommand, CliContext};
use catalog_framework::prelude::*;
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::store;

/// The `harvest` subcommand.
pub(crate) struct HarvestCommand;

fn source_arg() -> Arg {
    Arg::new("source")
        .long("source")
        .value_name("NAME")
        .help("The harvest source's name or id")
}

#[async_trait]
impl CliCommand for HarvestCommand {
    fn command(&self) -> Command {
        Command::new("harvest")
            .about("Harvesting: run sources in the foreground, list sources and jobs, abort, clear")
            .subcommand_required(true)
            .subcommand(
                Command::new("run")
                    .about(
                        "Run a source's harvest (or every due source's and every pending job) \
                         in this process, with a progress bar, until it ends",
                    )
                    .arg(source_arg())
                    .arg(
                        Arg::new("force-all")
                            .long("force-all")
                            .action(ArgAction::SetTrue)
                            .help("Write every record, even unchanged ones, and read the whole source"),
                    )
                    .arg(
                        Arg::new("force")
                            .long("force")
                            .action(ArgAction::SetTrue)
                            .help("Delete what the source no longer has even beyond catalog.harvest.max_delete_share"),
                    )
                    .arg(
                        Arg::new("dry-run")
                            .long("dry-run")
                            .action(ArgAction::SetTrue)
                            .help("Read the source and say what would be added, updated and deleted, writing nothing"),
                    ),
            )
            .subcommand(
                Command::new("sources")
                    .about("List harvest sources")
                    .arg(
                        Arg::new("all")
                            .long("all")
                            .action(ArgAction::SetTrue)
                            .help("Inactive (deleted) sources too"),
                    ),
            )
            .subcommand(
                Command::new("jobs")
                    .about("List harvest jobs, newest first")
                    .arg(source_arg()),
            )
            .subcommand(
                Command::new("abort")
                    .about("Abort a job (by its id) or a source's newest job (by the source's name)")
                    .arg(Arg::new("target").required(true).value_name("SOURCE_OR_JOB")),
            )
            .subcommand(
                Command::new("clear")
                    .about("Purge every dataset a source harvested, and its jobs")
                    .arg(Arg::new("source").required(true).value_name("SOURCE")),
            )
            .subcommand(
                Command::new("purge-history")
                    .about("Delete finished jobs older than some days (keeping what current datasets need)")
                    .arg(source_arg())
                    .arg(
                        Arg::new("days")
                            .long("older-than-days")
                            .value_parser(clap::value_parser!(u32))
                            .default_value("30"),
                    ),
            )
    }

    async fn run(&self, cx: &CliContext<'_>, args: &ArgMatches) -> anyhow::Result<()> {
        let app = cx.app;
        match args.subcommand() {
            Some(("run", a)) => {
                let source = a.get_one::<String>("source").cloned();
                if a.get_flag("dry-run") {
                    let Some(source) = source else {
                        anyhow::bail!("--dry-run needs --source");
                    };
                    return dry_run(app, &source, a.get_flag("force-all")).await;
                }
                run(cx, source, a.get_flag("force-all"), a.get_flag("force")).await
            }
            Some(("sources", a)) => sources(app, a.get_flag("all")).await,
            Some(("jobs", a)) => jobs(app, a.get_one::<String>("source").cloned()).await,
            Some(("abort", a)) => {
                let target = a.get_one::<String>("target").cloned().unwrap_or_default();
                let job = call(app, "harvest_job_abort", json!({"id": target})).await?;
                println!(
                    "Job {}: {}",
                    job["id"].as_str().unwrap_or(""),
                    job["status"].as_str().unwrap_or("")
                );
                Ok(())
            }
            Some(("clear", a)) => {
                let source = a.get_one::<String>("source").cloned().unwrap_or_default();
                call(app, "harvest_source_clear", json!({"id": source})).await?;
                println!("Cleared harvest source: {source}");
                Ok(())
            }
            Some(("purge-history", a)) => {
                let days = *a.get_one::<u32>("days").unwrap_or(&30);
                let source = match a.get_one::<String>("source") {
                    Some(s) => Some(source_id(app, s).await?),
                    None => None,
                };
                let before = catalog_framework::store::job_time(
                    catalog_framework::store::job_now() - chrono::Duration::days(i64::from(days)),
                );
                let _guard = app.store.lock_writes().await;
                let mut conn = app.store.pool.acquire().await?;
                let mut tx = sqlx::Connection::begin(&mut *conn).await?;
                let n = store::purge_history(&mut tx, source.as_deref(), &before).await?;
                tx.commit().await?;
                println!("Purged {n} finished jobs older than {days} days");
                Ok(())
            }
            _ => anyhow::bail!("unknown harvest command"),
        }
    }
}

/// Runs an action as the site does (CKAN's CLI: `ignore_auth`), as the harvest user.
async fn call(app: &AppState, action: &str, params: Value) -> anyhow::Result<Value> {
    let user = crate::run::harvest_user(app)
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
    let mut ctx = ActionContext::new(app.clone(), Some(user));
    ctx.ignore_auth = true;
    ctx.run_top(action, params.as_object().cloned().unwrap_or_default())
        .await
        .map_err(|e| anyhow::anyhow!("{action}: {}", e.to_error_object()))
}

async fn source_id(app: &AppState, name: &str) -> anyhow::Result<String> {
    let s = call(app, "harvest_source_show", json!({"id": name}))
        .await
        .map_err(|e| anyhow::anyhow!("harvest source {name:?}: {e}"))?;
    Ok(s["id"].as_str().unwrap_or_default().to_string())
}

/// Creates (or takes up) the jobs to run, starts workers here and follows the jobs to their end.
async fn run(
    cx: &CliContext<'_>,
    source: Option<String>,
    force_all: bool,
    force: bool,
) -> anyhow::Result<()> {
    let app = cx.app;
    let job_ids: Vec<String> = match &source {
        Some(name) => {
            let id = source_id(app, name).await?;
            let mut conn = app.store.pool.acquire().await?;
            let active = store::active_job(&mut conn, &id).await?;
            drop(conn);
            match active {
                Some(j) if j.status == store::status::RUNNING => vec![j.id],
                Some(j) => {
                    call(app, "harvest_send_job_to_gather_queue", json!({"id": j.id})).await?;
                    vec![j.id]
                }
                None => {
                    let job = call(
                        app,
                        "harvest_job_create",
                        json!({"source_id": id, "force_all": force_all, "force": force}),
                    )
                    .await?;
                    vec![job["id"].as_str().unwrap_or_default().to_string()]
                }
            }
        }
        None => {
            call(app, "harvest_jobs_run", json!({})).await?;
            let mut conn = app.store.pool.acquire().await?;
            store::jobs(&mut conn, None, Some(store::status::RUNNING), 10_000)
                .await?
                .into_iter()
                .map(|j| j.id)
                .collect()
        }
    };
    if job_ids.is_empty() {
        println!("No harvest job to run");
        return Ok(());
    }
    let workers = cx
        .workers
        .spawn(app.clone(), vec![crate::run::QUEUE.to_string()], 1);
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(indicatif::ProgressStyle::with_template(
        "{elapsed_precise} {spinner} {msg}",
    )?);
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut finished = Vec::new();
    let mut ticks = 0u64;
    loop {
        let mut conn = app.store.pool.acquire().await?;
        let mut running = 0;
        let mut line = Vec::new();
        for id in &job_ids {
            let Some(job) = store::job(&mut conn, id).await? else {
                continue;
            };
            let stats = crate::dicts::job_stats(&mut conn, id)
                .await
                .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
            let pages = job.gather_state["pages"].as_u64().unwrap_or(0);
            line.push(format!(
                "{}: {} page(s), {} added, {} updated, {} not modified, {} errored, {} deleted",
                &id[..8.min(id.len())],
                pages,
                stats["added"],
                stats["updated"],
                stats["not modified"],
                stats["errored"],
                stats["deleted"]
            ));
            if job.status == store::status::RUNNING || job.status == store::status::NEW {
                running += 1;
            } else if !finished.contains(id) {
                finished.push(id.clone());
            }
        }
        drop(conn);
        bar.set_message(line.join(" | "));
        if running == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        // No server may run beside this command: keep the search index near the store.
        ticks += 1;
        if ticks.is_multiple_of(10) {
            crate::run::finish::catch_up_derived_state(app).await;
        }
    }
    crate::run::finish::catch_up_derived_state(app).await;
    bar.finish();
    workers.stop().await;
    let mut conn = app.store.pool.acquire().await?;
    for id in &job_ids {
        let errors = store::gather_errors(&mut conn, id).await?;
        for e in errors.iter().take(10) {
            println!("gather error: {e}");
        }
    }
    Ok(())
}

/// Reads the source without writing: what a run would add, update, leave and delete.
async fn dry_run(app: &AppState, source: &str, force_all: bool) -> anyhow::Result<()> {
    let report = crate::run::dry_run::dry_run(app, source, force_all).await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

async fn sources(app: &AppState, all: bool) -> anyhow::Result<()> {
    let mut conn = app.store.pool.acquire().await?;
    let rows = store::sources(&mut conn, !all, None, 100_000).await?;
    for s in &rows {
        let name = catalog_framework::store::package_by_ref(&mut conn, &s.id)
            .await?
            .map(|p| p.name)
            .unwrap_or_default();
        let last = store::jobs(&mut conn, Some(&s.id), None, 1).await?;
        println!(
            "{name}\t{}\t{}\t{}\t{}\tlast job: {}",
            s.source_type,
            s.frequency,
            if s.active { "active" } else { "inactive" },
            s.url,
            last.first().map(|j| j.status.as_str()).unwrap_or("none")
        );
    }
    println!("There are {} harvest sources", rows.len());
    Ok(())
}

async fn jobs(app: &AppState, source: Option<String>) -> anyhow::Result<()> {
    let source = match source {
        Some(s) => Some(source_id(app, &s).await?),
        None => None,
    };
    let mut conn = app.store.pool.acquire().await?;
    for j in store::jobs(&mut conn, source.as_deref(), None, 1000).await? {
        let stats = crate::dicts::job_stats(&mut conn, &j.id)
            .await
            .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
        println!(
            "{}\t{}\t{}\tcreated {}\t{}",
            j.id, j.source_id, j.status, j.created, stats
        );
    }
    Ok(())
}
