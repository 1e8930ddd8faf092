//! `package_revise`: CKAN's selective dataset update — check `match` against the dataset, drop
//! what `filter` names, merge `update` (and the flattened `match__…` / `update__…` keys) in, and
//! save the result through `package_update`. The path and glob rules are CKAN's
//! `ckan/lib/navl/dictization_functions.py` (`check_dict`, `resolve_string_key`,
//! `filter_glob_match`, `update_merge_*`).

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::typed::Field;

action_params! {
    /// Revise a dataset selectively: `match` must equal the dataset's values, `filter` globs
    /// remove values, `update` is merged in (lists by position), then the dataset is saved as
    /// package_update saves it.
    ///
    /// :param match: a dict of values the dataset must have; its `id` or `name` names it
    /// :param filter: glob patterns of values to remove (`-resources__1`, `+resources`, `-*`)
    /// :param update: a dict merged into the dataset
    /// :param include: glob patterns applied to the answer `{"package": …}`
    /// :param match__<path>: / update__<path>: flattened forms (`update__resources__0__name`,
    ///   `update__resources__extend`, a resource by an id prefix of 5 or more characters)
    /// :rtype: dictionary with `package`
    pub struct PackageReviseParams {
        /// a dict (or its JSON text) of values the dataset must have; its `id` or `name`
        /// names the dataset (else `match__id` / `match__name`)
        select: DictParam as "match",
        /// glob patterns of values to remove (`-resources__1`, `+resources`, `-*`): a list,
        /// its JSON text, or a comma-separated string
        filter: Globs,
        /// a dict (or its JSON text) merged into the dataset (lists by position)
        update: DictParam,
        /// glob patterns applied to the answer `{"package": …}`
        include: Globs,
    }
}

/// A path of keys and list positions, printed as CKAN prints it (`resources__0__name`).
type Path = Vec<String>;

/// A parsed glob pattern: `(keep, segments)`.
type Glob = (bool, Vec<String>);

fn joined(p: &[String]) -> String {
    p.join("__")
}

/// A value that may come as JSON text (form posts, ckanapi's `key=value` arguments).
fn parsed(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// `match` / `update`: a dict, or JSON text of one.
#[derive(Debug)]
pub(crate) struct DictParam(Option<Map<String, Value>>);

impl Field for DictParam {
    fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        match v.map(parsed) {
            None => Ok(DictParam(None)),
            Some(Value::Object(m)) => Ok(DictParam(Some(m))),
            Some(_) => Err("Must be a dict".into()),
        }
    }
    fn is_blank(_: &Value) -> bool {
        false
    }
    fn required() -> bool {
        false
    }
    fn schema() -> Value {
        json!({"type": ["object", "string"]})
    }
    fn to_value(&self) -> Option<Value> {
        self.0.clone().map(Value::Object)
    }
}

/// `filter` / `include`: a list of strings, JSON text of one, or a comma-separated string.
#[derive(Debug)]
pub(crate) struct Globs(Option<Vec<String>>);

