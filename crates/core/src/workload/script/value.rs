//! A script's values and a client's variables, as pgbench keeps them: a
//! value is NULL, a boolean, a 64-bit integer or a double; a variable set
//! by `-D`, `\gset` or `\aset` holds the server's text, read as a value
//! only when an expression asks (so `1.50` is sent back as `1.50`), and a
//! value is written into SQL as pgbench writes it (`%.15g` for a double).

use std::fmt::Write as _;

/// One value of an expression.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl Value {
    /// pgbench's name of the value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// As an integer: a double rounded half to even, in range.
    pub fn to_int(&self) -> Result<i64, String> {
        match *self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => {
                let r = d.round_ties_even();
                if r.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r)
                {
                    Err(format!("double to int overflow for {r:.6}"))
                } else {
                    Ok(r as i64)
                }
            }
            other => Err(format!("cannot coerce {} to int", other.type_name())),
        }
    }

    pub fn to_double(&self) -> Result<f64, String> {
        match *self {
            Value::Double(d) => Ok(d),
            Value::Int(i) => Ok(i as f64),
            other => Err(format!("cannot coerce {} to double", other.type_name())),
        }
    }

    pub fn to_bool(&self) -> Result<bool, String> {
        match *self {
            Value::Bool(b) => Ok(b),
            other => Err(format!("cannot coerce {} to boolean", other.type_name())),
        }
    }

    /// Truth for `\if`, `\elif` and `CASE`: NULL is false, numbers are
    /// true unless zero.
    pub fn truth(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// `IS`: the same type and value.
    pub fn same(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            _ => false,
        }
    }

    /// The value as SQL text (and `debug()`'s): `%lld`, `%.15g` for a
    /// double (`NaN`, `Infinity`), `true`/`false`, `NULL`.
    pub fn write_text(&self, out: &mut String) {
        match *self {
            Value::Null => out.push_str("NULL"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => out.push_str(itoa::Buffer::new().format(i)),
            Value::Double(d) => write_g15(d, out),
        }
    }

    /// [`Value::write_text`] into a new string.
    pub fn text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }

    /// A variable's text read as a value, as pgbench reads `-D` and
    /// `\gset` strings; `None` for an empty string (which pgbench refuses
    /// without a word).
    pub fn parse_text(s: &str) -> Option<Result<Value, String>> {
        if s.is_empty() {
            return None;
        }
        let lower = s.to_ascii_lowercase();
        let prefix_of = |word: &str| word.starts_with(lower.as_str());
        if lower == "null" {
            return Some(Ok(Value::Null));
        }
        if prefix_of("true") || prefix_of("yes") || lower == "on" {
            return Some(Ok(Value::Bool(true)));
        }
        if prefix_of("false") || prefix_of("no") || lower == "off" || lower == "of" {
            return Some(Ok(Value::Bool(false)));
        }
        let t = s.trim_start();
        let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
        if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
            return Some(
                t.parse::<i64>()
                    .map(Value::Int)
                    .map_err(|_| format!("value \"{s}\" is out of range for type bigint")),
            );
        }
        Some(match parse_c_double(t) {
            Some(d) => Ok(Value::Double(d)),
            None => Err(String::new()),
        })
    }
}

/// A double as C's `strtod` reads a whole string: decimal, `nan`, `inf`,
/// `infinity` and `0x` hexadecimal; `None` when it is not one, or out of
/// range (overflow, or below the normal range).
fn parse_c_double(t: &str) -> Option<f64> {
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let v = if lower == "nan" {
        f64::NAN
    } else if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if let Some(hex) = lower.strip_prefix("0x") {
        if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(hex, 16).ok()? as f64
    } else {
        let d: f64 = body.parse().ok()?;
        let nonzero = body
            .split(['e', 'E'])
            .next()
            .is_some_and(|m| m.bytes().any(|c| (b'1'..=b'9').contains(&c)));
        if d.is_infinite() || (nonzero && (d == 0.0 || !d.is_normal())) {
            return None;
        }
        d
    };
    Some(if neg { -v } else { v })
}

