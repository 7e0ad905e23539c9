//! The expression parser: pgbench's grammar and precedence, with names
//! resolved to variable slots as the script is read.

use super::ast::{function_names, Expr, Func, ParseError, FUNCTIONS};
use super::tokens::{lex, Tok};
use crate::workload::script::value::Value;

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