impl Field for Globs {
    fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        let Some(v) = v else {
            return Ok(Globs(None));
        };
        let list = match v {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Array(a)) => a,
                _ => s.split(',').map(|x| json!(x)).collect(),
            },
            Value::Array(a) => a.clone(),
            _ => return Err("Not a list".into()),
        };
        let mut out = Vec::with_capacity(list.len());
        for item in list {
            match item {
                Value::String(s) => out.push(s),
                other => return Err(format!("Not a string: {other}").into()),
            }
        }
        Ok(Globs(Some(out)))
    }
    fn is_blank(_: &Value) -> bool {
        false
    }
    fn required() -> bool {
        false
    }
    fn schema() -> Value {
        json!({"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]})
    }
    fn to_value(&self) -> Option<Value> {
        self.0.as_ref().map(|g| json!(g))
    }
}

/// The position a path segment names in a list: an index (negative from the end), or for five
/// or more characters the first dict whose `id` starts with it. `Err` (unmatched) when it names
/// none, or when a dict without an id stands in the way of an id prefix.
fn list_index(items: &[Value], k: &str) -> Result<Option<usize>, ()> {
    if k.len() >= 5 {
        for (i, rec) in items.iter().enumerate() {
            let id = rec.get("id").and_then(Value::as_str).ok_or(())?;
            if id.starts_with(k) {
                return Ok(Some(i));
            }
        }
        return Ok(None);
    }
    let n = items.len() as i64;
    Ok(match k.parse::<i64>() {
        Ok(i) if i >= -n && i < n => Some(if i < 0 { (n + i) as usize } else { i as usize }),
        _ => None,
    })
}

/// CKAN's `resolve_string_key`: the path a `__`-joined key names in `data`, with list positions
/// resolved (`resources__1f9ab__name` → `resources`, `0`, `name`).
fn resolve_path(data: &Value, key: &str) -> Result<Path, String> {
    let mut path: Path = Vec::new();
    let mut current = data;
    for k in key.split("__") {
        let unmatched = |path: &Path| {
            let mut p = path.clone();
            p.push(k.to_string());
            format!("Unmatched key {}", joined(&p))
        };
        current = match current {
            Value::Object(m) => {
                let child = m.get(k).ok_or_else(|| unmatched(&path))?;
                path.push(k.to_string());
                child
            }
            Value::Array(items) => {
                let index = list_index(items, k)
                    .ok()
                    .flatten()
                    .ok_or_else(|| unmatched(&path))?;
                path.push(index.to_string());
                &items[index]
            }
            _ => return Err(unmatched(&path)),
        };
    }
    Ok(path)
}

/// The value at a path [`resolve_path`] gave for this same value.
fn at<'a>(data: &'a Value, path: &Path) -> Option<&'a Value> {
    path.iter().try_fold(data, |current, seg| match current {
        Value::Object(m) => m.get(seg),
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// [`at`], to change the value.
fn at_mut<'a>(data: &'a mut Value, path: &Path) -> Option<&'a mut Value> {
    path.iter().try_fold(data, |current, seg| match current {
        Value::Object(m) => m.get_mut(seg),
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    })
}

/// [`resolve_path`] and [`at_mut`] together: the value a key names, and its path.
fn resolve<'a>(data: &'a mut Value, key: &str) -> Result<(&'a mut Value, Path), String> {
    let path = resolve_path(data, key)?;
    let value = at_mut(data, &path).ok_or_else(|| format!("Unmatched key {key}"))?;
    Ok((value, path))
}

/// CKAN's `check_dict` / `check_list`: the paths of `select` whose values differ in `data`.
fn check(data: &Value, select: &Value, path: &Path, out: &mut Vec<String>) {
    match select {
        Value::Object(sel) => {
            let Some(d) = data.as_object() else {
                out.push(joined(path));
                return;
            };
            let mut keys: Vec<&String> = sel.keys().collect();
            keys.sort();
            for k in keys {
                let mut p = path.clone();
                p.push(k.clone());
                match d.get(k) {
                    None => out.push(joined(&p)),
                    Some(dv) => check_value(dv, &sel[k], &p, out),
                }
            }
        }
        Value::Array(sel) => {
            let Some(d) = data.as_array() else {
                out.push(joined(path));
                return;
            };
            for (i, v) in sel.iter().enumerate() {
                let mut p = path.clone();
                p.push(i.to_string());
                match d.get(i) {
                    None => out.push(joined(&p)),
                    Some(dv) => check_value(dv, v, &p, out),
                }
            }
        }
        other => {
            if data != other {
                out.push(joined(path));
            }
        }
    }
}

fn check_value(data: &Value, select: &Value, path: &Path, out: &mut Vec<String>) {
    match select {
        Value::Object(_) | Value::Array(_) => check(data, select, path, out),
        v if data != v => out.push(joined(path)),
        _ => {}
    }
}

