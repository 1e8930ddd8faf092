//! A top-level write commits before it builds its answer (`commit_before_answer`), and only
//! there: a dataset created or updated through an action a plugin wraps, or through an action
//! that calls it, still commits with the outer call, all or nothing. On SQLite and PostgreSQL.

use catalog_framework::prelude::*;
use catalog_framework::{register_action, register_chained_action};
use catalog_host::testkit::{stores, TestApp};

/// Wraps `package_create`: after the wrapped action has written, a dataset whose name starts
/// with `wrapped-fail` fails the call (a plugin's check of the written dataset).
struct FailAfterCreate;

#[async_trait]
impl ChainedAction for FailAfterCreate {
    async fn run(
        &self,
        next: &dyn Action,
        ctx: &mut ActionContext,
        params: Params,
    ) -> CkanResult<Value> {
        let dict = next.run(ctx, params).await?;
        if dict["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("wrapped-fail"))
        {
            return Err(validation_message("the wrapper refused the dataset"));
        }
        Ok(dict)
    }
}
register_chained_action!("package_create", FailAfterCreate);

/// Creates a dataset through `package_create` as a nested call, then fails when asked to.
struct CreateThenMaybeFail;

#[async_trait]
impl Action for CreateThenMaybeFail {
    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        let mut create = Params::new();
        create.insert("name".into(), params["name"].clone());
        let dict = ctx.call("package_create", create).await?;
        if params.get("fail").and_then(Value::as_bool) == Some(true) {
            return Err(validation_message("failing after the nested create"));
        }
        Ok(dict)
    }
}
register_action!("test_create_then_maybe_fail", CreateThenMaybeFail);

/// Creates a dataset, commits before its answer, then tries to write again.
struct WriteAfterCommit;

#[async_trait]
impl Action for WriteAfterCommit {
    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        let mut create = Params::new();
        create.insert("name".into(), params["first"].clone());
        ctx.call("package_create", create).await?;
        ctx.commit_before_answer().await?;
        let mut again = Params::new();
        again.insert("name".into(), params["second"].clone());
        ctx.call("package_create", again).await
    }
}
register_action!("test_write_after_commit", WriteAfterCommit);

async fn exists(t: &TestApp, name: &str) -> bool {
    t.call(Some(&t.admin), "package_show", json!({"id": name}))
        .await
        .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_commits_before_its_answer_only_at_the_top() {
    for kind in stores().await {
        let t = TestApp::start_with(kind, |c| {
            c.catalog.auth.create_unowned_dataset = true;
            crate::test_plugin::enable(c);
        })
        .await;

        // At the top: the answer is the committed dataset, as package_show shows it.
        let created = t
            .ok("package_create", json!({"name": "top", "notes": "n"}))
            .await;
        let shown = t.ok("package_show", json!({"id": "top"})).await;
        assert_eq!(created, shown, "{kind:?}");
        let updated = t
            .ok("package_update", json!({"id": "top", "notes": "changed"}))
            .await;
        assert_eq!(updated["notes"], "changed", "{kind:?}");
        assert_eq!(
            updated,
            t.ok("package_show", json!({"id": "top"})).await,
            "{kind:?}"
        );
        let patched = t
            .ok("package_patch", json!({"id": "top", "title": "T"}))
            .await;
        assert_eq!(
            (patched["title"].as_str(), patched["notes"].as_str()),
            (Some("T"), Some("changed"))
        );

        // A wrapper that fails after the wrapped create: nothing stays.
        let e = t
            .err(
                Some(&t.admin),
                "package_create",
                json!({"name": "wrapped-fail-1"}),
            )
            .await;
        assert_eq!(e["__type"], "Validation Error", "{kind:?}: {e}");
        assert!(
            !exists(&t, "wrapped-fail-1").await,
            "{kind:?}: the wrapped create committed early"
        );

        // A nested create in a call that fails afterwards: nothing stays; one that succeeds
        // commits with the outer call.
        let e = t
            .err(
                Some(&t.admin),
                "test_create_then_maybe_fail",
                json!({"name": "nested-fail", "fail": true}),
            )
            .await;
        assert_eq!(e["__type"], "Validation Error", "{kind:?}: {e}");
        assert!(
            !exists(&t, "nested-fail").await,
            "{kind:?}: the nested create committed early"
        );
        t.ok("test_create_then_maybe_fail", json!({"name": "nested-ok"}))
            .await;
        assert!(exists(&t, "nested-ok").await, "{kind:?}");

        // A write after the commit is refused; what was committed stays.
        let e = t
            .err(
                Some(&t.admin),
                "test_write_after_commit",
                json!({"first": "before-commit", "second": "after-commit"}),
            )
            .await;
        assert_eq!(e["__type"], "Internal Server Error", "{kind:?}: {e}");
        assert!(exists(&t, "before-commit").await, "{kind:?}");
        assert!(!exists(&t, "after-commit").await, "{kind:?}");

        // The search index has the committed datasets (the commit hooks ran at the early commit).
        let found = t
            .ok(
                "package_search",
                json!({"q": "name:top OR name:nested-ok OR name:before-commit"}),
            )
            .await;
        assert_eq!(found["count"], 3, "{kind:?}: {found}");
    }
}
