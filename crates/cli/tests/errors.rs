//! Bad input: every kind gets a clear error naming the file and line, flag
//! or value and what would be accepted, a non-zero exit, and never a panic.

mod util;

use std::io::Write;

use util::*;

fn fails(args: &[&str], expect: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = sojourn(dir.path(), args);
    let err = text(&out.stderr);
    assert!(
        !out.status.success(),
        "{args:?} should fail; stderr:\n{err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    for e in expect {
        assert!(err.contains(e), "{args:?}: stderr lacks {e:?}:\n{err}");
    }
}

#[test]
fn bad_value_in_a_file_names_file_line_and_accepted_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.properties");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "# a workload\nreadproportion=1\nrecordcount=many").unwrap();
    fails(
        &["run", "null:", "-P", path.to_str().unwrap()],
        &["bad.properties:3", "recordcount", "many"],
    );
    let path2 = dir.path().join("dist.properties");
    std::fs::write(&path2, "recordcount=10\nrequestdistribution=zipfan\n").unwrap();
    fails(
        &["run", "null:", "-P", path2.to_str().unwrap()],
        &["dist.properties:2", "zipfan", "zipfian", "latest"],
    );
}

#[test]
fn impossible_combinations_are_refused_before_running() {
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "readproportion=0",
            "-p",
            "updateproportion=0",
        ],
        &["proportion"],
    );
    fails(
        &[
            "load",
            "null:",
            "-P",
            "workloada",
            "-p",
            "insertstart=900",
            "-p",
            "insertcount=200",
        ],
        &["insertstart", "recordcount"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "operationcount=-5"],
        &["operationcount", "-5"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "recordcount=-1"],
        &["recordcount"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-target", "0"],
        &["--target", "target"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-target", "-100"],
        &["target"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-threads", "0"],
        &["threadcount"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "threadcount=-3"],
        &["threadcount", "1 to 100000"],
    );
    // Refused, not aborted on allocation.
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "fieldcount=100000000",
        ],
        &["fieldcount", "1 to 1000000"],
    );
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "fieldcount=1000",
            "-p",
            "fieldlength=1000000",
        ],
        &["fieldlength", "256 MiB"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "operationcount=0"],
        &["operationcount", "maxexecutiontime"],
    );
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "dataintegrity=true",
            "-p",
            "fieldlengthdistribution=uniform",
        ],
        &["dataintegrity", "constant"],
    );
}

/// `nan` parses as a number in Rust: a rate or target of it is told as
/// not a number (not as negative), with what is accepted.
#[test]
fn a_rate_that_is_not_a_number_is_told_so() {
    let run = |extra: &[&str]| -> Vec<String> {
        ["run", "null:", "-P", "workloada"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    for args in [run(&["-target", "nan"]), run(&["-p", "target=NaN"])] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(
            &args,
            &[
                "target",
                "is not a number",
                "accepted: a finite decimal number",
            ],
        );
    }
    for args in [
        run(&["--rate", "hold nan for 5s"]),
        run(&["-p", "rate=ramp 100..nan in 5s"]),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let dir = tempfile::tempdir().unwrap();
        let err = refused(dir.path(), &args);
        assert!(
            err.contains("rate nan is not a number; rates are 0 or more operations per second")
                && !err.contains("negative"),
            "{err}"
        );
    }
    // A trace's `second,rate` line too.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("rates.csv");
    std::fs::write(&trace, "second,rate\n0,100\n1,nan\n").unwrap();
    let err = refused(
        dir.path(),
        &run(&["--trace", trace.to_str().unwrap()])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(
        err.contains("rates.csv:3: rate nan is not a number"),
        "{err}"
    );
}

/// A warm-up that covers the whole run would measure nothing.
#[test]
fn a_warmup_as_long_as_the_run_is_refused() {
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "--warmup",
            "10",
            "-p",
            "maxexecutiontime=2",
        ],
        &["warmup", "maxexecutiontime", "nothing would be measured"],
    );
}

