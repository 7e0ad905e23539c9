//! pgbench's expression language, for `\set`, `\if` and `\elif`: parsed
//! once when the script is read (names resolved to variable slots), then
//! evaluated per transaction with the client's variables and random
//! generator. Types, precedence, coercions, overflow checks and error
//! texts are pgbench's (PostgreSQL 15-17): integers and doubles, booleans
//! and NULL, `a > b` evaluated as `b < a` (right side first, which decides
//! the order of random draws), `AND`/`OR`/`CASE` lazy, `%` always integer.

use super::prng::{self, Prng};
use super::value::{Value, Vars};

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Const(Value),
    /// A variable, by slot.
    Var(usize),
    Call(Func, Vec<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// `CASE WHEN c THEN v ... ELSE e END`: conditions and values in
    /// pairs, then the else.
    Case(Vec<Expr>),
}

/// The functions (operators are functions too).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Not,
    /// `x IS c`: same type and value (NULL, TRUE or FALSE).
    Is,
    Abs,
    Debug,
    Double,
    Exp,
    Greatest,
    Least,
    Murmur2,
    Fnv1a,
    Int,
    Ln,
    Permute,
    Pi,
    Pow,
    Sqrt,
    Random,
    RandomExponential,
    RandomGaussian,
    RandomZipfian,
}

/// A function's name, what it is, its arity (`None`: one or more), and
/// whether a missing last argument is `:default_seed`.
type Named = (&'static str, Func, Option<(usize, usize)>, bool);

const FUNCTIONS: &[Named] = &[
    ("abs", Func::Abs, Some((1, 1)), false),
    ("debug", Func::Debug, Some((1, 1)), false),
    ("double", Func::Double, Some((1, 1)), false),
    ("exp", Func::Exp, Some((1, 1)), false),
    ("greatest", Func::Greatest, None, false),
    ("least", Func::Least, None, false),
    ("hash", Func::Murmur2, Some((1, 2)), true),
    ("hash_murmur2", Func::Murmur2, Some((1, 2)), true),
    ("hash_fnv1a", Func::Fnv1a, Some((1, 2)), true),
    ("int", Func::Int, Some((1, 1)), false),
    ("ln", Func::Ln, Some((1, 1)), false),
    ("mod", Func::Mod, Some((2, 2)), false),
    ("permute", Func::Permute, Some((2, 3)), true),
    ("pi", Func::Pi, Some((0, 0)), false),
    ("pow", Func::Pow, Some((2, 2)), false),
    ("power", Func::Pow, Some((2, 2)), false),
    ("sqrt", Func::Sqrt, Some((1, 1)), false),
    ("random", Func::Random, Some((2, 2)), false),
    (
        "random_exponential",
        Func::RandomExponential,
        Some((3, 3)),
        false,
    ),
    ("random_gaussian", Func::RandomGaussian, Some((3, 3)), false),
    ("random_zipfian", Func::RandomZipfian, Some((3, 3)), false),
];

/// The names of every function, for messages.
pub fn function_names() -> Vec<&'static str> {
    FUNCTIONS.iter().map(|f| f.0).collect()
}

