//! Properties: the Java file format, PGIO's shell-format `pgio.conf` and
//! how a file is told to be one, precedence between files and the command
//! line, origins, typed getters and their error messages (a key's own
//! range among them), and unknown-key warnings.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use sojourn_core::properties::{
    FileFormat, Origin, Properties, PropertyError, UnknownKey, CORE_PROPERTIES,
    CORE_PROPERTY_PREFIXES,
};

/// A scratch directory removed on drop; unique per test so tests can run in
/// parallel.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "sojourn-props-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn load(text: &str) -> Properties {
    let mut props = Properties::new();
    props.load_str(text, Path::new("workloads/w")).unwrap();
    props
}

fn file_origin(line: usize) -> Origin {
    Origin::File {
        path: PathBuf::from("workloads/w"),
        line,
    }
}

fn load_err(text: &str) -> PropertyError {
    Properties::new()
        .load_str(text, Path::new("workloads/w"))
        .unwrap_err()
}

// ---- file format -----------------------------------------------------------

#[test]
fn every_separator_form() {
    let props = load(
        "a=1\n\
         b = 2\n\
         c:3\n\
         d : 4\n\
         e 5\n\
         f\t6\n\
         g   =   7\n\
         h\n\
         i=\n\
         recordcount = 1000000\n",
    );
    for (key, value) in [
        ("a", "1"),
        ("b", "2"),
        ("c", "3"),
        ("d", "4"),
        ("e", "5"),
        ("f", "6"),
        ("g", "7"),
        ("h", ""),
        ("i", ""),
        ("recordcount", "1000000"),
    ] {
        assert_eq!(props.get(key), Some(value), "key {key}");
    }
    assert_eq!(props.len(), 10);
}

#[test]
fn separator_characters_after_the_first_belong_to_the_value() {
    let props = load("a==b\nc=d:e=f\ng: =h\nurl = mongodb://localhost:27017/ycsb?w=1\n");
    assert_eq!(props.get("a"), Some("=b"));
    assert_eq!(props.get("c"), Some("d:e=f"));
    assert_eq!(props.get("g"), Some("=h"));
    assert_eq!(props.get("url"), Some("mongodb://localhost:27017/ycsb?w=1"));
}

#[test]
fn comments_blank_lines_and_leading_whitespace() {
    let props = load(
        "# a comment\n\
         ! another = comment\n\
         \n\
         \x20  \t\n\
         \x20  # indented comment\n\
         \t! indented bang\n\
         \x20   key = value\n\
         other = has # no comment\n",
    );
    assert_eq!(props.len(), 2);
    assert_eq!(props.get("key"), Some("value"));
    // As in Java, '#' only starts a comment at the start of a line.
    assert_eq!(props.get("other"), Some("has # no comment"));
    assert_eq!(props.entry("key").unwrap().origin, file_origin(7));
}

#[test]
fn trailing_whitespace_of_values_is_trimmed_unless_escaped() {
    let props = load("a = 1000   \nb = x \t\nc = y\\ \n");
    assert_eq!(props.get("a"), Some("1000"));
    assert_eq!(props.get("b"), Some("x"));
    assert_eq!(props.get("c"), Some("y "));
}

#[test]
fn continuation_lines() {
    let props = load(
        "list = a,\\\n    b,\\\n\tc\n\
         next = 1\n\
         even = x\\\\\n\
         after = 2\n\
         odd = y\\\\\\\n   z\n\
         # a comment ending in a backslash does not continue \\\n\
         kept = 3\n\
         hash = a\\\n  # not a comment here\n",
    );
    assert_eq!(props.get("list"), Some("a,b,c"));
    assert_eq!(props.entry("list").unwrap().origin, file_origin(1));
    assert_eq!(props.get("next"), Some("1"));
    assert_eq!(props.entry("next").unwrap().origin, file_origin(4));
    // An even number of backslashes is escaped backslashes, not a continuation.
    assert_eq!(props.get("even"), Some("x\\"));
    assert_eq!(props.get("after"), Some("2"));
    assert_eq!(props.get("odd"), Some("y\\z"));
    assert_eq!(props.get("kept"), Some("3"));
    assert_eq!(props.get("hash"), Some("a# not a comment here"));
}

#[test]
fn continuation_of_a_key() {
    let props = load("record\\\n  count = 5\n");
    assert_eq!(props.get("recordcount"), Some("5"));
}

