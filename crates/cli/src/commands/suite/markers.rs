//! PKB's status markers beside the configs: `<file>.FINISHED` once every
//! iteration of a config has passed (a rerun skips it), `<file>.PROCESSING`
//! after at least one iteration finished (a rerun does only the
//! `num_iterations - Passed` still missing). Both hold
//! `Failed: F Passed: P`; deleting them starts afresh.
//!
//! Markers are replaced atomically (written beside, then renamed), so a
//! suite killed at any instant leaves either the old counts or the new.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Iterations of one config so far.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub failed: u32,
    pub passed: u32,
}

/// What the markers say about a config.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// No marker: nothing ran yet.
    Fresh,
    Processing(Counts),
    Finished(Counts),
}

impl State {
    pub fn counts(self) -> Counts {
        match self {
            State::Fresh => Counts::default(),
            State::Processing(c) | State::Finished(c) => c,
        }
    }
}

fn path(dir: &Path, file: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{file}.{suffix}"))
}

fn parse(p: &Path, text: &str) -> Result<Counts> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if let ["Failed:", f, "Passed:", p2] = words.as_slice() {
        if let (Ok(failed), Ok(passed)) = (f.parse(), p2.parse()) {
            return Ok(Counts { failed, passed });
        }
    }
    bail!(
        "{}: status marker holds {:?}; expected `Failed: F Passed: P` with whole numbers \
         (delete the marker to start this config afresh)",
        p.display(),
        text.trim()
    )
}

/// Read a config's markers. A FINISHED marker wins over a PROCESSING one.
pub fn read(dir: &Path, file: &str) -> Result<State> {
    for (suffix, finished) in [("FINISHED", true), ("PROCESSING", false)] {
        let p = path(dir, file, suffix);
        match std::fs::read_to_string(&p) {
            Ok(text) => {
                let c = parse(&p, &text)?;
                return Ok(if finished {
                    State::Finished(c)
                } else {
                    State::Processing(c)
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", p.display())),
        }
    }
    Ok(State::Fresh)
}

fn write_atomic(p: &Path, text: &str) -> Result<()> {
    let tmp = p.with_extension(format!(
        "{}.tmp",
        p.extension().and_then(|e| e.to_str()).unwrap_or("marker")
    ));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, p).with_context(|| format!("writing {}", p.display()))
}

/// Record the counts after an iteration: FINISHED once `passed` reaches
/// `iterations` (the PROCESSING marker goes), else PROCESSING.
pub fn write(dir: &Path, file: &str, c: Counts, iterations: u32) -> Result<State> {
    let text = format!("Failed: {} Passed: {}", c.failed, c.passed);
    if c.passed >= iterations {
        write_atomic(&path(dir, file, "FINISHED"), &text)?;
        let processing = path(dir, file, "PROCESSING");
        match std::fs::remove_file(&processing) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", processing.display())),
        }
        Ok(State::Finished(c))
    } else {
        write_atomic(&path(dir, file, "PROCESSING"), &text)?;
        Ok(State::Processing(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_finish() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(read(d.path(), "a.yaml").unwrap(), State::Fresh);
        let c = Counts {
            failed: 1,
            passed: 1,
        };
        assert_eq!(
            write(d.path(), "a.yaml", c, 2).unwrap(),
            State::Processing(c)
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.yaml.PROCESSING")).unwrap(),
            "Failed: 1 Passed: 1"
        );
        assert_eq!(read(d.path(), "a.yaml").unwrap(), State::Processing(c));
        let c = Counts {
            failed: 1,
            passed: 2,
        };
        assert_eq!(write(d.path(), "a.yaml", c, 2).unwrap(), State::Finished(c));
        assert!(!d.path().join("a.yaml.PROCESSING").exists());
        assert_eq!(read(d.path(), "a.yaml").unwrap(), State::Finished(c));
        let leftovers: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(leftovers, ["a.yaml.FINISHED"]);
    }

    #[test]
    fn bad_marker_is_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.yaml.PROCESSING"), "Passed: lots").unwrap();
        let e = read(d.path(), "a.yaml").unwrap_err().to_string();
        assert!(e.contains("a.yaml.PROCESSING"), "{e}");
        assert!(e.contains("Failed: F Passed: P"), "{e}");
    }
}
