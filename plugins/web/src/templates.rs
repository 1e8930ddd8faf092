//! Templates in layers, the way CKAN's `{% ckan_extends %}` works: every plugin may ship a
//! template set ([`register_templates!`](crate::register_templates)), the operator may add a
//! folder (`catalog.web.extra_template_paths`), and a template name resolves to the highest
//! layer that has it. Inside it, `{% ckan_extends %}` extends the same template one layer
//! down, so two stacked plugins both apply; `{% extends "x.html" %}` starts from the top again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use minijinja::{Environment, Error, ErrorKind};

catalog_framework::extension_point!(
    /// A plugin's template set (`register_templates!`).
    pub TemplateRegistration, Box<TemplateSet>
);

/// One layer of templates: `(name, source)` pairs, names as CKAN's (`package/read.html` …
/// here `dataset/read.html`), and its place in the stack (higher wins; the web plugin's own
/// set is 0, the operator's folder is above every plugin).
pub struct TemplateSet {
    pub priority: i32,
    pub files: &'static [(&'static str, &'static str)],
}

/// Registers a template set: `register_templates!("my-theme", 10, &[("dataset/read.html",
/// include_str!("../templates/dataset/read.html"))]);`.
#[macro_export]
macro_rules! register_templates {
    ($name:expr, $priority:expr, $files:expr) => {
        $crate::__private::register_at!(
            $crate::templates::TemplateRegistration,
            $name,
            $crate::templates::TemplateSet {
                priority: $priority,
                files: $files
            },
            $priority
        );
    };
}

/// A layer, loaded: its name (for errors) and files.
struct Layer {
    name: String,
    files: HashMap<String, String>,
}

/// The layers from the top down.
pub(crate) struct Layers {
    layers: Vec<Layer>,
}

/// The marker a template uses to extend the same template one layer down.
const CKAN_EXTENDS: &str = "{% ckan_extends %}";

impl Layers {
    /// The registered sets (highest priority on top; equal priorities by name) and, above them,
    /// the operator's folders (the first listed on top).
    pub(crate) fn load(
        sets: Vec<(String, &TemplateSet)>,
        folders: &[String],
    ) -> anyhow::Result<Layers> {
        let mut layers = Vec::new();
        for folder in folders {
            let mut files = HashMap::new();
            read_folder(Path::new(folder), "", &mut files)?;
            layers.push(Layer {
                name: folder.clone(),
                files,
            });
        }
        let mut sets = sets;
        sets.sort_by(|a, b| b.1.priority.cmp(&a.1.priority).then(a.0.cmp(&b.0)));
        for (name, set) in sets {
            let files = set
                .files
                .iter()
                .map(|(n, s)| (n.to_string(), s.to_string()))
                .collect();
            layers.push(Layer { name, files });
        }
        Ok(Layers { layers })
    }

    /// The names of the layers from the top down.
    pub(crate) fn names(&self) -> Vec<&str> {
        self.layers.iter().map(|l| l.name.as_str()).collect()
    }

    /// The first layer at or below `from` that has `name`.
    fn find(&self, name: &str, from: usize) -> Option<usize> {
        (from..self.layers.len()).find(|&i| self.layers[i].files.contains_key(name))
    }

    /// The source of `name` (`@<layer>/<name>` names one layer), with `{% ckan_extends %}`
    /// made an `extends` of the layer below.
    pub(crate) fn source(&self, name: &str) -> Result<Option<String>, Error> {
        let (name, from) = match name.strip_prefix('@').and_then(|r| r.split_once('/')) {
            Some((layer, rest)) => match layer.parse::<usize>() {
                Ok(layer) => (rest, layer),
                Err(_) => return Ok(None),
            },
            None => (name, 0),
        };
        let Some(at) = self.find(name, from) else {
            return Ok(None);
        };
        let text = &self.layers[at].files[name];
        if !text.contains(CKAN_EXTENDS) {
            return Ok(Some(text.clone()));
        }
        let Some(below) = self.find(name, at + 1) else {
            return Err(Error::new(
                ErrorKind::TemplateNotFound,
                format!(
                    "{name} in {} uses ckan_extends, but no layer below has it",
                    self.layers[at].name
                ),
            ));
        };
        Ok(Some(text.replacen(
            CKAN_EXTENDS,
            &format!("{{% extends \"@{below}/{name}\" %}}"),
            1,
        )))
    }
}

