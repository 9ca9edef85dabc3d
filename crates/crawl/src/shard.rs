//! A crawl split over several processes: what one process tells the others, and how it replays
//! what they tell it.
//!
//! Each process fetches the sites it owns ([`simcrawl_frontier::Shard`]: a jump consistent hash of
//! the registrable domain) and keeps its own store. Its verdicts must be those one process would
//! give, and they depend on every page fetched anywhere (a copy on one site of a page on another,
//! a mirror learned from pages on two processes). So the decisions are replicated: in rounds
//! (`simcrawl_dist::Mesh`), every process sends the pages and redirects it fetched, and every
//! process then applies all of a round's, in the same order (process by process, each in the
//! order it sent them), to its [`Core`]. Its own it applies as a one-process crawl does (logged,
//! counted, indexed for search); another process's is an [`Event`] of origin [`EventOrigin::Peer`] ([`Core::apply`]): the page index,
//! the templates, the learner and the rules change exactly as at the page's owner, and the
//! page's links whose sites this process owns enter its frontier, but nothing is logged or counted
//! here. Since every process starts from the same seeds and applies the same events in the same
//! order, every process holds the same page index, rules and seen set, and decides every page
//! the way its owner does.
//!
//! A round's message is a [`Message`]: the events, and the process's [`Status`], from which every
//! process concludes the same round that the crawl is over (every process idle, and the round
//! brought nothing, twice: after the first, each process has its young rules' skips checked, as
//! one process does when it runs dry) or stopping (one was asked to stop).

use crate::decide::fetched::ReplayedLink;
use crate::decide::{Core, EventOrigin, FetchedPage, PageResult};
use crate::error::CrawlError;
use crate::learn::Rule;
use crate::page::PageAnalysis;
use simcrawl_dedup::{Digest128, SimHash, Sketch};
use simcrawl_extract::{Document, Extraction, FallbackReason, MainVia, MetaRobots};
use simcrawl_frontier::{Lease, Shard, ViaKind};
use simcrawl_store::codec::{CodecError, Reader, write_bytes_element, write_element};
use std::sync::Arc;
use url::Url;

/// The version of the events' wire form: every process of a crawl runs the same simcrawl.
const WIRE_VERSION: u8 = 2;

/// What a process says in a round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    /// Where it stands.
    pub status: Status,
    /// Its pages and redirects since the last round, each as [`encode_event`] wrote it.
    pub events: Vec<Vec<u8>>,
}

/// A process's state, as the others need it to agree on when to stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Status {
    /// Nothing queued, nothing in flight, nothing waiting for a round.
    pub idle: bool,
    /// It was asked to stop (Ctrl-C, its page budget): every process stops after this round.
    pub stop: bool,
}

impl Message {
    /// The message's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![WIRE_VERSION, self.status.idle as u8, self.status.stop as u8];
        write_element(&(self.events.len() as u64), &mut out);
        for event in &self.events {
            write_bytes_element(event, &mut out);
        }
        out
    }

    /// A message from its bytes.
    pub fn decode(bytes: &[u8]) -> Result<Message, CodecError> {
        let mut r = Reader::new::<Message>(bytes);
        check_version::<Message>(&mut r)?;
        let status = Status {
            idle: r.element()?,
            stop: r.element()?,
        };
        let count: u64 = r.element()?;
        let mut events = Vec::with_capacity(count.min(1 << 16) as usize);
        for _ in 0..count {
            events.push(r.element::<Vec<u8>>()?);
        }
        r.finish()?;
        Ok(Message { status, events })
    }

    /// A round's messages (`what` names them in the error).
    pub fn decode_all(round: &[Vec<u8>], what: &str) -> Result<Vec<Message>, CrawlError> {
        round
            .iter()
            .map(|m| Message::decode(m))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CrawlError::Shard(format!("{what}: {e}")))
    }

    /// Whether the round's messages end the crawl: every process idle and nothing sent.
    pub fn all_idle(round: &[Message]) -> bool {
        round.iter().all(|m| m.status.idle && m.events.is_empty())
    }

    /// Whether a process asked every process to stop.
    pub fn any_stop(round: &[Message]) -> bool {
        round.iter().any(|m| m.status.stop)
    }
}

