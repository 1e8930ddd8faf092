//! The view types CKAN 2.12 ships (ckanext/imageview, textview, webpageview,
//! datatablesview). The recline views were removed in CKAN 2.11 and are not registered.

use catalog_framework::params::truthy;
use catalog_framework::prelude::*;

use crate::view_type::{ConfigKey, ConfigRule, ResourceView, ViewContext, ViewInfo};

/// `image_view`: an image from the resource's URL or `image_url`.
pub struct ImageView;

static IMAGE: ViewInfo = ViewInfo {
    title: "Image",
    icon: "image",
    default_title: "Image",
    always_available: false,
    requires_datastore: false,
    filterable: false,
    iframed: false,
    schema: &[ConfigKey::new("image_url", ConfigRule::OptionalText)],
};

impl ResourceView for ImageView {
    fn info(&self) -> &'static ViewInfo {
        &IMAGE
    }
    fn can_view(&self, r: &Map<String, Value>, _: &Map<String, Value>, cx: &ViewContext) -> bool {
        cx.image_formats.contains(&ViewContext::format(r))
    }
}

/// `text_view`: text, XML and JSON shown as text.
pub struct TextView;

static TEXT: ViewInfo = ViewInfo {
    title: "Text",
    icon: "file-lines",
    default_title: "Text",
    always_available: false,
    requires_datastore: false,
    filterable: false,
    iframed: true,
    schema: &[],
};

impl ResourceView for TextView {
    /// JSONP always; text, XML and JSON only when the browser may fetch them, that is from
    /// this site (there is no resource proxy).
    fn can_view(&self, r: &Map<String, Value>, _: &Map<String, Value>, cx: &ViewContext) -> bool {
        let format = ViewContext::format(r);
        if cx.jsonp_formats.contains(&format) {
            return true;
        }
        let fetched = [&cx.text_formats, &cx.xml_formats, &cx.json_formats]
            .iter()
            .any(|f| f.contains(&format));
        fetched && cx.on_same_domain(r)
    }
    fn info(&self) -> &'static ViewInfo {
        &TEXT
    }
}

/// `webpage_view`: a web page in an iframe.
pub struct WebpageView;

static WEBPAGE: ViewInfo = ViewInfo {
    title: "Website",
    icon: "link",
    default_title: "Website",
    always_available: false,
    requires_datastore: false,
    filterable: false,
    iframed: false,
    schema: &[ConfigKey::new("page_url", ConfigRule::OptionalText)],
};

const PAGE_FORMATS: [&str; 2] = ["html", "htm"];

impl ResourceView for WebpageView {
    fn info(&self) -> &'static ViewInfo {
        &WEBPAGE
    }
    /// An HTML format, or a URL ending in `.html` / `.htm` (case-sensitive, as CKAN).
    fn can_view(&self, r: &Map<String, Value>, _: &Map<String, Value>, _: &ViewContext) -> bool {
        let url = r.get("url").and_then(Value::as_str).unwrap_or_default();
        let ext = url.rsplit('.').next().unwrap_or_default();
        PAGE_FORMATS.contains(&ViewContext::format(r).as_str()) || PAGE_FORMATS.contains(&ext)
    }
}

/// `datatables_view`: a table of the resource's DataStore data.
pub struct DatatablesView;

static DATATABLES: ViewInfo = ViewInfo {
    title: "Table",
    icon: "table",
    default_title: "Table",
    always_available: false,
    requires_datastore: true,
    filterable: true,
    iframed: false,
    schema: &[
        ConfigKey::new("responsive", ConfigRule::Bool(false)),
        ConfigKey {
            name: "ellipsis_length",
            rule: ConfigRule::Natural(100),
            default_from: Some("catalog.datatables.ellipsis_length"),
        },
        ConfigKey {
            name: "date_format",
            rule: ConfigRule::Default("llll"),
            default_from: Some("catalog.datatables.date_format"),
        },
        ConfigKey::new("show_fields", ConfigRule::Optional),
        ConfigKey::new("filterable", ConfigRule::Bool(true)),
    ],
};

impl ResourceView for DatatablesView {
    fn info(&self) -> &'static ViewInfo {
        &DATATABLES
    }
    /// Resources in the DataStore.
    fn can_view(&self, r: &Map<String, Value>, _: &Map<String, Value>, _: &ViewContext) -> bool {
        truthy(r.get("datastore_active"))
    }
}

crate::register_resource_view!("image_view", ImageView);
crate::register_resource_view!("text_view", TextView);
crate::register_resource_view!("webpage_view", WebpageView);
crate::register_resource_view!("datatables_view", DatatablesView);