/// A typo is often why a value is missing: the hint comes with the error.
#[test]
fn an_unknown_property_is_named_when_the_plan_then_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.properties");
    std::fs::write(&path, "recordcount=10\noperationcout=100\n").unwrap();
    fails(
        &["run", "null:", "-P", path.to_str().unwrap()],
        &[
            "operationcount",
            "typo.properties:2",
            "did you mean 'operationcount'",
        ],
    );
}

/// A backend property no backend reads (a typo, or a YCSB binding's
/// setting sojourn does not implement) is named, with the likeliest meant
/// one; those a backend reads pass in silence.
#[test]
fn unknown_backend_properties_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloadc",
            "-p",
            "operationcount=300",
            "-p",
            "redis.hots=h",
            "-p",
            "db.batchsize=10",
            "-p",
            "redis.host=h",
            "-p",
            "redis.command_group=string",
            "-p",
            "db.driver=org.postgresql.Driver",
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("unknown property 'redis.hots' (did you mean 'redis.host'?)"),
        "{err}"
    );
    assert!(err.contains("unknown property 'db.batchsize'"), "{err}");
    for read in ["'redis.host'", "'redis.command_group'", "'db.driver'"] {
        assert!(!err.contains(&format!("unknown property {read}")), "{err}");
    }
}

#[test]
fn missing_files_unknown_databases_and_malformed_arguments() {
    fails(
        &["run", "null:", "-P", "no/such/workload"],
        &["no/such/workload"],
    );
    // The OS's reason once, not once per link of the error chain.
    let dir = tempfile::tempdir().unwrap();
    let err = text(&sojourn(dir.path(), &["run", "null:", "-P", "/no/such/file"]).stderr);
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    fails(
        &["run", "--db", "nosuchdb://x", "-P", "workloada"],
        &["nosuchdb", "sqlite:"],
    );
    fails(
        &["run", "null:", "-P", "workloada", "-p", "recordcount"],
        &["recordcount", "key=value"],
    );
    fails(
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "hdrhistogram.percentiles=95,abc",
        ],
        &["abc"],
    );
}

#[test]
fn run_on_an_empty_table_says_to_load_first() {
    fails(
        &["run", "-P", "workloada"],
        &["holds no data for table usertable", "sojourn load"],
    );
}

#[test]
fn unknown_property_warns_with_the_nearest_name_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "readproportoin=0.5",
        ],
    );
    ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("readproportoin") && err.contains("readproportion"),
        "{err}"
    );
}

