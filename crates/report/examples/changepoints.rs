//! Change points of series read from stdin, one JSON array of numbers per
//! line, written to stdout as one JSON array of indices per line (the
//! first point after each change): what `sojourn history` finds in a
//! figure's points, without a store, for `bench/changepoints.py` to hold against
//! Apache Otava's answers on the same series.
//!
//! `cargo run --release -p sojourn-report --example changepoints --
//! [MAX_PVALUE [MIN_MAGNITUDE [WINDOW [otava]]]] < series.jsonl`; with
//! `otava`, every step is taken as Otava takes it (`Options::as_otava`):
//! where sojourn departs from it is then off.

use std::io::{BufRead, Write};

use sojourn_report::changepoint::{change_points, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Options::default();
    let number = |i: usize| -> Result<Option<f64>, String> {
        args.get(i)
            .map(|a| {
                a.parse::<f64>()
                    .map_err(|e| format!("argument {}: {a:?}: {e}", i + 1))
            })
            .transpose()
    };
    if let Some(p) = number(0)? {
        opts.max_pvalue = p;
    }
    if let Some(m) = number(1)? {
        opts.min_magnitude = m;
    }
    if let Some(w) = number(2)? {
        opts.window = w as usize;
    }
    match args.get(3).map(String::as_str) {
        None => {}
        Some("otava") => opts.as_otava = true,
        Some(other) => return Err(format!("argument 4: {other:?}: expected otava").into()),
    }
    let mut out = std::io::stdout().lock();
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let series: Vec<f64> = serde_json::from_str(&line?)
            .map_err(|e| format!("line {}: expected a JSON array of numbers: {e}", n + 1))?;
        let found: Vec<usize> = change_points(&series, &opts)
            .iter()
            .map(|c| c.index)
            .collect();
        writeln!(out, "{}", serde_json::to_string(&found)?)?;
    }
    Ok(())
}
