//! The profiles (spec/dcat.md §6–8): `euro_dcat_ap` (DCAT-AP 1.1), `euro_dcat_ap_2` (2.1),
//! `euro_dcat_ap_3` (3.0, the default) and `schemaorg`, plus the reverse mapping of the DCAT-AP
//! ones (graph → dataset dict).
//!
#![doc = include_str!("../../../../docs/DCAT-DEVIATIONS.md")]

pub mod dcat_ap;
pub mod geo;
pub mod parse;
pub mod schemaorg;
pub mod vocab;

use crate::prelude::*;

pub use dcat_ap::{EuroDcatAp, Version};
pub use schemaorg::SchemaOrg;

register_dcat_profile!(
    "euro_dcat_ap",
    EuroDcatAp {
        version: Version::V1
    }
);
register_dcat_profile!(
    "euro_dcat_ap_2",
    EuroDcatAp {
        version: Version::V2
    }
);
register_dcat_profile!(
    "euro_dcat_ap_3",
    EuroDcatAp {
        version: Version::V3
    }
);
register_dcat_profile!("schemaorg", SchemaOrg);
