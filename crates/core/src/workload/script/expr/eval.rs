//! Evaluating an expression per transaction: pgbench's types, coercions,
//! overflow checks and error texts, with the client's variables and
//! random generator ([`Env`]).

use super::ast::{Expr, Func};
use crate::workload::script::prng::{self, Prng};
use crate::workload::script::value::{Value, Vars};

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
