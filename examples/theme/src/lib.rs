#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use catalog_framework::prelude::*;
use catalog_plugin_web::register_templates;

register_plugin!("example_theme");
register_templates!(
    "example_theme",
    10,
    &[(
        "dataset/read.html",
        include_str!("../templates/dataset/read.html")
    )]
);