/// Why an expression did not parse, and where (a byte offset into its
/// text).
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub at: usize,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    /// 9223372036854775808, which only a minus makes an integer.
    MaxPlusOne,
    Double(f64),
    Var(String),
    Ident(String),
    Op(&'static str),
    Kw(&'static str),
    End,
}

const KEYWORDS: &[&str] = &[
    "and", "or", "not", "is", "isnull", "notnull", "case", "when", "then", "else", "end", "null",
    "true", "false",
];

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let alnum = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let at = i;
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let int_end = j;
            if j < b.len() && b[j] == b'.' {
                j += 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
            }
            if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
                let mut k = j + 1;
                if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                    k += 1;
                }
                if k < b.len() && b[k].is_ascii_digit() {
                    while k < b.len() && b[k].is_ascii_digit() {
                        k += 1;
                    }
                    j = k;
                }
            }
            let word = &text[i..j];
            if j == int_end {
                match word.parse::<i64>() {
                    Ok(n) => out.push((Tok::Int(n), at)),
                    Err(_) if word == "9223372036854775808" => out.push((Tok::MaxPlusOne, at)),
                    Err(_) => {
                        return Err(ParseError {
                            message: "bigint constant overflow".into(),
                            at,
                        })
                    }
                }
            } else {
                let d: f64 = word.parse().map_err(|_| ParseError {
                    message: "double constant overflow".into(),
                    at,
                })?;
                // strtod's ERANGE: out of range, or below the normal range.
                let mantissa_nonzero = word
                    .split(['e', 'E'])
                    .next()
                    .is_some_and(|m| m.bytes().any(|c| (b'1'..=b'9').contains(&c)));
                if d.is_infinite() || (mantissa_nonzero && (d == 0.0 || !d.is_normal())) {
                    return Err(ParseError {
                        message: "double constant overflow".into(),
                        at,
                    });
                }
                out.push((Tok::Double(d), at));
            }
            i = j;
            continue;
        }
        if c == b':' {
            let mut j = i + 1;
            while j < b.len() && alnum(b[j]) {
                j += 1;
            }
            if j == i + 1 {
                return Err(ParseError {
                    message: "unexpected character (:)".into(),
                    at,
                });
            }
            out.push((Tok::Var(text[i + 1..j].to_string()), at));
            i = j;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let mut j = i;
            while j < b.len() && alnum(b[j]) {
                j += 1;
            }
            let word = &text[i..j];
            let lower = word.to_ascii_lowercase();
            match KEYWORDS.iter().find(|k| **k == lower) {
                Some(k) => out.push((Tok::Kw(k), at)),
                None => out.push((Tok::Ident(lower), at)),
            }
            i = j;
            continue;
        }
        let two = text.get(i..i + 2).unwrap_or("");
        let op: Option<&'static str> = match two {
            "<>" | "!=" => Some("<>"),
            "<=" => Some("<="),
            ">=" => Some(">="),
            "<<" => Some("<<"),
            ">>" => Some(">>"),
            _ => None,
        };
        if let Some(op) = op {
            out.push((Tok::Op(op), at));
            i += 2;
            continue;
        }
        let one: &'static str = match c {
            b'+' => "+",
            b'-' => "-",
            b'*' => "*",
            b'/' => "/",
            b'%' => "%",
            b'(' => "(",
            b')' => ")",
            b',' => ",",
            b'=' => "=",
            b'<' => "<",
            b'>' => ">",
            b'|' => "|",
            b'&' => "&",
            b'#' => "#",
            b'~' => "~",
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(ParseError {
                    message: format!("unexpected character ({ch})"),
                    at,
                });
            }
        };
        out.push((Tok::Op(one), at));
        i += 1;
    }
    out.push((Tok::End, text.len()));
    Ok(out)
}

/// Parse `text`; `slot` gives a variable's slot by name (making one).
pub fn parse(text: &str, slot: &mut dyn FnMut(&str) -> usize) -> Result<Expr, ParseError> {
    let toks = lex(text)?;
    let mut p = Parser { toks, i: 0, slot };
    let e = p.or()?;
    match p.peek() {
        Tok::End => Ok(e),
        _ => Err(p.syntax()),
    }
}

struct Parser<'s> {
    toks: Vec<(Tok, usize)>,
    i: usize,
    slot: &'s mut dyn FnMut(&str) -> usize,
}

