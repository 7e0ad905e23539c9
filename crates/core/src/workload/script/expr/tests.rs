//! Tests of pgbench's expression language: parsing and evaluation.

use super::eval::*;
use super::parse::*;
use crate::workload::script::prng::Prng;
use crate::workload::script::value::{Value, Vars};

/// Evaluate `text` with variables `x` = 5 and `d` = 0.3, and a fixed
/// generator.
fn eval(text: &str) -> Result<Value, String> {
    let mut names = crate::workload::script::compile::Names(
        ["x", "d", "default_seed"].map(String::from).to_vec(),
    );
    let e =
        parse(text, &mut |n| names.slot(n)).map_err(|e| format!("{} at {}", e.message, e.at))?;
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
