//! Spool files: a run the store could not take, kept whole or from the
//! interval it failed at, reads back exactly once imported, however many
//! times it is imported; a spool still being written is left alone until
//! its process has died, and then imported as failed; runs of another
//! store file import too, and what cannot be imported says why.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use sojourn_store::{Filter, RunStatus, Spool, Store, StoreError};

fn temp() -> (tempfile::TempDir, Store, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("results.sqlite").to_str().unwrap()).unwrap();
    let spool = dir.path().join("results.sqlite.spool");
    (dir, store, spool)
}

/// The run as it was measured, interval by interval, and its totals.
fn assert_is(store: &Store, run: &Synthetic, status: RunStatus) {
    let loaded = store.load(run.meta.id.as_str()).unwrap();
    assert_eq!(loaded.summary.meta, run.meta);
    assert_eq!(loaded.summary.status, status);
    assert_eq!(loaded.intervals.len(), run.intervals.len());
    for (i, (l, s)) in loaded.intervals.iter().zip(&run.per_interval).enumerate() {
        assert_same_stats(&l.stats, s, &format!("interval {i}"));
        assert_eq!(l.start, run.intervals[i].start, "interval {i}");
    }
    if status == RunStatus::Completed {
        assert_same_stats(&loaded.total, &run.outcome.total, "total");
        assert_eq!(loaded.warnings, ["kept in a spool".to_string()]);
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The run's intervals from `from` on, and its end, into the spool (a run
/// whose store took the rest, or none of it).
fn spool_from(spool: &Spool, run: &Synthetic, from: usize) {
    for iv in &run.intervals[from..] {
        spool.store().write_interval(&run.meta.id, iv).unwrap();
    }
    spool
        .store()
        .finish_run(
            &run.meta.id,
            &run.outcome,
            RunStatus::Completed,
            &["kept in a spool".to_string()],
        )
        .unwrap();
}

#[test]
fn a_spooled_run_reads_back_as_it_was_measured_once_imported() {
    let (_dir, store, dir) = temp();
    let run = synthetic(1, 4, 1);
    let spool = Spool::create(&dir, &run.meta, 0).unwrap();
    spool_from(&spool, &run, 0);
    let path = spool.path().to_path_buf();
    assert_eq!(spool.close().unwrap(), path);
    assert_eq!(files(&dir), [format!("{}.sqlite", run.meta.id)]);

    let done = store.import_spool(&dir);
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert_eq!(done.imported, [(path, vec![run.meta.id.clone()])]);
    assert!(files(&dir).is_empty(), "an imported spool file is removed");
    assert_is(&store, &run, RunStatus::Completed);
    // Nothing is left to import.
    assert!(store.import_spool(&dir).imported.is_empty());
}

#[test]
fn a_run_that_lost_its_store_halfway_is_put_back_together() {
    let (dir, store, spool_dir) = temp();
    let run = synthetic(2, 5, 0);
    // The store took the start and two intervals, then failed.
    store.begin_run(&run.meta).unwrap();
    for iv in &run.intervals[..2] {
        store.write_interval(&run.meta.id, iv).unwrap();
    }
    let spool = Spool::create(&spool_dir, &run.meta, 2).unwrap();
    spool_from(&spool, &run, 2);
    let path = spool.close().unwrap();
    let copy = dir.path().join("copy.sqlite");
    std::fs::copy(&path, &copy).unwrap();

    assert_eq!(store.import(&path).unwrap(), vec![run.meta.id.clone()]);
    assert!(!path.exists());
    assert_is(&store, &run, RunStatus::Completed);
    // Imported again (a crash between storing and removing the file, or
    // two processes importing at once): the same run, once.
    assert_eq!(store.import(&copy).unwrap(), vec![run.meta.id.clone()]);
    assert_is(&store, &run, RunStatus::Completed);
    assert_eq!(store.list(&Filter::default()).unwrap().len(), 1);
}

#[test]
fn a_spool_being_written_waits_for_its_process_to_end() {
    let (_dir, store, spool_dir) = temp();
    // A process that is alive until the test ends it.
    let mut writer = std::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut run = synthetic(3, 3, 0);
    run.meta.pid = writer.id();
    let spool = Spool::create(&spool_dir, &run.meta, 0).unwrap();
    spool
        .store()
        .write_interval(&run.meta.id, &run.intervals[0])
        .unwrap();
    // Left as a process dies: never closed. Named as `cat`'s.
    drop(spool);
    let [partial] = &files(&spool_dir)[..] else {
        panic!("{:?}", files(&spool_dir))
    };
    let ours = format!(".{}@", std::process::id());
    let theirs = spool_dir.join(partial.replace(&ours, &format!(".{}@", writer.id())));
    std::fs::rename(spool_dir.join(partial), &theirs).unwrap();

    // Its process is alive: not imported, and not importable by hand.
    assert!(store.import_spool(&spool_dir).imported.is_empty());
    let e = store.import(&theirs).unwrap_err().to_string();
    assert!(e.contains("still being written by process"), "{e}");
    assert!(store.list(&Filter::default()).unwrap().is_empty());

    // Once it has died, what it wrote is imported, as a failed run.
    writer.kill().unwrap();
    writer.wait().unwrap();
    let done = store.import_spool(&spool_dir);
    assert!(done.failed.is_empty(), "{:?}", done.failed);
    assert_eq!(done.imported.len(), 1);
    assert!(files(&spool_dir).is_empty());
    let loaded = store.load(run.meta.id.as_str()).unwrap();
    assert_eq!(loaded.summary.status, RunStatus::Failed);
    assert_eq!(loaded.intervals.len(), 1);
    assert_same_stats(
        &loaded.intervals[0].stats,
        &run.per_interval[0],
        "interval 0",
    );
}

#[test]
fn runs_of_another_store_import_and_bad_files_say_why() {
    let (dir, store, _) = temp();
    let other_path = dir.path().join("other.sqlite");
    let other = Store::open(other_path.to_str().unwrap()).unwrap();
    let runs = [synthetic(4, 2, 0), synthetic(5, 3, 1)];
    for r in &runs {
        record(&other, r, &["kept in a spool".to_string()]);
    }
    let ids = store.import(&other_path).unwrap();
    assert_eq!(ids.len(), 2);
    for r in &runs {
        assert_is(&store, r, RunStatus::Completed);
    }
    // A store file is not a spool: it stays.
    assert!(other_path.exists());
    assert_eq!(other.list(&Filter::default()).unwrap().len(), 2);

    let garbage = dir.path().join("garbage.sqlite");
    std::fs::write(
        &garbage,
        "not a database at all, not even close to one......",
    )
    .unwrap();
    let e = store.import(&garbage).unwrap_err().to_string();
    assert!(e.contains("garbage.sqlite"), "{e}");
    assert!(e.contains("not a database"), "{e}");

    let empty = dir.path().join("empty.sqlite");
    rusqlite::Connection::open(&empty)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = store.import(&empty).unwrap_err().to_string();
    assert!(e.contains("not a results store or spool file"), "{e}");

    let newer = dir.path().join("newer.sqlite");
    Store::open(newer.to_str().unwrap()).unwrap();
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch("UPDATE schema_version SET version = 999")
        .unwrap();
    assert!(matches!(
        store.import(&newer),
        Err(StoreError::TooNew { found: 999, .. })
    ));

    let e = store
        .import(&dir.path().join("results.sqlite"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("is the store it would be imported into"), "{e}");
    let e = store
        .import(&dir.path().join("missing.sqlite"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no such file"), "{e}");
    assert_eq!(store.list(&Filter::default()).unwrap().len(), 2);
}
