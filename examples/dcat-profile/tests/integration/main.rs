//! The `example_portal` profile: its triples, a round trip through each serialization, its
//! registration, and the book's copy of its code.

mod book;
mod graph;
mod registry;
mod round_trip;

use catalog_framework::prelude::*;
use catalog_plugin_dcat::prelude::*;

/// A configuration and the DCAT settings read from it, as the server reads them at start-up.
struct Fixture {
    config: Config,
    settings: DcatSettings,
}

impl Fixture {
    /// `Config::default()`: the catalog URI is the default `catalog.site_url`,
    /// `http://127.0.0.1:5000`.
    fn new() -> Fixture {
        Fixture::with_dcat(json!({}))
    }

    /// The defaults plus `catalogext.dcat = <dcat>`.
    fn with_dcat(dcat: Value) -> Fixture {
        let mut config = Config::default();
        config.catalogext.values.insert("dcat".into(), dcat);
        let settings = DcatSettings::from_config(&config).expect("valid catalogext.dcat");
        Fixture { config, settings }
    }

    fn cx(&self) -> DcatContext<'_> {
        DcatContext {
            config: &self.config,
            settings: &self.settings,
            site_title: self.config.catalog.site_title.clone(),
        }
    }
}

/// A `package_show` dict, cut down to what the profile reads.
fn dataset() -> Map<String, Value> {
    let d = json!({
        "id": "5b7c0a2e-3f4d-4f8e-9a57-2d4c7f1e6a10",
        "name": "bike-counts-2024",
        "title": "Bike counts 2024",
        "region": "DEU_BER",
        "groups": [
            {"id": "g-1", "name": "transport", "title": "Transport", "display_name": "Transport"},
            {"id": "g-2", "name": "environment", "title": "", "display_name": "environment"}
        ],
        "extras": []
    });
    d.as_object().cloned().expect("an object")
}
