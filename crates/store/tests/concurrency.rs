//! Many connections at one SQLite store at once: a new store opened,
//! created and written by many at the same instant keeps every run, and a
//! store held by another connection is waited for, up to the store's wait
//! and no longer. Each thread has a connection of its own, as a client
//! process has; the processes themselves are the command line's test
//! (crates/cli/tests/results.rs).

mod common;

use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::*;
use sojourn_store::{Filter, RunStatus, Store, StoreError};

/// Connections opening one new store at the same instant, and how many
/// times over (each time a new store).
const CONNECTIONS: usize = 8;
const ROUNDS: usize = 15;

#[test]
fn a_new_store_opened_by_many_at_once_keeps_every_run() {
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.sqlite");
        let path = path.to_str().unwrap();
        let start = Barrier::new(CONNECTIONS);
        let errors: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..CONNECTIONS)
                .map(|c| {
                    let start = &start;
                    s.spawn(move || -> Result<(), StoreError> {
                        let mut run = synthetic((round * CONNECTIONS + c) as u64, 2, 0);
                        run.meta.client_index = c as u32;
                        run.meta.client_count = CONNECTIONS as u32;
                        // Every connection creates, migrates and writes
                        // its first run at the same moment.
                        start.wait();
                        let store = Store::open(path)?;
                        try_record(&store, &run, &[])
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap().err().map(|e| e.to_string()))
                .collect()
        });
        assert!(errors.is_empty(), "round {round}: {errors:#?}");
        let store = Store::open(path).unwrap();
        let runs = store.list(&Filter::default()).unwrap();
        assert_eq!(runs.len(), CONNECTIONS, "round {round}");
        assert!(runs
            .iter()
            .all(|r| r.status == RunStatus::Completed && r.intervals == 2));
    }
}

#[test]
fn a_store_held_by_another_is_waited_for_up_to_its_wait() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let path = path.to_str().unwrap();
    let store = Store::open_waiting(path, Duration::from_millis(300)).unwrap();
    let run = synthetic(1, 1, 0);

    // Another connection holds the write lock: the store waits its wait,
    // then says the store is locked.
    let holder = rusqlite::Connection::open(path).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let asked = Instant::now();
    let e = store.begin_run(&run.meta).unwrap_err();
    let waited = asked.elapsed();
    assert!(e.to_string().contains("locked"), "{e}");
    assert!(waited >= Duration::from_millis(300), "{waited:?}");

    // Once it lets go, the same run is stored.
    holder.execute_batch("COMMIT").unwrap();
    record(&store, &run, &[]);
    assert_eq!(
        store.load(run.meta.id.as_str()).unwrap().summary.status,
        RunStatus::Completed
    );

    // Opening a new store held by another: the same wait, the same error.
    let fresh = dir.path().join("fresh.sqlite");
    let holder = rusqlite::Connection::open(&fresh).unwrap();
    holder
        .execute_batch("BEGIN EXCLUSIVE; CREATE TABLE t (x);")
        .unwrap();
    let e = Store::open_waiting(fresh.to_str().unwrap(), Duration::from_millis(300))
        .err()
        .expect("a store held exclusively does not open");
    assert!(e.to_string().contains("locked"), "{e}");
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    let opened = Store::open_waiting(fresh.to_str().unwrap(), Duration::from_millis(300)).unwrap();
    assert!(opened.list(&Filter::default()).unwrap().is_empty());
}
