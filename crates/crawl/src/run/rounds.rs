//! A sharded crawl's rounds, as the driver sees them: the pump thread that talks to the other
//! processes, this process's pages waiting for their verdict, applying a round (the probes of
//! the pieces this process owns looked up in its share of the directory, the lookups answered,
//! this process's pages decided once every earlier page they may copy is) and catching up after
//! a kill. The protocol is [`crate::partition`]'s; a message is a
//! [`crate::shard::Message`] of [`PartEvent`]s.

use super::{Driver, open_store};
use crate::archive::Exchange;
use crate::config::CrawlConfig;
use crate::decide::{Now, PageResult};
use crate::error::CrawlError;
use crate::layout;
use crate::partition::{Directory, PartEvent, Place, Query, Remote};
use simcrawl_frontier::Lease;
use simcrawl_store::{Store, Tree};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::mpsc;

/// The rounds between the processes of a sharded crawl (see [`crate::partition`]):
/// simcrawl-dist's `Mesh` over timely, or anything else that gives every process the messages
/// addressed to it in a round, in process order.
pub trait Rounds: Send + 'static {
    /// Contributes this process's messages to the next round, one per process (its own
    /// included), in process order.
    fn send(&mut self, messages: Vec<Vec<u8>>) -> Result<(), CrawlError>;
    /// The messages addressed to this process in the last round sent, once every process sent
    /// its own, in process order (`None` after `timeout`).
    fn recv(&mut self, timeout: Duration) -> Result<Option<Vec<Vec<u8>>>, CrawlError>;
    /// Ends the rounds, after the same round on every process.
    fn finish(self: Box<Self>) -> Result<(), CrawlError>;
}

/// A process's messages are sent at most this often: the pages fetched meanwhile go together.
pub(super) const ROUND_GAP: Duration = Duration::from_millis(10);

/// A sharded crawl's pages fetched and analysed, waiting for their verdict, at most: past this
/// the process fetches no more until a round is applied (a page held is a few tens of KB).
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
    // A store written before is read without writing: opened to write and closed, a store a
    // kill left would no longer say so to the crawl that resumes it (its crash-suspect pages,
    // its `--out` repair).
    if let Ok(store) = Store::open_read_only(&config.store) {
        let meta: Tree<String, Vec<u8>> = store.tree(layout::CRAWL_META_TREE)?;
        if meta.get(&layout::SHARD_KEY.to_string())?.is_some() {
            return check_shard(&store, config);
        }
    }
    let store = open_store(config)?;
    check_shard(&store, config)?;
    store.flush()?;
    Ok(())
}

/// Records this process's share of a sharded crawl in its store, or refuses a store written as
/// another share (its sites and its pages would not be this share's).
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

/// A sharded crawl's side of the rounds: the pump thread that talks to the other processes,
/// this process's pages waiting for their verdict, and its share of the directory.
pub(super) struct ShardState {
    /// Messages to the pump, one per process.
    pub(super) out: Option<std::sync::mpsc::Sender<Vec<Vec<u8>>>>,
    /// Rounds from the pump.
    pub(super) rounds: mpsc::UnboundedReceiver<Result<Vec<Vec<u8>>, CrawlError>>,
    pub(super) pump: Option<std::thread::JoinHandle<Result<(), CrawlError>>>,
    /// Pages fetched since the last message, with their queries.
    pub(super) held: Vec<(Held, Query)>,
    /// The pages probed in the round under way, in order, with their queries.
    pub(super) sent: Vec<(Held, Query)>,
    /// This process's pages probed and not yet decided, by place.
    pub(super) undecided: BTreeMap<Place, Undecided>,
    /// This process's pages decided in the last rounds: a page that waits for one of them may
    /// say so after its verdict (see [`RECENT_ROUNDS`]).
    recent: BTreeMap<Place, Recent>,
    /// This process's share of the crawl's directory.
    pub(super) directory: Directory,
    /// The crawl's near-duplicate distance.
    k: u32,
    /// Events for the next message, by addressee (those to everyone under each).
    pub(super) outgoing: Vec<Vec<Vec<u8>>>,
    /// A round is under way.
    pub(super) waiting: bool,
    pub(super) last_sent: std::time::Instant,
    /// This process asks every process to stop.
    pub(super) stop: bool,
    /// Bytes sent in messages to the other processes, for the report.
    pub(super) bytes_sent: u64,
    pub(super) rounds_done: u64,
    /// This process's pages probed.
    pub(super) queried: u64,
    /// Probes looked up in this process's share of the directory.
    pub(super) answered: u64,
    /// The number of the next round, counted over the whole crawl (every session).
    pub(super) next_round: u64,
    /// The next message puts what was applied on disk first (see [`DURABLE_EVERY`]).
    pub(super) durable_due: bool,
    /// The last round was one in which every process was idle and sent nothing, and this process
    /// then had its young rules' skips checked (`Core::verify_unverified_rules`): another such
    /// round ends the crawl.
    pub(super) end_checked: bool,
    /// The frontier had nothing to hand out and nothing was in flight when the last message
    /// went: pages that wait for a mirror wait no longer once nothing else is undecided either.
    fetches_done: bool,
    /// The round since which nothing here but pages waiting for a mirror is undecided or
    /// fetched ([`QUIET_ROUNDS`]).
    quiet_since: Option<u64>,
    /// Bytes of events queued for the others, by kind.
    bytes_by_kind: BTreeMap<&'static str, u64>,
    /// This process's index.
    me: usize,
}

