//! A sharded crawl's rounds, as the driver sees them: the pump thread that talks to the other
//! processes, this process's pages waiting for their round, applying a round (its own pages
//! decided, the others' replayed) and catching up after a kill. What a message holds is
//! [`crate::shard`].

use super::{Driver, open_store};
use crate::archive::Exchange;
use crate::config::CrawlConfig;
use crate::decide::{EventOrigin, Now, PageResult};
use crate::error::CrawlError;
use crate::layout;
use simcrawl_frontier::Lease;
use simcrawl_store::{Store, Tree};
use std::time::Duration;
use tokio::sync::mpsc;

/// The rounds between the processes of a sharded crawl (see [`crate::shard`]): simcrawl-dist's
/// `Mesh` over timely, or anything else that gives every process every process's message of a
/// round, in process order.
pub trait Rounds: Send + 'static {
    /// Contributes this process's message to the next round.
    fn send(&mut self, message: Vec<u8>) -> Result<(), CrawlError>;
    /// The last round sent, once every process sent its message (`None` after `timeout`).
    fn recv(&mut self, timeout: Duration) -> Result<Option<Vec<Vec<u8>>>, CrawlError>;
    /// Ends the rounds, after the same round on every process.
    fn finish(self: Box<Self>) -> Result<(), CrawlError>;
}

/// A process's messages are sent at most this often: the pages fetched meanwhile go together.
pub(super) const ROUND_GAP: Duration = Duration::from_millis(10);

/// A sharded crawl's pages fetched and analysed, waiting for their round, at most: past this the
/// process fetches no more until a round is applied (a page held is a few tens of KB).
pub(super) const MAX_WAITING_PAGES: usize = 1024;

/// A sharded crawl puts what it applied on disk every this many rounds (about half a second).
const DURABLE_EVERY: u64 = 32;

/// The rounds a sharded crawl's store keeps in its log: enough for a process a flush behind to
/// catch up from any other.
const ROUND_LOG_WINDOW: u64 = 3 * DURABLE_EVERY;

/// Checks, before a sharded crawl connects to the other processes, that `config.store` can be
/// this process's: a new store, or one written as the same share ([`CrawlConfig::frontier`]'s
/// `shard`). A store of another share, or of a crawl of one process, is refused with what to do.
pub fn check_shard_store(config: &CrawlConfig) -> Result<(), CrawlError> {
    config.frontier.validate()?;
    let store = open_store(config)?;
    check_shard(&store, config)?;
    store.flush()?;
    Ok(())
}

/// Records this process's share of a sharded crawl in its store, or refuses a store written as
/// another share (its sites and its replayed pages would not be this share's).
pub(super) fn check_shard(store: &Store, config: &CrawlConfig) -> Result<(), CrawlError> {
    let meta: Tree<String, Vec<u8>> = store.tree(layout::CRAWL_META_TREE)?;
    let key = layout::SHARD_KEY.to_string();
    let want: Vec<u8> = config
        .frontier
        .shard
        .map(|s| [s.index().to_be_bytes(), s.count().to_be_bytes()].concat())
        .unwrap_or_default();
    let describe = |b: &[u8]| match (b.get(..4), b.get(4..8)) {
        (Some(i), Some(n)) => format!(
            "process {} of {}",
            u32::from_be_bytes(i.try_into().unwrap_or_default()),
            u32::from_be_bytes(n.try_into().unwrap_or_default())
        ),
        _ => "a crawl of one process".to_owned(),
    };
    match meta.get(&key)? {
        Some(had) if had != want => Err(CrawlError::Config(format!(
            "the store {} holds {}, and this is {}: give each process its own store, with the same --processes and --process as before",
            config.store.display(),
            describe(&had),
            describe(&want)
        ))),
        Some(_) => Ok(()),
        None => {
            // A store with pages and no share is a crawl of one process.
            let fresh = store.counters().get(layout::counters::FETCHED)? == 0;
            if !fresh && !want.is_empty() {
                return Err(CrawlError::Config(format!(
                    "the store {} holds a crawl of one process: a sharded crawl starts with new stores",
                    config.store.display()
                )));
            }
            meta.insert(&key, &want)?;
            Ok(())
        }
    }
}

