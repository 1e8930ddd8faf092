//! Subcommands a plugin adds to the `catalog` command line (`register_cli_command!`), such as
//! `catalog harvest …`. The binary asks every linked plugin for its subcommand before it parses
//! the arguments (the configuration, and so the set of enabled plugins, is not known yet), and
//! runs one only when its plugin is enabled.

use async_trait::async_trait;

use crate::context::AppState;
use crate::registry::Registration;

/// A subcommand of `catalog`.
#[async_trait]
pub trait CliCommand: Send + Sync + 'static {
    /// The subcommand, its help and arguments, in clap's builder form; its name must be the
    /// registered name.
    fn command(&self) -> clap::Command;

    /// Runs the subcommand on the built application with its parsed arguments.
    async fn run(&self, cx: &CliContext<'_>, args: &clap::ArgMatches) -> anyhow::Result<()>;
}

/// What a plugin's subcommand runs with: the application, and background job workers it can
/// start in its own process (a command that runs jobs in the foreground, as
/// `catalog harvest run` does).
pub struct CliContext<'a> {
    pub app: &'a AppState,
    pub workers: &'a dyn WorkerSpawner,
}

/// Starts background job workers in this process (the host's worker pool).
pub trait WorkerSpawner: Send + Sync {
    /// Starts `workers` workers on `queues` (the first emptied first).
    fn spawn(&self, app: AppState, queues: Vec<String>, workers: usize) -> Box<dyn RunningWorkers>;
}

/// Workers started by a [`WorkerSpawner`].
#[async_trait]
pub trait RunningWorkers: Send {
    /// Stops them, letting a running job finish for `catalog.jobs.shutdown_grace_secs`.
    async fn stop(self: Box<Self>);
}

crate::extension_point!(
    /// A [`CliCommand`], submitted with [`register_cli_command!`](crate::register_cli_command).
    pub CliCommandRegistration, Box<dyn CliCommand>,
    collected("cli_commands", "CLI command")
);

/// Registers a subcommand: `register_cli_command!("harvest", HarvestCommand);`
#[macro_export]
macro_rules! register_cli_command {
    ($name:expr, $value:expr) => {
        $crate::register_at!($crate::cli::CliCommandRegistration, $name, $value, 0);
    };
}

/// The subcommands of every linked plugin, enabled or not (the highest priority of each name):
/// what the binary adds to its parser.
pub fn linked_commands() -> Vec<(&'static str, Box<dyn CliCommand>)> {
    let mut best: std::collections::BTreeMap<&'static str, &CliCommandRegistration> =
        std::collections::BTreeMap::new();
    for r in inventory::iter::<CliCommandRegistration>() {
        match best.get(r.name()) {
            Some(b) if b.priority() >= r.priority() => {}
            _ => {
                best.insert(r.name(), r);
            }
        }
    }
    best.into_iter()
        .map(|(name, r)| (name, (r.builder())()))
        .collect()
}
