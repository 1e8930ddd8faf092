//! Extension points: registration records collected from every crate linked into a binary.
//!
//! An extension point is a record type declared with [`extension_point!`](crate::extension_point); a `register_*!`
//! macro submits a record (a name, a priority and a constructor `fn`) with [`register_at!`](crate::register_at).
//! Whoever owns the extension point collects its records at start-up (the framework's
//! registry, a plugin's `configure` hook): for each name the highest priority wins, and two
//! records of one name at one priority are an error ([`RegistryClash`]).
//!
//! An extension point declared `collected` is collected by the framework's registry itself,
//! eagerly, whoever declares it: its records are then found by type
//! (`Registry::extensions::<R>()`) and listed in the registry's summary under its key.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One registration record of an extension point: what a `register_*!` macro submits.
pub trait Registration: inventory::Collect {
    /// What the record builds (`Box<dyn Action>`, `Box<dyn DcatProfile>` …).
    type Target: 'static;
    fn name(&self) -> &'static str;
    fn priority(&self) -> i32;
    /// `CARGO_PKG_NAME` of the registering crate: its plugin switches it on and off.
    fn crate_name(&self) -> &'static str;
    fn builder(&self) -> fn() -> Self::Target;
}

/// Declares an extension point: a registration record type collected from every linked
/// crate. The framework declares its own with it; a plugin declares one for the extensions
/// other plugins add to it (the DCAT plugin's profiles), resolves it with
/// `Registry::resolve` and gives authors a `register_*!` macro that expands to
/// [`register_at!`](crate::register_at).
///
/// ```ignore
/// catalog_framework::extension_point!(
///     /// A profile, submitted with `register_profile!`.
///     pub ProfileRegistration, Box<dyn Profile>
/// );
/// ```
#[macro_export]
macro_rules! extension_point {
    ($(#[$m:meta])* $vis:vis $name:ident, $target:ty, collected($key:literal, $label:literal)) => {
        $crate::extension_point!($(#[$m])* $vis $name, $target, collected($key, $label, listed = true));
    };
    ($(#[$m:meta])* $vis:vis $name:ident, $target:ty, collected($key:literal, $label:literal, listed = $listed:literal)) => {
        $crate::extension_point!($(#[$m])* $vis $name, $target);
        $crate::__private::inventory::submit! {
            $crate::__private::ExtensionPoint {
                key: $key,
                label: $label,
                listed: $listed,
                collect: |enabled| $crate::__private::collect::<$name>($key, $label, $listed, enabled),
            }
        }
    };
    ($(#[$m:meta])* $vis:vis $name:ident, $target:ty) => {
        $(#[$m])*
        $vis struct $name {
            pub name: &'static str,
            pub priority: i32,
            /// `CARGO_PKG_NAME` of the registering crate: its plugin switches it on and off.
            pub crate_name: &'static str,
            pub build: fn() -> $target,
        }
        $crate::__private::inventory::collect!($name);
        impl $crate::__private::Registration for $name {
            type Target = $target;
            fn name(&self) -> &'static str {
                self.name
            }
            fn priority(&self) -> i32 {
                self.priority
            }
            fn crate_name(&self) -> &'static str {
                self.crate_name
            }
            fn builder(&self) -> fn() -> $target {
                self.build
            }
        }
    };
}

/// Submits a registration record of the extension point `$reg` (a path to a type declared
/// with [`extension_point!`](crate::extension_point)), made in the calling crate: what every `register_*!` macro,
/// the framework's and plugins', expands to.
#[macro_export]
macro_rules! register_at {
    ($reg:path, $name:expr, $value:expr, $p:expr) => {
        $crate::__private::inventory::submit! {
            $reg {
                name: $name,
                priority: $p,
                crate_name: env!("CARGO_PKG_NAME"),
                build: || Box::new($value),
            }
        }
    };
}

/// A registry-building failure: two registrations of one name at one priority.
#[derive(Debug)]
pub struct RegistryClash {
    pub kind: &'static str,
    pub name: String,
    pub priority: i32,
}

impl std::fmt::Display for RegistryClash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} `{}` is registered twice at priority {}; give one of them a higher priority",
            self.kind, self.name, self.priority
        )
    }
}

impl std::error::Error for RegistryClash {}

/// The winning registration of a name so far: priority, constructor, how many share that priority.
type Best<T> = (i32, fn() -> T, usize);

/// Resolves registrations `(name, priority, constructor)`: for each name the highest priority
/// wins; two of one name at the winning priority are a [`RegistryClash`] naming `kind`.
pub fn resolve<T>(
    kind: &'static str,
    entries: impl Iterator<Item = (&'static str, i32, fn() -> T)>,
) -> Result<BTreeMap<String, Arc<T>>, RegistryClash> {
    let mut best: BTreeMap<&'static str, Best<T>> = BTreeMap::new();
    for (name, priority, build) in entries {
        match best.get_mut(name) {
            Some(cur) if cur.0 == priority => cur.2 += 1,
            Some(cur) if cur.0 > priority => {}
            _ => {
                best.insert(name, (priority, build, 1));
            }
        }
    }
    let mut out = BTreeMap::new();
    for (name, (priority, build, count)) in best {
        if count > 1 {
            return Err(RegistryClash {
                kind,
                name: name.to_string(),
                priority,
            });
        }
        out.insert(name.to_string(), Arc::new(build()));
    }
    Ok(out)
}

/// The records of an extension point made by the enabled crates (`enabled(crate_name)`),
/// resolved by name ([`resolve`]).
pub fn resolve_enabled<R: Registration>(
    kind: &'static str,
    enabled: &dyn Fn(&str) -> bool,
) -> Result<BTreeMap<String, Arc<R::Target>>, RegistryClash> {
    resolve(
        kind,
        inventory::iter::<R>()
            .filter(|r| enabled(r.crate_name()))
            .map(|r| (r.name(), r.priority(), r.builder())),
    )
}

/// Resolves a collected extension point's records, given which crates are enabled.
pub type CollectFn = fn(&dyn Fn(&str) -> bool) -> Result<Collected, RegistryClash>;

/// An extension point the framework's registry collects itself (declared with
/// `extension_point!(…, collected("key", "label"))`).
pub struct ExtensionPoint {
    /// Its key in the registry's summary (`search_backends`).
    pub key: &'static str,
    /// What one record is, for messages (`search backend`).
    pub label: &'static str,
    /// Whether the registry's summary lists its names.
    pub listed: bool,
    /// Resolves the records of the enabled crates.
    pub collect: CollectFn,
}

inventory::collect!(ExtensionPoint);

/// The resolved records of one collected extension point.
pub struct Collected {
    pub key: &'static str,
    pub label: &'static str,
    /// Whether the registry's summary lists its names.
    pub listed: bool,
    /// The record type's id: what `Registry::extensions::<R>()` looks up.
    pub type_id: TypeId,
    /// The winners' names, sorted.
    pub names: Vec<String>,
    /// A `BTreeMap<String, Arc<R::Target>>`.
    pub entries: Box<dyn Any + Send + Sync>,
}

/// What an `ExtensionPoint::collect` of record type `R` does.
pub fn collect<R: Registration>(
    key: &'static str,
    label: &'static str,
    listed: bool,
    enabled: &dyn Fn(&str) -> bool,
) -> Result<Collected, RegistryClash>
where
    R::Target: Send + Sync,
{
    let map = resolve_enabled::<R>(label, enabled)?;
    Ok(Collected {
        key,
        label,
        listed,
        type_id: TypeId::of::<R>(),
        names: map.keys().cloned().collect(),
        entries: Box::new(map),
    })
}

/// Every collected extension point linked into the binary, in key order.
pub fn extension_points() -> Vec<&'static ExtensionPoint> {
    let mut points: Vec<&'static ExtensionPoint> = inventory::iter::<ExtensionPoint>().collect();
    points.sort_by_key(|p| p.key);
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> Box<dyn Fn() -> i32> {
        Box::new(|| 1)
    }
    fn two() -> Box<dyn Fn() -> i32> {
        Box::new(|| 2)
    }

    #[test]
    fn higher_priority_wins_and_equal_priority_clashes() {
        let m = resolve::<Box<dyn Fn() -> i32>>(
            "x",
            [("a", 0, one as fn() -> _), ("a", 5, two)].into_iter(),
        )
        .unwrap();
        assert_eq!((m["a"])(), 2);
        let err = resolve::<Box<dyn Fn() -> i32>>(
            "x",
            [("a", 1, one as fn() -> _), ("a", 1, two)].into_iter(),
        )
        .err()
        .unwrap();
        assert_eq!(err.name, "a");
        assert!(err.to_string().contains("registered twice"));
    }
}
