//! Runs scenarios against a live deployment over HTTP.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::{json, Value};

use crate::case::{is_read_action, KnownFailures, Method, Scenario, Step};
use crate::matcher::{check_excludes, check_subset, short, ArrayMode};
use crate::profile::Assumptions;
use crate::report::{Outcome, Report, RunInfo, StepReport};
use crate::vars::{get_path, substitute, substitute_str, Vars};

/// Password given to the users the runner creates.
const USER_PASSWORD: &str = "conformance-password";

/// How a run behaves beyond the deployment's address.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// A sysadmin's API token: needed to write; in a read-only run it only widens what is read.
    pub token: Option<String>,
    /// Settings the deployment is taken to have (cases that need others are skipped).
    pub assumptions: Assumptions,
    /// Only the read-only scenarios, and nothing but GET requests of paths and read actions.
    pub read_only: bool,
    /// At most this many requests; the steps after that are skipped.
    pub max_requests: Option<u64>,
    /// At most this many requests a second.
    pub rate: Option<f64>,
    /// The profile's name, for the report.
    pub profile: String,
}

/// A deployment to test and the sysadmin token to drive it with.
#[derive(Debug, Clone)]
pub struct Runner {
    client: reqwest::Client,
    base_url: String,
    opts: RunOptions,
    run: String,
    sent: Arc<AtomicU64>,
    /// When the next request may go (with `rate`).
    next_slot: Arc<tokio::sync::Mutex<Instant>>,
    /// Every request sent: method and URL (for tests of what a run sends).
    log: Arc<Mutex<Vec<(String, String)>>>,
}

/// A fresh suffix for this run: `r` plus seven base-36 characters. The `r` keeps it from
/// ever reading as hex, so redaction cannot confuse it with an id.
pub fn random_run_suffix() -> String {
    let id = uuid::Uuid::new_v4().as_u128();
    let mut n = id;
    let mut s = String::from("r");
    for _ in 0..7 {
        let d = (n % 36) as u32;
        n /= 36;
        s.push(char::from_digit(d, 36).unwrap_or('0'));
    }
    s
}

/// What the server answered.
struct Response {
    status: u16,
    body: Value,
    headers: Vec<(String, String)>,
}

impl Runner {
    /// A runner for `base_url` (e.g. `http://localhost:5000`) with a sysadmin's API token.
    pub fn new(base_url: &str, sysadmin_token: &str) -> anyhow::Result<Runner> {
        Runner::with_options(
            base_url,
            RunOptions {
                token: Some(sysadmin_token.to_string()),
                ..RunOptions::default()
            },
        )
    }

    /// A runner with every option.
    pub fn with_options(base_url: &str, opts: RunOptions) -> anyhow::Result<Runner> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .user_agent(concat!("catalog-conformance/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("building the HTTP client")?;
        if opts.rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            anyhow::bail!("the request rate must be a positive number");
        }
        Ok(Runner {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            opts,
            run: random_run_suffix(),
            sent: Arc::default(),
            next_slot: Arc::new(tokio::sync::Mutex::new(Instant::now())),
            log: Arc::default(),
        })
    }

    /// Every request sent so far, as (method, URL).
    pub fn requests(&self) -> Vec<(String, String)> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Whether the request budget (`max_requests`) is spent.
    fn budget_spent(&self) -> bool {
        self.opts
            .max_requests
            .is_some_and(|m| self.sent.load(Ordering::SeqCst) >= m)
    }