/// A sharded crawl's side of the rounds: the pump thread that talks to the other processes, and
/// this process's pages waiting for their round.
pub(super) struct ShardState {
    /// Messages to the pump.
    pub(super) out: Option<std::sync::mpsc::Sender<Vec<u8>>>,
    /// Rounds from the pump.
    pub(super) rounds: mpsc::UnboundedReceiver<Result<Vec<Vec<u8>>, CrawlError>>,
    pub(super) pump: Option<std::thread::JoinHandle<Result<(), CrawlError>>>,
    /// Pages fetched since the last message, with what applying them needs.
    pub(super) held: Vec<Held>,
    /// The pages of the message in the round under way.
    pub(super) sent: Vec<Held>,
    /// Their events, for the next message.
    pub(super) events: Vec<Vec<u8>>,
    /// A round is under way.
    pub(super) waiting: bool,
    pub(super) last_sent: std::time::Instant,
    /// This process asks every process to stop.
    pub(super) stop: bool,
    /// Bytes sent in messages, for the report.
    pub(super) bytes_sent: u64,
    pub(super) rounds_done: u64,
    /// The other processes' events replayed.
    pub(super) replayed: u64,
    /// The number of the next round, counted over the whole crawl (every session).
    pub(super) next_round: u64,
    /// The last round was one in which every process was idle and sent nothing, and this process
    /// then had its young rules' skips checked (`Core::verify_unverified_rules`): another such
    /// round ends the crawl.
    pub(super) end_checked: bool,
}

/// One of this process's fetches, decided when its round comes.
pub(super) struct Held {
    pub(super) lease: Lease,
    pub(super) result: PageResult,
    pub(super) verifying: Option<crate::learn::Rule>,
    pub(super) exchange: Option<Box<Exchange>>,
}

impl ShardState {
    pub(super) fn new(mut rounds: Box<dyn Rounds>) -> ShardState {
        let (out, requests) = std::sync::mpsc::channel::<Vec<u8>>();
        let (replies, inbox) = mpsc::unbounded_channel();
        let pump = std::thread::Builder::new()
            .name("simcrawl-rounds".into())
            .spawn(move || {
                while let Ok(message) = requests.recv() {
                    if let Err(e) = rounds.send(message) {
                        // Said to the driver, which is waiting for this round.
                        let _ = replies.send(Err(e));
                        return Ok(());
                    }
                    loop {
                        match rounds.recv(Duration::from_millis(200)) {
                            Ok(Some(round)) => {
                                if replies.send(Ok(round)).is_err() {
                                    return Ok(());
                                }
                                break;
                            }
                            Ok(None) => {
                                if replies.is_closed() {
                                    return Ok(());
                                }
                            }
                            Err(e) => {
                                let _ = replies.send(Err(e));
                                return Ok(());
                            }
                        }
                    }
                }
                rounds.finish()
            })
            .ok();
        ShardState {
            out: Some(out),
            rounds: inbox,
            pump,
            held: Vec::new(),
            sent: Vec::new(),
            events: Vec::new(),
            waiting: false,
            last_sent: std::time::Instant::now(),
            stop: false,
            bytes_sent: 0,
            rounds_done: 0,
            replayed: 0,
            next_round: 0,
            end_checked: false,
        }
    }

    /// Sends this process's message for the next round.
    pub(super) fn send(&mut self, idle: bool) -> Result<(), CrawlError> {
        let message = crate::shard::Message {
            status: crate::shard::Status {
                idle: idle && self.held.is_empty(),
                stop: self.stop,
            },
            events: std::mem::take(&mut self.events),
        }
        .encode();
        self.bytes_sent += message.len() as u64;
        self.sent = std::mem::take(&mut self.held);
        self.waiting = true;
        self.last_sent = std::time::Instant::now();
        self.out
            .as_ref()
            .ok_or_else(|| CrawlError::Shard("the rounds stopped".into()))?
            .send(message)
            .map_err(|_| CrawlError::Shard("the rounds' thread stopped".into()))
    }

    /// Ends the rounds (every process ends after the same round) and waits for the pump.
    pub(super) fn finish(&mut self) -> Result<(), CrawlError> {
        self.out = None;
        match self.pump.take().map(|p| p.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(CrawlError::Shard("the rounds' thread panicked".into())),
            None => Ok(()),
        }
    }
}