/// Reads the wire version a message starts with: another is an error that says what to do.
fn check_version<T>(r: &mut Reader<'_>) -> Result<(), CodecError> {
    let version: u8 = r.element()?;
    if version != WIRE_VERSION {
        return Err(CodecError::invalid::<T>(format!(
            "wire version {version}, this process speaks {WIRE_VERSION}: run the same simcrawl everywhere"
        )));
    }
    Ok(())
}

fn put_str(s: &str, out: &mut Vec<u8>) {
    write_bytes_element(s.as_bytes(), out);
}

fn put_opt(s: Option<&str>, out: &mut Vec<u8>) {
    write_element(&s.is_some(), out);
    if let Some(s) = s {
        put_str(s, out);
    }
}

fn get_opt(r: &mut Reader<'_>) -> Result<Option<String>, CodecError> {
    Ok(if r.element::<bool>()? {
        Some(r.element()?)
    } else {
        None
    })
}

fn get_url(r: &mut Reader<'_>) -> Result<Url, CodecError> {
    let text: String = r.element()?;
    Url::parse(&text).map_err(|e| CodecError::invalid::<Url>(format!("{text}: {e}")))
}

fn put_hops(hops: &[(Url, Url)], out: &mut Vec<u8>) {
    write_element(&(hops.len() as u32), out);
    for (from, to) in hops {
        put_str(from.as_str(), out);
        put_str(to.as_str(), out);
    }
}

fn get_hops(r: &mut Reader<'_>) -> Result<Vec<(Url, Url)>, CodecError> {
    let n: u32 = r.element()?;
    (0..n).map(|_| Ok((get_url(r)?, get_url(r)?))).collect()
}

/// The wire form of a fetch that brought a page or a redirect (`None` for a failure, which
/// changes nothing the others know). `verifying`: the rule the fetch verifies; `refuses`: whether
/// the frontier's trap guards or scope refuse a link ([`simcrawl_frontier::Frontier::refuses_link`]).
pub fn encode_event(
    lease: &Lease,
    result: &PageResult,
    verifying: Option<&Rule>,
    shard: Option<Shard>,
    refuses: &dyn Fn(&simcrawl_url::Candidate) -> bool,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(1024);
    put_str(lease.url.as_str(), &mut out);
    write_element(&lease.depth, &mut out);
    write_element(&lease.key_hash, &mut out);
    put_opt(lease.referrer.as_deref(), &mut out);
    write_element(&lease.via.to_byte(), &mut out);
    write_element(&verifying.is_some(), &mut out);
    if let Some(rule) = verifying {
        write_element(&rule.code(), &mut out);
        for field in rule.kind().fields() {
            put_str(field, &mut out);
        }
    }
    match result {
        PageResult::Failed(_) | PageResult::Broken(_) => return None,
        PageResult::Redirected { to, hops, seen, .. } => {
            write_element(&1u8, &mut out);
            put_str(to.as_str(), &mut out);
            put_hops(hops, &mut out);
            write_element(seen, &mut out);
        }
        PageResult::Done(page) => {
            write_element(&2u8, &mut out);
            encode_page(page, shard, refuses, &mut out);
        }
    }
    Some(out)
}