    /// Waits for the next request's turn (`rate`), counts and logs it, and refuses a write in
    /// a read-only run before anything is sent.
    async fn admit(&self, method: Method, action: Option<&str>, url: &str) -> Result<(), String> {
        if self.opts.read_only {
            let read = method == Method::Get && action.is_none_or(is_read_action);
            if !read {
                return Err(format!(
                    "refused to send {} {url}: a read-only run sends only GET requests of paths \
                     and read actions",
                    method.as_str()
                ));
            }
        }
        if let Some(rate) = self.opts.rate {
            let mut next = self.next_slot.lock().await;
            let now = Instant::now();
            if *next > now {
                tokio::time::sleep(*next - now).await;
            }
            *next = Instant::now().max(*next) + Duration::from_secs_f64(1.0 / rate);
        }
        self.sent.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut log) = self.log.lock() {
            log.push((method.as_str().to_string(), url.to_string()));
        }
        Ok(())
    }

    /// Asks the deployment's `status_show`: its extensions become `extension.<name>=true`
    /// assumptions (unless given), so cases of a plugin the deployment lacks are skipped.
    /// `Err` when the deployment cannot be reached at all.
    pub async fn probe(&mut self) -> Result<Value, String> {
        let resp = self
            .call(
                Method::Get,
                "status_show",
                self.opts.token.as_deref(),
                Body::Json(&json!({})),
                None,
            )
            .await?;
        let result = resp.body.get("result").cloned().unwrap_or(Value::Null);
        if let Some(exts) = result.get("extensions").and_then(Value::as_array) {
            for e in exts.iter().filter_map(Value::as_str) {
                self.opts
                    .assumptions
                    .set_default(&format!("extension.{e}"), "true");
            }
        }
        Ok(result)
    }

    /// The suffix appended to every name this run creates.
    pub fn run_suffix(&self) -> &str {
        &self.run
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Runs the scenarios in order (only the read-only ones in a read-only run); failures are
    /// recorded, never raised.
    pub async fn run_all(&self, scenarios: &[Scenario], known: &KnownFailures) -> Report {
        let started = chrono::Utc::now();
        let t0 = Instant::now();
        let mut report = Report::default();
        let sysadmin = match &self.opts.token {
            Some(_) => self.whoami().await,
            None => None,
        };
        for sc in scenarios
            .iter()
            .filter(|s| s.read_only || !self.opts.read_only)
        {
            report
                .steps
                .extend(self.run_scenario(sc, known, sysadmin.as_ref()).await);
        }
        report.info = Some(RunInfo {
            base_url: self.base_url.clone(),
            run: self.run.clone(),
            profile: self.opts.profile.clone(),
            read_only: self.opts.read_only,
            started: started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            duration: t0.elapsed(),
            requests: self.sent.load(Ordering::SeqCst),
            assumptions: self
                .opts
                .assumptions
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
        });
        report
    }

    /// The sysadmin's own user dict, if the deployment tells (for `{{sysadmin.*}}`).
    async fn whoami(&self) -> Option<Value> {
        let resp = self
            .call(
                if self.opts.read_only {
                    Method::Get
                } else {
                    Method::Post
                },
                "user_show",
                self.opts.token.as_deref(),
                Body::Json(&json!({})),
                None,
            )
            .await
            .ok()?;
        (resp.status == 200).then(|| resp.body.get("result").cloned())?
    }

    async fn run_scenario(
        &self,
        sc: &Scenario,
        known: &KnownFailures,
        sysadmin: Option<&Value>,
    ) -> Vec<StepReport> {
        let mut vars = Vars::new();
        vars.insert("run".into(), Value::String(self.run.clone()));
        if let Some(me) = sysadmin {
            for field in ["name", "id"] {
                if let Some(v) = me.get(field) {
                    vars.insert(format!("sysadmin.{field}"), v.clone());
                }
            }
        }
        let mut tokens: BTreeMap<String, String> = BTreeMap::new();
        if let Some(t) = &self.opts.token {
            tokens.insert("sysadmin".into(), t.clone());
        }
        let assumptions = &self.opts.assumptions;
        let skip_all = |why: String| -> Vec<StepReport> {
            sc.steps
                .iter()
                .map(|st| self.finish(sc, st, known, Verdict::Skip(why.clone()), None, 0.0))
                .collect()
        };
        if let Some(need) = assumptions.unmet(&sc.needs) {
            return skip_all(format!("needs {need}"));
        }
        if let Err(why) = self.create_users(sc, &mut vars, &mut tokens).await {
            return sc
                .steps
                .iter()
                .map(|st| {
                    let why = format!("not run: user setup failed: {why}");
                    self.finish(sc, st, known, Verdict::Fail(why), None, 0.0)
                })
                .collect();
        }

        // Variables a skipped step would have saved, or a read-only step found nothing for:
        // the steps that use them are skipped too, with the reason.
        let mut absent: BTreeMap<String, String> = BTreeMap::new();
        let mut out = Vec::with_capacity(sc.steps.len());
        for st in &sc.steps {
            let skip = if st.profile_skip {
                Some(format!(
                    "profile {}: {}",
                    self.opts.profile,
                    st.profile_reason.as_deref().unwrap_or_default()
                ))
            } else if let Some(need) = assumptions.unmet(&st.needs) {
                Some(format!("needs {need}"))
            } else if let Some(why) = st.placeholders().iter().find_map(|p| absent.get(p)) {
                Some(why.clone())
            } else if self.budget_spent() {
                Some(format!(
                    "the request budget is spent (--max-requests {})",
                    self.opts.max_requests.unwrap_or_default()
                ))
            } else {
                None
            };
            if let Some(why) = skip {
                for var in st.save.keys() {
                    absent.insert(var.clone(), format!("{why} (via step {})", st.name));
                }
                out.push(self.finish(sc, st, known, Verdict::Skip(why), None, 0.0));
                continue;
            }
            let t0 = Instant::now();
            let (result, resp) = match self.run_step(st, &mut vars, &tokens).await {
                Ok((check, resp)) => (check, Some(resp)),
                Err(why) => (Err(why), None),
            };
            let ms = t0.elapsed().as_secs_f64() * 1000.0;
            let mut verdict = match result {
                Ok(()) => Verdict::Pass,
                Err(why) => Verdict::Fail(why),
            };
            // In a read-only scenario a value to save that the deployment does not have (an
            // empty list) is not a failure: the steps that need it are skipped. Likewise a step
            // a profile expects to answer otherwise (an error where the cases expect a
            // result): what it would have saved is absent, and the steps using it are skipped
            // with the profile's reason.
            let profiled = st.profile_reason.as_deref();
            if let (true, Some(r)) = (sc.read_only || profiled.is_some(), &resp) {
                let missing: Vec<(&String, &String)> = st
                    .save
                    .iter()
                    .filter(|(_, path)| get_path(&r.body, path).is_none())
                    .collect();
                if !missing.is_empty() && r.status == st.expect_status {
                    for (var, path) in missing {
                        let why = match profiled {
                            Some(reason) => format!(
                                "profile {}: step {} answers otherwise: {reason}",
                                self.opts.profile, st.name
                            ),
                            None => {
                                format!("the deployment has nothing at {path} of step {}", st.name)
                            }
                        };
                        absent.insert(var.clone(), why);
                    }
                    if matches!(&verdict, Verdict::Fail(w) if w.starts_with("cannot save")) {
                        verdict = Verdict::Pass;
                    }
                }
            }
            out.push(self.finish(sc, st, known, verdict, resp, ms));
        }
        out
    }

    fn finish(
        &self,
        sc: &Scenario,
        st: &Step,
        known: &KnownFailures,
        verdict: Verdict,
        resp: Option<Response>,
        ms: f64,
    ) -> StepReport {
        let listed = known.contains(&sc.key(st));
        let outcome = match (verdict, listed) {
            (Verdict::Skip(why), _) => Outcome::Skipped(why),
            (Verdict::Pass, false) => Outcome::Passed,
            (Verdict::Pass, true) => Outcome::UnexpectedPass,
            (Verdict::Fail(why), false) => Outcome::Failed(why),
            (Verdict::Fail(why), true) => Outcome::KnownFailure(why),
        };
        StepReport {
            scenario: sc.name.clone(),
            step: st.name.clone(),
            action: match &st.path {
                Some(path) => format!("{} {path}", st.method().as_str()),
                None => st.action.clone(),
            },
            outcome,
            status: resp.as_ref().map(|r| r.status),
            body: resp.map(|r| r.body),
            snapshot: st.snapshot,
            duration_ms: ms,
            profile_reason: st.profile_reason.clone(),
        }
    }

    async fn create_users(
        &self,
        sc: &Scenario,
        vars: &mut Vars,
        tokens: &mut BTreeMap<String, String>,
    ) -> Result<(), String> {
        for (alias, spec) in &sc.users {
            // Aliases repeat across scenarios, so the scenario is part of the name.
            let name = format!("{alias}-{}-{}", sc.name, self.run);
            let email = format!("{name}@example.org");
            let mut params = json!({
                "name": name,
                "email": email,
                "password": USER_PASSWORD,
            });
            if spec.sysadmin {
                params["sysadmin"] = Value::Bool(true);
            }
            if let Some(full) = &spec.fullname {
                params["fullname"] = Value::String(full.clone());
            }
            let created = self
                .call(
                    Method::Post,
                    "user_create",
                    self.opts.token.as_deref(),
                    Body::Json(&params),
                    None,
                )
                .await?;
            let id = get_path(&created.body, "result.id")
                .filter(|_| created.status == 200)
                .ok_or_else(|| {
                    format!(
                        "user_create {name}: {} {}",
                        created.status,
                        short(&created.body)
                    )
                })?
                .clone();
            let mut made = self
                .call(
                    Method::Post,
                    "api_token_create",
                    self.opts.token.as_deref(),
                    Body::Json(&json!({"user": name, "name": "conformance"})),
                    None,
                )
                .await?;
            // CKAN with its expire_api_token plugin (a common production set-up) wants a
            // lifetime: ask again with one.
            if made.status == 409 && get_path(&made.body, "error.expires_in").is_some() {
                made = self
                    .call(
                        Method::Post,
                        "api_token_create",
                        self.opts.token.as_deref(),
                        Body::Json(&json!({"user": name, "name": "conformance",
                                           "expires_in": 30, "unit": 86400})),
                        None,
                    )
                    .await?;
            }
            let token = get_path(&made.body, "result.token")
                .and_then(Value::as_str)
                .filter(|_| made.status == 200)
                .ok_or_else(|| {
                    format!(
                        "api_token_create {name}: {} {}",
                        made.status,
                        short(&made.body)
                    )
                })?
                .to_string();
            vars.insert(format!("user.{alias}.name"), Value::String(name));
            vars.insert(format!("user.{alias}.email"), Value::String(email));
            vars.insert(format!("user.{alias}.id"), id);
            vars.insert(format!("user.{alias}.token"), Value::String(token.clone()));
            tokens.insert(alias.clone(), token);
        }
        Ok(())
    }

    /// Sends one step. `Err` means the step could not even be checked (bad placeholder,
    /// transport error); `Ok((check, response))` carries the verdict.
    async fn run_step(
        &self,
        st: &Step,
        vars: &mut Vars,
        tokens: &BTreeMap<String, String>,
    ) -> Result<(Result<(), String>, Response), String> {
        let token = match &st.token {
            Some(t) => Some(substitute_str(t, vars)?),
            None if st.as_ == "anonymous" => None,
            // Without a token (a read-only run) the deployment's own identity is anonymous.
            None if st.as_ == "sysadmin" && self.opts.token.is_none() => None,
            None => Some(
                tokens
                    .get(&st.as_)
                    .cloned()
                    .ok_or_else(|| format!("no token for {:?}", st.as_))?,
            ),
        };
        let params = st
            .params
            .as_ref()
            .map(|p| substitute(p, vars))
            .transpose()?;
        let query = st
            .query
            .as_ref()
            .map(|q| substitute_str(q, vars))
            .transpose()?;
        let raw = st
            .raw_body
            .as_ref()
            .map(|b| substitute_str(b, vars))
            .transpose()?;
        let empty = json!({});
        let body = match (&raw, &params) {
            (Some(raw), _) => Body::Raw(
                raw,
                st.content_type.as_deref().unwrap_or("application/json"),
            ),
            (None, Some(p)) => Body::Json(p),
            (None, None) => Body::Json(&empty),
        };
        let resp = match &st.path {
            Some(path) => {
                let path = substitute_str(path, vars)?;
                let mut headers = Vec::with_capacity(st.headers.len());
                for (k, v) in &st.headers {
                    headers.push((k.clone(), substitute_str(v, vars)?));
                }
                self.request_path(
                    st.method(),
                    &path,
                    query.as_deref(),
                    token.as_deref(),
                    &headers,
                    (st.method() != Method::Get).then_some(body),
                    st.rdf.as_deref(),
                )
                .await?
            }
            None => {
                self.call(
                    st.method(),
                    &st.action,
                    token.as_deref(),
                    body,
                    query.as_deref(),
                )
                .await?
            }
        };

        for (var, path) in &st.save {
            if let Some(v) = get_path(&resp.body, path) {
                vars.insert(var.clone(), v.clone());
            }
        }
        let check = self.check(st, vars, &resp);
        Ok((check, resp))
    }

    fn check(&self, st: &Step, vars: &Vars, resp: &Response) -> Result<(), String> {
        if resp.status != st.expect_status {
            return Err(format!(
                "expected status {}, got {}: {}",
                st.expect_status,
                resp.status,
                short(&resp.body)
            ));
        }
        for (name, want) in &st.expect_headers {
            let got = resp
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str());
            if got != Some(want.as_str()) {
                return Err(format!("header {name}: expected {want:?}, got {got:?}"));
            }
        }
        if let Some(e) = &st.expect {
            check_subset(&substitute(e, vars)?, &resp.body, ArrayMode::Exact)?;
        }
        if let Some(e) = &st.expect_contains {
            check_subset(&substitute(e, vars)?, &resp.body, ArrayMode::Contains)?;
        }
        if let Some(e) = &st.expect_excludes {
            check_excludes(&substitute(e, vars)?, &resp.body)?;
        }
        for (var, path) in &st.save {
            if get_path(&resp.body, path).is_none() {
                return Err(format!("cannot save {var}: no {path} in the response"));
            }
        }
        Ok(())
    }

    async fn call(
        &self,
        method: Method,
        action: &str,
        token: Option<&str>,
        body: Body<'_>,
        query: Option<&str>,
    ) -> Result<Response, String> {
        let mut url = format!("{}/api/3/action/{action}", self.base_url);
        let mut req = match method {
            Method::Get => {
                let q = match (query, &body) {
                    (Some(q), _) => q.to_string(),
                    (None, Body::Json(p)) => encode_query(p),
                    (None, Body::Raw(..)) => String::new(),
                };
                if !q.is_empty() {
                    url = format!("{url}?{q}");
                }
                let req = self.client.get(&url);
                match body {
                    Body::Raw(raw, ctype) => req
                        .header(reqwest::header::CONTENT_TYPE, ctype)
                        .body(raw.to_string()),
                    Body::Json(_) => req,
                }
            }
            Method::Put | Method::Delete => {
                let m = if method == Method::Put {
                    reqwest::Method::PUT
                } else {
                    reqwest::Method::DELETE
                };
                self.client.request(m, &url)
            }
            Method::Post => {
                if let Some(q) = query.filter(|q| !q.is_empty()) {
                    url = format!("{url}?{q}");
                }
                let (text, ctype) = match body {
                    Body::Raw(raw, ctype) => (raw.to_string(), ctype),
                    Body::Json(p) => (p.to_string(), "application/json"),
                };
                self.client
                    .post(&url)
                    .header(reqwest::header::CONTENT_TYPE, ctype)
                    .body(text)
            }
        };
        if let Some(t) = token {
            req = req.header(reqwest::header::AUTHORIZATION, t);
        }
        self.admit(method, Some(action), &url).await?;
        let resp = req
            .send()
            .await
            .map_err(|e| format!("{action}: request failed: {e}"))?;
        read_response(resp, action, None, &self.redactor()).await
    }

    /// What RDF terms are redacted with before blank nodes are labelled (the test snapshots
    /// then redact nothing more in them).
    fn redactor(&self) -> crate::Redactor {
        crate::Redactor::new()
            .literal(&self.run, "[run]")
            .literal(&self.base_url, "[base_url]")
    }

    /// A request to a site path (not an action), optionally parsing the body as RDF.
    #[allow(clippy::too_many_arguments)]
    async fn request_path(
        &self,
        method: Method,
        path: &str,
        query: Option<&str>,
        token: Option<&str>,
        headers: &[(String, String)],
        body: Option<Body<'_>>,
        rdf: Option<&str>,
    ) -> Result<Response, String> {
        let mut url = format!("{}{path}", self.base_url);
        if let Some(q) = query.filter(|q| !q.is_empty()) {
            url = format!("{url}?{q}");
        }
        let m = reqwest::Method::from_bytes(method.as_str().as_bytes())
            .map_err(|e| format!("{path}: {e}"))?;
        let mut req = self.client.request(m, &url);
        match body {
            Some(Body::Raw(raw, ctype)) => {
                req = req
                    .header(reqwest::header::CONTENT_TYPE, ctype)
                    .body(raw.to_string());
            }
            Some(Body::Json(p)) => {
                req = req
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(p.to_string());
            }
            None => {}
        }
        for (k, v) in headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(t) = token {
            req = req.header(reqwest::header::AUTHORIZATION, t);
        }
        self.admit(method, None, &url).await?;
        let resp = req
            .send()
            .await
            .map_err(|e| format!("{} {path}: request failed: {e}", method.as_str()))?;
        read_response(resp, path, rdf, &self.redactor()).await
    }
}