impl Driver {
    /// Applies a round: every process's pages, in process order, this process's own decided as
    /// a one-process crawl decides them, the others' replayed.
    pub(super) fn apply_round(
        &mut self,
        round: Option<Result<Vec<Vec<u8>>, CrawlError>>,
    ) -> Result<RoundEnd, CrawlError> {
        let round = round.unwrap_or_else(|| Err(CrawlError::Shard(BROKEN.into())))?;
        let number = self.shard.as_ref().map_or(0, |s| s.next_round);
        // Logged before it is applied: the store keeps a prefix of its writes, so a process
        // killed while applying it finds it here, and one that never received it gets it from
        // one that did (`catch_up`).
        self.round_log
            .insert(&number, &crate::shard::encode_round(&round))?;
        if let Some(old) = number.checked_sub(ROUND_LOG_WINDOW) {
            self.round_log.remove(&old)?;
        }
        let messages = crate::shard::Message::decode_all(&round, "a message of another process")?;
        let me = self.core.shard_index();
        let Some(shard) = self.shard.as_mut() else {
            return Ok(RoundEnd::Continue);
        };
        shard.waiting = false;
        shard.rounds_done += 1;
        shard.next_round = number + 1;
        let mut mine = Some(std::mem::take(&mut shard.sent));
        for (process, message) in messages.iter().enumerate() {
            if process == me {
                for held in mine.take().unwrap_or_default() {
                    let mut result = held.result;
                    self.core.completed_verifying(
                        held.lease,
                        &mut result,
                        held.verifying,
                        Now::system(),
                    )?;
                    self.after(held.exchange)?;
                }
            } else {
                for event in &message.events {
                    let event = self.core.event(event, EventOrigin::Peer)?;
                    self.core.apply(event, Now::system())?;
                }
                if let Some(shard) = self.shard.as_mut() {
                    shard.replayed += message.events.len() as u64;
                }
            }
        }
        self.note_applied(number)?;
        if number.is_multiple_of(DURABLE_EVERY) {
            self.round_durable()?;
        }
        if crate::shard::Message::any_stop(&messages) {
            return Ok(RoundEnd::Stop);
        }
        if !crate::shard::Message::all_idle(&messages) {
            if let Some(shard) = self.shard.as_mut() {
                shard.end_checked = false;
            }
            return Ok(RoundEnd::Continue);
        }
        // Every process ran dry. As one process does before it ends, each has the young rules'
        // skips it logged fetched as verifications; the crawl ends at the next round in which
        // every process is idle again: every process sees the same rounds, so all end at it.
        if self.shard.as_ref().is_some_and(|s| s.end_checked) {
            return Ok(RoundEnd::Done);
        }
        self.core.verify_unverified_rules()?;
        if let Some(shard) = self.shard.as_mut() {
            shard.end_checked = true;
        }
        Ok(RoundEnd::Continue)
    }

    /// Records round `number` as applied (on disk with the store's next flush, after the round's
    /// own writes: sled keeps a prefix of them).
    fn note_applied(&mut self, number: u64) -> Result<(), CrawlError> {
        self.crawl_meta.insert(
            &layout::ROUND_APPLIED_KEY.to_string(),
            &number.to_be_bytes().to_vec(),
        )?;
        Ok(())
    }

    /// Puts the rounds applied on disk, every [`DURABLE_EVERY`] rounds (every process at the same
    /// rounds) and before its next message: a round completes only when every process has sent,
    /// so when anyone receives round `n`, every process has the rounds up to `n - DURABLE_EVERY - 1`
    /// on disk, and the last [`ROUND_LOG_WINDOW`] rounds received are in every log.
    fn round_durable(&mut self) -> Result<(), CrawlError> {
        self.save_decisions()?;
        self.store.flush()?;
        Ok(())
    }

    /// Writes what the core holds in memory to the store: the frontier's queues and the rules'
    /// counts (a rule's record is written when it is learned or revoked).
    pub(super) fn save_decisions(&mut self) -> Result<(), CrawlError> {
        self.core.checkpoint()?;
        Ok(())
    }

