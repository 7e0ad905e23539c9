//! Where sojourn keeps things on this machine: the data directory, the
//! embedded default database in it, the default results store, and the
//! spool folders that keep runs a store cannot take in time; and opening a
//! results store for the commands that write runs (bringing in the runs
//! spooled for it) and for those that only read them.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sojourn_core::redact::redact_url;
use sojourn_store::Store;

/// The data directory and what lives in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Places {
    pub data_dir: PathBuf,
}

impl Places {
    /// `--data-dir`, else `$SOJOURN_DATA_DIR`, else the user's data
    /// directory, else `.sojourn` here.
    pub fn new(data_dir: Option<PathBuf>) -> Places {
        let data_dir = data_dir
            .or_else(|| std::env::var_os("SOJOURN_DATA_DIR").map(PathBuf::from))
            .or_else(|| dirs::data_dir().map(|d| d.join("sojourn")))
            .unwrap_or_else(|| PathBuf::from(".sojourn"));
        Places { data_dir }
    }

    /// The embedded SQLite database `sqlite` (without a path) names.
    pub fn default_sqlite(&self) -> PathBuf {
        self.data_dir.join("sojourn.sqlite")
    }

    /// The results store when `--results` names none.
    pub fn default_store(&self) -> String {
        self.data_dir
            .join("results.sqlite")
            .to_string_lossy()
            .into_owned()
    }

    /// `--results` if given, else the default store.
    pub fn store_location(&self, results: Option<&str>) -> String {
        results.map_or_else(|| self.default_store(), str::to_string)
    }

    /// The folders where runs for the store at `location` are spooled when
    /// it cannot take them, in the order tried: beside a file store
    /// (`results.sqlite.spool`), then in the data directory
    /// (`spool/<the store's location as a name>`), which is the only one
    /// for a PostgreSQL store.
    pub fn spool_dirs(&self, location: &str) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        if !location.contains("://") {
            let path = location.strip_prefix("sqlite:").unwrap_or(location);
            dirs.push(PathBuf::from(format!("{path}.spool")));
        }
        let own = self.data_dir.join("spool").join(spool_name(location));
        if !dirs.contains(&own) {
            dirs.push(own);
        }
        dirs
    }
}

/// A folder name for a store's spool in the data directory: its location,
/// password removed, in characters any file system takes, and a hash of it
/// so that locations alike after that stay apart.
fn spool_name(location: &str) -> String {
    let shown = redact_url(location);
    let mut name: String = shown
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Leaves room for the hash within any file system's name limit.
    if name.len() > 100 {
        name = name.split_off(name.len() - 100);
    }
    // FNV-1a: stable across builds, unlike std's hasher.
    let hash = shown.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}-{hash:016x}", name.trim_start_matches(['_', '.']))
}

/// Where a command's runs go: the results store, and the spool folders
/// that keep a run it cannot take in time (see [`Places::spool_dirs`]).
pub struct RunStore {
    /// `None`: the default store could not be opened; runs are spooled.
    store: Option<Store>,
    /// The store's location, password-free.
    location: String,
    spool_dirs: Vec<PathBuf>,
}

impl RunStore {
    /// An open store whose runs spool into `spool_dirs` when it cannot
    /// take them.
    pub fn new(store: Store, spool_dirs: Vec<PathBuf>) -> RunStore {
        RunStore {
            location: store.location().to_string(),
            store: Some(store),
            spool_dirs,
        }
    }

    /// The store, if it opened.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// The store's location, password-free.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Where runs go when the store cannot take them, in the order tried.
    pub fn spool_dirs(&self) -> &[PathBuf] {
        &self.spool_dirs
    }
}

/// Open the store at `location` for writing runs (creating and migrating
/// it as needed), then import the runs spooled for it.
pub fn open_store(places: &Places, location: &str) -> Result<RunStore> {
    let store = Store::open(location)?;
    let dirs = places.spool_dirs(location);
    import_spooled(&store, &dirs);
    Ok(RunStore::new(store, dirs))
}

/// Bring the runs spooled in `dirs` into `store`, saying so on stderr; a
/// spool file that cannot be imported stays for the next try.
fn import_spooled(store: &Store, dirs: &[PathBuf]) {
    for dir in dirs {
        let done = store.import_spool(dir);
        let runs: usize = done.imported.iter().map(|(_, r)| r.len()).sum();
        if runs > 0 {
            eprintln!(
                "imported {runs} spooled run{} from {} into {}",
                if runs == 1 { "" } else { "s" },
                dir.display(),
                store.location()
            );
        }
        for (file, e) in done.failed {
            eprintln!(
                "warning: the spooled runs in {} were not imported: {e}; they stay there \
                 (`sojourn results import {}` tries again)",
                file.display(),
                file.display()
            );
        }
    }
}

/// Where a command records its runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreChoice {
    /// `--no-store`.
    Nowhere,
    /// The default store in the data directory: failing to open it costs a
    /// warning, so a read-only home directory does not stop a benchmark.
    Default,
    /// `--results PATH|URL`: it must open.
    Named(String),
}