/// `d` as pgbench prints a double: C's `%.15g`, but `NaN`, `Infinity` and
/// `-Infinity`, and the exponent with a sign and two digits at least.
pub fn write_g15(d: f64, out: &mut String) {
    if d.is_nan() {
        out.push_str("NaN");
        return;
    }
    if d.is_infinite() {
        out.push_str(if d > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if d.is_sign_negative() {
        out.push('-');
    }
    let a = d.abs();
    if a == 0.0 {
        out.push('0');
        return;
    }
    // The exponent after rounding to 15 significant digits.
    let sci = format!("{a:.14e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if !(-4..15).contains(&x) {
        let m = trim_zeros(mantissa);
        let _ = write!(out, "{m}e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs());
    } else {
        let fixed = format!("{a:.*}", (14 - x) as usize);
        out.push_str(trim_zeros(&fixed));
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// One client's variables, by slot.
#[derive(Clone, Debug)]
pub struct Vars {
    slots: Vec<Var>,
}

#[derive(Clone, Debug, Default)]
struct Var {
    /// The text it was given as (`-D`, `\gset`), kept for SQL.
    text: Option<String>,
    /// Its value, typed (set by `\set`, or read from the text once).
    value: Option<Value>,
    /// The name, for messages.
    name: String,
}

impl Vars {
    pub fn new(n: usize) -> Vars {
        Vars {
            slots: vec![Var::default(); n],
        }
    }

    /// Name the slots, for messages (`undefined variable "aid"`).
    pub fn named(names: &[String]) -> Vars {
        Vars {
            slots: names
                .iter()
                .map(|n| Var {
                    name: n.clone(),
                    ..Var::default()
                })
                .collect(),
        }
    }

    pub fn set(&mut self, slot: usize, v: Value) {
        let var = &mut self.slots[slot];
        var.value = Some(v);
        var.text = None;
    }

    /// Set from text, as `-D`, `\gset` and `\aset` do.
    pub fn set_text(&mut self, slot: usize, text: &str) {
        let var = &mut self.slots[slot];
        var.text = Some(text.to_string());
        var.value = None;
    }

    pub fn is_set(&self, slot: usize) -> bool {
        let v = &self.slots[slot];
        v.text.is_some() || v.value.is_some()
    }

    /// The value an expression reads.
    pub fn value(&mut self, slot: usize) -> Result<Value, String> {
        let var = &mut self.slots[slot];
        if let Some(v) = var.value {
            return Ok(v);
        }
        let Some(text) = &var.text else {
            return Err(format!("undefined variable \"{}\"", var.name));
        };
        match Value::parse_text(text) {
            None => Err(format!("variable \"{}\" is empty", var.name)),
            Some(Ok(v)) => {
                var.value = Some(v);
                Ok(v)
            }
            Some(Err(e)) if e.is_empty() => Err(format!(
                "malformed variable \"{}\" value: \"{text}\"",
                var.name
            )),
            Some(Err(e)) => Err(e),
        }
    }

    /// Append the variable's text for SQL; false when it is not set.
    pub fn write_text(&self, slot: usize, out: &mut String) -> bool {
        let var = &self.slots[slot];
        match (&var.text, var.value) {
            (Some(t), _) => out.push_str(t),
            (None, Some(v)) => v.write_text(out),
            (None, None) => return false,
        }
        true
    }

    pub fn name(&self, slot: usize) -> &str {
        &self.slots[slot].name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(d: f64) -> String {
        let mut s = String::new();
        write_g15(d, &mut s);
        s
    }

    #[test]
    fn doubles_print_as_pgbench_prints_them() {
        assert_eq!(g(0.1 + 0.2), "0.3");
        assert_eq!(g(1.0 / 3.0), "0.333333333333333");
        assert_eq!(g(1e3), "1000");
        assert_eq!(g(1e20), "1e+20");
        assert_eq!(g(2.5e-7), "2.5e-07");
        assert_eq!(g(0.000012345), "1.2345e-05");
        assert_eq!(g("123456789012345.678".parse().unwrap()), "123456789012346");
        assert_eq!(
            g("1234567890123456.7".parse().unwrap()),
            "1.23456789012346e+15"
        );
        assert_eq!(g(std::f64::consts::PI), "3.14159265358979");
        assert_eq!(g(1e100), "1e+100");
        assert_eq!(g(2.2250738585072014e-308), "2.2250738585072e-308");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(f64::NAN), "NaN");
        assert_eq!(g(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(g(std::f64::consts::E), "2.71828182845905");
    }

    #[test]
    fn variable_text_is_read_as_pgbench_reads_it() {
        let v = |s: &str| Value::parse_text(s).map(|r| r.map_err(|_| ()));
        assert_eq!(v("42"), Some(Ok(Value::Int(42))));
        assert_eq!(v(" -7"), Some(Ok(Value::Int(-7))));
        assert_eq!(v("1.50"), Some(Ok(Value::Double(1.5))));
        assert_eq!(v("t"), Some(Ok(Value::Bool(true))));
        assert_eq!(v("of"), Some(Ok(Value::Bool(false))));
        assert_eq!(v("NULL"), Some(Ok(Value::Null)));
        assert_eq!(v("0x1A"), Some(Ok(Value::Double(26.0))));
        assert_eq!(v("1e999"), Some(Err(())));
        assert_eq!(v("12abc"), Some(Err(())));
        assert_eq!(v(""), None);
        let mut vars = Vars::named(&["x".into(), "y".into()]);
        vars.set_text(0, "1.50");
        let mut sql = String::new();
        assert!(vars.write_text(0, &mut sql));
        assert_eq!(sql, "1.50", "text is sent as given");
        assert_eq!(vars.value(0), Ok(Value::Double(1.5)));
        assert_eq!(vars.value(1), Err("undefined variable \"y\"".into()));
        vars.set_text(1, "12abc");
        assert_eq!(
            vars.value(1),
            Err("malformed variable \"y\" value: \"12abc\"".into())
        );
    }
}