#[test]
fn escapes() {
    let props = load(
        "tab = a\\tb\n\
         nl = a\\nb\n\
         cr = a\\rb\n\
         ff = a\\fb\n\
         bs = a\\\\b\n\
         other = \\q\\#\\!\n\
         key\\=with\\:seps\\ and\\ spaces = v\n\
         \\#notcomment = w\n\
         lead = \\  padded\n",
    );
    assert_eq!(props.get("tab"), Some("a\tb"));
    assert_eq!(props.get("nl"), Some("a\nb"));
    assert_eq!(props.get("cr"), Some("a\rb"));
    assert_eq!(props.get("ff"), Some("a\x0cb"));
    assert_eq!(props.get("bs"), Some("a\\b"));
    assert_eq!(props.get("other"), Some("q#!"));
    assert_eq!(props.get("key=with:seps and spaces"), Some("v"));
    assert_eq!(props.get("#notcomment"), Some("w"));
    assert_eq!(props.get("lead"), Some("  padded"));
}

#[test]
fn unicode_escapes() {
    let props =
        load("e = caf\\u00e9\nE = \\u00C9T\\u00c9\nk\\u0065y = v\nemoji = \\uD83D\\uDE00\n");
    assert_eq!(props.get("e"), Some("café"));
    assert_eq!(props.get("E"), Some("ÉTÉ"));
    assert_eq!(props.get("key"), Some("v"));
    assert_eq!(props.get("emoji"), Some("😀"));
}

