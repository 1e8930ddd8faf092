//! The arguments of a validator in a schema string (`default('x')`, `OneOf([1,2])`), read as
//! ckanext-scheming reads them: Python literals (`ast.literal_eval`), and when that fails the
//! text split at commas (`if_empty_same_as(name)` → `["name"]`).

use serde_json::{Number, Value};

/// The arguments of `name(<text>)`.
pub(super) fn arguments(text: &str) -> Vec<Value> {
    let mut p = Lit {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    match p.top() {
        Some(v) => v,
        None => text.split(',').map(|s| Value::String(s.into())).collect(),
    }
}

struct Lit<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Lit<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    /// A literal or a tuple of them: a tuple is the argument list, anything else one argument.
    fn top(&mut self) -> Option<Vec<Value>> {
        self.ws();
        if self.i == self.s.len() {
            // `name()` has no arguments; literal_eval('') fails and splits to [''].
            return None;
        }
        let first = self.value()?;
        self.ws();
        if self.i == self.s.len() {
            return Some(match first {
                Tuple(items) if !items.is_empty() => items,
                Tuple(_) => vec![Value::Array(Vec::new())],
                One(v) => vec![v],
            });
        }
        let mut items = vec![first.into_value()];
        while self.eat(b',') {
            self.ws();
            if self.i == self.s.len() {
                break;
            }
            items.push(self.value()?.into_value());
            self.ws();
        }
        (self.i == self.s.len()).then_some(items)
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Parsed> {
        self.ws();
        self.depth += 1;
        if self.depth > 32 {
            return None;
        }
        let out = match *self.s.get(self.i)? {
            b'\'' | b'"' => self.string().map(One),
            b'[' => self.seq(b']').map(|v| One(Value::Array(v))),
            b'(' => self.seq(b')').map(Tuple),
            _ => self.word().map(One),
        };
        self.depth -= 1;
        out
    }

    fn seq(&mut self, close: u8) -> Option<Vec<Value>> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some(items);
            }
            items.push(self.value()?.into_value());
            if !self.eat(b',') {
                return self.eat(close).then_some(items);
            }
        }
    }

    fn string(&mut self) -> Option<Value> {
        let quote = self.s[self.i];
        self.i += 1;
        let mut out = Vec::new();
        while let Some(&c) = self.s.get(self.i) {
            self.i += 1;
            if c == quote {
                return String::from_utf8(out).ok().map(Value::String);
            }
            if c == b'\\' {
                let e = *self.s.get(self.i)?;
                self.i += 1;
                out.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    other => other,
                });
            } else {
                out.push(c);
            }
        }
        None
    }

    fn word(&mut self) -> Option<Value> {
        let start = self.i;
        while self.i < self.s.len() && !b",)] \t".contains(&self.s[self.i]) {
            self.i += 1;
        }
        let w = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        match w {
            "True" => Some(Value::Bool(true)),
            "False" => Some(Value::Bool(false)),
            "None" => Some(Value::Null),
            _ => {
                if let Ok(n) = w.parse::<i64>() {
                    Some(Value::Number(n.into()))
                } else {
                    // A name (`name` in `if_empty_same_as(name)`) is no literal.
                    let f: f64 = w.parse().ok()?;
                    Number::from_f64(f).map(Value::Number)
                }
            }
        }
    }
}

enum Parsed {
    One(Value),
    Tuple(Vec<Value>),
}
use Parsed::{One, Tuple};

impl Parsed {
    fn into_value(self) -> Value {
        match self {
            One(v) => v,
            Tuple(items) => Value::Array(items),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn literals_and_names() {
        assert_eq!(arguments("name"), vec![json!("name")]);
        assert_eq!(arguments("'x'"), vec![json!("x")]);
        assert_eq!(arguments("'a', 2"), vec![json!("a"), json!(2)]);
        assert_eq!(arguments("['a','b']"), vec![json!(["a", "b"])]);
        assert_eq!(arguments("()"), vec![json!([])]);
        assert_eq!(arguments("a,b"), vec![json!("a"), json!("b")]);
        assert_eq!(arguments("True"), vec![json!(true)]);
    }
}