/// Reads `*.html` (and other text files) under `dir` into `files`, named by their path below
/// the folder with `/` separators.
fn read_folder(
    dir: &Path,
    prefix: &str,
    files: &mut HashMap<String, String>,
) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("catalog.web.extra_template_paths: {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let rel = format!("{prefix}{name}");
        if path.is_dir() {
            read_folder(&path, &format!("{rel}/"), files)?;
        } else if name.ends_with(".html") || name.ends_with(".txt") || name.ends_with(".xml") {
            files.insert(rel, std::fs::read_to_string(&path)?);
        }
    }
    Ok(())
}

/// An environment over `layers`: autoescape on for `.html` and `.xml`, undefined values
/// render empty (as Jinja's default), templates are loaded on first use and kept.
pub(crate) fn environment(layers: Arc<Layers>) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_loader(move |name| layers.source(name));
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html") || name.ends_with(".xml") {
            minijinja::AutoEscape::Html
        } else {
            minijinja::AutoEscape::None
        }
    });
    env.set_recursion_limit(64);
    env.set_formatter(format_value);
    env
}

/// Writes a value into a page: in HTML, `&`, `<`, `>`, `"` and `'` escaped (minijinja's own
/// escaping also writes `/` as `&#x2f;`, which bloats every address for no safety gained in a
/// quoted attribute), none and undefined as nothing.
fn format_value(
    out: &mut minijinja::Output,
    state: &minijinja::State,
    value: &minijinja::Value,
) -> Result<(), Error> {
    if value.is_none() || value.is_undefined() {
        return Ok(());
    }
    if !matches!(state.auto_escape(), minijinja::AutoEscape::Html) || value.is_safe() {
        return minijinja::escape_formatter(out, state, value);
    }
    let text = match value.as_str() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(value.to_string()),
    };
    catalog_framework::escape::write_html(out, &text).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Files = &'static [(&'static str, &'static str)];

    fn layers(sets: &[(&str, i32, Files)]) -> Arc<Layers> {
        let owned: Vec<(String, TemplateSet)> = sets
            .iter()
            .map(|(n, p, f)| {
                (
                    n.to_string(),
                    TemplateSet {
                        priority: *p,
                        files: f,
                    },
                )
            })
            .collect();
        let refs = owned.iter().map(|(n, s)| (n.clone(), s)).collect();
        Arc::new(Layers::load(refs, &[]).unwrap())
    }

    const BASE: &[(&str, &str)] = &[
        (
            "page.html",
            "<h1>{% block title %}Base{% endblock %}</h1>{% block body %}body{% endblock %}",
        ),
        (
            "read.html",
            "{% extends \"page.html\" %}{% block title %}Read {{ x }}{% endblock %}",
        ),
        ("q.html", "{{ x }}|{{ y }}|{{ z }}"),
    ];
    const THEME_A: &[(&str, &str)] = &[(
        "read.html",
        "{% ckan_extends %}{% block body %}A:{{ super() }}{% endblock %}",
    )];
    const THEME_B: &[(&str, &str)] = &[(
        "read.html",
        "{% ckan_extends %}{% block title %}B {{ super() }}{% endblock %}",
    )];

    #[test]
    fn stacked_layers_both_apply_and_escape() {
        let env = environment(layers(&[
            ("web", 0, BASE),
            ("a", 10, THEME_A),
            ("b", 20, THEME_B),
        ]));
        let out = env
            .get_template("read.html")
            .unwrap()
            .render(minijinja::context! { x => "<x>" })
            .unwrap();
        assert_eq!(out, "<h1>B Read &lt;x&gt;</h1>A:body");
        let quote = env
            .get_template("q.html")
            .unwrap()
            .render(minijinja::context! { x => "a/\"b'&", y => () })
            .unwrap();
        assert_eq!(quote, "a/&quot;b&#39;&amp;||");
    }

    #[test]
    fn without_the_themes_the_base_renders() {
        let env = environment(layers(&[("web", 0, BASE)]));
        let out = env
            .get_template("read.html")
            .unwrap()
            .render(minijinja::context! { x => 1 })
            .unwrap();
        assert_eq!(out, "<h1>Read 1</h1>body");
    }

    #[test]
    fn ckan_extends_with_nothing_below_is_an_error_not_a_loop() {
        let env = environment(layers(&[("a", 10, THEME_A)]));
        assert!(env.get_template("read.html").is_err());
    }
}