impl StoreChoice {
    pub fn from_flags(results: Option<&str>, no_store: bool) -> StoreChoice {
        match (results, no_store) {
            (_, true) => StoreChoice::Nowhere,
            (Some(r), false) => StoreChoice::Named(r.to_string()),
            (None, false) => StoreChoice::Default,
        }
    }

    /// Where to record runs, or `None` (--no-store). A default store that
    /// cannot be opened is said on stderr, and its runs are spooled.
    pub fn open(&self, places: &Places) -> Result<Option<RunStore>> {
        match self {
            StoreChoice::Nowhere => Ok(None),
            StoreChoice::Named(location) => open_store(places, location)
                .map(Some)
                .context("opening --results"),
            StoreChoice::Default => {
                let location = places.default_store();
                match open_store(places, &location) {
                    Ok(s) => Ok(Some(s)),
                    Err(e) => {
                        eprintln!(
                            "warning: {e:#}; runs are kept in a spool file until it can take them \
                             (--results PATH to choose another store)"
                        );
                        Ok(Some(RunStore {
                            store: None,
                            spool_dirs: places.spool_dirs(&location),
                            location,
                        }))
                    }
                }
            }
        }
    }
}

/// An existing store, for the commands that show stored runs (`results
/// list`, `show`, `export`): never creates an empty one, and marks runs of
/// dead processes failed as it opens. `results` is `--results`, if given.
///
/// Reading never depends on writing: a store that cannot be written (a
/// full disk, a read-only mount, a lock held too long) is shown as it is,
/// with a warning that says why nothing was updated.
pub fn open_existing(places: &Places, results: Option<&str>) -> Result<Store> {
    let location = existing(places, results)?;
    let (store, write_error) =
        Store::open_to_show(&location, sojourn_store::WAIT).with_context(|| context(results))?;
    match write_error {
        None => import_spooled(&store, &places.spool_dirs(&location)),
        Some(e) => eprintln!(
            "warning: {e}; showing the store as it is (runs of ended processes are not \
             marked failed, spooled runs are not imported)"
        ),
    }
    Ok(store)
}

/// An existing store opened so that nothing can be written (`results
/// query`, `report`, `compare`); a missing file is the store's own error.
pub fn open_for_reading(places: &Places, results: Option<&str>) -> Result<Store> {
    let location = places.store_location(results);
    Store::open_read_only(&location).with_context(|| context(results))
}

fn context(results: Option<&str>) -> String {
    if results.is_none() {
        "opening the default results store (--results PATH to name another)".to_string()
    } else {
        "opening --results".to_string()
    }
}

/// The store's location, once a file store is known to exist.
fn existing(places: &Places, results: Option<&str>) -> Result<String> {
    let location = places.store_location(results);
    if !location.contains("://") {
        let path = location.strip_prefix("sqlite:").unwrap_or(&location);
        if !Path::new(path).exists() {
            bail!(
                "no results store at {path} yet: load, run and bench record their runs there \
                 (or name another store with --results PATH|URL)"
            );
        }
    }
    Ok(location)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_database_and_store_live_in_the_data_directory() {
        let p = Places::new(Some(PathBuf::from("/d")));
        assert_eq!(p.default_sqlite(), PathBuf::from("/d/sojourn.sqlite"));
        assert_eq!(p.default_store(), "/d/results.sqlite");
        assert_eq!(p.store_location(Some("x.sqlite")), "x.sqlite");
        assert_eq!(
            StoreChoice::from_flags(Some("r"), false),
            StoreChoice::Named("r".into())
        );
        assert_eq!(StoreChoice::from_flags(None, true), StoreChoice::Nowhere);
    }

    #[test]
    fn runs_spool_beside_a_file_store_then_in_the_data_directory() {
        let p = Places::new(Some(PathBuf::from("/d")));
        let dirs = p.spool_dirs("/d/results.sqlite");
        assert_eq!(dirs[0], PathBuf::from("/d/results.sqlite.spool"));
        assert!(dirs[1].starts_with("/d/spool"), "{dirs:?}");
        assert_eq!(
            p.spool_dirs("sqlite:/x/r.sqlite")[0],
            PathBuf::from("/x/r.sqlite.spool")
        );
        // A PostgreSQL store spools only in the data directory, under a
        // name without its password that tells stores apart.
        let pg = p.spool_dirs("postgres://bench:hunter2@db.example:5432/results");
        assert_eq!(pg.len(), 1);
        let name = pg[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(pg[0].starts_with("/d/spool"));
        assert!(!name.contains("hunter2"), "{name}");
        assert!(name.contains("db.example_5432_results"), "{name}");
        let other = p.spool_dirs("postgres://bench@db.example:5432/results2");
        assert_ne!(other, pg);
        // The same store, however its password is given, spools in one place.
        assert_eq!(
            p.spool_dirs("postgres://bench:other@db.example:5432/results"),
            pg
        );
    }

    #[test]
    fn reading_a_store_that_is_not_there_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let p = Places::new(Some(dir.path().to_path_buf()));
        let Err(e) = open_existing(&p, None) else {
            panic!("a store that is not there opened")
        };
        let e = e.to_string();
        assert!(e.contains("no results store at"), "{e}");
        assert!(!dir.path().join("results.sqlite").exists());
    }
}
