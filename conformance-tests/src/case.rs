//! The case format: one JSON file per scenario, loaded and checked before anything runs so a
//! typo in a case is reported as such rather than as a server failure.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde::Deserialize;
use serde_json::Value;

/// A scenario: steps run in order against one deployment, sharing variables.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Unique id of the scenario; the first half of a `scenario/step` key.
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Users the runner creates (as the sysadmin) before the first step, keyed by alias.
    #[serde(default)]
    pub users: BTreeMap<String, UserSpec>,
    /// Settings (`key=value`) the whole scenario needs; unless the run assumes them, every
    /// step is reported as skipped. See [`crate::Assumptions`].
    #[serde(default)]
    pub needs: Vec<String>,
    /// Only reads (GET requests) of the deployment's existing content: the scenarios
    /// `--read-only` runs. Checked when loading: no `users`, every step a GET of a path or of a
    /// read action ([`is_read_action`]).
    #[serde(default)]
    pub read_only: bool,
    pub steps: Vec<Step>,
    /// The file the scenario came from.
    #[serde(skip)]
    pub file: PathBuf,
}

/// A user to create for a scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSpec {
    #[serde(default)]
    pub sysadmin: bool,
    #[serde(default)]
    pub fullname: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum Method {
    #[default]
    #[serde(rename = "POST")]
    Post,
    #[serde(rename = "GET")]
    Get,
    /// Methods the Action API refuses (405), sent with an empty body.
    #[serde(rename = "PUT")]
    Put,
    #[serde(rename = "DELETE")]
    Delete,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// One HTTP call to the Action API and what its response must look like.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Unique (within the scenario) snake_case id; also the snapshot name.
    pub name: String,
    /// `sysadmin`, `anonymous` or a user alias declared in the scenario's `users`.
    #[serde(rename = "as", default = "default_as")]
    pub as_: String,
    /// A raw token to send instead of the `as` identity (placeholders allowed), e.g. a token
    /// an earlier step created and saved.
    #[serde(default)]
    pub token: Option<String>,
    /// The HTTP method: for an action POST when absent, for a `path` GET when absent.
    #[serde(default, rename = "method")]
    pub method_given: Option<Method>,
    /// The Action API function to call; give this or `path`.
    #[serde(default)]
    pub action: String,
    /// A site path to request instead of an action (`/dataset/{{ds.name}}.ttl`,
    /// `/api/2/rest/dataset`); placeholders allowed. The query string goes in `query`; with a
    /// method other than GET the body is `params` or `raw_body`.
    #[serde(default)]
    pub path: Option<String>,
    /// Extra request headers (`{"Accept": "text/turtle"}`); placeholders allowed.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Response headers that must have exactly these values (names case-insensitive).
    #[serde(default)]
    pub expect_headers: BTreeMap<String, String>,
    /// Parse a 2xx body as RDF in this syntax (`rdfxml`, `turtle`, `n3`, `jsonld`): the body
    /// checked and snapshotted is then `{"triples": [...]}`, the graph as sorted N-Triples
    /// lines with volatile values redacted and blank nodes labelled by their content.
    #[serde(default)]
    pub rdf: Option<String>,
    /// Request data: the JSON body of a POST, or the query string of a GET.
    #[serde(default)]
    pub params: Option<Value>,
    /// Raw query string (without `?`); placeholders allowed.
    #[serde(default)]
    pub query: Option<String>,
    /// Raw request body sent verbatim instead of `params`.
    #[serde(default)]
    pub raw_body: Option<String>,
    /// Content type of `raw_body` (default `application/json`).
    #[serde(default)]
    pub content_type: Option<String>,
    pub expect_status: u16,
    /// Partial JSON the body must contain; arrays match element-wise and in length.
    #[serde(default)]
    pub expect: Option<Value>,
    /// Partial JSON the body must contain; each expected array element must match some
    /// element of the actual array (order and length free).
    #[serde(default)]
    pub expect_contains: Option<Value>,
    /// Partial JSON describing what must NOT be there: array elements listed must match no
    /// actual element; scalars must differ.
    #[serde(default)]
    pub expect_excludes: Option<Value>,
    /// `{"var": "dotted.path"}` into the response body, saved for later steps.
    #[serde(default)]
    pub save: BTreeMap<String, String>,
    /// Whether the integration test snapshots this response.
    #[serde(default = "yes")]
    pub snapshot: bool,
    /// Free text: why the step expects what it does (spec section, quirk).
    #[serde(default)]
    pub note: Option<String>,
    /// Settings (`key=value`) this step needs beyond its scenario's; unless assumed, the step
    /// is skipped, and so is every later step that uses a variable it would have saved.
    #[serde(default)]
    pub needs: Vec<String>,
    /// Set by a profile override: why this product's expectation differs.
    #[serde(skip)]
    pub profile_reason: Option<String>,
    /// Set by a profile override: the step cannot run on this product.
    #[serde(skip)]
    pub profile_skip: bool,
}