fn encode_page(
    page: &FetchedPage,
    shard: Option<Shard>,
    refuses: &dyn Fn(&simcrawl_url::Candidate) -> bool,
    out: &mut Vec<u8>,
) {
    put_str(page.final_url.as_str(), out);
    put_hops(&page.hops, out);
    write_element(&page.status, out);
    write_element(&crate::decide::recorder::class_code(page.class), out);
    write_element(&page.not_html, out);
    write_element(&(page.links_dropped as u64), out);
    put_opt(page.canonical.as_ref().map(|c| c.fetch.as_str()), out);
    // The links' keys as this process made them, with the rules it made them with: a process
    // with the same rules takes the keys of the links of others' sites as they are (most links
    // of a page are of its own site, and parsing them again was most of a replay's cost).
    write_element(&page.canon.rules_digest(), out);
    write_element(&(page.links.len() as u32), out);
    for link in &page.links {
        put_str(link.fetch.as_str(), out);
        write_element(&link.key.hash128(), out);
        let owner = shard.map_or(0, |s| s.owner(link.fetch.as_url()));
        write_element(&owner, out);
        // Refused (a trap, out of scope), or keyed by a rule as another site's URL: no other
        // process's seen set takes it (see `Frontier::admit`).
        let refused = refuses(link) || shard.is_some_and(|s| s.owner_of_key(&link.key) != owner);
        write_element(&refused, out);
    }
    // Each link's anchor words: the owner of its site weighs them as this process would.
    for i in 0..page.links.len() {
        let anchor = page.anchors.get(i).copied().unwrap_or_default();
        write_element(&anchor.to_bits(), out);
    }
    write_element(&page.analysis.is_some(), out);
    if let Some(a) = &page.analysis {
        encode_analysis(a, out);
    }
}

fn encode_analysis(a: &PageAnalysis, out: &mut Vec<u8>) {
    let d = &a.document;
    put_opt(d.title.as_deref(), out);
    put_str(&d.main_text, out);
    write_element(&(d.word_count as u64), out);
    let extraction = match d.extraction {
        Extraction::Main { .. } => 0u8,
        Extraction::Short { .. } => 1,
        Extraction::Fallback { .. } => 2,
    };
    write_element(&extraction, out);
    write_element(&d.meta_robots.noindex, out);
    write_element(&d.meta_robots.nofollow, out);
    write_element(&d.meta_robots.noarchive, out);
    write_element(&a.body_digest.0, out);
    put_str(&a.body_sha256, out);
    // The normalised text is not sent: no decision reads it (its digest and fingerprints are).
    write_element(&a.text_digest.0, out);
    write_element(&a.simhash.0, out);
    write_bytes_element(&a.sketch.to_bytes(), out);
    write_element(&a.template_version, out);
    write_element(&(a.words as u64), out);
    write_element(&a.full_simhash.0, out);
    write_element(&(a.full_words as u64), out);
    write_element(&(a.whole_windows.len() as u32), out);
    for w in &a.whole_windows {
        write_element(w, out);
    }
    write_element(&a.short, out);
    put_str(&a.title_key, out);
    write_element(&(a.lines.len() as u32), out);
    for line in &a.lines {
        write_element(&line.hash, out);
        write_element(&line.words, out);
    }
}

/// A page or redirect one process decided, sent to every process ([`encode_event`]), as another
/// process applies it: its origin says whose it is.
pub struct Event {
    /// This process's own (a round it sent but had not applied when it stopped), or another
    /// process's.
    pub origin: EventOrigin,
    /// The URL handed out, as the deciding process leased it.
    pub lease: Lease,
    /// The rule its fetch verified, if any.
    pub verifying: Option<Rule>,
    /// What the fetch brought.
    pub result: PageResult,
}

