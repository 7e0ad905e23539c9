//! What a parsed expression is: the [`Expr`] tree, pgbench's functions
//! ([`Func`], with their names and arities), and the [`ParseError`] the
//! lexer and the parser give.

use crate::workload::script::value::Value;

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
pub(super) type Named = (&'static str, Func, Option<(usize, usize)>, bool);

pub(super) const FUNCTIONS: &[Named] = &[
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