/// One of this process's fetches, decided when the earlier pages it may copy are.
pub(super) struct Held {
    pub(super) lease: Lease,
    pub(super) result: PageResult,
    pub(super) verifying: Option<crate::learn::Rule>,
    pub(super) exchange: Option<Box<Exchange>>,
    /// It waited for a mirror once ([`Undecided::waits`]) and is probed again: it does not
    /// wait again.
    pub(super) waited: bool,
}

/// A page of this process probed: what its decision waits for.
pub(super) struct Undecided {
    held: Held,
    /// What it was probed with: the owners of its pieces hear its verdict.
    query: Query,
    /// The earlier pages, anywhere, not yet decided, that it may copy.
    pending: BTreeSet<Place>,
    /// The earlier pages it waited for that are decided (a verdict can come before the notice
    /// that a page waits for it, from another owner).
    settled: BTreeSet<Place>,
    /// The later pages, anywhere, that wait for its verdict.
    waiters: BTreeSet<Place>,
    /// The round whose application brings the records the lookups asked for: its probes are
    /// looked up in the round they are sent in, and the lookups answered in the next.
    answers_in: u64,
    /// The other processes' pages it may copy.
    remote: Remote,
    /// The mirror it waits for, and the round it began waiting in (see [`mirror_wait_rounds`]).
    waits: Option<(crate::learn::Rule, u64)>,
}

/// A page decided here: what a page that says it waits for it, after its verdict, is told.
struct Recent {
    round: u64,
    indexed: Option<u32>,
    keys: Vec<u128>,
}

/// The rounds a verdict is kept for pages that wait for it and have not said so yet: a probe
/// looked up in the round the page is decided in says so in the next.
const RECENT_ROUNDS: u64 = 3;

/// At least this many rounds' time (about a second and a half at [`ROUND_GAP`]) one process's
/// page may wait for a mirror its host's next pages are learning, under which it would be a copy
/// ([`crate::decide::Core::awaits_mirror`]); then, or when the mirror is learned or dropped, it
/// is decided. A sharded crawl's pages wait longer ([`SHARDED_MIRROR_WAIT_ROUNDS`]).
pub(super) const MIRROR_WAIT_ROUNDS: u64 = 150;

/// At least this many rounds (about ten seconds at [`ROUND_GAP`]) a sharded crawl's page waits
/// for a mirror: its host's pages are decided rounds after their fetches, so the mirror's agreeing
/// pages come slower than with one process (five seconds from a qtnetwork copy's first waiting
/// page to its mirror on the real-page slice, where 150 rounds let three class pages go first and
/// be indexed beside their originals). A page waits no longer once nothing else here is undecided
/// and nothing is fetched ([`Undecided::still_waits`]), as one process releases its waits.
pub(super) const SHARDED_MIRROR_WAIT_ROUNDS: u64 = 1_000;

/// Rounds (about half a second at [`ROUND_GAP`]) in which nothing here but pages waiting for a
/// mirror is undecided or fetched, after which they wait no longer: the verdicts that teach a
/// mirror may come a few rounds after the last page is decided (a copy's evidence from the other
/// processes' answers), and three qtnetwork class pages released at once were indexed a tenth of
/// a second before their mirror.
const QUIET_ROUNDS: u64 = 50;

/// Requests to one host a page may wait for a mirror its host's next pages learn: the mirror
/// needs a few more of them to agree.
pub(super) const MIRROR_WAIT_REQUESTS: u32 = 8;

/// How many rounds a page may wait for a mirror: [`SHARDED_MIRROR_WAIT_ROUNDS`], or the time
/// [`MIRROR_WAIT_REQUESTS`] requests to its host take at the crawl's delay when that is longer
/// (eight seconds at `--delay 1`).
fn mirror_wait_rounds(delay: Duration) -> u64 {
    let polite = delay
        .checked_mul(MIRROR_WAIT_REQUESTS)
        .map_or(u128::MAX, |wait| wait.as_millis())
        / ROUND_GAP.as_millis().max(1);
    SHARDED_MIRROR_WAIT_ROUNDS.max(u64::try_from(polite).unwrap_or(u64::MAX))
}

impl Undecided {
    /// Whether it still waits for its mirror in round `number`: the mirror is neither in force
    /// nor dropped (a page against it), it has not waited [`mirror_wait_rounds`] yet, and
    /// something fetched could still teach the mirror (not `quiet`: this process has fetches to
    /// make or pages to decide besides those that wait, as one process releases its waits when
    /// nothing is in flight).
    fn still_waits(&self, core: &crate::decide::Core, number: u64, quiet: bool) -> bool {
        let Some((rule, since)) = &self.waits else {
            return false;
        };
        if quiet {
            return false;
        }
        let evidence = core.book.learner_ref().evidence(rule);
        number < since.saturating_add(mirror_wait_rounds(core.config.frontier.delay))
            && evidence.disagree == 0
            && !core.book.learner_ref().is_active(rule)
    }
}