/// The event of `bytes` ([`encode_event`]), its URLs keyed with `core`'s rules.
fn decode_event(bytes: &[u8], core: &Core, origin: EventOrigin) -> Result<Event, CodecError> {
    let mut r = Reader::new::<Event>(bytes);
    let url = get_url(&mut r)?;
    let depth: u32 = r.element()?;
    let key_hash: u128 = r.element()?;
    let referrer = get_opt(&mut r)?;
    let via = ViaKind::from_byte(r.element()?)
        .ok_or_else(|| CodecError::invalid::<Event>("unknown way a URL was found"))?;
    let verifying = if r.element::<bool>()? {
        let code: u8 = r.element()?;
        let count = Rule::field_count(code)
            .ok_or_else(|| CodecError::invalid::<Event>(format!("rule kind {code}")))?;
        let fields = (0..count)
            .map(|_| r.element::<String>())
            .collect::<Result<Vec<_>, _>>()?;
        Some(
            Rule::from_fields(code, fields)
                .ok_or_else(|| CodecError::invalid::<Event>("a rule's fields"))?,
        )
    } else {
        None
    };
    let lease = Lease::replica(url, depth, key_hash, referrer, via);
    let kind: u8 = r.element()?;
    let result = match kind {
        1 => PageResult::Redirected {
            to: get_url(&mut r)?,
            hops: get_hops(&mut r)?,
            seen: r.element()?,
            class: None,
            exchange: None,
        },
        2 => PageResult::Done(Box::new(decode_page(&mut r, core)?)),
        _ => {
            return Err(CodecError::invalid::<Event>(format!("event kind {kind}")));
        }
    };
    r.finish()?;
    Ok(Event {
        origin,
        lease,
        verifying,
        result,
    })
}

fn decode_page(r: &mut Reader<'_>, core: &Core) -> Result<FetchedPage, CodecError> {
    let canon = Arc::clone(core.book.canon());
    let final_url = get_url(r)?;
    let final_key = canon
        .canonicalize(final_url.as_str(), None)
        .map_err(|e| CodecError::invalid::<FetchedPage>(format!("{final_url}: {e}")))?;
    let hops = get_hops(r)?;
    let status: u16 = r.element()?;
    let class = crate::decide::recorder::class_of_code(r.element::<u8>()?);
    let not_html: bool = r.element()?;
    let links_dropped = r.element::<u64>()? as usize;
    let canonical = get_opt(r)?.and_then(|c| canon.canonicalize(&c, None).ok());
    let same_rules = r.element::<u64>()? == canon.rules_digest();
    let me = core.shard_index() as u32;
    let n: u32 = r.element()?;
    let mut links = Vec::with_capacity(n as usize);
    let mut replayed_links = Vec::with_capacity(n as usize);
    // Which of the page's links became `links` (the others are other processes' or refused).
    let mut own = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let link: String = r.element()?;
        let key_hash: u128 = r.element()?;
        let owner: u32 = r.element()?;
        let refused: bool = r.element()?;
        if same_rules && owner != me {
            // Refused (a trap, out of scope): nobody's seen set takes it.
            if !refused {
                replayed_links.push(ReplayedLink::Elsewhere(key_hash));
            }
        } else if let Ok(candidate) = canon.canonicalize(&link, None) {
            replayed_links.push(ReplayedLink::Own(links.len()));
            links.push(candidate);
            own.push(true);
            continue;
        }
        own.push(false);
    }
    let mut anchors = Vec::with_capacity(links.len());
    for kept in own {
        let anchor = crate::anchor::AnchorWords::from_bits(r.element::<u64>()?);
        if kept {
            anchors.push(anchor);
        }
    }
    let analysis = if r.element::<bool>()? {
        Some(decode_analysis(r, &final_url)?)
    } else {
        None
    };
    Ok(FetchedPage {
        exchange: None,
        final_url,
        final_key,
        hops,
        status,
        class,
        retry_after: None,
        analysis,
        canonical,
        links,
        anchors,
        plain_keys: Vec::new(),
        links_dropped,
        canon,
        plain: None,
        not_html,
        truncated: false,
        replayed_links,
    })
}

