//! Tests of the script workload's settings.

use super::*;
use crate::properties::command_line as props;

#[test]
fn a_script_read_by_the_command_line_runs_where_its_file_is_not() {
    let p = props(&[
        ("script", "/nowhere/mine.sql@2,builtin=se"),
        ("script.file./nowhere/mine.sql", "\\set x 1\nSELECT :x;\n"),
        ("script.define.x", "5"),
    ]);
    let c = ScriptConfig::from_properties(&p).unwrap();
    let names: Vec<&str> = c.compiled.scripts.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["mine", "select-only"]);
    assert_eq!(c.compiled.scripts[0].weight, 2);
    assert_eq!(c.defines, [("x".to_string(), "5".to_string())]);
    assert!(!c.builtins_only());
    let listed: Vec<String> = listed("/nowhere/mine.sql@2,builtin=se")
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert_eq!(listed, ["mine", "select-only"], "outputs name them alike");
    let missing = props(&[("script", "/nowhere/other.sql")]);
    let e = ScriptConfig::from_properties(&missing)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/nowhere/other.sql, which cannot be read"),
        "{e}"
    );
}