#[test]
fn passwords_never_appear_in_output() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = sojourn(
        dir.path(),
        &[
            "run",
            "null:",
            "-P",
            "workloada",
            "-p",
            "db.passwd=hunter2",
            "-p",
            "db.url=postgres://me:hunter2@127.0.0.1/db",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    ok(&out);
    let all = format!(
        "{}{}{}",
        text(&out.stdout),
        text(&out.stderr),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(!all.contains("hunter2"), "{all}");
}

/// The places in one Rust source text where a string literal holds a
/// source line's indentation: a line break inside the literal that no `\`
/// continues, or a run of 10 or more spaces after a word (a wrapped
/// message joined by hand). Each is `(line, excerpt)`. Raw strings,
/// comments and char literals are skipped; the spaces that follow an
/// escaped `\n` are a layout of the text's own (YAML, tables), not one.
fn wrapped_literals(src: &str) -> Vec<(usize, String)> {
    let b = src.as_bytes();
    let mut found = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'r' if raw_string_at(b, i) => {
                // A raw string: skip to its closing quote and hashes.
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = src[start..].find(&close).map_or(b.len(), |e| start + e);
                line += src[i..end].matches('\n').count();
                i = end + close.len();
                continue;
            }
            b'\'' => {
                // A char literal ('"', '\'', '\\') or a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 4;
                    continue;
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                    continue;
                }
            }
            b'"' => {
                let mut spaces = 0;
                let mut after_word = false;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    match b[i] {
                        b'\\' => {
                            // `\` + newline continues the line (its
                            // indentation is dropped); `\n` starts one.
                            if b.get(i + 1) == Some(&b'\n') {
                                line += 1;
                            }
                            after_word = false;
                            spaces = 0;
                            i += 2;
                            continue;
                        }
                        b'\n' => {
                            line += 1;
                            let next = &src[i + 1..];
                            if next.starts_with(' ') || next.starts_with('\t') {
                                found.push((line, next.lines().next().unwrap_or("").to_string()));
                            }
                            after_word = false;
                        }
                        b' ' => {
                            spaces += 1;
                            if spaces == 10 && after_word {
                                let from = src[..i].rfind('\n').map_or(0, |n| n + 1);
                                let excerpt = src[from..].lines().next().unwrap_or("").trim();
                                found.push((line, excerpt.to_string()));
                            }
                            i += 1;
                            continue;
                        }
                        _ => after_word = true,
                    }
                    spaces = 0;
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Whether a raw string (`r"`, `r#"`, `br"`) opens at `i`: not an `r`
/// ending a name, nor a raw identifier (`r#mod`).
fn raw_string_at(b: &[u8], i: usize) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let ident_before = match i.checked_sub(1).map(|j| b[j]) {
        None => false,
        Some(b'b') => i >= 2 && word(b[i - 2]),
        Some(c) => word(c),
    };
    let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
    !ident_before && b.get(i + 1 + hashes) == Some(&b'"')
}

#[test]
fn the_wrapped_literal_check_finds_what_it_should() {
    let bad = "fn f() {\n    let m = \"one sentence,\n        then more\";\n}\n";
    assert_eq!(wrapped_literals(bad).len(), 1, "{bad}");
    let joined = format!(
        "fn f() {{ g(\"a sentence which{}goes on\"); }}",
        " ".repeat(26)
    );
    assert_eq!(wrapped_literals(&joined).len(), 1);
    let fine = "fn f() {\n    g(\"a sentence \\\n       goes on\", '\"', \"yaml:\\n    key: 1\");\n    h(r#\"raw\n   text\"#); // \"comment\n}\n";
    assert_eq!(wrapped_literals(fine), Vec::<(usize, String)>::new());
}

/// A message continued across source lines without a `\` carries the next
/// line's indentation into what the user reads (as `CREATE_BASE_TABLE`'s
/// refusal once did, with runs of 26 spaces).
#[test]
fn no_message_carries_the_indentation_of_a_wrapped_source_line() {
    let root = repo_root().join("crates");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        for (line, excerpt) in wrapped_literals(&src) {
            bad.push(format!("{}:{line}: {excerpt}", f.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "string literals holding a wrapped line's indentation (end the line with `\\`):\n{}",
        bad.join("\n")
    );
}

/// Shell completions and manual pages come from the clap definitions:
/// every command is completed and has its page, each page carries the
/// command's own help, and a shell sojourn cannot complete for is refused
/// naming those it can.
#[test]
fn completions_and_manual_pages_follow_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| bin().args(args).run_to_end();
    let bash = text(&run(&["completions", "bash"]).stdout);
    let help = text(&run(&["--help"]).stdout);
    // The commands --help lists, each completed in bash's script.
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        // A command's line; its description may wrap onto deeper ones.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() > 15, "{help}");
    for c in &commands {
        assert!(
            bash.contains(&format!("sojourn,{c})")),
            "bash completes no {c}"
        );
    }
    assert!(bash.contains("--max-pvalue"), "history's flags completed");

    let man = dir.path().join("man");
    let out = run(&["man", "--dir", man.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for c in &commands {
        let page = std::fs::read_to_string(man.join(format!("sojourn-{c}.1")))
            .unwrap_or_else(|e| panic!("no page for {c}: {e}"));
        assert!(page.contains(&format!(".TH sojourn-{c} 1")), "{c}: {page}");
    }
    let history = std::fs::read_to_string(man.join("sojourn-history.1")).unwrap();
    assert!(
        history.contains("max\\-pvalue") && history.contains("change points"),
        "{history}"
    );
    let top = text(&run(&["man"]).stdout);
    assert!(top.contains(".TH sojourn 1"), "{top}");

    let out = run(&["completions", "tcsh"]);
    let err = text(&out.stderr);
    assert!(!out.status.success() && !err.contains("panicked"), "{err}");
    for shell in ["tcsh", "bash", "zsh", "fish"] {
        assert!(err.contains(shell), "{shell} not in {err}");
    }
}
