//! Command-line interface: the verbs CKAN admins know (`serve`, `db init`, `sysadmin add` …).

use std::net::SocketAddr;
use std::path::PathBuf;

use catalog_framework::prelude::AppState;
use catalog_framework::prelude::Config;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "catalog",
    version,
    about = "A CKAN-compatible open-data catalog"
)]
struct Cli {
    #[command(flatten)]
    globals: Globals,
    #[command(subcommand)]
    command: Command,
}

/// The options every subcommand takes, the plugins' too.
#[derive(clap::Args)]
struct Globals {
    /// TOML configuration file (keys as `catalog.site_url = "…"`).
    #[arg(long, global = true, env = "CATALOG_CONFIG")]
    config: Option<PathBuf>,
    /// Data directory: the SQLite database and uploaded files.
    #[arg(
        long,
        global = true,
        env = "CATALOG_DATA_DIR",
        default_value = "./data"
    )]
    data_dir: PathBuf,
    /// Database URL; `postgres://…` selects PostgreSQL. Default: SQLite in the data directory.
    #[arg(long, global = true, env = "CATALOG_DATABASE_URL")]
    database_url: Option<String>,
    /// Log more: `-v` logs what `serve` logs (INFO) for any command, `-vv` DEBUG (the whole
    /// registry at start-up). `RUST_LOG` overrides both.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server (migrations run first).
    Serve {
        #[arg(long, default_value = "127.0.0.1:5000")]
        bind: SocketAddr,
    },
    /// Database administration.
    Db {
        #[command(subcommand)]
        command: DbCommand,
    },
    /// Sysadmin accounts.
    Sysadmin {
        #[command(subcommand)]
        command: SysadminCommand,
    },
    /// User accounts and their API tokens.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// The search index.
    SearchIndex {
        #[command(subcommand)]
        command: SearchIndexCommand,
    },
    /// Background jobs: run a worker, list, show, cancel and clear jobs (CKAN's `ckan jobs`).
    Jobs {
        #[command(subcommand)]
        command: JobsCommand,
    },
    /// Schema files (ckanext-scheming's format).
    Scheming {
        #[command(subcommand)]
        command: SchemingCommand,
    },
}

