//! `catalog jobs …`: the commands' output as CKAN's, and a worker killed mid-job (`kill -9`)
//! whose job another worker runs again once its heartbeat is stale.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use catalog_host::testkit::{stores, ScratchDb, StoreKind};

const BIN: &str = env!("CARGO_BIN_EXE_catalog");

struct Site {
    dir: tempfile::TempDir,
    db: Option<ScratchDb>,
}

impl Site {
    async fn new(kind: StoreKind) -> Site {
        let db = match kind {
            StoreKind::Sqlite => None,
            StoreKind::Postgres => Some(ScratchDb::create("catalog_jobs_cli").await.unwrap()),
        };
        Site {
            dir: tempfile::tempdir().unwrap(),
            db,
        }
    }

    fn command(&self, env: &[(&str, &str)]) -> Command {
        let mut c = Command::new(BIN);
        c.arg("--data-dir").arg(self.dir.path());
        if let Some(db) = &self.db {
            c.arg("--database-url").arg(&db.url);
            c.env("CATALOG__SEARCH__BACKEND", "postgres");
        }
        c.env("RUST_LOG", "info,sqlx=warn")
            .env("RUST_BACKTRACE", "0");
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }

    /// Runs a command; its success and stdout.
    fn run(&self, args: &[&str]) -> (bool, String, String) {
        let out = self.command(&[]).args(args).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args);
        assert!(ok, "catalog {args:?} failed: {err}");
        out
    }

    fn worker(&self, env: &[(&str, &str)]) -> Child {
        self.command(env)
            .args(["jobs", "worker"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// `jobs show`'s `State:` line.
    fn state(&self, id: &str) -> String {
        let out = self.ok(&["jobs", "show", id]);
        line(&out, "State:")
    }

    fn wait_for_state(&self, id: &str, state: &str, within: Duration) -> String {
        let start = Instant::now();
        loop {
            if self.state(id) == state {
                return self.ok(&["jobs", "show", id]);
            }
            assert!(
                start.elapsed() < within,
                "job {id} not {state} after {within:?}: {}",
                self.ok(&["jobs", "show", id])
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn line(out: &str, prefix: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The job id of `jobs test`'s line `Added test job <id> to queue "<queue>"`.
fn added(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("Added test job "))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_commands_print_what_ckan_prints() {
    for kind in stores().await {
        let site = Site::new(kind).await;
        assert_eq!(site.ok(&["jobs", "list"]), "There are no pending jobs.\n");
        let out = site.ok(&["jobs", "test"]);
        let d = added(&out);
        assert_eq!(
            out,
            format!("Added test job {} to queue \"default\"\n", d[0])
        );
        let w = added(&site.ok(&["jobs", "test", "w2_queue", "w2_queue"]));
        assert_eq!(w.len(), 2);

        let list = site.ok(&["jobs", "list"]);
        let lines: Vec<&str> = list.lines().collect();
        assert_eq!(lines.len(), 3, "{list}");
        let fields: Vec<&str> = lines[0].splitn(4, ' ').collect();
        assert_eq!(fields[0].len(), 19, "created: {}", fields[0]);
        assert_eq!(&fields[1..], [d[0].as_str(), "default", "\"A test job\""]);
        assert_eq!(
            site.ok(&["jobs", "list", "--ids", "w2_queue"]),
            format!("{}\n{}\n", w[0], w[1])
        );
        assert_eq!(
            site.ok(&["jobs", "list", "-i", "-l", "1"]),
            format!("{}\n", d[0])
        );

        let show = site.ok(&["jobs", "show", &d[0]]);
        assert_eq!(line(&show, "ID:"), d[0]);
        assert_eq!(line(&show, "Title:"), "\"A test job\"");
        assert_eq!(line(&show, "Queue:"), "default");
        assert_eq!(line(&show, "State:"), "queued");

        let (ok, _, err) = site.run(&["jobs", "show", "nope"]);
        assert!(!ok);
        assert!(err.contains("There is no job with ID \"nope\""), "{err}");
        let (ok, _, err) = site.run(&["jobs", "cancel", "nope"]);
        assert!(!ok);
        assert!(err.contains("There is no job with ID \"nope\""), "{err}");

        assert_eq!(
            site.ok(&["jobs", "cancel", &d[0]]),
            format!("Cancelled job {}\n", d[0])
        );
        assert_eq!(
            site.ok(&["jobs", "clear", "w2_queue"]),
            "Cleared queue(s) \"w2_queue\"\n"
        );
        assert_eq!(
            site.ok(&["jobs", "clear"]),
            "Cleared queue(s) \"default\", \"w2_queue\"\n"
        );

        // A burst worker runs what is due and exits.
        let id = added(&site.ok(&["jobs", "test", "other"])).remove(0);
        site.ok(&["jobs", "worker", "--burst"]);
        assert_eq!(site.state(&id), "queued", "not a queue the worker took");
        site.ok(&["jobs", "worker", "--burst", "default", "other"]);
        let show = site.ok(&["jobs", "show", &id]);
        assert_eq!(line(&show, "State:"), "finished", "{show}");
        assert_eq!(line(&show, "Result:"), r#"{"args":["A test job"]}"#);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_killed_mid_run_runs_again_on_another_worker() {
    for kind in stores().await {
        let site = Site::new(kind).await;
        let id = added(&site.ok(&["jobs", "test", "--sleep", "3"])).remove(0);
        let mut first = site.worker(&[]);
        site.wait_for_state(&id, "running", Duration::from_secs(30));
        first.kill().unwrap(); // SIGKILL: no chance to give the job back
        first.wait().unwrap();
        assert_eq!(
            site.state(&id),
            "running",
            "{kind:?}: the dead worker's claim stays"
        );

        let mut second = site.worker(&[
            ("CATALOG__JOBS__STALE_AFTER_SECS", "2"),
            ("CATALOG__JOBS__POLL_INTERVAL_MS", "100"),
        ]);
        let show = site.wait_for_state(&id, "finished", Duration::from_secs(60));
        assert_eq!(line(&show, "Attempts:"), "2 of 3", "{kind:?}: {show}");
        assert_eq!(line(&show, "Result:"), r#"{"args":["A test job"]}"#);
        // SIGTERM: a graceful stop.
        let _ = Command::new("kill")
            .args(["-TERM", &second.id().to_string()])
            .status();
        let status = second.wait().unwrap();
        assert!(status.success(), "{kind:?}: worker exit {status:?}");
    }
}