impl ShardState {
    pub(super) fn new(
        mut rounds: Box<dyn Rounds>,
        processes: usize,
        me: u32,
        k: u32,
    ) -> ShardState {
        let (out, requests) = std::sync::mpsc::channel::<Vec<Vec<u8>>>();
        let (replies, inbox) = mpsc::unbounded_channel();
        let pump = std::thread::Builder::new()
            .name("simcrawl-rounds".into())
            .spawn(move || {
                while let Ok(messages) = requests.recv() {
                    if let Err(e) = rounds.send(messages) {
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
            undecided: BTreeMap::new(),
            recent: BTreeMap::new(),
            directory: Directory::new(k, me, processes as u32),
            k,
            me: me as usize,
            outgoing: vec![Vec::new(); processes],
            waiting: false,
            last_sent: std::time::Instant::now(),
            stop: false,
            bytes_sent: 0,
            rounds_done: 0,
            queried: 0,
            answered: 0,
            next_round: 0,
            durable_due: false,
            end_checked: false,
            fetches_done: false,
            quiet_since: None,
            bytes_by_kind: BTreeMap::new(),
        }
    }

    /// Pages fetched here and not yet decided.
    pub(super) fn pages_waiting(&self) -> usize {
        self.held.len() + self.sent.len() + self.undecided.len()
    }

    /// The bytes of the events sent to the others, by kind, largest first.
    pub(super) fn bytes_by_kind(&self) -> Vec<(&'static str, u64)> {
        let mut kinds: Vec<(&'static str, u64)> =
            self.bytes_by_kind.iter().map(|(k, b)| (*k, *b)).collect();
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        kinds
    }

    /// Queues `event` for the next message to process `to`, which may be this one (`me`).
    fn push_to(&mut self, to: usize, me: usize, event: &PartEvent) {
        let bytes = event.encode();
        if to != me {
            *self.bytes_by_kind.entry(event.kind()).or_default() += bytes.len() as u64;
        }
        if let Some(out) = self.outgoing.get_mut(to) {
            out.push(bytes);
        }
    }

    /// Queues `event` for the next message: to `to`, or to every process.
    fn push(&mut self, to: Option<usize>, event: &PartEvent) {
        let bytes = event.encode();
        let n = match to {
            Some(to) => usize::from(to != self.me),
            None => self.outgoing.len().saturating_sub(1),
        };
        *self.bytes_by_kind.entry(event.kind()).or_default() += (bytes.len() * n) as u64;
        match to {
            Some(to) => {
                if let Some(out) = self.outgoing.get_mut(to) {
                    out.push(bytes);
                }
            }
            None => {
                for out in &mut self.outgoing {
                    out.push(bytes.clone());
                }
            }
        }
    }

    /// This process's messages for the next round (`idle`: nothing queued or in flight), the
    /// held pages' queries first. Also logs them (see [`Driver::send_round`]).
    fn compose(&mut self, idle: bool, me: usize, leases_waiting: usize) -> Vec<Vec<u8>> {
        let processes = self.outgoing.len() as u32;
        self.sent = std::mem::take(&mut self.held);
        self.queried += self.sent.len() as u64;
        let mut probes = Vec::new();
        for (seq, (_, query)) in self.sent.iter().enumerate() {
            for (owner, probe) in query.route(seq as u32, self.k, processes) {
                probes.push((owner as usize, PartEvent::Probe(probe)));
            }
        }
        for (owner, probe) in probes {
            self.push_to(owner, me, &probe);
        }
        let silent = self.outgoing.iter().all(Vec::is_empty);
        let status = crate::shard::Status {
            idle: idle && silent && self.undecided.is_empty() && leases_waiting == 0,
            stop: self.stop,
        };
        let messages: Vec<Vec<u8>> = self
            .outgoing
            .iter_mut()
            .map(|out| {
                let events = std::mem::take(out);
                crate::shard::Message { status, events }.encode()
            })
            .collect();
        self.bytes_sent += messages
            .iter()
            .enumerate()
            .filter(|(to, _)| *to != me)
            .map(|(_, m)| m.len() as u64)
            .sum::<u64>();
        messages
    }

    /// Ends the rounds (every process ends after the same round) and waits for the pump.
    pub(super) fn finish(&mut self) -> Result<(), CrawlError> {
        tracing::debug!(bytes = ?self.bytes_by_kind, "events sent to the other processes");
        self.out = None;
        match self.pump.take().map(|p| p.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(CrawlError::Shard("the rounds' thread panicked".into())),
            None => Ok(()),
        }
    }
}

impl Driver {
    /// Sends this process's messages for the next round. Every [`DURABLE_EVERY`] rounds, what
    /// was applied goes on disk first, after the messages are in the round log: a page decided
    /// is never on disk without the links it forwards.
    pub(super) fn send_round(&mut self, idle: bool) -> Result<(), CrawlError> {
        let me = self.core.shard_index();
        self.collect_forwarded()?;
        let Some(shard) = self.shard.as_mut() else {
            return Ok(());
        };
        shard.fetches_done = idle;
        let messages = shard.compose(idle, me, self.core.leases_waiting());
        let number = shard.next_round;
        let durable = std::mem::take(&mut shard.durable_due);
        shard.waiting = true;
        shard.last_sent = std::time::Instant::now();
        self.round_log
            .put(&number, &crate::shard::encode_round(&messages))?;
        if let Some(old) = number.checked_sub(ROUND_LOG_WINDOW) {
            self.round_log.remove(&old)?;
        }
        if durable {
            self.save_decisions()?;
            self.store.flush()?;
        }
        let Some(shard) = self.shard.as_ref() else {
            return Ok(());
        };
        shard
            .out
            .as_ref()
            .ok_or_else(|| CrawlError::Shard("the rounds stopped".into()))?
            .send(messages)
            .map_err(|_| CrawlError::Shard("the rounds' thread stopped".into()))
    }

    /// The links of other processes' sites met since the last call, the keys to ask them
    /// about, the new SimHashes of this process's pages and the keys a mirror learned here gave
    /// them, queued for their owners.
    fn collect_forwarded(&mut self) -> Result<(), CrawlError> {
        let forwarded = self.core.take_forwarded();
        let claims = self.core.take_claims();
        let round = self.shard.as_ref().map_or(0, |s| s.next_round);
        let rules = self.core.take_rules(round);
        let moved = self.core.take_moved();
        let rekeyed = self.core.take_rekeyed()?;
        let me = self.core.shard_index();
        if let Some(shard) = self.shard.as_mut() {
            let processes = shard.outgoing.len() as u32;
            for (id, query) in rekeyed {
                for key in &query.keys {
                    let owner = crate::partition::Piece::Key(*key).owner(processes);
                    let event = PartEvent::Indexed {
                        id,
                        query: query.clone(),
                    };
                    shard.push_to(owner as usize, me, &event);
                }
            }
            for (id, old, new) in moved {
                let owners: BTreeSet<u32> = crate::partition::blocks(old, shard.k)
                    .chain(crate::partition::blocks(new, shard.k))
                    .map(|(i, bits)| crate::partition::Piece::Block(i, bits).owner(processes))
                    .collect();
                for owner in owners {
                    shard.push_to(owner as usize, me, &PartEvent::Moved { id, old, new });
                }
            }
            for (rule, active) in rules {
                shard.push(None, &PartEvent::Rule { rule, active });
            }
            for (link, class) in forwarded {
                let to = link.owner as usize;
                shard.push(Some(to), &PartEvent::Link(link, class));
            }
            for (to, key) in claims {
                shard.push(Some(to as usize), &PartEvent::Claim { key });
            }
        }
        Ok(())
    }

    /// A fetch of this process that brought a page to compare: held for the next message, its
    /// probes to the owners of its pieces. Anything else is decided now, and so is a page with the bytes of
    /// a page indexed here ([`Core::copies_a_page_here`]).
    pub(super) fn hold_or_complete(
        &mut self,
        lease: Lease,
        mut result: PageResult,
        now: Now,
    ) -> Result<(), CrawlError> {
        // Fingerprinted without its host's template as it is now: the query finds by them.
        self.core.refresh_fingerprints(&mut result)?;
        if !self.core.copies_a_page_here(&result)?
            && let Some(query) = self.core.query_of(&lease, &result)
            && let Some(shard) = self.shard.as_mut()
        {
            let verifying = self.core.book.take_verifying(lease.key_hash);
            let exchange = result.take_exchange();
            // No request any more: the host's next page and the other hosts' go on while this
            // one waits for its verdict.
            let _ = self.core.frontier.hold(&lease);
            tracing::trace!(url = %lease.url, "held for its verdict");
            shard.held.push((
                Held {
                    lease,
                    result,
                    verifying,
                    exchange,
                    waited: false,
                },
                query,
            ));
            return Ok(());
        }
        // Decided now without its probes: an exact copy of a page here is mostly skipped, but one
        // the evidence keeps apart (two versions' URLs) is indexed, and the directory must list
        // it for the others' later pages, as the verdict of a probed page lists it.
        let query = self.core.query_of(&lease, &result);
        let before = self.core.pages.len();
        let exchange = result.take_exchange();
        self.core.completed(lease, &mut result, now)?;
        if let Some(query) = query
            && self.core.pages.len() > before
            && let Ok(id) = u32::try_from(before)
        {
            let me = self.core.shard_index();
            if let Some(shard) = self.shard.as_mut() {
                let processes = shard.outgoing.len() as u32;
                for owner in query.owners(shard.k, processes) {
                    let event = PartEvent::Indexed {
                        id,
                        query: query.clone(),
                    };
                    shard.push_to(owner as usize, me, &event);
                }
            }
        }
        self.after(exchange)
    }

    /// Applies a round (see [`crate::partition`]): this process's pages of the round placed;
    /// the verdicts and pages the others announce entered in this process's share of the
    /// directory; the records, verdicts and waits for this process's pages taken, and the
    /// lookups of its pages answered; every probe of a piece owned here looked up, in the
    /// crawl's order, and entered; the links forwarded here admitted; and this process's pages
    /// decided once every earlier page they may copy is decided and the records are in.
    pub(super) fn apply_round(
        &mut self,
        round: Option<Result<Vec<Vec<u8>>, CrawlError>>,
    ) -> Result<RoundEnd, CrawlError> {
        let round = round.unwrap_or_else(|| Err(CrawlError::Shard(BROKEN.into())))?;
        let number = self.shard.as_ref().map_or(0, |s| s.next_round);
        let messages = crate::shard::Message::decode_all(&round, "a message of another process")?;
        let me = self.core.shard_index();
        let now = Now::system();
        let Some(shard) = self.shard.as_mut() else {
            return Ok(RoundEnd::Continue);
        };
        shard.waiting = false;
        shard.rounds_done += 1;
        shard.next_round = number + 1;
        let mut events: Vec<(usize, PartEvent)> = Vec::new();
        for (process, message) in messages.iter().enumerate() {
            for bytes in &message.events {
                let event = PartEvent::decode(bytes).map_err(|e| {
                    CrawlError::Shard(format!("an event of process {process}: {e}"))
                })?;
                events.push((process, event));
            }
        }
        // 0. This process's pages probed in this round: placed, to wait for what their probes
        // find.
        for (seq, (held, query)) in std::mem::take(&mut shard.sent).into_iter().enumerate() {
            let place = Place {
                round: number,
                process: me as u32,
                seq: seq as u32,
            };
            shard.undecided.insert(
                place,
                Undecided {
                    held,
                    query,
                    pending: BTreeSet::new(),
                    settled: BTreeSet::new(),
                    waiters: BTreeSet::new(),
                    answers_in: number + 2,
                    remote: Remote::default(),
                    waits: None,
                },
            );
        }
        // 1. The directory: verdicts, pages indexed before a resume, SimHashes made again.
        for (process, event) in &events {
            match event {
                PartEvent::Resolved { place, indexed } => {
                    shard.directory.resolve(*place, *indexed);
                }
                PartEvent::Indexed { id, query } => {
                    shard.directory.announce(*process as u32, *id, query);
                }
                PartEvent::Moved { id, old, new } => {
                    shard.directory.moved(*process as u32, *id, *old, *new);
                }
                _ => {}
            }
        }
        // 2. What this process's pages wait for and receive, and the lookups of its own.
        let mut lookups: BTreeMap<Place, BTreeMap<u32, Vec<u128>>> = BTreeMap::new();
        let mut late: Vec<(Place, Place)> = Vec::new();
        for (_, event) in &mut events {
            match event {
                PartEvent::Answer { to, records } => {
                    if let Some(u) = shard.undecided.get_mut(to) {
                        u.remote.extend(std::mem::take(records));
                    }
                }
                PartEvent::Settled { to, place, records } => {
                    if let Some(u) = shard.undecided.get_mut(to) {
                        u.remote.extend(std::mem::take(records));
                        u.settled.insert(*place);
                        u.pending.remove(place);
                    }
                }
                PartEvent::Wait { waiter, on } => {
                    if on.process as usize == me {
                        match shard.undecided.get_mut(on) {
                            // A page that waits for a mirror withdrew its place: a probe looked
                            // up before the owners heard it is settled as by a verdict.
                            Some(u) if u.waits.is_none() => {
                                u.waiters.insert(*waiter);
                            }
                            _ => late.push((*waiter, *on)),
                        }
                    }
                    if waiter.process as usize == me
                        && let Some(u) = shard.undecided.get_mut(waiter)
                        && !u.settled.contains(on)
                    {
                        u.pending.insert(*on);
                    }
                }
                PartEvent::Lookup { to, id, keys } => {
                    let asked = lookups.entry(*to).or_default().entry(*id).or_default();
                    for key in keys.iter() {
                        if !asked.contains(key) {
                            asked.push(*key);
                        }
                    }
                }
                _ => {}
            }
        }
        // A page that says it waits for a page of this process already decided is told now.
        for (waiter, on) in late {
            let recent = self
                .shard
                .as_ref()
                .and_then(|s| s.recent.get(&on).map(|r| (r.indexed, r.keys.clone())));
            let Some((indexed, keys)) = recent else {
                // Never probed here, or decided long ago: the directory lists it as indexed
                // or not at all, and the waiter's lookups bring its record.
                tracing::debug!(?waiter, ?on, "a wait for a page not known here");
                self.settle(waiter, on, None, me)?;
                continue;
            };
            let record = match indexed {
                Some(id) if waiter.process as usize != me => self.core.record_for(id, keys)?,
                _ => None,
            };
            self.settle(waiter, on, record, me)?;
        }
        for (to, asked) in lookups {
            let records = self.core.lookup_records(&asked)?;
            if let Some(shard) = self.shard.as_mut()
                && !records.is_empty()
            {
                shard.push(
                    Some(to.process as usize),
                    &PartEvent::Answer { to, records },
                );
            }
        }
        // 3. Every probe of a piece owned here, in the crawl's order: looked up, then entered.
        let Some(shard) = self.shard.as_mut() else {
            return Ok(RoundEnd::Continue);
        };
        for (process, event) in &events {
            let PartEvent::Probe(probe) = event else {
                continue;
            };
            let place = Place {
                round: number,
                process: *process as u32,
                seq: probe.seq,
            };
            let found = shard.directory.probe(place, probe);
            shard.answered += 1;
            for on in found.wait {
                let wait = PartEvent::Wait { waiter: place, on };
                shard.push_to(on.process as usize, me, &wait);
                if on.process != place.process {
                    shard.push_to(*process, me, &wait);
                }
            }
            for ((owner, id), keys) in found.indexed {
                // This process's own pages are in its index, which the decision reads.
                if owner != place.process {
                    shard.push_to(
                        owner as usize,
                        me,
                        &PartEvent::Lookup {
                            to: place,
                            id,
                            keys,
                        },
                    );
                }
            }
        }
        // 4. The links of this process's sites that the others met, and the keys they ask
        // about.
        for (process, event) in &events {
            match event {
                PartEvent::Link(link, class) => {
                    self.core.note_referrer_class(link, *class)?;
                    self.core.admit_forwarded(link, now)?;
                }
                PartEvent::Claim { key } => {
                    let seen = self.core.claim(*key, *process as u32)?;
                    if let Some(shard) = self.shard.as_mut() {
                        shard.push(Some(*process), &PartEvent::Claimed { key: *key, seen });
                    }
                }
                PartEvent::Claimed { key, seen } => self.core.claimed(*key, *seen, now)?,
                PartEvent::Rule { rule, active } if *process != me => {
                    self.core
                        .rule_elsewhere(rule, *active, (number, *process as u32))?;
                }
                _ => {}
            }
        }
        self.after(None)?;
        // 5. This process's pages whose records are in and whose earlier pages are decided.
        self.decide_ready(number, me)?;
        self.collect_forwarded()?;
        if let Some(shard) = self.shard.as_mut() {
            shard
                .recent
                .retain(|_, r| r.round + RECENT_ROUNDS >= number);
        }
        self.note_applied(number)?;
        if number.is_multiple_of(DURABLE_EVERY)
            && let Some(shard) = self.shard.as_mut()
        {
            shard.durable_due = true;
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

    /// Tells the owner of the page at `waiter` that the page at `on` is decided, with its
    /// record when it was indexed.
    fn settle(
        &mut self,
        waiter: Place,
        on: Place,
        record: Option<crate::partition::RemoteRecord>,
        me: usize,
    ) -> Result<(), CrawlError> {
        if let Some(shard) = self.shard.as_mut() {
            let settled = PartEvent::Settled {
                to: waiter,
                place: on,
                records: record.into_iter().collect(),
            };
            shard.push_to(waiter.process as usize, me, &settled);
        }
        Ok(())
    }

    /// Tells the owners of the pieces of this process's page at `place` (probed with `query`)
    /// its verdict, and the pages that waited for it too, with its record if it was indexed
    /// (`indexed`, under `keys`). Withdrawn pages are told as not indexed.
    fn announce_verdict(
        &mut self,
        place: Place,
        query: &Query,
        waiters: &BTreeSet<Place>,
        indexed: Option<u32>,
        me: usize,
    ) -> Result<(), CrawlError> {
        let Some(shard) = self.shard.as_mut() else {
            return Ok(());
        };
        let processes = shard.outgoing.len() as u32;
        for owner in query.owners(shard.k, processes) {
            shard.push_to(owner as usize, me, &PartEvent::Resolved { place, indexed });
        }
        shard.recent.insert(
            place,
            Recent {
                round: shard.next_round.saturating_sub(1),
                indexed,
                keys: query.keys.clone(),
            },
        );
        for waiter in waiters {
            let record = match indexed {
                Some(id) if waiter.process as usize != me => {
                    self.core.record_for(id, query.keys.clone())?
                }
                _ => None,
            };
            self.settle(*waiter, place, record, me)?;
        }
        Ok(())
    }

    /// Decides, in the crawl's order, this process's pages that wait for nothing any more;
    /// each verdict goes to the owners of the page's pieces, and to the later pages that
    /// waited for it, with its record if it was indexed.
    fn decide_ready(&mut self, number: u64, me: usize) -> Result<(), CrawlError> {
        // Whether the pages that wait for a mirror wait no longer: the round's state before any
        // of them is probed again (all go at once).
        let leases_waiting = self.core.leases_waiting();
        let quiet = match self.shard.as_mut() {
            Some(shard)
                if shard.fetches_done
                    && leases_waiting == 0
                    && shard.held.is_empty()
                    && shard.sent.is_empty()
                    && shard.undecided.values().all(|u| u.waits.is_some()) =>
            {
                let since = *shard.quiet_since.get_or_insert(number);
                number >= since.saturating_add(QUIET_ROUNDS)
            }
            Some(shard) => {
                shard.quiet_since = None;
                false
            }
            None => false,
        };
        loop {
            let core = &self.core;
            let Some(shard) = self.shard.as_mut() else {
                return Ok(());
            };
            let Some(place) = shard
                .undecided
                .iter()
                .find(|(_, u)| {
                    u.answers_in <= number
                        && u.pending.is_empty()
                        && !u.still_waits(core, number, quiet)
                })
                .map(|(p, _)| *p)
            else {
                return Ok(());
            };
            let Some(mut u) = shard.undecided.remove(&place) else {
                return Ok(());
            };
            // A mirror its host's pages began to teach since its probes names a counterpart it
            // did not ask for: it is probed again, asking for it (its verdict withdrawn from
            // the owners and the pages that waited for it, as when its template changes).
            if u.waits.is_none()
                && let Some(again) = self
                    .core
                    .asks_again(&u.held.lease, &u.held.result, &u.query)
            {
                tracing::debug!(url = %u.held.lease.url, "probed again for a mirror's counterpart");
                let Undecided {
                    held,
                    query,
                    waiters,
                    ..
                } = u;
                self.announce_verdict(place, &query, &waiters, None, me)?;
                if let Some(shard) = self.shard.as_mut() {
                    shard.held.push((held, again));
                }
                continue;
            }
            // Distinct now, a copy under a mirror its host's next pages are learning: it waits
            // for the mirror, without keeping its host's slot, so that those pages are fetched.
            // Its place is withdrawn, as one process's waiting page is in no index: the later
            // pages that waited for its verdict are decided without it (the host's pages that
            // teach the mirror may be among them), and it is probed again when its wait is over,
            // against what is indexed by then.
            if u.waits.is_none()
                && !u.held.waited
                && let Some(rule) = self.core.awaits_mirror(&u.held.result, &mut u.remote)?
            {
                tracing::debug!(url = %u.held.lease.url, "waits for {rule}");
                let _ = self.core.frontier.set_aside(&u.held.lease);
                self.core
                    .offer_links_early(&u.held.lease, &u.held.result, Now::system())?;
                self.announce_verdict(place, &u.query, &u.waiters, None, me)?;
                u.waiters.clear();
                u.waits = Some((rule, number));
                if let Some(shard) = self.shard.as_mut() {
                    shard.undecided.insert(place, u);
                }
                continue;
            }
            if u.waits.is_some()
                && let Some(again) = self.core.query_of(&u.held.lease, &u.held.result)
            {
                tracing::debug!(url = %u.held.lease.url, quiet, "probed again after its mirror wait");
                // No page waits for its withdrawn place (late waits are settled at once), but
                // one that did would wait for ever: settled all the same.
                if !u.waiters.is_empty() {
                    self.announce_verdict(place, &u.query, &u.waiters, None, me)?;
                }
                let mut held = u.held;
                held.waited = true;
                if let Some(shard) = self.shard.as_mut() {
                    shard.held.push((held, again));
                }
                continue;
            }
            let Undecided {
                mut held,
                query,
                waiters,
                remote,
                ..
            } = u;
            // Its host's template changed since its probes: its fingerprints are made again,
            // and it is probed again under a new place (this one is withdrawn as a verdict).
            if self.core.refresh_fingerprints(&mut held.result)?
                && let Some(again) = self.core.query_of(&held.lease, &held.result)
            {
                self.announce_verdict(place, &query, &waiters, None, me)?;
                if let Some(shard) = self.shard.as_mut() {
                    shard.held.push((held, again));
                }
                continue;
            }
            let mut result = held.result;
            tracing::trace!(url = %held.lease.url, ?place, "decided");
            let indexed = self.core.completed_with(
                held.lease,
                &mut result,
                held.verifying,
                remote,
                Now::system(),
            )?;
            self.after(held.exchange)?;
            self.announce_verdict(place, &query, &waiters, indexed, me)?;
        }
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

    /// Writes what the core holds in memory to the store: the frontier's queues and the rules'
    /// counts (a rule's record is written when it is learned or revoked), after the events not
    /// sent yet (see [`Driver::log_unsent`]).
    pub(super) fn save_decisions(&mut self) -> Result<(), CrawlError> {
        self.log_unsent()?;
        self.core.checkpoint()?;
        Ok(())
    }

    /// The frontier's commit, after the events not sent yet are in the round log.
    pub(super) fn commit_core(&mut self) -> Result<(), CrawlError> {
        self.log_unsent()?;
        self.core.commit()
    }

    /// Writes the events queued for the next message into the round log, under its round: a
    /// commit may put a page's completion on disk before that message goes, and the links the
    /// page forwards must be on disk first (sled keeps a prefix of its writes), for the others
    /// to take from the log after a kill.
    fn log_unsent(&mut self) -> Result<(), CrawlError> {
        if self.shard.is_none() {
            return Ok(());
        }
        self.collect_forwarded()?;
        let Some(shard) = self.shard.as_ref() else {
            return Ok(());
        };
        if shard.outgoing.iter().all(Vec::is_empty) {
            return Ok(());
        }
        let messages: Vec<Vec<u8>> = shard
            .outgoing
            .iter()
            .map(|events| {
                crate::shard::Message {
                    status: crate::shard::Status::default(),
                    events: events.clone(),
                }
                .encode()
            })
            .collect();
        // While a round is under way its message is logged under its number: these go in the
        // next.
        let round = shard.next_round + u64::from(shard.waiting);
        self.round_log
            .put(&round, &crate::shard::encode_round(&messages))?;
        Ok(())
    }

    /// The first round of a session: every process says which round it applied last and the
    /// messages it sent in its last rounds. One that is behind (killed before it applied them)
    /// admits the links the others forwarded it in the rounds it lacks; the rest of those rounds
    /// (probes, lookups, waits, verdicts) is of pages not decided then, which are fetched again.
    /// Every process then counts the rounds from the same number, and lists its indexed pages
    /// with the owners of their pieces (the directory is kept in memory).
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
        let parts = crate::shard::config_parts(&self.core.config);
        let hello = crate::shard::Hello {
            config,
            parts: parts.iter().map(|(_, d)| *d).collect(),
            applied,
            logged,
        }
        .encode();
        let Some(shard) = self.shard.as_mut() else {
            return Ok(());
        };
        let processes = shard.outgoing.len();
        let out = shard
            .out
            .as_ref()
            .ok_or_else(|| CrawlError::Shard(BROKEN.into()))?;
        out.send(vec![hello; processes])
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
            .map(|(i, h)| {
                let named = crate::shard::config_differences(&parts, &h.parts);
                if named.is_empty() {
                    format!("process {i} runs another build of simcrawl, or other flags")
                } else {
                    format!("process {i} differs from this one in {}", named.join(", "))
                }
            })
            .collect();
        if !differ.is_empty() {
            return Err(CrawlError::Shard(format!(
                "{}: every process of a crawl needs the same seeds and the same flags, all but --store and --process (a resumed crawl: all with its seeds, or all without)",
                differ.join("; ")
            )));
        }
        let me = self.core.shard_index();
        // The rounds sent since this process's last applied one: the links others sent it.
        let next = applied.map_or(0, |a| a + 1);
        let last = hellos
            .iter()
            .flat_map(|h| h.logged.iter().map(|(n, _)| *n))
            .max();
        if let Some(last) = last
            && next <= last
        {
            tracing::debug!(
                from = next,
                to = last,
                "rounds this process did not apply: the links the others sent it then"
            );
            let now = Now::system();
            for (process, hello) in hellos.iter().enumerate() {
                if process == me {
                    continue;
                }
                for (number, messages) in &hello.logged {
                    if *number < next {
                        continue;
                    }
                    let Some(bytes) = messages.get(me) else {
                        continue;
                    };
                    let message = crate::shard::Message::decode(bytes)
                        .map_err(|e| CrawlError::Shard(format!("a logged round: {e}")))?;
                    for event in &message.events {
                        if let Ok(PartEvent::Link(link, class)) = PartEvent::decode(event) {
                            self.core.note_referrer_class(&link, class)?;
                            self.core.admit_forwarded(&link, now)?;
                        }
                    }
                }
            }
            self.after(None)?;
        }
        // Links held for an answer when the crawl stopped are this process's to fetch, and the
        // mirror rules in force here are announced again (the others forgot them).
        self.core.release_pending_claims(Now::system())?;
        self.core.announce_rules_in_force();
        self.after(None)?;
        let next = last.map_or(next, |l| next.max(l + 1));
        self.note_applied(next.saturating_sub(1))?;
        self.save_decisions()?;
        self.store.flush()?;
        if let Some(shard) = self.shard.as_mut() {
            shard.waiting = false;
            shard.next_round = next;
        }
        // The round log keeps the last rounds before `next` only: an entry a session wrote under
        // a round number of its start (before the rounds were counted on) is not left for ever.
        let stale: Vec<u64> = self
            .round_log
            .iter()
            .filter_map(|item| item.ok().map(|(number, _)| number))
            .filter(|number| *number + ROUND_LOG_WINDOW < next)
            .collect();
        for number in stale {
            self.round_log.remove(&number)?;
        }
        // The directory is kept in memory: this process's indexed pages are listed again with
        // the owners of their pieces, in this session's first message, before any probe of the
        // session is looked up (each process applies a round's announcements before its probes).
        // They go after the state above is on disk: they are made again at every start, and are
        // no link a kill could lose.
        let indexed = self.core.indexed_queries()?;
        if let Some(shard) = self.shard.as_mut() {
            let processes = shard.outgoing.len() as u32;
            for (id, query) in indexed {
                for owner in query.owners(shard.k, processes) {
                    let event = PartEvent::Indexed {
                        id,
                        query: query.clone(),
                    };
                    shard.push_to(owner as usize, me, &event);
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_polite_crawl_waits_for_a_mirror_as_long_as_its_hosts_next_requests_take() {
        assert_eq!(
            mirror_wait_rounds(Duration::ZERO),
            SHARDED_MIRROR_WAIT_ROUNDS
        );
        assert_eq!(
            mirror_wait_rounds(Duration::from_secs(1)),
            SHARDED_MIRROR_WAIT_ROUNDS
        );
        assert_eq!(mirror_wait_rounds(Duration::from_secs(2)), 1_600);
        assert_eq!(
            mirror_wait_rounds(Duration::from_secs(u64::MAX / 2)),
            u64::MAX
        );
    }
}