#[derive(Subcommand)]
enum SchemingCommand {
    /// Check schema and presets files as start-up would, without starting anything (the
    /// presets are the configuration's `catalog.scheming.presets`); exits 1 when one is bad.
    Check {
        /// Paths, or the `module:file` names of built-in files.
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Validate a dataset dict (a JSON file, as `package_create` takes it) against a dataset
    /// schema file, without starting anything: prints the dict as it would be stored, or the
    /// error as the API answers it (exit code 1). `--repeat N` validates N times and prints the
    /// time per validation to stderr (a benchmark).
    Validate {
        /// The schema file (a path or a built-in `module:file` name).
        #[arg(long)]
        schema: String,
        /// The dataset dict.
        dataset: PathBuf,
        /// Validate as an update rather than a create.
        #[arg(long)]
        update: bool,
        #[arg(long, default_value_t = 1)]
        repeat: u32,
    },
}

#[derive(Subcommand)]
enum JobsCommand {
    /// Start a worker that takes jobs from the given queues (the first emptied first) and
    /// runs them; `default` when no queue is given. SIGINT or SIGTERM stops it, giving back a
    /// job that does not finish within `catalog.jobs.shutdown_grace_secs`.
    Worker {
        queues: Vec<String>,
        /// Exit as soon as no job is due.
        #[arg(long)]
        burst: bool,
        /// Exit after being idle this many seconds.
        #[arg(long, value_name = "SECONDS")]
        max_idle_time: Option<u64>,
    },
    /// List the queued jobs of the given queues (every queue when none is given).
    List {
        queues: Vec<String>,
        /// Number of jobs to return (default `catalog.jobs.default_list_limit`, 200).
        #[arg(short, long)]
        limit: Option<i64>,
        /// Only list the jobs' ids.
        #[arg(short, long)]
        ids: bool,
    },
    /// Show details about a specific job.
    Show { id: String },
    /// Cancel a specific job: remove it from its queue and delete it.
    Cancel { id: String },
    /// Cancel every queued job of the given queues (of every queue when none is given).
    Clear { queues: Vec<String> },
    /// Enqueue a test job on each given queue (on `default` when none is given).
    Test {
        queues: Vec<String>,
        /// Make the job pause this many seconds when it runs (to watch a worker at work).
        #[arg(long, value_name = "SECONDS", default_value_t = 0)]
        sleep: u64,
    },
}

#[derive(Subcommand)]
enum SearchIndexCommand {
    /// Rebuild the index from the store into a fresh one, swapped in at the end; datasets
    /// that fail are skipped and listed. With the embedded backend, stop the server first or
    /// call the `search_index_rebuild` action on it.
    Rebuild,
    /// List datasets missing from the index or stale in it (exit status 1 if any).
    Check,
}

#[derive(Subcommand)]
enum DbCommand {
    /// Create or migrate the database schema.
    Init,
}

#[derive(Subcommand)]
enum SysadminCommand {
    /// Create a sysadmin.
    Add {
        name: String,
        #[arg(long)]
        email: String,
        #[arg(long)]
        password: String,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user.
    Add {
        name: String,
        #[arg(long)]
        email: String,
        #[arg(long)]
        password: String,
    },
    /// API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token; it is printed alone on the last line of stdout.
    Add { user: String, token_name: String },
}

pub(crate) fn main() -> anyhow::Result<()> {
    // Plugins' subcommands (`catalog harvest …`) join the built-in ones before parsing.
    let plugin_commands = catalog_framework::cli::linked_commands();
    let mut parser = Cli::command();
    for (_, c) in &plugin_commands {
        parser = parser.subcommand(c.command());
    }
    let matches = parser.get_matches();
    let plugin = matches.subcommand().and_then(|(name, args)| {
        plugin_commands
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, _)| (*n, args.clone()))
    });
    let (globals, command) = match plugin {
        Some((name, args)) => (
            Globals::from_arg_matches(&matches)?,
            Invocation::Plugin(name, args),
        ),
        None => {
            let cli = Cli::from_arg_matches(&matches)?;
            (cli.globals, Invocation::BuiltIn(cli.command))
        }
    };
    // `serve` and `jobs worker` log INFO (one line of registered plugins, then "listening");
    // an admin command prints its own output and logs warnings only, unless asked with -v.
    let serving = matches!(
        command,
        Invocation::BuiltIn(
            Command::Serve { .. }
                | Command::Jobs {
                    command: JobsCommand::Worker { .. }
                }
        )
    );
    let level = match (globals.verbose, serving) {
        (0, false) => "warn",
        (0, true) | (1, _) => "info",
        _ => "debug",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // tantivy warns "couldn't find segment in SegmentManager" when a background
                // merge finishes after a commit dropped one of its input segments for having
                // no live document left (every dataset in it was re-indexed since): the merge
                // is abandoned and nothing is lost. Frequent small commits make it common.
                .unwrap_or_else(|_| {
                    format!("{level},sqlx=warn,tantivy::indexer::segment_manager=error").into()
                }),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match command {
            Invocation::BuiltIn(command) => run(globals, command).await,
            Invocation::Plugin(name, args) => run_plugin(globals, name, &args).await,
        }
    })
}