async fn read_response(
    resp: reqwest::Response,
    what: &str,
    rdf: Option<&str>,
    redactor: &crate::Redactor,
) -> Result<Response, String> {
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                v.to_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let text = resp
        .text()
        .await
        .map_err(|e| format!("{what}: reading the body failed: {e}"))?;
    let body = match rdf {
        Some(syntax) if (200..300).contains(&status) => {
            let triples = crate::rdf::canonical_lines(text.as_bytes(), syntax, redactor)
                .map_err(|e| format!("{what}: the body is not valid {syntax}: {e}"))?;
            json!({ "triples": triples })
        }
        _ => serde_json::from_str(&text).unwrap_or(Value::String(text)),
    };
    Ok(Response {
        status,
        body,
        headers,
    })
}

/// A step's verdict before the known-failures list is consulted.
enum Verdict {
    Pass,
    Fail(String),
    Skip(String),
}

enum Body<'a> {
    Json(&'a Value),
    /// Body text and its content type.
    Raw(&'a str, &'a str),
}

/// GET parameters as CKAN reads them: strings verbatim, lists as repeated keys, anything
/// else as JSON text.
fn encode_query(params: &Value) -> String {
    let mut ser: Vec<(String, String)> = Vec::new();
    if let Value::Object(m) = params {
        for (k, v) in m {
            match v {
                Value::Array(items) => {
                    for item in items {
                        ser.push((k.clone(), scalar_text(item)));
                    }
                }
                other => ser.push((k.clone(), scalar_text(other))),
            }
        }
    }
    ser.iter()
        .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `application/x-www-form-urlencoded` escaping of one key or value.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_suffixes_are_valid_names_and_never_hex() {
        let s = random_run_suffix();
        assert_eq!(s.len(), 8);
        assert!(s.starts_with('r'));
        assert!(s
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
        assert_ne!(random_run_suffix(), random_run_suffix());
    }

    #[test]
    fn get_params_become_a_query_string() {
        let q = encode_query(&json!({"id": "a b+c", "all_fields": true, "f": ["x", "y"]}));
        assert_eq!(q, "id=a+b%2Bc&all_fields=true&f=x&f=y");
    }
}
