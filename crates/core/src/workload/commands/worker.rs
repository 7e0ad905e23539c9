//! What each connection does: goes through the templates in order, each
//! `ratio` times, filling in keys and data per operation.

use super::config::{CommandsConfig, DataSize};
use super::connection::CommandConnection;
use super::keys::KeyGen;
use super::template::{Args, Piece};
use crate::executor::{Meter, Step};
use crate::generator::{below, rng_for, Rng};
use crate::op::OpKind;
use std::sync::Arc;

/// What every connection shares.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) cfg: CommandsConfig,
    pub(super) kinds: Vec<OpKind>,
    /// `data.max()` bytes of `x`, as memtier and redis-benchmark fill a
    /// value; a `__data__` is a prefix of it.
    pub(super) data: Vec<u8>,
    /// Zipfian generators are built once (their constants cost a pass
    /// over the range) and cloned per connection.
    pub(super) keys: Vec<Option<KeyGen>>,
    pub(super) seed: u64,
    pub(super) clients: u64,
}

/// One connection's steps.
pub struct CommandsWorker {
    shared: Arc<Shared>,
    rng: Rng,
    keys: Vec<KeyGen>,
    /// The template now, and how many of its operations are done in this
    /// round of the cycle.
    at: usize,
    done: u32,
    args: Args,
}

impl Shared {
    pub(super) fn worker(self: &Arc<Self>, index: usize) -> CommandsWorker {
        let client = self.cfg.client_offset + index as u64;
        let keys = self
            .cfg
            .entries
            .iter()
            .zip(&self.keys)
            .map(|(e, built)| match built {
                Some(g) => g.clone(),
                None => KeyGen::new(e.pattern, &self.cfg.space, client, self.clients),
            })
            .collect();
        CommandsWorker {
            shared: self.clone(),
            rng: rng_for(self.seed, if self.cfg.distinct_seeds { client } else { 0 }),
            keys,
            at: 0,
            done: 0,
            args: Args::default(),
        }
    }
}

impl CommandsWorker {
    /// The next template in the cycle.
    fn next_entry(&mut self) -> usize {
        let entries = &self.shared.cfg.entries;
        if self.done >= entries[self.at].ratio {
            self.done = 0;
            self.at = (self.at + 1) % entries.len();
        }
        self.done += 1;
        self.at
    }

    /// The words of template `i`, placeholders drawn, into `self.args`.
    fn render(&mut self, i: usize) {
        let shared = &*self.shared;
        let cfg = &shared.cfg;
        self.args.clear();
        let mut key = cfg.space.min;
        for word in &cfg.entries[i].template.words {
            for piece in word {
                let buf = self.args.buf();
                match piece {
                    Piece::Lit(b) => buf.extend_from_slice(b),
                    Piece::Key => {
                        key = self.keys[i].next(&mut self.rng);
                        buf.extend_from_slice(cfg.prefix.as_bytes());
                        buf.extend_from_slice(itoa::Buffer::new().format(key).as_bytes());
                    }
                    Piece::Data => {
                        let n = match cfg.data {
                            DataSize::Fixed(n) => n,
                            DataSize::Range {
                                min,
                                max,
                                by_key: false,
                            } => min + below(&mut self.rng, (max - min + 1) as u64) as usize,
                            DataSize::Range {
                                min,
                                max,
                                by_key: true,
                            } => {
                                let span = (cfg.space.max - cfg.space.min).max(1) as f64;
                                let a = (key - cfg.space.min) as f64 / span;
                                min + ((max - min) as f64 * a) as usize
                            }
                        };
                        buf.extend_from_slice(&shared.data[..n]);
                    }
                    Piece::RandInt if cfg.random_range == 0 => {
                        buf.extend_from_slice(b"__rand_int__")
                    }
                    Piece::RandInt => {
                        let r = below(&mut self.rng, cfg.random_range);
                        let mut digits = itoa::Buffer::new();
                        let digits = digits.format(r).as_bytes();
                        buf.extend(std::iter::repeat_n(
                            b'0',
                            12usize.saturating_sub(digits.len()),
                        ));
                        buf.extend_from_slice(digits);
                    }
                    Piece::Expiry => {
                        let (lo, hi) = cfg.expiry;
                        let e = lo + below(&mut self.rng, hi - lo + 1);
                        buf.extend_from_slice(itoa::Buffer::new().format(e).as_bytes());
                    }
                }
            }
            self.args.end_word();
        }
    }

    /// The words the next operation sends.
    #[cfg(test)]
    pub(super) fn next_args(&mut self) -> (&str, &Args) {
        let i = self.next_entry();
        self.render(i);
        (&self.shared.cfg.entries[i].name, &self.args)
    }
}

impl<C: CommandConnection> Step<C> for CommandsWorker {
    async fn step(&mut self, conn: &mut C, m: &mut Meter) {
        let i = self.next_entry();
        self.render(i);
        let kind = self.shared.kinds[i];
        let t = m.start();
        let status = conn.command(&self.args).await;
        m.record_on(conn, kind, status, t);
    }
}
