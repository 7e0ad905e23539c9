//! Tests of the property names and the typed getters' wording.

use super::entry::Origin;
use super::names::CORE_PROPERTIES;
use super::values::*;

use super::*;

#[test]
fn separators_only_between_digits() {
    assert_eq!(strip_separators("1_000").as_deref(), Some("1000"));
    assert_eq!(strip_separators("_1"), None);
    assert_eq!(strip_separators("1_"), None);
    assert_eq!(strip_separators("1__0"), None);
    assert_eq!(strip_separators("-_1"), None);
}

#[test]
fn core_properties_are_unique() {
    let mut names = CORE_PROPERTIES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CORE_PROPERTIES.len());
}

#[test]
fn messages_echo_input_printably_and_briefly() {
    let mut p = Properties::new();
    p.set("record\x1b[31mcount", "x", Origin::CommandLine);
    let huge = "k".repeat(4 << 20);
    p.set(&huge, "1", Origin::CommandLine);
    p.set("recordcount", "1\x07", Origin::CommandLine);
    let unknown: Vec<String> = p
        .unknown_keys(&["recordcount"], &[])
        .iter()
        .map(|u| u.to_string())
        .collect();
    assert_eq!(unknown.len(), 2);
    for u in &unknown {
        assert!(!u.chars().any(|c| c.is_control()), "{u:?}");
        assert!(u.len() < 400, "{} bytes", u.len());
    }
    assert!(unknown.iter().any(|u| u.contains("record\\u{1b}[31mcount")));
    assert!(unknown
        .iter()
        .any(|u| u.contains("4194304 characters in all")));
    let e = p.get_u64("recordcount", 0).unwrap_err().to_string();
    assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
    assert!(e.contains("1\\u{7}"), "{e}");
}