/// CKAN's `update_merge_dict` / `update_merge_list`: dicts merged key by key, lists position by
/// position (never replaced wholesale), other values replaced.
fn merge(data: &mut Value, update: &Value, path: &Path) -> Result<(), String> {
    match data {
        Value::Object(d) => {
            let Some(u) = update.as_object() else {
                return Err(format!("Expected dict for {}", joined(path)));
            };
            for (k, v) in u {
                let mut p = path.clone();
                p.push(k.clone());
                match d.get_mut(k) {
                    Some(existing @ (Value::Object(_) | Value::Array(_))) => {
                        merge(existing, v, &p)?
                    }
                    Some(existing) => *existing = v.clone(),
                    None => {
                        d.insert(k.clone(), v.clone());
                    }
                }
            }
            Ok(())
        }
        Value::Array(d) => {
            let Some(u) = update.as_array() else {
                return Err(format!("Expected list for {}", joined(path)));
            };
            for (i, v) in u.iter().enumerate() {
                let mut p = path.clone();
                p.push(i.to_string());
                match d.get_mut(i) {
                    Some(existing @ (Value::Object(_) | Value::Array(_))) => {
                        merge(existing, v, &p)?
                    }
                    Some(existing) => *existing = v.clone(),
                    None => d.push(v.clone()),
                }
            }
            Ok(())
        }
        other => {
            *other = update.clone();
            Ok(())
        }
    }
}

/// CKAN's `update_merge_string_key`, `…__extend` appending to a list.
fn merge_string_key(data: &mut Value, key: &str, value: &Value) -> Result<(), String> {
    let (parent_key, last) = match key.rsplit_once("__") {
        Some((p, l)) => (p, l),
        None => ("", key),
    };
    let (current, path) = if parent_key.is_empty() {
        (data, Vec::new())
    } else {
        resolve(data, parent_key)?
    };
    match current {
        Value::Object(_) => merge(current, &json!({ last: value }), &path),
        Value::Array(items) => {
            if last == "extend" {
                let Some(more) = value.as_array() else {
                    return Err(format!("Expected list for {parent_key}"));
                };
                items.extend(more.iter().cloned());
                return Ok(());
            }
            let (child, child_path) = resolve(current, last)?;
            let mut p = path.clone();
            p.extend(child_path);
            match child {
                Value::Object(_) | Value::Array(_) => merge(child, value, &p),
                other => {
                    *other = value.clone();
                    Ok(())
                }
            }
        }
        _ => Err(format!("Expected list or dict for {parent_key}")),
    }
}

/// CKAN's `filter_glob_match`: `[+|-]seg__seg…`; `+` protects, `-` or nothing removes, `*`
/// matches every key or position of its level.
pub(crate) fn filter_glob_match(data: &mut Value, patterns: &[String]) {
    let parsed: Vec<Glob> = patterns
        .iter()
        .map(|p| {
            let keep = p.starts_with('+');
            let rest = p.trim_start_matches(['-', '+']);
            (keep, rest.split("__").map(str::to_string).collect())
        })
        .collect();
    glob_level(data, &parsed);
}