#[test]
fn malformed_unicode_escape_names_path_line_and_text() {
    let err = load_err("a = 1\n\n  bad = x\\u12g4\n");
    let msg = err.to_string();
    assert!(msg.starts_with("workloads/w:3: "), "{msg}");
    assert!(msg.contains("\\u"), "{msg}");
    assert!(msg.contains("bad = x\\u12g4"), "{msg}");
    match err {
        PropertyError::Syntax { line, .. } => assert_eq!(line, 3),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn syntax_error_merges_nothing() {
    let mut props = Properties::new();
    let err = props.load_str("a = 1\nb = \\u00\n", Path::new("w"));
    assert!(err.is_err());
    assert!(props.is_empty());
}

#[test]
fn crlf_and_cr_line_endings() {
    let props = load("a = 1\r\nb = 2\r\n\r\n# c\r\nc = x\\\r\n   y\r\nd = 4\re = 5\r");
    assert_eq!(props.get("a"), Some("1"));
    assert_eq!(props.get("b"), Some("2"));
    assert_eq!(props.get("c"), Some("xy"));
    assert_eq!(props.get("d"), Some("4"));
    assert_eq!(props.get("e"), Some("5"));
    assert_eq!(props.entry("c").unwrap().origin, file_origin(5));
    assert_eq!(props.entry("e").unwrap().origin, file_origin(8));
}

#[test]
fn byte_order_mark_is_ignored() {
    let props = load("\u{feff}recordcount=5\n");
    assert_eq!(props.get("recordcount"), Some("5"));
}

#[test]
fn later_line_in_a_file_wins() {
    let props = load("a = 1\na = 2\n");
    assert_eq!(props.get("a"), Some("2"));
    assert_eq!(props.entry("a").unwrap().origin, file_origin(2));
}

#[test]
fn empty_key_is_an_error() {
    for text in ["=", ":", "= value", "  : value"] {
        let msg = load_err(text).to_string();
        assert!(msg.contains("workloads/w:1"), "{text:?}: {msg}");
        assert!(msg.contains("property name"), "{text:?}: {msg}");
    }
}

#[test]
fn odd_inputs_do_not_panic() {
    let inputs = [
        "",
        "\\",
        "a=\\",
        "a=b\\",
        "\\\n",
        "\\\\",
        "a\\",
        "\\u12",
        "a=\\u12",
        "a=\\u",
        "a=\\uZZZZ",
        "a=\\uD800",
        "a=\\uDC00",
        "a=\\uD800\\",
        "a=\\uD800\\u",
        "a=\\uD800\\uD800",
        "=",
        ":",
        " ",
        "   \t  \x0c ",
        "\n\n\n",
        "\r",
        "\r\n\r\n",
        "#",
        "!",
        "#\\",
        "a\\\n",
        "a\\\n\\\n\\\n",
        "é=ü",
        "\u{feff}",
        "\u{feff}\\",
        "k\u{0}=\u{0}",
        "a = \\\r\n",
        "\\ ",
        "\\=",
        "\\:",
    ];
    for input in inputs {
        let mut props = Properties::new();
        // Either outcome is fine; what matters is returning at all.
        let _ = props.load_str(input, Path::new("fuzz"));
    }
    // Deterministic pseudo-random mixes of the characters that matter.
    let alphabet = [
        '\\', 'u', '0', 'D', '8', 'C', '=', ':', ' ', '\t', '\n', '\r', '#', '!', 'a',
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..3000 {
        let mut s = String::new();
        for _ in 0..(state % 24) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            s.push(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        state = state.wrapping_add(1);
        let mut props = Properties::new();
        let _ = props.load_str(&s, Path::new("fuzz"));
    }
}

#[test]
fn lone_backslash_at_end_of_file_is_dropped() {
    let props = load("a = b\\");
    assert_eq!(props.get("a"), Some("b"));
}

// ---- files and precedence -------------------------------------------------

#[test]
fn later_files_override_earlier_ones_and_keep_their_origins() {
    let dir = Scratch::new();
    let first = dir.file("first", "recordcount = 10\nfieldcount = 3\n");
    let second = dir.file("second", "# override\nrecordcount = 20\n");
    let mut props = Properties::new();
    props.load_file(&first).unwrap();
    props.load_file(&second).unwrap();
    assert_eq!(props.get("recordcount"), Some("20"));
    assert_eq!(
        props.entry("recordcount").unwrap().origin,
        Origin::File {
            path: second.clone(),
            line: 2
        }
    );
    assert_eq!(props.get("fieldcount"), Some("3"));
    assert_eq!(
        props.entry("fieldcount").unwrap().origin,
        Origin::File {
            path: first,
            line: 2
        }
    );
}

#[test]
fn set_arg_overrides_files_in_either_order() {
    let dir = Scratch::new();
    let file = dir.file("w", "recordcount = 10\noperationcount = 5\n");

    let mut after = Properties::new();
    after.load_file(&file).unwrap();
    after.set_arg("recordcount=99").unwrap();
    assert_eq!(after.get("recordcount"), Some("99"));
    assert_eq!(
        after.entry("recordcount").unwrap().origin,
        Origin::CommandLine
    );

    let mut before = Properties::new();
    before.set_arg("recordcount=99").unwrap();
    before.load_file(&file).unwrap();
    assert_eq!(before.get("recordcount"), Some("99"));
    assert_eq!(
        before.entry("recordcount").unwrap().origin,
        Origin::CommandLine
    );
    assert_eq!(before.get("operationcount"), Some("5"));
}

#[test]
fn flags_also_win_over_files_but_set_always_wins() {
    let mut props = Properties::new();
    props.set("threadcount", "8", Origin::Flag("--threads"));
    props.set("table", "t", Origin::Default);
    props
        .load_str("threadcount = 1\ntable = other\n", Path::new("w"))
        .unwrap();
    assert_eq!(props.get("threadcount"), Some("8"));
    assert_eq!(props.get("table"), Some("other"));
    props.set_arg("threadcount=4").unwrap();
    assert_eq!(props.get("threadcount"), Some("4"));
    props.set("threadcount", "2", Origin::Default);
    assert_eq!(props.get("threadcount"), Some("2"));
}

#[test]
fn set_arg_forms() {
    let mut props = Properties::new();
    props.set_arg("a=1").unwrap();
    props.set_arg("url=postgres://h/db?x=y").unwrap();
    props.set_arg(" b =2").unwrap();
    props.set_arg("empty=").unwrap();
    assert_eq!(props.get("a"), Some("1"));
    assert_eq!(props.get("url"), Some("postgres://h/db?x=y"));
    assert_eq!(props.get("b"), Some("2"));
    assert_eq!(props.get("empty"), Some(""));

    for bad in ["recordcount", "recordcount:5", "", "=5", " =5"] {
        let err = props.set_arg(bad).unwrap_err();
        assert!(matches!(err, PropertyError::Argument { .. }), "{bad:?}");
        let msg = err.to_string();
        assert!(msg.contains("-p key=value"), "{msg}");
        assert!(msg.contains(&format!("'{bad}'")), "{msg}");
    }
}

#[test]
fn missing_file_names_it() {
    let dir = Scratch::new();
    let path = dir.0.join("no-such-workload");
    let err = Properties::new().load_file(&path).unwrap_err();
    assert!(matches!(err, PropertyError::Read { .. }));
    let msg = err.to_string();
    assert!(msg.contains("no-such-workload"), "{msg}");
    // The OS reason is included.
    assert!(msg.to_lowercase().contains("no such file"), "{msg}");
}

#[test]
fn directory_is_a_read_error() {
    let dir = Scratch::new();
    let err = Properties::new().load_file(&dir.0).unwrap_err();
    assert!(matches!(err, PropertyError::Read { .. }), "{err:?}");
}

#[test]
fn non_utf8_file_is_read_as_latin1() {
    let dir = Scratch::new();
    // "café" in ISO-8859-1, then a byte that is never valid UTF-8.
    let path = dir.file("latin1", b"name = caf\xe9\nother = \xff\n");
    let mut props = Properties::new();
    props.load_file(&path).unwrap();
    assert_eq!(props.get("name"), Some("café"));
    assert_eq!(props.get("other"), Some("ÿ"));
}

#[test]
fn utf8_file_is_read_as_utf8() {
    let dir = Scratch::new();
    let path = dir.file("utf8", "name = café\n");
    let mut props = Properties::new();
    props.load_file(&path).unwrap();
    assert_eq!(props.get("name"), Some("café"));
}

#[test]
fn syntax_error_in_a_file_names_the_file() {
    let dir = Scratch::new();
    let path = dir.file("broken", "a = 1\nb = \\u12\n");
    let msg = Properties::new().load_file(&path).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}:2: ", path.display())), "{msg}");
    assert!(msg.contains("b = \\u12"), "{msg}");
}

// ---- map operations --------------------------------------------------------

#[test]
fn map_operations() {
    let mut props = load("b = 2\na = 1\nc = 3\n");
    assert!(props.contains("a"));
    assert!(!props.contains("z"));
    let keys: Vec<&str> = props.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["a", "b", "c"]);
    let removed = props.remove("b").unwrap();
    assert_eq!(removed.value, "2");
    assert_eq!(removed.origin, file_origin(1));
    assert!(props.remove("b").is_none());
    assert_eq!(props.get("b"), None);
    assert_eq!(props.get_str("a", "x"), "1");
    assert_eq!(props.get_str("z", "x"), "x");
}

#[test]
fn origin_display() {
    assert_eq!(
        Origin::File {
            path: PathBuf::from("workloads/workloada"),
            line: 12
        }
        .to_string(),
        "workloads/workloada:12"
    );
    assert_eq!(Origin::CommandLine.to_string(), "-p on the command line");
    assert_eq!(Origin::Flag("--threads").to_string(), "--threads");
    assert_eq!(Origin::Default.to_string(), "default");
}

// ---- typed getters ---------------------------------------------------------

/// The error for `key` holding `value` in a file at line 1, as a message.
fn getter_error<T: std::fmt::Debug>(
    value: &str,
    get: impl Fn(&Properties) -> Result<T, PropertyError>,
) -> String {
    let mut props = Properties::new();
    props.set("k", value, file_origin(1));
    let err = get(&props).expect_err(&format!("{value:?} should be rejected"));
    assert!(matches!(err, PropertyError::Invalid { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("workloads/w:1: k = '{value}' ")),
        "{msg}"
    );
    assert!(msg.contains("; accepted: "), "{msg}");
    msg
}

fn with(value: &str) -> Properties {
    let mut props = Properties::new();
    props.set("k", value, Origin::CommandLine);
    props
}

#[test]
fn get_u64_accepts() {
    for (value, want) in [
        ("1000", 1000),
        (" 1000 ", 1000),
        ("1_000", 1000),
        ("1_000_000", 1_000_000),
        ("+7", 7),
        ("0", 0),
        ("-0", 0),
        ("007", 7),
        ("18446744073709551615", u64::MAX),
    ] {
        assert_eq!(with(value).get_u64("k", 1).unwrap(), want, "{value:?}");
    }
    assert_eq!(Properties::new().get_u64("k", 42).unwrap(), 42);
}

#[test]
fn get_u64_rejects() {
    let msg = getter_error("-5", |p| p.get_u64("k", 0));
    assert!(msg.contains("must not be negative"), "{msg}");
    assert!(msg.contains("a whole number from 0"), "{msg}");
    for value in [
        "",
        "abc",
        "1.5",
        "1e6",
        "1 000",
        "_1",
        "1_",
        "1__0",
        "--1",
        "+",
        "-",
        "0x10",
        "18446744073709551616",
    ] {
        getter_error(value, |p| p.get_u64("k", 0));
    }
    let msg = getter_error("18446744073709551616", |p| p.get_u64("k", 0));
    assert!(msg.contains("too large"), "{msg}");
}

#[test]
fn get_i64_accepts_and_rejects() {
    for (value, want) in [
        ("-5", -5),
        (" 12 ", 12),
        ("-1_000", -1000),
        ("-9223372036854775808", i64::MIN),
        ("9223372036854775807", i64::MAX),
    ] {
        assert_eq!(with(value).get_i64("k", 1).unwrap(), want, "{value:?}");
    }
    assert_eq!(Properties::new().get_i64("k", -3).unwrap(), -3);
    for value in [
        "x",
        "1.0",
        "9223372036854775808",
        "-9223372036854775809",
        "",
    ] {
        let msg = getter_error(value, |p| p.get_i64("k", 0));
        assert!(
            msg.contains("a whole number from -9223372036854775808"),
            "{msg}"
        );
    }
}

#[test]
fn get_f64_accepts_and_rejects() {
    for (value, want) in [
        ("0.95", 0.95),
        (" 0.5 ", 0.5),
        ("1", 1.0),
        ("-2.5", -2.5),
        ("1e6", 1e6),
        (".5", 0.5),
        ("1_000.5", 1000.5),
        ("0.8571428571", 0.8571428571),
        ("0.5d", 0.5),
        ("2F", 2.0),
    ] {
        assert_eq!(with(value).get_f64("k", 9.0).unwrap(), want, "{value:?}");
    }
    assert_eq!(Properties::new().get_f64("k", 0.25).unwrap(), 0.25);
    for value in [
        "nan",
        "NaN",
        "inf",
        "-infinity",
        "1e999",
        "abc",
        "",
        "0.5.5",
        "1,5",
    ] {
        let msg = getter_error(value, |p| p.get_f64("k", 0.0));
        assert!(msg.contains("finite"), "{msg}");
    }
    // Rust reads `nan` as a number; it is none, and said so.
    let msg = getter_error("nan", |p| p.get_f64("k", 0.0));
    assert!(msg.contains("is not a number"), "{msg}");
    let msg = getter_error("inf", |p| p.get_f64("k", 0.0));
    assert!(msg.contains("is not finite"), "{msg}");
}

#[test]
fn get_bool_accepts_and_rejects() {
    for (value, want) in [
        ("true", true),
        ("TRUE", true),
        (" True ", true),
        ("false", false),
        ("False", false),
    ] {
        assert_eq!(with(value).get_bool("k", !want).unwrap(), want, "{value:?}");
    }
    assert!(Properties::new().get_bool("k", true).unwrap());
    for value in ["yes", "1", "0", "", "t", "on"] {
        let msg = getter_error(value, |p| p.get_bool("k", false));
        assert!(msg.contains("accepted: true or false"), "{msg}");
    }
}

#[test]
fn get_choice_accepts_and_rejects() {
    const DISTS: &[&str] = &["uniform", "zipfian", "latest"];
    assert_eq!(
        with("zipfian").get_choice("k", "uniform", DISTS).unwrap(),
        "zipfian"
    );
    assert_eq!(
        with(" Zipfian ").get_choice("k", "uniform", DISTS).unwrap(),
        "zipfian"
    );
    assert_eq!(
        with("LATEST").get_choice("k", "uniform", DISTS).unwrap(),
        "latest"
    );
    assert_eq!(
        Properties::new().get_choice("k", "uniform", DISTS).unwrap(),
        "uniform"
    );
    let msg = getter_error("zipf", |p| {
        p.get_choice("k", "uniform", DISTS).map(str::to_owned)
    });
    assert!(msg.contains("accepted: uniform, zipfian, latest"), "{msg}");
    getter_error("", |p| {
        p.get_choice("k", "uniform", DISTS).map(str::to_owned)
    });
}

#[test]
fn get_f64_list_accepts_and_rejects() {
    assert_eq!(with("95,99").get_f64_list("k", &[]).unwrap(), [95.0, 99.0]);
    assert_eq!(
        with(" 50 , 99.9 ,99.99").get_f64_list("k", &[]).unwrap(),
        [50.0, 99.9, 99.99]
    );
    assert_eq!(with("90").get_f64_list("k", &[]).unwrap(), [90.0]);
    assert_eq!(
        Properties::new().get_f64_list("k", &[95.0, 99.0]).unwrap(),
        [95.0, 99.0]
    );
    let msg = getter_error("95,x", |p| p.get_f64_list("k", &[]));
    assert!(msg.contains("'x'"), "{msg}");
    assert!(msg.contains("comma-separated"), "{msg}");
    for value in ["", "95,,99", "95,", "nan", "95;99"] {
        getter_error(value, |p| p.get_f64_list("k", &[]));
    }
}

#[test]
fn getter_errors_name_the_file_line_from_a_real_load() {
    let dir = Scratch::new();
    let path = dir.file(
        "workloadx",
        "# header\n\nrecordcount = ten\nreadallfields = yes\n",
    );
    let mut props = Properties::new();
    props.load_file(&path).unwrap();
    let msg = props.get_u64("recordcount", 0).unwrap_err().to_string();
    assert_eq!(
        msg,
        format!(
            "{}:3: recordcount = 'ten' is not a whole number; accepted: \
             a whole number from 0 to 18446744073709551615, e.g. 1000 or 1_000",
            path.display()
        )
    );
    let msg = props
        .get_bool("readallfields", true)
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with(&format!("{}:4: readallfields = 'yes'", path.display())),
        "{msg}"
    );
}

#[test]
fn getter_errors_name_command_line_and_flag_origins() {
    let mut props = Properties::new();
    props.set_arg("operationcount=-1").unwrap();
    props.set("threadcount", "many", Origin::Flag("--threads"));
    let msg = props.get_u64("operationcount", 0).unwrap_err().to_string();
    assert!(
        msg.starts_with("-p on the command line: operationcount = '-1' must not be negative"),
        "{msg}"
    );
    let msg = props.get_u64("threadcount", 1).unwrap_err().to_string();
    assert!(msg.starts_with("--threads: threadcount = 'many'"), "{msg}");
}

#[test]
fn end_of_line_comment_gets_a_hint() {
    let props = load("recordcount = 1000 # records\n");
    let msg = props.get_u64("recordcount", 0).unwrap_err().to_string();
    assert!(msg.contains("'1000 # records'"), "{msg}");
    assert!(msg.contains("beginning of a line"), "{msg}");
}

#[test]
fn invalid_names_origin_key_value_and_message() {
    let props = load("insertstart = 10\ninsertcount = 95\nrecordcount = 100\n");
    let message = format!(
        "{} plus insertcount exceeds {}",
        props.describe("insertstart"),
        props.describe("recordcount")
    );
    let err = props.invalid("insertcount", message);
    assert!(matches!(err, PropertyError::Rejected { .. }));
    let msg = err.to_string();
    assert_eq!(
        msg,
        "workloads/w:2: insertcount = '95': insertstart = '10' (workloads/w:1) plus \
         insertcount exceeds recordcount = '100' (workloads/w:3)"
    );
    let msg = props.invalid("fieldlength", "must be constant").to_string();
    assert_eq!(msg, "default: fieldlength (not set): must be constant");
}

// ---- unknown keys ----------------------------------------------------------

#[test]
fn unknown_keys_suggest_near_names() {
    let props = load(
        "recordcout = 1\n\
         readproportoin = 0.5\n\
         RecordCount = 2\n\
         recordcount = 3\n\
         wibble = 4\n\
         zz = 5\n\
         redis.host = localhost\n\
         htrace.sampler = x\n",
    );
    let unknown = props.unknown_keys(CORE_PROPERTIES, &["redis."]);
    let by_key = |key: &str| -> &UnknownKey { unknown.iter().find(|u| u.key == key).unwrap() };

    assert_eq!(
        by_key("recordcout").suggestion.as_deref(),
        Some("recordcount")
    );
    assert_eq!(by_key("recordcout").origin, file_origin(1));
    assert_eq!(
        by_key("recordcout").to_string(),
        "workloads/w:1: unknown property 'recordcout' (did you mean 'recordcount'?)"
    );
    assert_eq!(
        by_key("readproportoin").suggestion.as_deref(),
        Some("readproportion")
    );
    assert_eq!(
        by_key("RecordCount").suggestion.as_deref(),
        Some("recordcount")
    );
    assert_eq!(by_key("wibble").suggestion, None);
    assert_eq!(by_key("zz").suggestion, None);
    assert_eq!(
        by_key("wibble").to_string(),
        "workloads/w:5: unknown property 'wibble'"
    );
    // Known names and prefixes are not reported; htrace. is only known with
    // the core prefixes.
    assert!(unknown.iter().all(|u| u.key != "recordcount"));
    assert!(unknown.iter().all(|u| u.key != "redis.host"));
    assert!(unknown.iter().any(|u| u.key == "htrace.sampler"));
    assert_eq!(unknown.len(), 6);

    let unknown = props.unknown_keys(CORE_PROPERTIES, CORE_PROPERTY_PREFIXES);
    assert!(unknown.iter().all(|u| u.key != "htrace.sampler"));
    assert!(unknown.iter().any(|u| u.key == "redis.host"));
}

#[test]
fn core_properties_cover_the_reference_and_sojourn() {
    for name in [
        "table",
        "fieldcount",
        "fieldnameprefix",
        "fieldlength",
        "minfieldlength",
        "fieldlengthdistribution",
        "fieldlengthhistogram",
        "recordcount",
        "operationcount",
        "insertstart",
        "insertcount",
        "zeropadding",
        "insertorder",
        "readproportion",
        "updateproportion",
        "insertproportion",
        "scanproportion",
        "readmodifywriteproportion",
        "readallfields",
        "writeallfields",
        "dataintegrity",
        "requestdistribution",
        "minscanlength",
        "maxscanlength",
        "scanlengthdistribution",
        "hotspotdatafraction",
        "hotspotopnfraction",
        "exponential.percentile",
        "exponential.frac",
        "threadcount",
        "target",
        "maxexecutiontime",
        "status.interval",
        "measurementtype",
        "measurement.interval",
        "hdrhistogram.percentiles",
        "core_workload_insertion_retry_limit",
        "core_workload_insertion_retry_interval",
        "workload",
        "db",
        "exporter",
        "exportfile",
        "measurement.histogram.verbose",
        "histogram.buckets",
        "hdrhistogram.fileoutput",
        "hdrhistogram.output.path",
        "measurement.trackjvm",
        "dotransactions",
        "debug",
        "seed",
        "warmup",
        "arrival",
        "dropdata",
        "timeout.ms",
    ] {
        assert!(CORE_PROPERTIES.contains(&name), "{name} missing");
    }
}

#[test]
fn the_six_core_workload_files_have_no_unknown_keys() {
    // The shipped files, with YCSB's mixes (read, update, scan, insert,
    // read-modify-write) and request distributions.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
    let keys = [
        "readproportion",
        "updateproportion",
        "scanproportion",
        "insertproportion",
        "readmodifywriteproportion",
    ];
    for (name, mix, distribution) in [
        ("workloada", [0.5, 0.5, 0.0, 0.0, 0.0], "zipfian"),
        ("workloadb", [0.95, 0.05, 0.0, 0.0, 0.0], "zipfian"),
        ("workloadc", [1.0, 0.0, 0.0, 0.0, 0.0], "zipfian"),
        ("workloadd", [0.95, 0.0, 0.0, 0.05, 0.0], "latest"),
        ("workloade", [0.0, 0.0, 0.95, 0.05, 0.0], "zipfian"),
        ("workloadf", [0.5, 0.0, 0.0, 0.0, 0.5], "zipfian"),
    ] {
        let mut props = Properties::new();
        props.load_file(&shipped.join(name)).unwrap();
        let unknown = props.unknown_keys(CORE_PROPERTIES, &[]);
        assert!(unknown.is_empty(), "{name}: {unknown:?}");
        assert_eq!(
            props.get("workload"),
            Some("site.ycsb.workloads.CoreWorkload"),
            "{name}"
        );
        for (key, want) in keys.into_iter().zip(mix) {
            // YCSB's default for every proportion the files leave out
            // (only read-modify-write) is 0.
            assert_eq!(props.get_f64(key, 0.0).unwrap(), want, "{name}: {key}");
        }
        assert_eq!(
            props
                .get_choice(
                    "requestdistribution",
                    "uniform",
                    &["uniform", "zipfian", "latest"]
                )
                .unwrap(),
            distribution,
            "{name}"
        );
        assert_eq!(props.get_u64("recordcount", 0).unwrap(), 1000, "{name}");
    }
    let mut e = Properties::new();
    e.load_file(&shipped.join("workloade")).unwrap();
    assert_eq!(e.get_u64("maxscanlength", 0).unwrap(), 100);
    assert_eq!(e.get("scanlengthdistribution"), Some("uniform"));
}

// ---- ranged getters ---------------------------------------------------------

#[test]
fn ranged_getters_name_the_keys_own_range() {
    let p = |v: &str| {
        let mut props = Properties::new();
        props.set("UPDATE_PCT", v, file_origin(1));
        props
    };
    assert_eq!(p("55").get_u64_in("UPDATE_PCT", 0, 0..=100).unwrap(), 55);
    assert_eq!(
        Properties::new()
            .get_u64_in("UPDATE_PCT", 7, 0..=100)
            .unwrap(),
        7
    );
    for (value, problem) in [
        ("abc", "is not a whole number"),
        ("101", "is above 100"),
        ("-1", "must not be negative"),
        ("99999999999999999999", "is above 100"),
        ("0 RUN_TIME=1000", "is not a whole number"),
    ] {
        let msg = p(value)
            .get_u64_in("UPDATE_PCT", 0, 0..=100)
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            format!(
                "workloads/w:1: UPDATE_PCT = '{value}' {problem}; accepted: a whole number \
                 from 0 to 100"
            )
        );
        assert!(!msg.contains("18446744073709551615"), "{msg}");
    }
    let msg = p("0")
        .get_u64_in("UPDATE_PCT", 1, 1..)
        .unwrap_err()
        .to_string();
    assert!(
        msg.ends_with("'0' is below 1; accepted: a whole number of at least 1"),
        "{msg}"
    );
    let msg = p("-3")
        .get_u64_in("UPDATE_PCT", 1, 1..=9)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("is below 1; accepted: a whole number from 1 to 9"),
        "{msg}"
    );
}

