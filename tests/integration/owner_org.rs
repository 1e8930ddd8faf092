//! `owner_org` with `catalog.auth.create_unowned_dataset` off (the default): CKAN's
//! `owner_org_validator` asks everyone for an organization, sysadmins included; an update
//! without `owner_org` (or with `null`) keeps the owner, one with `""` is refused the same way.

use catalog_host::testkit::{stores, TestApp};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_caller_needs_an_organization_unless_unowned_datasets_are_allowed() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        let missing = json!({"owner_org": ["An organization must be provided"], "__type": "Validation Error"});
        for params in [
            json!({"name": "no-org"}),
            json!({"name": "no-org", "owner_org": ""}),
        ] {
            let e = t.err(Some(&t.admin), "package_create", params).await;
            assert_eq!(e, missing, "{kind}: a sysadmin too");
        }
        assert_eq!(
            t.call(Some(&t.admin), "package_show", json!({"id": "no-org"}))
                .await
                .map_err(|e| e.status().as_u16()),
            Err(404),
            "{kind}: nothing was made"
        );

        t.ok("organization_create", json!({"name": "office"})).await;
        let ds = t
            .ok(
                "package_create",
                json!({"name": "owned", "owner_org": "office"}),
            )
            .await;
        let org_id = ds["owner_org"].clone();
        for params in [
            json!({"id": "owned", "title": "Kept"}),
            json!({"id": "owned", "title": "Kept", "owner_org": null}),
        ] {
            let up = t.ok("package_update", params).await;
            assert_eq!(up["owner_org"], org_id, "{kind}: the owner stays");
        }
        let e = t
            .err(
                Some(&t.admin),
                "package_update",
                json!({"id": "owned", "owner_org": ""}),
            )
            .await;
        assert_eq!(e, missing, "{kind}");

        let open =
            TestApp::start_with(kind, |c| c.catalog.auth.create_unowned_dataset = true).await;
        let ds = open.ok("package_create", json!({"name": "no-org"})).await;
        assert_eq!(ds["owner_org"], json!(null), "{kind}");
    }
}
