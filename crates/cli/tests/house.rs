//! The house rules of the code, checked on the source itself so that a
//! newcomer's map (docs/architecture.md) stays true:
//!
//! - every crate depends only on crates of a lower layer ([`LAYERS`]);
//! - no two source files of a crate import each other, and no command
//!   module (`cli/src/commands/NAME`) imports another command;
//! - no source file is over [`MAX_FILE_LINES`] lines outside its tests,
//!   unless its first lines say why it must be one piece (`One piece:`);
//! - no function outside tests is over [`MAX_FN_LINES`] lines.
//!
//! The source is read as text, with what rustfmt guarantees: an item's
//! closing brace stands at the indentation of its opening line, and a test
//! module starts with `#[cfg(test)]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 150;

/// The crates by layer: each may depend only on crates of the layers
/// before its own (the testkit serves tests, as a dev-dependency).
const LAYERS: &[&[&str]] = &[
    &["sojourn-core", "sojourn-tls"],
    &["sojourn-backends", "sojourn-store"],
    &["sojourn-report", "sojourn-testkit"],
    &["sojourn-session"],
    &["sojourn"],
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `path` as the repository names it.
fn shown(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every crate's folder, by its package name.
fn crates() -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(repo().join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let Ok(toml) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let name = toml
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_string())
            .unwrap();
        out.insert(name, dir);
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source outside its test module (a file named `tests.rs` is all
/// tests).
fn non_test(path: &Path, text: &str) -> String {
    if path.file_name().is_some_and(|f| f == "tests.rs") {
        return String::new();
    }
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|n| n.trim_start().starts_with("mod "))
        {
            let indent = l.len() - l.trim_start().len();
            // A `mod tests;` line is all there is; a block runs to its brace.
            let head = lines.next().unwrap();
            if head.trim_end().ends_with('{') {
                let close = format!("{}}}", " ".repeat(indent));
                for inner in lines.by_ref() {
                    if inner == close {
                        break;
                    }
                }
            }
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// A file's module path within its crate (`["executor", "pool"]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

#[test]
fn crates_depend_only_on_lower_layers() {
    let layer = |name: &str| LAYERS.iter().position(|l| l.contains(&name));
    let mut wrong = Vec::new();
    for (name, dir) in crates() {
        let own = layer(&name).unwrap_or_else(|| panic!("{name} is in no layer of LAYERS"));
        let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut in_deps = false;
        for l in toml.lines() {
            if l.starts_with('[') {
                in_deps = l.trim() == "[dependencies]";
                continue;
            }
            let dep = l.split(['.', ' ', '=']).next().unwrap_or("");
            if in_deps && dep.starts_with("sojourn") {
                let theirs = layer(dep).unwrap_or_else(|| panic!("{dep} is in no layer"));
                if theirs >= own {
                    wrong.push(format!("{name} depends on {dep}"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "crates depending on their layer or one above: {wrong:?}"
    );
}

#[test]
fn no_two_files_import_each_other_and_no_command_imports_another() {
    let path_re = Regex::new(r"\b(crate|super(?:::super)*|self)::((?:\w+::)*\w+)").unwrap();
    let group_re = Regex::new(r"(?s)use (crate|super(?:::super)*)::\{([^;]*)\};").unwrap();
    let word_re = Regex::new(r"\w+").unwrap();
    let mut pairs = Vec::new();
    let mut commands = Vec::new();
    for (name, dir) in crates() {
        let src = dir.join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeMap<Vec<String>, &PathBuf> =
            files.iter().map(|f| (module_path(&src, f), f)).collect();
        let resolve = |path: Vec<String>| -> Option<Vec<String>> {
            (0..=path.len())
                .rev()
                .map(|i| path[..i].to_vec())
                .find(|p| modules.contains_key(p))
        };
        let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (m, f) in &modules {
            let text = std::fs::read_to_string(f).unwrap();
            let code: String = non_test(f, &text)
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            let base = |head: &str| -> Vec<String> {
                match head {
                    "crate" => Vec::new(),
                    "self" => m.clone(),
                    s => m[..m.len().saturating_sub(s.matches("super").count())].to_vec(),
                }
            };
            let deps = edges.entry(m.clone()).or_default();
            for c in path_re.captures_iter(&code) {
                let mut p = base(&c[1]);
                p.extend(c[2].split("::").map(str::to_string));
                deps.extend(resolve(p));
            }
            for c in group_re.captures_iter(&code) {
                for w in word_re.find_iter(&c[2]) {
                    let mut p = base(&c[1]);
                    p.push(w.as_str().to_string());
                    if modules.contains_key(&p) {
                        deps.insert(p);
                    }
                }
            }
            deps.remove(m);
        }
        for (a, deps) in &edges {
            for b in deps {
                if a < b && edges.get(b).is_some_and(|d| d.contains(a)) {
                    pairs.push(format!("{} <-> {}", shown(modules[a]), shown(modules[b])));
                }
                let family = |p: &[String]| match p {
                    [c, f, ..] if c == "commands" => Some(f.clone()),
                    _ => None,
                };
                if name == "sojourn" {
                    if let (Some(x), Some(y)) = (family(a), family(b)) {
                        if x != y {
                            commands.push(format!("commands::{x} imports commands::{y}"));
                        }
                    }
                }
            }
        }
    }
    assert!(pairs.is_empty(), "files that import each other: {pairs:#?}");
    assert!(
        commands.is_empty(),
        "command modules importing another: {commands:#?}"
    );
}

#[test]
fn files_and_functions_stay_short() {
    let fn_re =
        Regex::new(r"^(\s*)(?:pub(?:\([^)]*\))? )?(?:const )?(?:async )?(?:unsafe )?fn (\w+)")
            .unwrap();
    let mut long_files = Vec::new();
    let mut long_fns = Vec::new();
    for dir in crates().values() {
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = non_test(&f, &text);
            let lines: Vec<&str> = code.lines().collect();
            let one_piece = text.lines().take(30).any(|l| l.contains("One piece:"));
            if lines.len() > MAX_FILE_LINES && !one_piece {
                long_files.push(format!("{} ({} lines)", shown(&f), lines.len()));
            }
            for (i, l) in lines.iter().enumerate() {
                let Some(c) = fn_re.captures(l) else { continue };
                if l.trim_end().ends_with(';') {
                    continue;
                }
                let close = format!("{}}}", &c[1]);
                let Some(end) = lines[i..].iter().position(|x| *x == close) else {
                    continue;
                };
                if end + 1 > MAX_FN_LINES {
                    long_fns.push(format!("{}: fn {} ({} lines)", shown(&f), &c[2], end + 1));
                }
            }
        }
    }
    assert!(
        long_files.is_empty(),
        "files over {MAX_FILE_LINES} lines outside tests: {long_files:#?}"
    );
    assert!(
        long_fns.is_empty(),
        "functions over {MAX_FN_LINES} lines: {long_fns:#?}"
    );
}

/// The names a partial test run may leave out are the testkit's
/// [`Need`](sojourn_testkit::needs::Need)s, listed again by `scripts/test`
/// (its `known=` list and the comment above it), the README and each
/// `scripts/deps.d` snippet that a run may leave out: every list the same.
#[test]
fn the_lists_of_what_a_test_run_may_leave_out_agree() {
    use sojourn_testkit::needs::Need;
    let needs: BTreeSet<String> = Need::ALL.iter().map(|n| n.name().to_string()).collect();
    let word = Regex::new(r"[a-z]+").unwrap();
    let words = |s: &str| -> BTreeSet<String> {
        word.find_iter(s)
            .map(|m| m.as_str().to_string())
            .filter(|w| !["and", "or"].contains(&w.as_str()))
            .collect()
    };
    let test = std::fs::read_to_string(repo().join("scripts/test")).unwrap();
    let known = Regex::new(r#"known="([^"]*)""#).unwrap();
    let known = words(&known.captures(&test).unwrap()[1]);
    assert_eq!(known, needs, "scripts/test's known= list");
    let comment =
        Regex::new(r"(?s)SOJOURN_TEST_LEAVE_OUT=NAME\[,NAME\.\.\.\] \(([^)]*)\)").unwrap();
    let comment = comment.captures(&test).unwrap()[1].replace("\n#", " ");
    assert_eq!(words(&comment), needs, "scripts/test's comment");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let listed = Regex::new(r"(?s)The names are (.*?)\.").unwrap();
    let listed = listed.captures(&readme).unwrap()[1].replace('\n', " ");
    assert_eq!(words(&listed), needs, "the README's list of names");
    let left_out = Regex::new(r"left_out (\w+)").unwrap();
    for e in std::fs::read_dir(repo().join("scripts/deps.d")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "sh") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for c in left_out.captures_iter(&text) {
            assert!(
                needs.contains(&c[1]),
                "{}: left_out {} is no Need of the testkit",
                shown(&p),
                &c[1]
            );
        }
    }
}

/// Every file, folder and type docs/architecture.md names in backquotes
/// exists: a path relative to the repository, a crate or a crate's `src`
/// (`<db>` and such placeholders aside), and a type (`Pool`,
/// `guard::Settle`) defined in some crate, with the function or constant
/// it names after `::` (`Kind::ready`).
#[test]
fn the_architecture_doc_names_what_exists() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    // Every Rust file under crates/ (tests too: the doc names their
    // helpers) and the scripts.
    let mut files = Vec::new();
    rust_files(&repo().join("crates"), &mut files);
    let mut source = std::fs::read_to_string(repo().join("scripts/test")).unwrap();
    for f in &files {
        source.push_str(&std::fs::read_to_string(f).unwrap());
    }
    let file_names: BTreeSet<String> = files
        .iter()
        .flat_map(|f| f.strip_prefix(repo().join("crates")).unwrap().iter())
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let quoted = Regex::new(r"`([^`\n]+)`").unwrap();
    let path = Regex::new(r"^[\w.-]+(/[\w.-]*)+$|^[\w-]+\.(rs|toml|md)$").unwrap();
    let item = Regex::new(r"^(?:[a-z_]+::)*([A-Z]\w*)(?:::(\w+))?(?:<[^>]*>)?$").unwrap();
    let mut missing = Vec::new();
    let roots: Vec<PathBuf> = std::iter::once(repo())
        .chain(std::iter::once(repo().join("crates")))
        .chain(crates().values().flat_map(|d| [d.clone(), d.join("src")]))
        .collect();
    for c in quoted.captures_iter(&doc) {
        let q = &c[1];
        if path.is_match(q) {
            // A bare name, where the text around it says which folder.
            let bare = file_names.contains(q.trim_end_matches('/'));
            if !bare && !roots.iter().any(|r| r.join(q).exists()) {
                missing.push(format!("file {q}"));
            }
        } else if let Some(i) = item.captures(q) {
            let defined = Regex::new(&format!(
                r"(struct|enum|trait|type|macro_rules!|const|static) {}\b|^\s*{}(\s*[{{(,]|$)|\b{}=",
                &i[1], &i[1], &i[1]
            ))
            .unwrap();
            let multi = |re: Regex| source.lines().any(|l| re.is_match(l));
            if !multi(defined) {
                missing.push(format!("type {}", &i[1]));
            }
            if let Some(member) = i.get(2) {
                let m = Regex::new(&format!(r"(fn|const) {}\b", member.as_str())).unwrap();
                if !m.is_match(&source) {
                    missing.push(format!("{}::{}", &i[1], member.as_str()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named in docs/architecture.md but not found: {missing:#?}"
    );
}