#[test]
fn errors_show_no_secret_values() {
    let mut props = Properties::new();
    props.set("db.passwd", "hunter2", file_origin(1));
    props.set("CONNECT_STRING", "host=h password=hunter2", file_origin(2));
    let msg = props.get_u64("db.passwd", 0).unwrap_err().to_string();
    assert!(
        msg.contains("db.passwd = '***'") && !msg.contains("hunter2"),
        "{msg}"
    );
    let msg = props.invalid("CONNECT_STRING", "is wrong").to_string();
    assert!(
        !msg.contains("hunter2") && msg.contains("password=***"),
        "{msg}"
    );
    assert!(!props.describe("CONNECT_STRING").contains("hunter2"));
}

// ---- PGIO's shell format ------------------------------------------------------

/// The write-up's pgio.conf, one `echo`'d line.
const WRITEUP: &str = "UPDATE_PCT=0 RUN_TIME=1000 NUM_SCHEMAS=1 NUM_THREADS=1 WORK_UNIT=1000 \
    UPDATE_WORK_UNIT=8 SCALE=1000000 DBNAME=yugabyte \
    CONNECT_STRING='postgres://yugabyte:yugabyte@host:5433/yugabyte' CREATE_BASE_TABLE=TRUE\n";

#[test]
fn the_writeups_one_line_pgio_conf_reads_as_pgio_sources_it() {
    // By its name, and by its content under any other name.
    for name in ["pgio.conf", "settings"] {
        let path = Path::new(name);
        assert_eq!(FileFormat::of(WRITEUP, path), FileFormat::Shell);
        let p = Properties::read_str(WRITEUP, path).unwrap();
        assert_eq!(p.len(), 10);
        assert_eq!(p.get_u64_in("UPDATE_PCT", 9, 0..=100).unwrap(), 0);
        assert_eq!(p.get("SCALE"), Some("1000000"));
        assert_eq!(
            p.get("CONNECT_STRING"),
            Some("postgres://yugabyte:yugabyte@host:5433/yugabyte")
        );
        assert_eq!(p.get("CREATE_BASE_TABLE"), Some("TRUE"));
        assert_eq!(
            p.entry("DBNAME").unwrap().origin,
            Origin::File {
                path: path.to_path_buf(),
                line: 1
            }
        );
    }
}

