//! CKAN's default license register (`ckan/model/license.py`): every value is a string.

use serde_json::{json, Value};

pub struct License {
    pub id: &'static str,
    pub title: &'static str,
    pub url: &'static str,
    pub domain: (&'static str, &'static str, &'static str),
    pub is_generic: bool,
    pub od: &'static str,
}

const APPROVED: &str = "approved";
const NOT_REVIEWED: &str = "not reviewed";

pub const LICENSES: &[License] = &[
    License {
        id: "notspecified",
        title: "License not specified",
        url: "",
        domain: ("False", "False", "False"),
        is_generic: true,
        od: NOT_REVIEWED,
    },
    License {
        id: "odc-pddl",
        title: "Open Data Commons Public Domain Dedication and License (PDDL)",
        url: "http://www.opendefinition.org/licenses/odc-pddl",
        domain: ("False", "True", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "odc-odbl",
        title: "Open Data Commons Open Database License (ODbL)",
        url: "http://www.opendefinition.org/licenses/odc-odbl",
        domain: ("False", "True", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "odc-by",
        title: "Open Data Commons Attribution License",
        url: "http://www.opendefinition.org/licenses/odc-by",
        domain: ("False", "True", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "cc-zero",
        title: "Creative Commons CCZero",
        url: "http://www.opendefinition.org/licenses/cc-zero",
        domain: ("True", "True", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "cc-by",
        title: "Creative Commons Attribution",
        url: "http://www.opendefinition.org/licenses/cc-by",
        domain: ("True", "False", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "cc-by-sa",
        title: "Creative Commons Attribution Share-Alike",
        url: "http://www.opendefinition.org/licenses/cc-by-sa",
        domain: ("True", "False", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "gfdl",
        title: "GNU Free Documentation License",
        url: "http://www.opendefinition.org/licenses/gfdl",
        domain: ("True", "False", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "other-open",
        title: "Other (Open)",
        url: "",
        domain: ("True", "False", "False"),
        is_generic: true,
        od: APPROVED,
    },
    License {
        id: "other-pd",
        title: "Other (Public Domain)",
        url: "",
        domain: ("True", "False", "False"),
        is_generic: true,
        od: APPROVED,
    },
    License {
        id: "other-at",
        title: "Other (Attribution)",
        url: "",
        domain: ("True", "False", "False"),
        is_generic: true,
        od: APPROVED,
    },
    License {
        id: "uk-ogl",
        title: "UK Open Government Licence (OGL)",
        url: "http://reference.data.gov.uk/id/open-government-licence",
        domain: ("True", "False", "False"),
        is_generic: false,
        od: APPROVED,
    },
    License {
        id: "cc-nc",
        title: "Creative Commons Non-Commercial (Any)",
        url: "http://creativecommons.org/licenses/by-nc/2.0/",
        domain: ("True", "False", "False"),
        is_generic: false,
        od: NOT_REVIEWED,
    },
    License {
        id: "other-nc",
        title: "Other (Non-Commercial)",
        url: "",
        domain: ("True", "False", "False"),
        is_generic: true,
        od: NOT_REVIEWED,
    },
    License {
        id: "other-closed",
        title: "Other (Not Open)",
        url: "",
        domain: ("True", "False", "False"),
        is_generic: true,
        od: NOT_REVIEWED,
    },
];

pub fn find(id: &str) -> Option<&'static License> {
    LICENSES.iter().find(|l| l.id == id)
}

impl License {
    pub fn to_json(&self) -> Value {
        json!({
            "domain_content": self.domain.0,
            "domain_data": self.domain.1,
            "domain_software": self.domain.2,
            "family": "",
            "id": self.id,
            "is_generic": if self.is_generic { "True" } else { "False" },
            "maintainer": "",
            "od_conformance": self.od,
            "osd_conformance": "not reviewed",
            "status": "active",
            "title": self.title,
            "url": self.url,
        })
    }
}