impl Step {
    /// The `{{name}}` placeholders the step uses anywhere (request and expectations).
    pub fn placeholders(&self) -> BTreeSet<String> {
        let mut texts: Vec<String> = Vec::new();
        for v in [
            &self.params,
            &self.expect,
            &self.expect_contains,
            &self.expect_excludes,
        ]
        .into_iter()
        .flatten()
        {
            texts.push(v.to_string());
        }
        for s in [&self.query, &self.raw_body, &self.path, &self.token]
            .into_iter()
            .flatten()
        {
            texts.push(s.clone());
        }
        texts.extend(self.headers.values().cloned());
        let mut out = BTreeSet::new();
        for t in &texts {
            let mut rest = t.as_str();
            while let Some(start) = rest.find("{{") {
                let after = &rest[start + 2..];
                let Some(end) = after.find("}}") else { break };
                out.insert(after[..end].trim().to_string());
                rest = &after[end + 2..];
            }
        }
        out
    }

    /// The method sent: the one given, else POST for an action and GET for a `path`.
    pub fn method(&self) -> Method {
        self.method_given.unwrap_or(if self.path.is_some() {
            Method::Get
        } else {
            Method::Post
        })
    }
}

fn default_as() -> String {
    "sysadmin".to_string()
}

fn yes() -> bool {
    true
}

/// Whether an action only reads: what a read-only run may call. By name, as CKAN names its
/// actions (`*_show`, `*_list`, `*_list_for_user`, `*_list_authz`, `*_search`, `*_autocomplete`,
/// follower counts, `am_following_*`, `site_read`); anything else counts as a write.
pub fn is_read_action(action: &str) -> bool {
    const SUFFIXES: [&str; 8] = [
        "_show",
        "_list",
        "_search",
        "_autocomplete",
        "_count",
        "_search_sql",
        "_list_for_user",
        "_list_authz",
    ];
    action == "site_read"
        || action.starts_with("am_following_")
        || SUFFIXES.iter().any(|s| action.ends_with(s))
}

/// `key=value` as a scenario's or step's `needs` gives it.
pub fn parse_need(need: &str) -> Option<(&str, &str)> {
    let (k, v) = need.split_once('=')?;
    let (k, v) = (k.trim(), v.trim());
    (!k.is_empty() && !v.is_empty()).then_some((k, v))
}

/// Identities every scenario may act as without declaring them.
pub const BUILTIN_IDENTITIES: [&str; 2] = ["sysadmin", "anonymous"];

