//! job_list, job_show, job_clear and job_cancel: CKAN's shapes, order, quirks and errors.

use catalog_framework::prelude::*;

use catalog_host::testkit::stores;

use super::support::start;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_actions_answer_as_ckan() {
    for kind in stores().await {
        let t = start(kind, |_| {}).await;
        let denied = json!({"__type": "Authorization Error", "message": "Access denied"});
        let alice = t.user("alice").await;

        assert_eq!(t.ok("job_list", json!({})).await, json!([]));
        for action in ["job_list", "job_show", "job_clear", "job_cancel"] {
            assert_eq!(t.err(None, action, json!({})).await, denied, "{action}");
            assert_eq!(
                t.err(Some(&alice), action, json!({"id": "x"})).await,
                denied,
                "{action}"
            );
        }
        // The schema of job_list and job_clear runs before auth; job_show and job_cancel
        // check the caller first.
        let not_a_list = json!({"__type": "Validation Error", "queues": ["Not a list"]});
        assert_eq!(
            t.err(None, "job_list", json!({"queues": "w2_queue"})).await,
            not_a_list
        );
        assert_eq!(
            t.err(None, "job_clear", json!({"queues": "w2_queue"}))
                .await,
            not_a_list
        );
        assert_eq!(
            t.err(Some(&t.admin), "job_list", json!({"queues": ["a", 7]}))
                .await,
            json!({"__type": "Validation Error", "queues": ["Not a string: 7"]})
        );
        assert_eq!(
            t.err(Some(&t.admin), "job_list", json!({"limit": "abc"}))
                .await,
            json!({"__type": "Validation Error", "limit": ["Invalid integer"]})
        );
        let missing = json!({"__type": "Validation Error", "id": ["Missing value"]});
        assert_eq!(t.err(Some(&t.admin), "job_show", json!({})).await, missing);
        assert_eq!(
            t.err(Some(&t.admin), "job_cancel", json!({})).await,
            missing
        );
        let not_found = json!({"__type": "Not Found Error", "message": "Not found"});
        assert_eq!(
            t.err(Some(&t.admin), "job_show", json!({"id": "no-such-job"}))
                .await,
            not_found
        );
        assert_eq!(
            t.err(Some(&t.admin), "job_cancel", json!({"id": "no-such-job"}))
                .await,
            not_found
        );

        // `ckan jobs test default`, then `ckan jobs test w2_queue` twice.
        let enqueue = |queue: &'static str| {
            let app = t.app.clone();
            async move {
                catalog_plugin_core::admin::enqueue_test_job(&app, queue, 0)
                    .await
                    .unwrap()
            }
        };
        let d = enqueue("default").await;
        let w1 = enqueue("w2_queue").await;
        let w2 = enqueue("w2_queue").await;

        let all = t.ok("job_list", json!({})).await;
        let ids: Vec<&str> = all
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [d.as_str(), w1.as_str(), w2.as_str()], "{kind:?}");
        let first = &all[0];
        let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["id", "title", "created", "queue"]);
        assert_eq!(first["title"], "A test job");
        assert_eq!(first["queue"], "default");
        let created = first["created"].as_str().unwrap();
        assert_eq!(created.len(), 19, "no fraction, no zone: {created}");

        assert_eq!(
            t.ok("job_list", json!({"queues": ["w2_queue"]})).await,
            json!([all[1], all[2]])
        );
        assert_eq!(
            t.ok("job_list", json!({"ids_only": "true"})).await,
            json!([d, w1, w2])
        );
        assert_eq!(t.ok("job_list", json!({"limit": 1})).await, json!([all[0]]));
        assert_eq!(
            t.ok("job_list", json!({"limit": 2})).await,
            json!([all[0], all[1]])
        );
        assert_eq!(t.ok("job_list", json!({"limit": 0})).await, json!([]));
        assert_eq!(
            t.ok("job_list", json!({"limit": -1, "ids_only": true}))
                .await,
            json!([w1]),
            "CKAN's [:-1] on each queue"
        );
        assert_eq!(
            t.ok("job_list", json!({"queues": ["no_such_queue"]})).await,
            json!([])
        );

        let shown = t.ok("job_show", json!({"id": d})).await;
        for k in ["id", "title", "created", "queue"] {
            assert_eq!(shown[k], first[k], "{k}");
        }
        assert_eq!(shown["state"], "queued");
        assert_eq!(shown["attempts"], 0);
        assert_eq!(shown["error"], Value::Null);

        assert_eq!(t.ok("job_cancel", json!({"id": d})).await, Value::Null);
        assert_eq!(
            t.err(Some(&t.admin), "job_cancel", json!({"id": d})).await,
            not_found
        );
        assert_eq!(
            t.err(Some(&t.admin), "job_show", json!({"id": d})).await,
            not_found
        );

        assert_eq!(
            t.ok("job_clear", json!({"queues": ["w2_queue"]})).await,
            json!(["w2_queue"])
        );
        assert_eq!(t.ok("job_list", json!({})).await, json!([]));
        // Queues stay known once emptied; an unknown queue given is echoed.
        assert_eq!(
            t.ok("job_clear", json!({})).await,
            json!(["default", "w2_queue"])
        );
        assert_eq!(
            t.ok("job_clear", json!({"queues": ["nowhere"]})).await,
            json!(["nowhere"])
        );
    }
}