    /// The first round of a session: every process says which round it applied last, and one that
    /// is a round behind (killed before it applied it) applies it now, from the log of one that
    /// received it. Every process then counts the rounds from the same number.
    pub(super) async fn catch_up(&mut self) -> Result<(), CrawlError> {
        let applied = self
            .crawl_meta
            .get(&layout::ROUND_APPLIED_KEY.to_string())?
            .and_then(|b| Some(u64::from_be_bytes(b.get(..8)?.try_into().ok()?)));
        let mut logged = Vec::new();
        for item in self.round_log.iter() {
            let (number, bytes) = item?;
            let messages = crate::shard::decode_round(&bytes)
                .map_err(|e| CrawlError::Shard(format!("the store's round log: {e}")))?;
            logged.push((number, messages));
        }
        let config = crate::shard::config_digest(&self.core.config);
        let hello = crate::shard::Hello {
            config,
            applied,
            logged,
        }
        .encode();
        let Some(shard) = self.shard.as_mut() else {
            return Ok(());
        };
        let out = shard
            .out
            .as_ref()
            .ok_or_else(|| CrawlError::Shard(BROKEN.into()))?;
        out.send(hello)
            .map_err(|_| CrawlError::Shard(BROKEN.into()))?;
        shard.waiting = true;
        let round = next_round(&mut self.shard)
            .await
            .unwrap_or_else(|| Err(CrawlError::Shard(BROKEN.into())))?;
        let hellos = round
            .iter()
            .map(|h| crate::shard::Hello::decode(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CrawlError::Shard(format!("another process's hello: {e}")))?;
        let differ: Vec<String> = hellos
            .iter()
            .enumerate()
            .filter(|(_, h)| h.config != config)
            .map(|(i, _)| i.to_string())
            .collect();
        if !differ.is_empty() {
            return Err(CrawlError::Shard(format!(
                "process {} run(s) with other seeds or flags than this one: every process of a crawl needs the same seeds and the same flags, all but --store and --process (a resumed crawl: all with its seeds, or all without)",
                differ.join(", ")
            )));
        }
        // Every process received the same rounds: any log that has a round has all of it.
        let mut rounds: std::collections::BTreeMap<u64, &Vec<Vec<u8>>> = Default::default();
        for hello in &hellos {
            for (number, messages) in &hello.logged {
                rounds.entry(*number).or_insert(messages);
            }
        }
        let me = self.core.shard_index();
        let mut next = applied.map_or(0, |a| a + 1);
        let last = rounds.keys().next_back().copied();
        if let Some(last) = last
            && next <= last
        {
            tracing::warn!(
                from = next,
                to = last,
                "this process stopped before it applied the last rounds: applying them now"
            );
            for number in next..=last {
                let Some(messages) = rounds.get(&number) else {
                    return Err(CrawlError::Shard(format!(
                        "round {number} is in no process's log: the stores are from different crawls, or a store was restored from an older copy; start the crawl again with new stores"
                    )));
                };
                let messages = crate::shard::Message::decode_all(messages, "a logged round")?;
                for (process, message) in messages.iter().enumerate() {
                    for event in &message.events {
                        let origin = if process == me {
                            EventOrigin::Own
                        } else {
                            EventOrigin::Peer
                        };
                        let event = self.core.event(event, origin)?;
                        self.core.apply(event, Now::system())?;
                        if origin == EventOrigin::Own {
                            self.after(None)?;
                        }
                    }
                }
                self.note_applied(number)?;
            }
            self.round_durable()?;
            next = last + 1;
        }
        if let Some(shard) = self.shard.as_mut() {
            shard.waiting = false;
            shard.next_round = next;
        }
        Ok(())
    }
}

/// What a sharded crawl does after a round.
pub(super) enum RoundEnd {
    Continue,
    /// Every process was idle and nothing was sent: the crawl is over.
    Done,
    /// A process asked every process to stop.
    Stop,
}

const BROKEN: &str = "the rounds between the processes stopped: another process stopped or the network failed; every process stops when one does, so start them all again with the same commands to resume";

/// The next round of a sharded crawl (never, for a crawl of one process).
pub(super) async fn next_round(
    shard: &mut Option<ShardState>,
) -> Option<Result<Vec<Vec<u8>>, CrawlError>> {
    match shard {
        Some(s) if s.waiting => s.rounds.recv().await,
        _ => std::future::pending().await,
    }
}