fn is_snake_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn is_scenario_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl Scenario {
    /// Structural checks a JSON schema cannot express.
    pub fn validate(&self) -> anyhow::Result<()> {
        if !is_scenario_id(&self.name) {
            bail!("scenario name {:?} must be lowercase [a-z0-9_-]", self.name);
        }
        for alias in self.users.keys() {
            if !is_snake_id(alias) || BUILTIN_IDENTITIES.contains(&alias.as_str()) {
                bail!("user alias {alias:?} must be snake_case and not sysadmin/anonymous");
            }
        }
        if self.read_only && !self.users.is_empty() {
            bail!("a read_only scenario cannot create users");
        }
        let mut seen = BTreeSet::new();
        for need in self
            .needs
            .iter()
            .chain(self.steps.iter().flat_map(|s| &s.needs))
        {
            if parse_need(need).is_none() {
                bail!("need {need:?} is not key=value");
            }
        }
        for step in &self.steps {
            if self.read_only {
                let read = step.method() == Method::Get
                    && (step.path.is_some() || is_read_action(&step.action));
                if !read || step.raw_body.is_some() {
                    bail!(
                        "step {:?}: a read_only scenario only sends GET requests of paths and \
                         read actions",
                        step.name
                    );
                }
            }
            if !is_snake_id(&step.name) {
                bail!("step name {:?} must be snake_case", step.name);
            }
            if !seen.insert(step.name.as_str()) {
                bail!("step name {:?} is used twice", step.name);
            }
            if !BUILTIN_IDENTITIES.contains(&step.as_.as_str())
                && !self.users.contains_key(&step.as_)
            {
                bail!(
                    "step {:?}: `as` {:?} is neither sysadmin, anonymous nor a declared user",
                    step.name,
                    step.as_
                );
            }
            if step.action.is_empty() == step.path.is_none() {
                bail!("step {:?}: give either action or path", step.name);
            }
            if let Some(f) = &step.rdf {
                if crate::rdf::syntax(f).is_none() {
                    bail!(
                        "step {:?}: rdf {f:?} is not rdfxml, turtle, n3 or jsonld",
                        step.name
                    );
                }
            }
            if step.raw_body.is_some() && step.params.is_some() {
                bail!("step {:?}: give either params or raw_body", step.name);
            }
            if !(100..=599).contains(&step.expect_status) {
                bail!(
                    "step {:?}: expect_status {} is not an HTTP status",
                    step.name,
                    step.expect_status
                );
            }
        }
        Ok(())
    }

    /// The `scenario/step` key used by reports and the known-failures list.
    pub fn key(&self, step: &Step) -> String {
        format!("{}/{}", self.name, step.name)
    }
}

/// Loads every `*.json` scenario in `dir`, in file-name order.
pub fn load_cases(dir: &Path) -> anyhow::Result<Vec<Scenario>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading cases directory {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut texts = Vec::with_capacity(files.len());
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        texts.push((file, text));
    }
    parse_cases(texts)
}

/// Parses and checks scenario files given as (path, text), in the order given.
pub fn parse_cases(files: Vec<(PathBuf, String)>) -> anyhow::Result<Vec<Scenario>> {
    let mut names = BTreeSet::new();
    let mut out = Vec::with_capacity(files.len());
    for (file, text) in files {
        let mut sc: Scenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        sc.validate()
            .with_context(|| format!("invalid case file {}", file.display()))?;
        if !names.insert(sc.name.clone()) {
            bail!("scenario name {:?} is used by two files", sc.name);
        }
        sc.file = file;
        out.push(sc);
    }
    Ok(out)
}

/// The `scenario/step` keys among `keys` that name no step of `scenarios` (a stale entry of a
/// list that names steps hides nothing but misleads its readers).
pub(crate) fn unknown_steps<'a>(
    keys: impl Iterator<Item = &'a String>,
    scenarios: &[Scenario],
) -> Vec<&'a str> {
    let known: BTreeSet<String> = scenarios
        .iter()
        .flat_map(|sc| sc.steps.iter().map(|st| sc.key(st)))
        .collect();
    keys.filter(|k| !known.contains(*k))
        .map(String::as_str)
        .collect()
}

/// The steps expected to fail, as `scenario/step` keys, each with its line's comment.
#[derive(Debug, Clone, Default)]
pub struct KnownFailures {
    entries: BTreeMap<String, String>,
}

