//! What every action's parameters must satisfy before any action sees them (checked once, at
//! the top-level call): no NUL character, no list over its bound.

use serde_json::Value;

use crate::error::{validation, CkanResult};
use crate::store::Params;

pub use crate::store::error::NUL_MESSAGE;

/// The message of a list over its bound.
pub fn too_many_items(max: usize) -> String {
    format!("Must hold at most {max} items")
}

/// Checks what every action's parameters must satisfy before any action sees them: no NUL
/// character in any string or key, and no list longer than `max_list_items`, at any depth.
/// Errors name the top-level parameter that holds the offending value.
pub fn check_input(p: &Params, max_list_items: usize) -> CkanResult<()> {
    let mut errs = validation();
    for (key, v) in p {
        if key.contains('\0') {
            errs.push("__key", NUL_MESSAGE);
            continue;
        }
        match scan(v, max_list_items) {
            Scan::Clean => {}
            Scan::Nul => errs.push(key, NUL_MESSAGE),
            Scan::LongList => errs.push(key, too_many_items(max_list_items)),
        }
    }
    errs.finish()
}

enum Scan {
    Clean,
    Nul,
    LongList,
}

/// One walk over a value. An explicit stack, not recursion: params built by code are not
/// bounded by the JSON decoder's depth limit.
fn scan(v: &Value, max_list_items: usize) -> Scan {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s.contains('\0') => return Scan::Nul,
            Value::Array(a) if a.len() > max_list_items => return Scan::LongList,
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => {
                if m.keys().any(|k| k.contains('\0')) {
                    return Scan::Nul;
                }
                stack.extend(m.values());
            }
            _ => {}
        }
    }
    Scan::Clean
}
