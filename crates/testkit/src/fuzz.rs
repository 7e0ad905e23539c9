//! A small, seeded mutation fuzzer for the parsers a user feeds (property
//! files, suite configs, URLs, `--slo`, labels), run on stable Rust as an
//! ordinary test: a bounded number of inputs in the test suite, as many as
//! one likes by hand (`SOJOURN_FUZZ_ITERATIONS=1000000`, and a different
//! `SOJOURN_FUZZ_SEED` each time).
//!
//! Each input is a real one (a shipped workload, a fixture) bent by a few
//! random mutations: bytes flipped, inserted, deleted or repeated, tokens
//! that parsers trip on (separators, escapes, huge and negative numbers,
//! control bytes, YAML anchors) spliced in, pieces of other seeds pasted.
//! The target must neither panic nor allocate more than a bound while it
//! reads one input; [`CountingAlloc`], installed as a test binary's global
//! allocator, measures the second. A failure prints the input (escaped)
//! and the seed and iteration that reproduce it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Inputs never grow past this: a parser's cost must be bounded by its
/// input, and 64 KiB is far more than any real file it reads.
pub const MAX_INPUT: usize = 64 << 10;

/// What one input may allocate at its peak while the target reads it.
pub const MAX_ALLOCATED: usize = 64 << 20;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// The system allocator, counting each thread's live bytes and their peak
/// (a thread's own view: enough to catch a parser that allocates in
/// proportion to a number it read rather than to its input).
pub struct CountingAlloc;

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

fn note(delta: isize) {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

/// Bytes this thread allocated at its peak while `f` ran, over what was
/// live when it began. Zero unless [`CountingAlloc`] is the allocator.
pub fn peak_allocated<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - base).max(0) as usize)
}

/// Tokens that parsers trip on, spliced in at random places.
const TOKENS: &[&str] = &[
    "=",
    ":",
    "\n",
    "\r\n",
    "\\",
    "\\\n",
    "#",
    "!",
    "%",
    "%zz",
    "@",
    "//",
    "?",
    "&",
    ",",
    "|",
    "*",
    "<",
    "<=",
    ">",
    ";",
    "'",
    "\"",
    "{",
    "}",
    "[",
    "]",
    "- ",
    "  ",
    "\t",
    "\0",
    "\x1b[2J",
    "\u{7f}",
    "\u{feff}",
    "é",
    "\u{10ffff}",
    "0",
    "-1",
    "-0",
    "1e400",
    "-1e400",
    "NaN",
    "inf",
    "1e-400",
    "18446744073709551616",
    "9223372036854775808",
    "99999999999999999999",
    "4294967296",
    "0x10",
    "1_000",
    "0.0000001",
    "&a ",
    "*a",
    "<<: *a",
    "!!binary ",
    "---\n",
    "...\n",
    "ms",
    "us",
    "s",
    "%",
    "p99",
    "p100",
    "p0",
    "read.",
    "\\u12",
    "\\u00e9",
    "${x}",
    "postgres://u:p@h:99999/d",
    "redis://:p@[::1]:0",
    "sqlite:",
    "memory:?a=b&c",
    "null:",
];

/// A seeded mutator over a corpus of real inputs.
pub struct Fuzz {
    rng: Xoshiro256PlusPlus,
    seeds: Vec<Vec<u8>>,
    /// The seed of this session, printed with a failure.
    pub seed: u64,
    pub iterations: u64,
}

impl Fuzz {
    /// A fuzzer over `seeds`, `default_iterations` inputs unless
    /// `SOJOURN_FUZZ_ITERATIONS` says otherwise, from `SOJOURN_FUZZ_SEED`
    /// or a fixed seed (so the test suite's run is the same every time).
    pub fn new(seeds: &[&[u8]], default_iterations: u64) -> Fuzz {
        let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
        let seed = env("SOJOURN_FUZZ_SEED").unwrap_or(0x5eed);
        Fuzz {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            seeds: seeds.iter().map(|s| s.to_vec()).collect(),
            seed,
            iterations: env("SOJOURN_FUZZ_ITERATIONS").unwrap_or(default_iterations),
        }
    }

    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    fn seed_input(&mut self) -> Vec<u8> {
        let i = self.below(self.seeds.len());
        self.seeds[i].clone()
    }

    /// One input: a seed with one to eight mutations.
    pub fn input(&mut self) -> Vec<u8> {
        let mut v = self.seed_input();
        for _ in 0..1 + self.below(8) {
            let at = self.below(v.len() + 1);
            match self.below(7) {
                0 if !v.is_empty() => {
                    let i = at.min(v.len() - 1);
                    v[i] ^= 1 << self.below(8);
                }
                1 => {
                    let b = self.rng.next_u64() as u8;
                    v.insert(at, b);
                }
                2 => {
                    let n = self.below(16).min(v.len() - at);
                    v.drain(at..at + n);
                }
                3 => {
                    // Repeat a piece, sometimes many times over.
                    let n = self.below(64).min(v.len() - at);
                    let times = [1, 2, 16, 1000][self.below(4)];
                    let piece = v[at..at + n].to_vec();
                    for _ in 0..times {
                        v.splice(at..at, piece.iter().copied());
                    }
                }
                4 => {
                    let other = self.seed_input();
                    let from = self.below(other.len());
                    let n = self.below(256).min(other.len() - from);
                    v.splice(at..at, other[from..from + n].iter().copied());
                }
                5 => v.truncate(at),
                _ => {
                    let t = TOKENS[self.below(TOKENS.len())];
                    v.splice(at..at, t.bytes());
                }
            }
            v.truncate(MAX_INPUT);
        }
        v
    }

    /// Feed [`Fuzz::iterations`] inputs to `target` (as text, invalid
    /// UTF-8 replaced, as the parsers receive it); panics naming the input
    /// that made it panic or allocate more than [`MAX_ALLOCATED`].
    pub fn run(&mut self, what: &str, mut target: impl FnMut(&str)) {
        for i in 0..self.iterations {
            let bytes = self.input();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let (outcome, peak) =
                peak_allocated(|| catch_unwind(AssertUnwindSafe(|| target(&text))));
            let failure = match outcome {
                Err(_) => Some("panicked".to_string()),
                Ok(()) if peak > MAX_ALLOCATED => Some(format!("allocated {peak} bytes")),
                Ok(()) => None,
            };
            if let Some(why) = failure {
                let shown: String = text
                    .chars()
                    .take(2000)
                    .flat_map(char::escape_debug)
                    .collect();
                panic!(
                    "{what} {why} on input {i} (SOJOURN_FUZZ_SEED={} \
                     SOJOURN_FUZZ_ITERATIONS={}), {} bytes:\n\"{shown}\"",
                    self.seed,
                    i + 1,
                    text.len()
                );
            }
        }
    }
}