#[test]
fn a_multi_line_pgio_conf_with_comments_quotes_and_export() {
    let dir = Scratch::new();
    let text = "\
# PGIO: 2 schemas
export UPDATE_PCT=20   # updates
NUM_SCHEMAS=\"2\"; NUM_THREADS='4'
CONNECT_STRING=\"host=db port=5433 user=u password='p w'\"
SCALE=1G
export SCALE
";
    let path = dir.file("yb.env", text);
    let mut p = Properties::new();
    p.set_arg("SCALE=64M").unwrap();
    p.load_file(&path).unwrap();
    assert_eq!(p.get("UPDATE_PCT"), Some("20"));
    assert_eq!(p.get("NUM_SCHEMAS"), Some("2"));
    assert_eq!(p.get("NUM_THREADS"), Some("4"));
    assert_eq!(
        p.get("CONNECT_STRING"),
        Some("host=db port=5433 user=u password='p w'")
    );
    // -p still wins over the file.
    assert_eq!(p.get("SCALE"), Some("64M"));
    assert_eq!(
        p.entry("NUM_THREADS").unwrap().origin.to_string(),
        format!("{}:3", path.display())
    );
}

#[test]
fn java_files_stay_java() {
    // Shell-looking pieces in a file that is not shell keep Java's reading.
    let text = "recordcount=1000\nhdrhistogram.percentiles=95,99\nlabel='x y'\nexportfile=a b\n";
    assert_eq!(FileFormat::of(text, Path::new("w")), FileFormat::Java);
    let p = load(text);
    assert_eq!(p.get("label"), Some("'x y'"));
    assert_eq!(p.get("exportfile"), Some("a b"));
    // A trailing comment alone does not make a file shell.
    let text = "recordcount=1000 # records\n";
    assert_eq!(FileFormat::of(text, Path::new("w")), FileFormat::Java);
    assert_eq!(load(text).get("recordcount"), Some("1000 # records"));
}

#[test]
fn shell_errors_name_file_line_and_assignment() {
    let err = Properties::read_str(
        "UPDATE_PCT=0\nRUN_TIME=1 WORK_UNIT=\"10\nSCALE=5",
        Path::new("pgio.conf"),
    )
    .unwrap_err();
    match &err {
        PropertyError::Syntax { line, .. } => assert_eq!(*line, 2),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("pgio.conf:2: WORK_UNIT: the \" quote opened on line 2 is never closed"),
        "{err}"
    );
}