fn glob_level(data: &mut Value, globs: &[Glob]) {
    match data {
        Value::Object(m) => {
            let mut protected = Map::new();
            let mut children: Vec<(String, Vec<Glob>)> = Vec::new();
            for (keep, g) in globs {
                let head = &g[0];
                if head == "*" {
                    if *keep {
                        for (k, v) in m.iter() {
                            protected.insert(k.clone(), v.clone());
                        }
                    } else {
                        m.clear();
                    }
                    continue;
                }
                if !m.contains_key(head) {
                    continue;
                }
                if g.len() > 1 {
                    let rest = (*keep, g[1..].to_vec());
                    match children.iter_mut().find(|(h, _)| h == head) {
                        Some((_, list)) => list.push(rest),
                        None => children.push((head.clone(), vec![rest])),
                    }
                } else if *keep {
                    if let Some(v) = m.get(head) {
                        protected.insert(head.clone(), v.clone());
                    }
                } else {
                    m.shift_remove(head);
                }
            }
            for (k, v) in protected {
                m.insert(k, v);
            }
            for (head, list) in children {
                if let Some(child) = m.get_mut(&head) {
                    glob_level(child, &list);
                }
            }
        }
        Value::Array(items) => {
            let n = items.len();
            let mut protected = std::collections::BTreeSet::new();
            let mut removed = std::collections::BTreeSet::new();
            let mut children: Vec<(usize, Vec<Glob>)> = Vec::new();
            for (keep, g) in globs {
                let head = &g[0];
                if head == "*" {
                    for i in 0..n {
                        if *keep && !removed.contains(&i) {
                            protected.insert(i);
                        } else if !*keep && !protected.contains(&i) {
                            removed.insert(i);
                        }
                    }
                    continue;
                }
                let Ok(Some(index)) = list_index(items, head) else {
                    continue;
                };
                if g.len() > 1 {
                    let rest = (*keep, g[1..].to_vec());
                    match children.iter_mut().find(|(h, _)| *h == index) {
                        Some((_, list)) => list.push(rest),
                        None => children.push((index, vec![rest])),
                    }
                } else if *keep {
                    if !removed.contains(&index) {
                        protected.insert(index);
                    }
                } else if !protected.contains(&index) {
                    removed.insert(index);
                }
            }
            let gone: std::collections::BTreeSet<usize> =
                removed.difference(&protected).copied().collect();
            for (index, list) in children {
                if !gone.contains(&index) {
                    glob_level(&mut items[index], &list);
                }
            }
            let mut i = 0;
            items.retain(|_| {
                let keep = !gone.contains(&i);
                i += 1;
                keep
            });
        }
        _ => {}
    }
}

