//! The plugin this binary's own registrations belong to (the test actions, the wrapper of
//! `package_create`, the job handlers of `jobs`): off unless a suite's config turns it on with
//! [`enable`], so every other suite, the registry snapshot and the OpenAPI document see the
//! shipped plugins only, as they did when each suite was a binary of its own.

use catalog_framework::prelude::*;
use catalog_framework::register_plugin;

const KEY: &str = "integration_tests";

struct IntegrationTests;

#[async_trait]
impl Plugin for IntegrationTests {
    fn name(&self) -> &'static str {
        KEY
    }

    fn enabled_by_default(&self, config: &Config) -> bool {
        config.catalogext.values.get(KEY) == Some(&Value::Bool(true))
    }
}
register_plugin!(IntegrationTests);

/// Every registration of the shipped plugins (every one linked, all enabled), without this
/// binary's own: what the registry and OpenAPI snapshots show.
pub(crate) fn shipped_registry() -> Registry {
    Registry::build_without(&[KEY]).expect("no registration clash")
}

/// Turns the test registrations on for an app built from this config.
pub(crate) fn enable(config: &mut Config) {
    config
        .catalogext
        .values
        .insert(KEY.into(), Value::Bool(true));
}

/// Runs the calling test alone in a child process of this binary and returns `false` in the
/// parent once the child passed; returns `true` in the child, which then runs the test's body.
/// For tests that install a process-wide tracing subscriber: in a process of their own, it
/// sees their queries only. `name` is the test's path inside the binary
/// (`store_reads::package_show_reads_the_store_once_on_a_miss`).
pub(crate) fn alone(name: &str) -> bool {
    const VAR: &str = "CATALOG_TEST_ALONE";
    if std::env::var(VAR).as_deref() == Ok(name) {
        return true;
    }
    let status = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(VAR, name)
        .status()
        .expect("run the test binary");
    assert!(
        status.success(),
        "{name}, run alone in a child process, failed"
    );
    false
}