impl KnownFailures {
    /// Parses `scenario/step [# why]` lines; blank lines and `#` lines are ignored.
    pub fn parse(text: &str) -> KnownFailures {
        let entries = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| match l.split_once('#') {
                Some((key, why)) => (key.trim().to_string(), why.trim().to_string()),
                None => (l.to_string(), String::new()),
            })
            .collect();
        KnownFailures { entries }
    }

    /// Reads the list; a missing file is an empty list.
    pub fn load(path: &Path) -> anyhow::Result<KnownFailures> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(KnownFailures::parse(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(KnownFailures::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A stale entry hides nothing but misleads readers: every entry must name a real step.
    pub fn check_against(&self, scenarios: &[Scenario]) -> anyhow::Result<()> {
        let stale = unknown_steps(self.entries.keys(), scenarios);
        if !stale.is_empty() {
            bail!(
                "known-failures.txt names steps that do not exist: {}",
                stale.join(", ")
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_default_to_sysadmin_post_with_snapshot() {
        let sc: Scenario = serde_json::from_str(
            r#"{"name":"x","steps":[{"name":"a","action":"site_read","expect_status":200}]}"#,
        )
        .unwrap();
        sc.validate().unwrap();
        let st = &sc.steps[0];
        assert_eq!(st.as_, "sysadmin");
        assert_eq!(st.method(), Method::Post);
        assert!(st.snapshot);
    }

    #[test]
    fn undeclared_identity_and_typos_are_rejected() {
        let sc: Scenario = serde_json::from_str(
            r#"{"name":"x","steps":[{"name":"a","as":"bob","action":"site_read","expect_status":200}]}"#,
        )
        .unwrap();
        assert!(sc.validate().is_err());
        let typo = serde_json::from_str::<Scenario>(
            r#"{"name":"x","steps":[{"name":"a","action":"site_read","expect_stauts":200}]}"#,
        );
        assert!(typo.is_err());
    }

    #[test]
    fn read_only_scenarios_only_read() {
        let write = serde_json::from_str::<Scenario>(
            r#"{"name":"x","read_only":true,"steps":[{"name":"a","method":"GET","action":"package_create","expect_status":200}]}"#,
        )
        .unwrap();
        assert!(write.validate().is_err());
        let post = serde_json::from_str::<Scenario>(
            r#"{"name":"x","read_only":true,"steps":[{"name":"a","action":"package_show","expect_status":200}]}"#,
        )
        .unwrap();
        assert!(post.validate().is_err(), "reads are sent as GET");
        let read = serde_json::from_str::<Scenario>(
            r#"{"name":"x","read_only":true,"steps":[{"name":"a","method":"GET","action":"package_show","expect_status":200},{"name":"b","path":"/catalog.ttl","expect_status":200}]}"#,
        )
        .unwrap();
        read.validate().unwrap();
        for (name, read) in [
            ("package_search", true),
            ("organization_list_for_user", true),
            ("dataset_follower_count", true),
            ("am_following_user", true),
            ("package_patch", false),
            ("harvest_source_clear", false),
            ("datastore_upsert", false),
        ] {
            assert_eq!(is_read_action(name), read, "{name}");
        }
    }

    #[test]
    fn needs_are_key_value_and_placeholders_are_found() {
        let bad = serde_json::from_str::<Scenario>(
            r#"{"name":"x","needs":["catalog.auth.create_unowned_dataset"],"steps":[]}"#,
        )
        .unwrap();
        assert!(bad.validate().is_err());
        let sc: Scenario = serde_json::from_str(
            r#"{"name":"x","steps":[{"name":"a","action":"package_show","params":{"id":"{{ds}}"},"expect_status":200,"expect":{"result":{"owner_org":"{{org.id}}"}},"query":"x={{q}}"}]}"#,
        )
        .unwrap();
        let refs: Vec<String> = sc.steps[0].placeholders().into_iter().collect();
        assert_eq!(refs, ["ds", "org.id", "q"]);
    }

    #[test]
    fn known_failures_parse_comments_and_catch_stale_entries() {
        let kf = KnownFailures::parse("# header\n\nsite/a  # server bug\nsite/zzz\n");
        assert!(kf.contains("site/a"));
        assert_eq!(kf.len(), 2);
        let sc: Scenario = serde_json::from_str(
            r#"{"name":"site","steps":[{"name":"a","action":"site_read","expect_status":200}]}"#,
        )
        .unwrap();
        let err = kf.check_against(&[sc]).unwrap_err().to_string();
        assert!(err.contains("site/zzz"), "{err}");
    }
}