pub(crate) async fn package_revise(
    ctx: &mut ActionContext,
    p: PackageReviseParams,
) -> CkanResult<Value> {
    let (select, filter, update, include) = (p.select.0, p.filter.0, p.update.0, p.include.0);
    let p = p.__extras;
    let flat = |prefix: &str| -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = p
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(prefix)
                    .map(|rest| (rest.to_string(), parsed(v)))
            })
            .filter(|(k, _)| !k.is_empty())
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    let match_flat = flat("match__");
    let update_flat = flat("update__");

    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let from_flat = |k: &str| text(match_flat.iter().find(|(f, _)| f == k).map(|(_, v)| v));
    let from_match = |k: &str| text(select.as_ref().and_then(|m| m.get(k)));
    let name_or_id = from_flat("id")
        .or_else(|| from_match("id"))
        .or_else(|| from_flat("name"))
        .or_else(|| from_match("name"))
        .ok_or_else(|| {
            let mut e = validation();
            e.set("match__id", json!("Missing value"));
            e.build()
        })?;
    // The dataset is locked for update before it is read: package_show would take a share
    // lock that package_update then upgrades, and concurrent revisers holding share locks
    // deadlock on that upgrade (PostgreSQL), again and again on every retry.
    ctx.package_for_update(&name_or_id).await?;
    let mut show = Map::new();
    show.insert("id".into(), json!(name_or_id));
    let orig = ctx.call("package_show", show).await?;

    let mut unmatched = Vec::new();
    if let Some(m) = &select {
        check(
            &orig,
            &Value::Object(m.clone()),
            &Vec::new(),
            &mut unmatched,
        );
    }
    for (k, v) in &match_flat {
        let found = resolve_path(&orig, k).and_then(|path| {
            let value = at(&orig, &path).ok_or_else(|| format!("Unmatched key {k}"))?;
            Ok((value, path))
        });
        match found {
            Ok((current, path)) => check_value(current, v, &path, &mut unmatched),
            // CKAN answers 500 here (an uncaught DataError); the path did not match.
            Err(_) => unmatched.push(k.clone()),
        }
    }
    if !unmatched.is_empty() {
        let mut e = validation();
        e.set("match", json!(unmatched));
        return Err(e.build());
    }

    let mut revised = orig.clone();
    if let Some(m) = revised.as_object_mut() {
        m.shift_remove("metadata_modified");
    }
    if let Some(globs) = &filter {
        filter_glob_match(&mut revised, globs);
        revised["id"] = orig["id"].clone();
    }
    if let Some(u) = &update {
        merge(&mut revised, &Value::Object(u.clone()), &Vec::new())
            .map_err(|e| validation().field("update", e).build())?;
    }
    // `…extend` keys first (CKAN sorts them under "e"), so that a call may extend a list and
    // then change the new entries.
    let mut ordered = update_flat;
    ordered.sort_by(|a, b| {
        let key = |k: &str| {
            if k.ends_with("extend") {
                "e".to_string()
            } else {
                k.to_string()
            }
        };
        key(&a.0).cmp(&key(&b.0))
    });
    for (k, v) in &ordered {
        merge_string_key(&mut revised, k, v)
            .map_err(|e| validation().field(&format!("update__{k}"), e).build())?;
    }
    let Value::Object(revised) = revised else {
        return Err(internal("the revised dataset is not a dict"));
    };
    // CKAN checks package_revise (package_update's rule) on the revised dataset.
    let mut auth = Map::new();
    auth.insert("id".into(), orig["id"].clone());
    ctx.check_access("package_revise", &auth).await?;
    let saved = ctx.call("package_update", revised).await?;
    let mut rval = json!({ "package": saved });
    if let Some(globs) = &include {
        filter_glob_match(&mut rval, globs);
    }
    Ok(rval)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn glob_filter_follows_ckan() {
        let mut d = json!({"id": "x", "name": "n", "resources": [{"id": "aaaaa1", "name": "a"}, {"id": "bbbbb2", "name": "b"}]});
        filter_glob_match(&mut d, &globs(&["-resources__1"]));
        assert_eq!(d["resources"].as_array().unwrap().len(), 1);
        let mut d = json!({"id": "x", "name": "n", "resources": [{"id": "aaaaa1", "name": "a"}]});
        filter_glob_match(&mut d, &globs(&["+resources", "-*"]));
        assert_eq!(d, json!({"resources": [{"id": "aaaaa1", "name": "a"}]}));
        let mut d = json!({"resources": [{"id": "aaaaa1", "name": "a", "url": "u"}]});
        filter_glob_match(
            &mut d,
            &globs(&["+resources__aaaaa__id", "-resources__aaaaa__*"]),
        );
        assert_eq!(d, json!({"resources": [{"id": "aaaaa1"}]}));
        let mut wrapper = json!({"package": {"name": "n"}});
        filter_glob_match(&mut wrapper, &globs(&["name", "title"]));
        assert_eq!(
            wrapper,
            json!({"package": {"name": "n"}}),
            "include applies to the wrapper"
        );
    }

    #[test]
    fn merges_and_string_keys_follow_ckan() {
        let mut d = json!({"title": "t", "resources": [{"name": "a"}], "extras": []});
        merge(
            &mut d,
            &json!({"title": "u", "resources": [{"description": "d"}]}),
            &Vec::new(),
        )
        .unwrap();
        assert_eq!(d["resources"][0], json!({"name": "a", "description": "d"}));
        assert_eq!(
            merge(&mut d, &json!({"resources": {"x": 1}}), &Vec::new()).unwrap_err(),
            "Expected list for resources"
        );
        merge_string_key(&mut d, "resources__extend", &json!([{"name": "b"}])).unwrap();
        merge_string_key(&mut d, "resources__-1__name", &json!("c")).unwrap();
        assert_eq!(d["resources"][1]["name"], "c");
        assert_eq!(
            merge_string_key(&mut d, "resources__9__name", &json!("x")).unwrap_err(),
            "Unmatched key resources__9"
        );
        let mut unmatched = Vec::new();
        check(
            &d,
            &json!({"title": "u", "resources": [{"name": "z"}]}),
            &Vec::new(),
            &mut unmatched,
        );
        assert_eq!(unmatched, vec!["resources__0__name"]);
    }
}
