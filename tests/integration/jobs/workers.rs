//! Enqueueing in a transaction, workers, retries, failures, stale jobs, concurrency.

use std::time::{Duration, Instant};

use catalog_framework::jobs::enqueue_job;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_host::{WorkerOptions, WorkerPool};

use catalog_host::testkit::{stores, StoreKind};

use super::support::{runs, start, JobsApp};

fn pool(app: &AppState, workers: usize, queues: &[&str]) -> WorkerPool {
    WorkerPool::spawn(
        app.clone(),
        WorkerOptions {
            queues: queues.iter().map(|s| s.to_string()).collect(),
            workers,
            burst: false,
            max_idle: None,
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_is_enqueued_exactly_when_its_action_commits_and_wakes_the_workers() {
    for kind in stores().await {
        // A poll interval far longer than the test: only the wake-up after commit can start
        // the job in time.
        let t = start(kind, |c| c.catalog.jobs.poll_interval_ms = 600_000).await;
        let workers = pool(&t.app, 1, &["tests"]);
        // Let the worker go idle (it looks once at start).
        tokio::time::sleep(Duration::from_millis(300)).await;

        let err = t
            .call(
                Some(&t.admin),
                "test_enqueue_job",
                json!({"test": "rolled-back", "fail": true}),
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Validation, "{kind:?}");
        assert_eq!(t.count("SELECT COUNT(*) FROM job").await, 0, "{kind:?}");
        assert_eq!(
            t.count("SELECT COUNT(*) FROM job_queue").await,
            0,
            "{kind:?}: the queue was not made known either"
        );

        let id = t.ok("test_enqueue_job", json!({"test": "committed"})).await;
        let id = id.as_str().unwrap();
        let job = t.wait_for(id, "finished", Duration::from_secs(10)).await;
        assert_eq!(job.queue, "tests");
        assert_eq!(job.title.as_deref(), Some("from an action"));
        assert_eq!(job.attempts, 1);
        assert_eq!(job.result.as_deref(), Some(r#"{"n":0}"#));
        workers.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_job_is_retried_with_backoff_then_failed_with_its_error() {
    for kind in stores().await {
        let t = start(kind, |c| {
            c.catalog.jobs.retry_base_ms = 150;
            c.catalog.jobs.poll_interval_ms = 20;
        })
        .await;
        let workers = pool(&t.app, 2, &["default"]);
        let started = Instant::now();
        let job = enqueue_job(
            &t.app,
            "always_fails",
            json!({"why": "no disk"}),
            JobOptions::default(),
        )
        .await
        .unwrap();
        assert_eq!(job.max_attempts, 3, "catalog.jobs.max_attempts");
        let failed = t.wait_for(&job.id, "failed", Duration::from_secs(20)).await;
        let elapsed = started.elapsed();
        assert_eq!(failed.attempts, 3, "{kind:?}");
        assert_eq!(failed.error.as_deref(), Some("boom: no disk"));
        assert!(failed.finished.is_some());
        // Waits of 150·2¹ and 150·2² ms between the three attempts.
        assert!(
            elapsed >= Duration::from_millis(600),
            "{kind:?}: three attempts in {elapsed:?}, faster than the backoff"
        );
        // job_show reports the failure (keys beyond CKAN's).
        let shown = t.ok("job_show", json!({"id": job.id})).await;
        assert_eq!(shown["state"], "failed");
        assert_eq!(shown["attempts"], 3);
        assert_eq!(shown["max_attempts"], 3);
        assert_eq!(shown["error"], "boom: no disk");
        assert_eq!(shown["kind"], "always_fails");
        // A failed job is no longer queued.
        assert_eq!(t.ok("job_list", json!({})).await, json!([]));

        // One failure, then success: finished on the second attempt.
        let test = format!("fails-once-{kind:?}");
        let job = enqueue_job(
            &t.app,
            "fails_once",
            json!({"test": test}),
            JobOptions::default(),
        )
        .await
        .unwrap();
        let done = t
            .wait_for(&job.id, "finished", Duration::from_secs(20))
            .await;
        assert_eq!(done.attempts, 2);
        assert_eq!(done.result.as_deref(), Some(r#"{"attempt":2}"#));

        // A job over its timeout fails the attempt with RQ's message; max_attempts 1.
        let job = enqueue_job(
            &t.app,
            "too_slow",
            json!({}),
            JobOptions {
                max_attempts: Some(1),
                ..JobOptions::default()
            },
        )
        .await
        .unwrap();
        let failed = t.wait_for(&job.id, "failed", Duration::from_secs(20)).await;
        assert_eq!(failed.attempts, 1);
        assert_eq!(
            failed.error.as_deref(),
            Some("Task exceeded maximum timeout value (0.2 seconds)")
        );
        workers.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn several_workers_in_several_apps_run_every_job_exactly_once() {
    const JOBS: u64 = 200;
    for kind in stores().await {
        let t = start(kind, |c| c.catalog.jobs.poll_interval_ms = 20).await;
        let test = format!("exactly-once-{kind:?}");
        let mut ids = Vec::new();
        for n in 0..JOBS {
            let job = enqueue_job(
                &t.app,
                "counted",
                json!({"test": test, "n": n}),
                JobOptions::default(),
            )
            .await
            .unwrap();
            ids.push(job.id);
        }
        // Four apps, each with its own store pool (as four processes would have), each
        // with two workers.
        let mut pools = Vec::new();
        for _ in 0..4 {
            let other = t.another(|_| {}).await;
            pools.push(pool(&other.app, 2, &["default"]));
        }
        let start = Instant::now();
        loop {
            let finished = t
                .count("SELECT COUNT(*) FROM job WHERE state = 'finished'")
                .await;
            if finished == JOBS as i64 {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "{kind:?}: {finished} of {JOBS} jobs finished"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for p in pools {
            p.shutdown().await;
        }
        let runs = runs(&test);
        assert_eq!(runs.len(), JOBS as usize, "{kind:?}: every job ran");
        let twice: Vec<_> = runs.iter().filter(|(_, c)| **c != 1).collect();
        assert!(
            twice.is_empty(),
            "{kind:?}: jobs run more than once: {twice:?}"
        );
        assert_eq!(
            t.count("SELECT COUNT(*) FROM job WHERE attempts <> 1")
                .await,
            0
        );
        let workers = t.count("SELECT COUNT(DISTINCT worker) FROM job").await;
        assert!(workers > 1, "{kind:?}: one worker did everything");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_whose_worker_stopped_heartbeating_runs_again() {
    for kind in stores().await {
        let t = start(kind, |c| {
            c.catalog.jobs.stale_after_secs = 1;
            c.catalog.jobs.poll_interval_ms = 50;
        })
        .await;
        let test = format!("stale-{kind:?}");
        let again = enqueue_job(
            &t.app,
            "counted",
            json!({"test": test, "n": 1}),
            JobOptions::default(),
        )
        .await
        .unwrap();
        let last = enqueue_job(
            &t.app,
            "counted",
            json!({"test": test, "n": 2}),
            JobOptions {
                max_attempts: Some(1),
                ..JobOptions::default()
            },
        )
        .await
        .unwrap();
        // A worker that claims both jobs, then dies without a word.
        {
            let mut conn = t.app.store.pool.acquire().await.unwrap();
            for _ in 0..2 {
                let claimed = q::claim_job(
                    &mut conn,
                    t.app.store.backend,
                    &["default".to_string()],
                    &["counted".to_string()],
                    "dead-worker",
                )
                .await
                .unwrap();
                assert!(claimed.is_some());
            }
        }
        assert_eq!(t.job(&again.id).await.unwrap().state, "running");
        let workers = pool(&t.app, 1, &["default"]);
        let rerun = t
            .wait_for(&again.id, "finished", Duration::from_secs(15))
            .await;
        assert_eq!(rerun.attempts, 2, "{kind:?}");
        assert_ne!(rerun.worker.as_deref(), Some("dead-worker"));
        let failed = t
            .wait_for(&last.id, "failed", Duration::from_secs(15))
            .await;
        assert_eq!(failed.error.as_deref(), Some(q::STALE_MESSAGE));
        assert_eq!(runs(&test).get(&1), Some(&1));
        assert_eq!(
            runs(&test).get(&2),
            None,
            "its only attempt was the dead one"
        );
        workers.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_take_the_left_most_queue_first_then_the_oldest_due_job() {
    for kind in stores().await {
        let t = start(kind, |_| {}).await;
        let test = format!("order-{kind:?}");
        let mut made = Vec::new();
        for (queue, n) in [
            ("low", 1),
            ("high", 2),
            ("low", 3),
            ("high", 4),
            ("high", 5),
        ] {
            let row = enqueue_job(
                &t.app,
                "counted",
                json!({"test": test, "n": n}),
                JobOptions::queue(queue),
            )
            .await
            .unwrap();
            made.push(row.id);
        }
        let claim = |worker: &'static str| {
            let app = t.app.clone();
            async move {
                let mut conn = app.store.pool.acquire().await.unwrap();
                q::claim_job(
                    &mut conn,
                    app.store.backend,
                    &["high".to_string(), "low".to_string()],
                    &["counted".to_string()],
                    worker,
                )
                .await
                .unwrap()
                .map(|j| j.id)
            }
        };
        // The oldest job of "high" fails and waits an hour for its retry: not due.
        assert_eq!(
            claim("w").await.as_deref(),
            Some(made[1].as_str()),
            "{kind:?}"
        );
        {
            let mut conn = t.app.store.pool.acquire().await.unwrap();
            let outcome = q::fail_job(&mut conn, &made[1], "w", "boom", Duration::from_secs(3600))
                .await
                .unwrap();
            assert!(matches!(outcome, q::FailOutcome::Retry { .. }), "{kind:?}");
        }
        let mut order = Vec::new();
        while let Some(id) = claim("w").await {
            order.push(id);
        }
        assert_eq!(
            order,
            vec![
                made[3].clone(),
                made[4].clone(),
                made[0].clone(),
                made[2].clone()
            ],
            "{kind:?}: high's due jobs oldest first, then low's"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stopping_worker_gives_its_job_back_without_counting_the_attempt() {
    for kind in stores().await {
        let t = start(kind, |c| {
            c.catalog.jobs.shutdown_grace_secs = 0;
            c.catalog.jobs.poll_interval_ms = 20;
        })
        .await;
        let workers = pool(&t.app, 1, &["default"]);
        let id = catalog_plugin_core::admin::enqueue_test_job(&t.app, "default", 30)
            .await
            .unwrap();
        t.wait_for(&id, "running", Duration::from_secs(10)).await;
        workers.shutdown().await;
        let job = t.job(&id).await.unwrap();
        assert_eq!(job.state, "queued", "{kind:?}");
        assert_eq!(job.attempts, 0);
    }
}

#[tokio::test]
async fn enqueue_refuses_unknown_kinds_and_bad_options() {
    let t = start(StoreKind::Sqlite, |_| {}).await;
    let e = enqueue_job(&t.app, "no_such_kind", json!({}), JobOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Internal);
    let e = enqueue_job(
        &t.app,
        "counted",
        json!({}),
        JobOptions {
            queue: Some(" ".into()),
            max_attempts: Some(0),
            ..JobOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(
        e.to_error_object(),
        json!({"__type": "Validation Error", "queue": ["Missing value"],
               "max_attempts": ["Must be between 1 and 100"]})
    );
    assert_eq!(t.count("SELECT COUNT(*) FROM job").await, 0);
}

/// Issue 46: one worker per lane; a job that holds its lane's only worker (a load that
/// trickles) leaves every other lane's jobs running.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_slow_job_holds_only_its_own_lane() {
    for kind in stores().await {
        let t = start(kind, |c| {
            c.catalog.jobs.poll_interval_ms = 20;
            c.catalog.jobs.shutdown_grace_secs = 0;
        })
        .await;
        let workers = pool(&t.app, 1, &["default"]);
        let slow = enqueue_job(&t.app, "slow_lane", json!({}), JobOptions::default())
            .await
            .unwrap();
        t.wait_for(&slow.id, "running", Duration::from_secs(10))
            .await;
        let second = enqueue_job(&t.app, "slow_lane", json!({}), JobOptions::default())
            .await
            .unwrap();
        let other = enqueue_job(
            &t.app,
            "counted",
            json!({"test": "lanes", "n": 1}),
            JobOptions::default(),
        )
        .await
        .unwrap();
        t.wait_for(&other.id, "finished", Duration::from_secs(10))
            .await;
        assert_eq!(
            t.job(&second.id).await.map(|j| j.state),
            Some("queued".to_string()),
            "{kind:?}: the slow lane has one worker, busy"
        );
        workers.shutdown().await;
    }
}