/// What the command line asks for: a built-in command or a plugin's.
enum Invocation {
    BuiltIn(Command),
    Plugin(&'static str, clap::ArgMatches),
}

/// Runs a plugin's subcommand, when its plugin is enabled.
async fn run_plugin(
    globals: Globals,
    name: &'static str,
    args: &clap::ArgMatches,
) -> anyhow::Result<()> {
    let app = app(&globals, false).await?;
    let command = app
        .registry
        .extensions::<catalog_framework::cli::CliCommandRegistration>()
        .get(name)
        .cloned()
        .ok_or_else(|| {
            anyhow::anyhow!(
                "`catalog {name}` belongs to a plugin that is not enabled (catalog.plugins)"
            )
        })?;
    let cx = catalog_framework::cli::CliContext {
        app: &app,
        workers: &catalog_host::HostWorkers,
    };
    command.run(&cx, args).await
}

/// `catalog scheming …`: schema files checked and datasets validated without starting
/// anything (no store, no index).
fn scheming(globals: &Globals, command: &SchemingCommand) -> anyhow::Result<()> {
    let config = Config::load(globals.config.as_deref())?;
    let settings = catalog_plugin_scheming::Settings::from_config(&config);
    let (ok, lines) = match command {
        SchemingCommand::Check { files } => {
            match catalog_plugin_scheming::check_files(files, &settings) {
                Ok(lines) => (true, lines),
                Err(lines) => (false, lines),
            }
        }
        SchemingCommand::Validate {
            schema,
            dataset,
            update,
            repeat,
        } => {
            let text = std::fs::read_to_string(dataset)?;
            let dict: serde_json::Value = serde_json::from_str(&text)?;
            let op = if *update {
                catalog_framework::prelude::SchemaOp::Update
            } else {
                catalog_framework::prelude::SchemaOp::Create
            };
            let v = catalog_plugin_scheming::validate_file(
                schema, &settings, &config, &dict, op, *repeat,
            )
            .map_err(anyhow::Error::msg)?;
            if *repeat > 1 {
                eprintln!(
                    "{repeat} validations: {:.1} µs each (mean)",
                    v.elapsed.as_secs_f64() * 1e6 / f64::from(*repeat)
                );
            }
            let ok = v.result.is_ok();
            let out = match v.result {
                Ok(d) => serde_json::to_string_pretty(&d)?,
                Err(e) => serde_json::to_string_pretty(&e)?,
            };
            (ok, vec![out])
        }
    };
    lines.iter().for_each(|l| println!("{l}"));
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

async fn app(globals: &Globals, serving: bool) -> anyhow::Result<AppState> {
    let config = Config::load(globals.config.as_deref())?;
    std::fs::create_dir_all(&globals.data_dir)?;
    let url = globals
        .database_url
        .clone()
        .unwrap_or_else(|| catalog_framework::store::Store::sqlite_url_in(&globals.data_dir));
    // A server fills an empty index while it serves (a node joining a deployment); a command
    // has it filled before it runs.
    let index_start = if serving {
        catalog_host::IndexStart::WhileServing
    } else {
        catalog_host::IndexStart::Blocking
    };
    catalog_host::build_app_with(config, &url, globals.data_dir.clone(), index_start).await
}

async fn run(globals: Globals, command: Command) -> anyhow::Result<()> {
    if let Command::Scheming { command } = &command {
        return scheming(&globals, command);
    }
    let app = app(&globals, matches!(command, Command::Serve { .. })).await?;
    match command {
        Command::Serve { bind } => {
            let listener = tokio::net::TcpListener::bind(bind).await?;
            // The bound address (a port of 0 picks a free one): tests and scripts read it here.
            tracing::info!(addr = %listener.local_addr()?, "listening");
            catalog_host::serve(app, listener).await?;
        }
        Command::SearchIndex { command } => search_index(&app, command).await?,
        Command::Jobs { command } => jobs(&app, command).await?,
        Command::Scheming { .. } => unreachable!("checked before the app is built"),
        Command::Db {
            command: DbCommand::Init,
        } => {
            println!("database initialised");
        }
        Command::Sysadmin {
            command:
                SysadminCommand::Add {
                    name,
                    email,
                    password,
                },
        } => {
            let u = catalog_plugin_core::admin::create_user(&app, &name, &email, &password, true)
                .await?;
            println!(
                "created sysadmin {} ({})",
                name,
                u["id"].as_str().unwrap_or_default()
            );
        }
        Command::User {
            command:
                UserCommand::Add {
                    name,
                    email,
                    password,
                },
        } => {
            let u = catalog_plugin_core::admin::create_user(&app, &name, &email, &password, false)
                .await?;
            println!(
                "created user {} ({})",
                name,
                u["id"].as_str().unwrap_or_default()
            );
        }
        Command::User {
            command:
                UserCommand::Token {
                    command: TokenCommand::Add { user, token_name },
                },
        } => {
            let token = catalog_plugin_core::admin::create_token(&app, &user, &token_name).await?;
            println!("{token}");
        }
    }
    Ok(())
}

async fn search_index(app: &AppState, command: SearchIndexCommand) -> anyhow::Result<()> {
    use catalog_host::SearchService;
    match command {
        SearchIndexCommand::Rebuild => {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} datasets ({per_sec}, eta {eta})",
                )?
                .progress_chars("=> "),
            );
            let started = std::time::Instant::now();
            let report = SearchService::rebuild(app, &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })
            .await?;
            bar.finish();
            let secs = started.elapsed().as_secs_f64();
            println!(
                "indexed {} datasets in {:.1} s ({:.0} datasets/s); {} failed",
                report.indexed,
                secs,
                report.indexed as f64 / secs.max(1e-9),
                report.failed.len()
            );
            for (id, e) in &report.failed {
                println!("failed {id}: {e}");
            }
        }
        SearchIndexCommand::Check => {
            let r = SearchService::check(app).await?;
            println!(
                "checked {} datasets: {} missing, {} stale, {} not in the store",
                r.checked,
                r.missing.len(),
                r.stale.len(),
                r.extra.len()
            );
            for id in &r.missing {
                println!("missing {id}");
            }
            for id in &r.stale {
                println!("stale {id}");
            }
            for id in &r.extra {
                println!("extra {id}");
            }
            if !(r.missing.is_empty() && r.stale.is_empty() && r.extra.is_empty()) {
                std::process::exit(1);
            }
        }
    }
    Ok(())
}