fn call(f: Func, args: Vec<Expr>) -> Expr {
    Expr::Call(f, args)
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }

    fn at(&self) -> usize {
        self.toks[self.i].1
    }

    fn bump(&mut self) -> Tok {
        let t = self.toks[self.i].0.clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn syntax(&self) -> ParseError {
        ParseError {
            message: "syntax error".into(),
            at: self.at(),
        }
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Kw(k) if *k == kw)
    }

    fn expect_op(&mut self, op: &str) -> Result<(), ParseError> {
        if self.is_op(op) {
            self.bump();
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.and()?;
        while self.is_kw("or") {
            self.bump();
            let r = self.and()?;
            l = Expr::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.not()?;
        while self.is_kw("and") {
            self.bump();
            let r = self.not()?;
            l = Expr::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.is_kw("not") {
            self.bump();
            return Ok(call(Func::Not, vec![self.not()?]));
        }
        self.is()
    }

    fn is(&mut self) -> Result<Expr, ParseError> {
        let e = self.cmp()?;
        let negate = |e| call(Func::Not, vec![e]);
        let is = |e, v| call(Func::Is, vec![e, Expr::Const(v)]);
        let out = if self.is_kw("isnull") {
            self.bump();
            is(e, Value::Null)
        } else if self.is_kw("notnull") {
            self.bump();
            negate(is(e, Value::Null))
        } else if self.is_kw("is") {
            self.bump();
            let not = self.is_kw("not");
            if not {
                self.bump();
            }
            let v = match self.bump() {
                Tok::Kw("null") => Value::Null,
                Tok::Kw("true") => Value::Bool(true),
                Tok::Kw("false") => Value::Bool(false),
                _ => return Err(self.syntax()),
            };
            if not {
                negate(is(e, v))
            } else {
                is(e, v)
            }
        } else {
            return Ok(e);
        };
        if self.is_kw("is") || self.is_kw("isnull") || self.is_kw("notnull") {
            return Err(self.syntax());
        }
        Ok(out)
    }

    fn cmp(&mut self) -> Result<Expr, ParseError> {
        let l = self.bits()?;
        let op = match self.peek() {
            Tok::Op(o @ ("=" | "<>" | "<" | "<=" | ">" | ">=")) => *o,
            _ => return Ok(l),
        };
        self.bump();
        let r = self.bits()?;
        if matches!(self.peek(), Tok::Op("=" | "<>" | "<" | "<=" | ">" | ">=")) {
            return Err(self.syntax());
        }
        Ok(match op {
            "=" => call(Func::Eq, vec![l, r]),
            "<>" => call(Func::Ne, vec![l, r]),
            "<" => call(Func::Lt, vec![l, r]),
            "<=" => call(Func::Le, vec![l, r]),
            // pgbench evaluates `a > b` as `b < a`: b first.
            ">" => call(Func::Lt, vec![r, l]),
            _ => call(Func::Le, vec![r, l]),
        })
    }

    /// `| # & << >>` at one level, left to right; `~` takes the sum or
    /// product after it (it binds less tightly than `+`).
    fn bits(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.tilde()?;
        loop {
            let f = match self.peek() {
                Tok::Op("|") => Func::BitOr,
                Tok::Op("#") => Func::BitXor,
                Tok::Op("&") => Func::BitAnd,
                Tok::Op("<<") => Func::Shl,
                Tok::Op(">>") => Func::Shr,
                _ => return Ok(l),
            };
            self.bump();
            let r = self.tilde()?;
            l = call(f, vec![l, r]);
        }
    }

    fn tilde(&mut self) -> Result<Expr, ParseError> {
        if self.is_op("~") {
            self.bump();
            let e = self.tilde()?;
            return Ok(call(Func::BitXor, vec![Expr::Const(Value::Int(-1)), e]));
        }
        self.add()
    }

    fn add(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.mul()?;
        loop {
            let f = match self.peek() {
                Tok::Op("+") => Func::Add,
                Tok::Op("-") => Func::Sub,
                _ => return Ok(l),
            };
            self.bump();
            let r = self.mul()?;
            l = call(f, vec![l, r]);
        }
    }

    fn mul(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.unary()?;
        loop {
            let f = match self.peek() {
                Tok::Op("*") => Func::Mul,
                Tok::Op("/") => Func::Div,
                Tok::Op("%") => Func::Mod,
                _ => return Ok(l),
            };
            self.bump();
            let r = self.unary()?;
            l = call(f, vec![l, r]);
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.is_op("+") {
            self.bump();
            return self.unary();
        }
        if self.is_op("-") {
            self.bump();
            if matches!(self.peek(), Tok::MaxPlusOne) {
                self.bump();
                return Ok(Expr::Const(Value::Int(i64::MIN)));
            }
            let e = self.unary()?;
            return Ok(call(Func::Sub, vec![Expr::Const(Value::Int(0)), e]));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let at = self.at();
        match self.bump() {
            Tok::Op("(") => {
                let e = self.or()?;
                self.expect_op(")")?;
                Ok(e)
            }
            Tok::Int(n) => Ok(Expr::Const(Value::Int(n))),
            Tok::Double(d) => Ok(Expr::Const(Value::Double(d))),
            Tok::Kw("null") => Ok(Expr::Const(Value::Null)),
            Tok::Kw("true") => Ok(Expr::Const(Value::Bool(true))),
            Tok::Kw("false") => Ok(Expr::Const(Value::Bool(false))),
            Tok::Var(name) => Ok(Expr::Var((self.slot)(&name))),
            Tok::Kw("case") => self.case(),
            Tok::Ident(name) => self.function(&name, at),
            _ => Err(ParseError {
                message: "syntax error".into(),
                at,
            }),
        }
    }

    fn case(&mut self) -> Result<Expr, ParseError> {
        let mut parts = Vec::new();
        while self.is_kw("when") {
            self.bump();
            parts.push(self.or()?);
            if !self.is_kw("then") {
                return Err(self.syntax());
            }
            self.bump();
            parts.push(self.or()?);
        }
        if parts.is_empty() {
            return Err(self.syntax());
        }
        if self.is_kw("else") {
            self.bump();
            parts.push(self.or()?);
        } else {
            parts.push(Expr::Const(Value::Null));
        }
        if !self.is_kw("end") {
            return Err(self.syntax());
        }
        self.bump();
        Ok(Expr::Case(parts))
    }

    fn function(&mut self, name: &str, at: usize) -> Result<Expr, ParseError> {
        let Some(&(_, f, arity, seeded)) = FUNCTIONS.iter().find(|x| x.0 == name) else {
            return Err(ParseError {
                message: format!(
                    "unexpected function name ({name}); the functions are {}",
                    function_names().join(", ")
                ),
                at,
            });
        };
        self.expect_op("(")?;
        let mut args = Vec::new();
        if !self.is_op(")") {
            loop {
                args.push(self.or()?);
                if self.is_op(",") {
                    self.bump();
                    continue;
                }
                break;
            }
        }
        self.expect_op(")")?;
        match arity {
            None if args.is_empty() => {
                return Err(ParseError {
                    message: format!("at least one argument expected ({name})"),
                    at,
                })
            }
            Some((lo, hi)) if args.len() < lo || args.len() > hi => {
                return Err(ParseError {
                    message: format!("unexpected number of arguments ({name})"),
                    at,
                })
            }
            _ => {}
        }
        if seeded && args.len() == arity.map_or(0, |a| a.1) - 1 {
            args.push(Expr::Var((self.slot)("default_seed")));
        }
        Ok(call(f, args))
    }
}

/// Why an evaluation failed, in pgbench's words.
pub type EvalError = String;

/// What evaluating an expression may touch: the client's variables and
/// random generator, and where `debug()` writes.
pub struct Env<'a> {
    pub vars: &'a mut Vars,
    pub rng: &'a mut Prng,
    /// `debug()`'s prefix: `debug(script=S,command=C)`.
    pub debug: &'a dyn Fn(&Value),
}

impl Expr {
    pub fn eval(&self, env: &mut Env<'_>) -> Result<Value, EvalError> {
        match self {
            Expr::Const(v) => Ok(*v),
            Expr::Var(slot) => env.vars.value(*slot),
            Expr::And(a, b) => match a.eval(env)? {
                Value::Null => Ok(Value::Null),
                a => {
                    if !a.to_bool()? {
                        return Ok(Value::Bool(false));
                    }
                    match b.eval(env)? {
                        Value::Null => Ok(Value::Null),
                        b => Ok(Value::Bool(b.to_bool()?)),
                    }
                }
            },
            Expr::Or(a, b) => match a.eval(env)? {
                Value::Null => Ok(Value::Null),
                a => {
                    if a.to_bool()? {
                        return Ok(Value::Bool(true));
                    }
                    match b.eval(env)? {
                        Value::Null => Ok(Value::Null),
                        b => Ok(Value::Bool(b.to_bool()?)),
                    }
                }
            },
            Expr::Case(parts) => {
                let (pairs, last) = parts.split_at(parts.len() - 1);
                for pair in pairs.chunks(2) {
                    if pair[0].eval(env)?.truth() {
                        return pair[1].eval(env);
                    }
                }
                last[0].eval(env)
            }
            Expr::Call(f, args) => {
                let mut vals = [Value::Null; 16];
                if args.len() > vals.len() {
                    return Err("too many function arguments, maximum is 16".into());
                }
                for (slot, a) in vals.iter_mut().zip(args) {
                    *slot = a.eval(env)?;
                }
                apply(*f, &vals[..args.len()], env)
            }
        }
    }
}

fn apply(f: Func, v: &[Value], env: &mut Env<'_>) -> Result<Value, EvalError> {
    match f {
        Func::Is => return Ok(Value::Bool(v[0].same(&v[1]))),
        Func::Debug => {
            (env.debug)(&v[0]);
            return Ok(v[0]);
        }
        _ => {}
    }
    if v.iter().any(|x| matches!(x, Value::Null)) {
        return Ok(Value::Null);
    }
    let any_double = v.iter().any(|x| matches!(x, Value::Double(_)));
    let int2 = |op: &str, f: fn(i64, i64) -> Option<i64>| -> Result<Value, EvalError> {
        f(v[0].to_int()?, v[1].to_int()?)
            .map(Value::Int)
            .ok_or_else(|| format!("bigint {op} out of range"))
    };
    let dbl2 = |f: fn(f64, f64) -> f64| -> Result<Value, EvalError> {
        Ok(Value::Double(f(v[0].to_double()?, v[1].to_double()?)))
    };
    let cmp = |d: fn(f64, f64) -> bool, i: fn(i64, i64) -> bool| -> Result<Value, EvalError> {
        Ok(Value::Bool(if any_double {
            d(v[0].to_double()?, v[1].to_double()?)
        } else {
            i(v[0].to_int()?, v[1].to_int()?)
        }))
    };
    match f {
        Func::Add if any_double => dbl2(|a, b| a + b),
        Func::Add => int2("add", i64::checked_add),
        Func::Sub if any_double => dbl2(|a, b| a - b),
        Func::Sub => int2("sub", i64::checked_sub),
        Func::Mul if any_double => dbl2(|a, b| a * b),
        Func::Mul => int2("mul", i64::checked_mul),
        Func::Div if any_double => dbl2(|a, b| a / b),
        Func::Div => {
            let (a, b) = (v[0].to_int()?, v[1].to_int()?);
            match b {
                0 => Err("division by zero".into()),
                -1 => a
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or_else(|| "bigint div out of range".into()),
                _ => Ok(Value::Int(a / b)),
            }
        }
        Func::Mod => {
            let (a, b) = (v[0].to_int()?, v[1].to_int()?);
            match b {
                0 => Err("division by zero".into()),
                -1 => Ok(Value::Int(0)),
                _ => Ok(Value::Int(a % b)),
            }
        }
        Func::Eq => cmp(|a, b| a == b, |a, b| a == b),
        Func::Ne => cmp(|a, b| a != b, |a, b| a != b),
        Func::Lt => cmp(|a, b| a < b, |a, b| a < b),
        Func::Le => cmp(|a, b| a <= b, |a, b| a <= b),
        Func::BitAnd => Ok(Value::Int(v[0].to_int()? & v[1].to_int()?)),
        Func::BitOr => Ok(Value::Int(v[0].to_int()? | v[1].to_int()?)),
        Func::BitXor => Ok(Value::Int(v[0].to_int()? ^ v[1].to_int()?)),
        Func::Shl => Ok(Value::Int(
            v[0].to_int()?.wrapping_shl(v[1].to_int()? as u32),
        )),
        Func::Shr => Ok(Value::Int(
            v[0].to_int()?.wrapping_shr(v[1].to_int()? as u32),
        )),
        Func::Not => Ok(Value::Bool(!v[0].to_bool()?)),
        Func::Abs => match v[0] {
            Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
            Value::Double(d) => Ok(Value::Double(if d < 0.0 { -d } else { d })),
            other => Err(format!("cannot coerce {} to int", other.type_name())),
        },
        Func::Double => Ok(Value::Double(v[0].to_double()?)),
        Func::Int => Ok(Value::Int(v[0].to_int()?)),
        Func::Exp => Ok(Value::Double(v[0].to_double()?.exp())),
        Func::Ln => Ok(Value::Double(v[0].to_double()?.ln())),
        Func::Sqrt => Ok(Value::Double(v[0].to_double()?.sqrt())),
        Func::Pow => dbl2(f64::powf),
        Func::Pi => Ok(Value::Double(std::f64::consts::PI)),
        Func::Greatest | Func::Least => {
            let greatest = f == Func::Greatest;
            if any_double {
                let mut acc = v[0].to_double()?;
                for x in &v[1..] {
                    let d = x.to_double()?;
                    acc = if (greatest && acc > d) || (!greatest && acc < d) {
                        acc
                    } else {
                        d
                    };
                }
                Ok(Value::Double(acc))
            } else {
                let mut acc = v[0].to_int()?;
                for x in &v[1..] {
                    let i = x.to_int()?;
                    acc = if greatest { acc.max(i) } else { acc.min(i) };
                }
                Ok(Value::Int(acc))
            }
        }
        Func::Murmur2 => Ok(Value::Int(prng::murmur2(v[0].to_int()?, v[1].to_int()?))),
        Func::Fnv1a => Ok(Value::Int(prng::fnv1a(v[0].to_int()?, v[1].to_int()?))),
        Func::Permute => Ok(Value::Int(prng::permute(
            v[0].to_int()?,
            v[1].to_int()?,
            v[2].to_int()?,
        )?)),
        Func::Random => Ok(Value::Int(prng::uniform(
            env.rng,
            v[0].to_int()?,
            v[1].to_int()?,
        )?)),
        Func::RandomExponential | Func::RandomGaussian | Func::RandomZipfian => {
            let (lb, ub) = (v[0].to_int()?, v[1].to_int()?);
            let p = v[2].to_double()?;
            let draw = match f {
                Func::RandomExponential => prng::exponential,
                Func::RandomGaussian => prng::gaussian,
                _ => prng::zipfian,
            };
            Ok(Value::Int(draw(env.rng, lb, ub, p)?))
        }
        Func::Is | Func::Debug => unreachable!("applied above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evaluate `text` with variables `x` = 5 and `d` = 0.3, and a fixed
    /// generator.
    fn eval(text: &str) -> Result<Value, String> {
        let mut names = crate::workload::script::compile::Names(
            ["x", "d", "default_seed"].map(String::from).to_vec(),
        );
        let e = parse(text, &mut |n| names.slot(n))
            .map_err(|e| format!("{} at {}", e.message, e.at))?;
        let mut vars = Vars::new(names.0.len());
        vars.set(0, Value::Int(5));
        vars.set(1, Value::Double(0.3));
        vars.set(2, Value::Int(5432));
        let mut rng = Prng::new(1);
        let mut env = Env {
            vars: &mut vars,
            rng: &mut rng,
            debug: &|_| {},
        };
        e.eval(&mut env)
    }

    fn int(n: i64) -> Result<Value, String> {
        Ok(Value::Int(n))
    }

    #[test]
    fn arithmetic_as_pgbench_does_it() {
        assert_eq!(eval("7 / -2"), int(-3));
        assert_eq!(eval("-7 % 3"), int(-1));
        assert_eq!(eval("7 % -3"), int(1));
        assert_eq!(eval("-7.5 % 2"), int(0));
        assert_eq!(eval("1 << 63"), int(i64::MIN));
        assert_eq!(eval("1 << 64"), int(1));
        assert_eq!(eval("-8 >> 1"), int(-4));
        assert_eq!(eval("~5"), int(-6));
        assert_eq!(eval("~1 + 2"), int(-4));
        assert_eq!(eval("~1 | 2"), int(-2));
        assert_eq!(eval("1 | 6 & 3"), int(3));
        assert_eq!(eval("1 + 2 << 3"), int(24));
        assert_eq!(eval("-(2) * 3 % 4"), int(-2));
        assert_eq!(eval("-9223372036854775808 % -1"), int(0));
        assert_eq!(eval("int(2.5)"), int(2));
        assert_eq!(eval("int(3.5)"), int(4));
        assert_eq!(eval("100000 * :x + 1"), int(500001));
        assert_eq!(eval("least(5, 4, 3, 2.1)"), Ok(Value::Double(2.1)));
        assert_eq!(eval("1.0 / 0"), Ok(Value::Double(f64::INFINITY)));
        assert_eq!(eval("hash(10, 5432)"), int(-5817877081768721676));
        assert_eq!(eval("hash(10)"), int(-5817877081768721676), "default seed");
        assert_eq!(eval("hash_fnv1a(10, 5432)"), int(-7793829335365542153));
        assert_eq!(
            eval("9223372036854775807 + 1"),
            Err("bigint add out of range".into())
        );
        assert_eq!(eval("5 / 0"), Err("division by zero".into()));
        assert_eq!(eval(":d * 10"), Ok(Value::Double(3.0)));
    }

    #[test]
    fn logic_is_lazy_and_null_wins() {
        assert_eq!(eval("1 = 1.0"), Ok(Value::Bool(true)));
        assert_eq!(eval("true and null"), Ok(Value::Null));
        assert_eq!(eval("false and null"), Ok(Value::Bool(false)));
        assert_eq!(eval("null or true"), Ok(Value::Null));
        assert_eq!(eval("case when 0 then 1 when 2 then 3 end"), int(3));
        assert_eq!(eval("case when false then 1 end"), Ok(Value::Null));
        assert_eq!(eval("3 = 3 is true"), Ok(Value::Bool(true)));
        assert_eq!(eval("1 is true"), Ok(Value::Bool(false)));
        assert_eq!(eval(":x isnull"), Ok(Value::Bool(false)));
        assert_eq!(eval("null + 1"), Ok(Value::Null));
        assert_eq!(eval("5 or 0"), Err("cannot coerce int to boolean".into()));
        assert_eq!(eval("not 1 < 2"), Ok(Value::Bool(false)));
    }

    #[test]
    fn syntax_errors_say_where() {
        assert_eq!(eval("1 + "), Err("syntax error at 4".into()));
        assert_eq!(eval("1 < 2 < 3"), Err("syntax error at 6".into()));
        assert!(eval("nosuch(1)")
            .unwrap_err()
            .starts_with("unexpected function name (nosuch)"));
        assert_eq!(
            eval("random(1)"),
            Err("unexpected number of arguments (random) at 0".into())
        );
        assert_eq!(
            eval("least()"),
            Err("at least one argument expected (least) at 0".into())
        );
        assert_eq!(eval("1 @ 2"), Err("unexpected character (@) at 2".into()));
        assert_eq!(
            eval("99999999999999999999"),
            Err("bigint constant overflow at 0".into())
        );
        assert_eq!(eval("1e-400"), Err("double constant overflow at 0".into()));
        assert_eq!(eval("- 9223372036854775808"), int(i64::MIN));
        assert_eq!(eval("9223372036854775808"), Err("syntax error at 0".into()));
    }

    #[test]
    fn a_greater_than_draws_its_right_side_first() {
        // `a > b` is `b < a`: the right side's draw comes first.
        let both = |text: &str| {
            let mut slot = |_: &str| 0;
            let e = parse(text, &mut slot).unwrap();
            let mut vars = Vars::new(1);
            let mut rng = Prng::new(7);
            let mut env = Env {
                vars: &mut vars,
                rng: &mut rng,
                debug: &|_| {},
            };
            e.eval(&mut env).unwrap()
        };
        // So `a > b` and `a < b` of two like draws both ask whether the
        // first draw is below the second: the same answer, where
        // evaluating left to right would give opposite ones.
        for text in [
            "random(1, 1000) > random(1, 1000)",
            "random(1, 1000) < random(1, 1000)",
        ] {
            assert_eq!(both(text), Value::Bool(true), "{text}");
        }
        assert_eq!(
            both("random(1, 1000) >= random(1, 1000)"),
            Value::Bool(true)
        );
    }
}