fn decode_analysis(r: &mut Reader<'_>, url: &Url) -> Result<PageAnalysis, CodecError> {
    let title = get_opt(r)?;
    let main_text: String = r.element()?;
    let word_count = r.element::<u64>()? as usize;
    let extraction = match r.element::<u8>()? {
        0 => Extraction::Main {
            via: MainVia::DensestBlock,
            relaxed: false,
        },
        1 => Extraction::Short {
            via: MainVia::DensestBlock,
            relaxed: false,
            min_words: 0,
        },
        _ => Extraction::Fallback {
            reason: FallbackReason::NoCandidate,
        },
    };
    let meta_robots = MetaRobots {
        noindex: r.element()?,
        nofollow: r.element()?,
        noarchive: r.element()?,
    };
    let document = Document {
        base_url: url.clone(),
        title,
        lang: None,
        main_text,
        full_text: String::new(),
        word_count,
        extraction,
        links: Vec::new(),
        skipped_links: Default::default(),
        canonical: None,
        meta_robots,
        meta_refresh: None,
        nesting_capped: false,
    };
    let body_digest = Digest128(r.element()?);
    let body_sha256: String = r.element()?;
    let text = String::new();
    let text_digest = Digest128(r.element()?);
    let simhash = SimHash(r.element()?);
    let sketch_bytes: Vec<u8> = r.element()?;
    let sketch = Sketch::from_bytes(&sketch_bytes)
        .map_err(|e| CodecError::invalid::<PageAnalysis>(format!("sketch: {e}")))?;
    let template_version: u64 = r.element()?;
    let words = r.element::<u64>()? as usize;
    let full_simhash = SimHash(r.element()?);
    let full_words = r.element::<u64>()? as usize;
    let n: u32 = r.element()?;
    let whole_windows = (0..n.min(64))
        .map(|_| r.element())
        .collect::<Result<Vec<u128>, _>>()?;
    let short: bool = r.element()?;
    let title_key: String = r.element()?;
    let n: u32 = r.element()?;
    let mut lines = Vec::with_capacity(n as usize);
    for _ in 0..n {
        lines.push(crate::template::LineKey {
            hash: r.element()?,
            words: r.element()?,
        });
    }
    Ok(PageAnalysis {
        document,
        body_digest,
        body_sha256,
        text,
        text_digest,
        simhash,
        sketch,
        template_version,
        words,
        full_simhash,
        full_words,
        whole_windows,
        short,
        title_key,
        lines,
        line_texts: String::new(),
        norm_lines: String::new(),
    })
}

/// A process's first message of a session: where it stands in the rounds of the crawl, so that a
/// process that stopped before it applied the last rounds (a kill) catches up from one that did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hello {
    /// A digest of what its decisions depend on ([`config_digest`]): processes that disagree
    /// would not decide alike.
    pub config: u64,
    /// The last round it applied.
    pub applied: Option<u64>,
    /// The last rounds it received, with their messages, in order.
    pub logged: Vec<(u64, Vec<Vec<u8>>)>,
}

impl Hello {
    /// The hello's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![WIRE_VERSION];
        write_element(&self.config, &mut out);
        write_element(&self.applied.is_some(), &mut out);
        write_element(&self.applied.unwrap_or(0), &mut out);
        write_element(&(self.logged.len() as u64), &mut out);
        for (round, messages) in &self.logged {
            write_element(round, &mut out);
            write_bytes_element(&encode_round(messages), &mut out);
        }
        out
    }

    /// A hello from its bytes.
    pub fn decode(bytes: &[u8]) -> Result<Hello, CodecError> {
        let mut r = Reader::new::<Hello>(bytes);
        check_version::<Hello>(&mut r)?;
        let config: u64 = r.element()?;
        let has_applied: bool = r.element()?;
        let applied: u64 = r.element()?;
        let n: u64 = r.element()?;
        let mut logged = Vec::new();
        for _ in 0..n {
            let round: u64 = r.element()?;
            let bytes: Vec<u8> = r.element()?;
            logged.push((round, decode_round(&bytes)?));
        }
        r.finish()?;
        Ok(Hello {
            config,
            applied: has_applied.then_some(applied),
            logged,
        })
    }
}