async fn jobs(app: &AppState, command: JobsCommand) -> anyhow::Result<()> {
    use catalog_framework::prelude::ErrorKind;
    use catalog_host::{shutdown_signal, WorkerOptions, WorkerPool};
    use catalog_plugin_core::admin::{enqueue_test_job, run_action};
    use serde_json::{json, Value};

    let action = |name: &'static str, params: Value| async move {
        run_action(app, name, params)
            .await
            .map_err(|e| anyhow::anyhow!("{name} failed: {}", e.to_error_object()))
    };
    // `ckan jobs show|cancel` of an unknown id: CKAN's message, and a failure status.
    let no_such_job =
        |id: &str| -> anyhow::Error { anyhow::anyhow!("There is no job with ID \"{id}\"") };
    match command {
        JobsCommand::Worker {
            queues,
            burst,
            max_idle_time,
        } => {
            let pool = WorkerPool::spawn(
                app.clone(),
                WorkerOptions {
                    queues,
                    workers: 1,
                    burst,
                    max_idle: max_idle_time.map(std::time::Duration::from_secs),
                },
            );
            pool.run_until(shutdown_signal()).await;
            tracing::info!("worker stopped");
        }
        JobsCommand::List { queues, limit, ids } => {
            let mut params = json!({"queues": queues, "ids_only": ids});
            if let Some(l) = limit {
                params["limit"] = json!(l);
            }
            let jobs = action("job_list", params).await?;
            let jobs = jobs.as_array().cloned().unwrap_or_default();
            if jobs.is_empty() {
                println!("There are no pending jobs.");
            }
            for job in jobs {
                if ids {
                    println!("{}", job.as_str().unwrap_or_default());
                } else {
                    let title = match job["title"].as_str() {
                        Some(t) => format!("\"{t}\""),
                        None => String::new(),
                    };
                    println!(
                        "{} {} {} {title}",
                        job["created"].as_str().unwrap_or_default(),
                        job["id"].as_str().unwrap_or_default(),
                        job["queue"].as_str().unwrap_or_default(),
                    );
                }
            }
        }
        JobsCommand::Show { id } => {
            let job = match run_action(app, "job_show", json!({"id": id})).await {
                Ok(job) => job,
                Err(e) if e.kind == ErrorKind::NotFound => return Err(no_such_job(&id)),
                Err(e) => anyhow::bail!("job_show failed: {}", e.to_error_object()),
            };
            let text = |k: &str| job[k].as_str().unwrap_or_default().to_string();
            let title = match job["title"].as_str() {
                Some(t) => format!("\"{t}\""),
                None => "None".into(),
            };
            println!("ID:       {}", text("id"));
            println!("Title:    {title}");
            println!("Created:  {}", text("created"));
            println!("Queue:    {}", text("queue"));
            println!("Kind:     {}", text("kind"));
            println!("State:    {}", text("state"));
            println!("Attempts: {} of {}", job["attempts"], job["max_attempts"]);
            if let Some(e) = job["error"].as_str() {
                println!("Error:    {e}");
            }
            if !job["result"].is_null() {
                println!("Result:   {}", job["result"]);
            }
        }
        JobsCommand::Cancel { id } => {
            match run_action(app, "job_cancel", json!({"id": id})).await {
                Ok(_) => println!("Cancelled job {id}"),
                Err(e) if e.kind == ErrorKind::NotFound => return Err(no_such_job(&id)),
                Err(e) => anyhow::bail!("job_cancel failed: {}", e.to_error_object()),
            }
        }
        JobsCommand::Clear { queues } => {
            let cleared = action("job_clear", json!({"queues": queues})).await?;
            let names: Vec<String> = cleared
                .as_array()
                .into_iter()
                .flatten()
                .map(|q| format!("\"{}\"", q.as_str().unwrap_or_default()))
                .collect();
            println!("Cleared queue(s) {}", names.join(", "));
        }
        JobsCommand::Test { queues, sleep } => {
            let queues = if queues.is_empty() {
                vec![catalog_framework::store::DEFAULT_QUEUE.to_string()]
            } else {
                queues
            };
            for queue in queues {
                let id = enqueue_test_job(app, &queue, sleep)
                    .await
                    .map_err(|e| anyhow::anyhow!("enqueueing failed: {}", e.to_error_object()))?;
                println!("Added test job {id} to queue \"{queue}\"");
            }
        }
    }
    Ok(())
}