/// A digest of what a process's decisions depend on: the seeds, the near-duplicate threshold and
/// MinHash check, the URL normalisation, the learning thresholds, which links are followed, the
/// scope, the trap guards, the depth limit and the number of processes. Every process of a crawl
/// must have the same.
pub fn config_digest(config: &crate::CrawlConfig) -> u64 {
    let f = &config.frontier;
    let what = format!(
        "{:?}|{}|{}|{:?}|{:?}|{}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        config.seeds,
        config.k,
        config.jaccard,
        config.canon,
        config.learn,
        config.follow_duplicate_links,
        config.max_links_per_page,
        config.dedup,
        f.scope,
        f.include,
        f.exclude,
        f.traps,
        f.max_depth,
        f.shard.map(|s| s.count()),
    );
    xxhash_rust::xxh3::xxh3_64(what.as_bytes())
}

/// A round's messages as one byte string (for the round log).
pub fn encode_round(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    write_element(&(messages.len() as u64), &mut out);
    for m in messages {
        write_bytes_element(m, &mut out);
    }
    out
}

/// A round's messages from [`encode_round`]'s bytes.
pub fn decode_round(bytes: &[u8]) -> Result<Vec<Vec<u8>>, CodecError> {
    let mut r = Reader::new::<Message>(bytes);
    let n: u64 = r.element()?;
    let messages = (0..n)
        .map(|_| r.element::<Vec<u8>>())
        .collect::<Result<Vec<_>, _>>()?;
    r.finish()?;
    Ok(messages)
}

impl Core {
    /// This process's index in a sharded crawl (0 for a crawl of one process).
    pub fn shard_index(&self) -> usize {
        self.config.frontier.shard.map_or(0, |s| s.index() as usize)
    }

    /// The event of `bytes` (another process's page or redirect, or this process's own from a
    /// round it had sent but not applied when it stopped: `origin`), its URLs keyed with this
    /// process's rules, for [`Core::apply`].
    pub fn event(&self, bytes: &[u8], origin: EventOrigin) -> Result<Event, CrawlError> {
        decode_event(bytes, self, origin).map_err(|e| CrawlError::Shard(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_hellos_and_rounds_come_back_as_they_went() {
        let message = Message {
            status: Status {
                idle: true,
                stop: false,
            },
            events: vec![vec![1, 2, 3], Vec::new(), vec![0; 300]],
        };
        assert_eq!(Message::decode(&message.encode()).unwrap(), message);
        let round = vec![message.encode(), Message::default().encode()];
        assert_eq!(decode_round(&encode_round(&round)).unwrap(), round);
        let hello = Hello {
            config: 7,
            applied: Some(41),
            logged: vec![(41, round.clone()), (42, round)],
        };
        assert_eq!(Hello::decode(&hello.encode()).unwrap(), hello);
        assert_eq!(
            Hello::decode(&Hello::default().encode()).unwrap(),
            Hello::default()
        );
    }

    #[test]
    fn the_round_ends_when_all_are_idle_and_silent_or_one_stops() {
        let idle = Message {
            status: Status {
                idle: true,
                stop: false,
            },
            events: Vec::new(),
        };
        let busy = Message {
            events: vec![vec![7]],
            ..idle.clone()
        };
        assert!(Message::all_idle(&[idle.clone(), idle.clone()]));
        assert!(!Message::all_idle(&[idle.clone(), busy.clone()]));
        assert!(!Message::any_stop(&[idle.clone(), busy]));
        let stop = Message {
            status: Status {
                idle: false,
                stop: true,
            },
            events: Vec::new(),
        };
        assert!(Message::any_stop(&[idle, stop]));
    }

    #[test]
    fn another_wire_version_is_refused_by_name() {
        let mut bytes = Message::default().encode();
        bytes[0] = 99;
        let err = Message::decode(&bytes).unwrap_err().to_string();
        assert!(err.contains("run the same simcrawl everywhere"), "{err}");
        assert!(Message::decode(&bytes[..1]).is_err());
    }
}
