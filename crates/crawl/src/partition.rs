//! A crawl split over several processes with its state partitioned: each process indexes the
//! pages of its own sites only, and asks the others about a page before it decides it.
//!
//! Every page a process fetches is decided by that process (its owner), with the one rule of
//! evidence, against the pages indexed anywhere before it. The pages before it are fixed by a
//! total order that every process sees alike: a page's [`Place`] is the round its [`Query`] was
//! sent in, the sending process and its number in that message. The query (digests, SimHash,
//! the keys the page is indexed under and the keys its decision reads: about a hundred bytes)
//! goes to every process; each answers from its own index with the records of its pages that
//! match ([`answer`]), and enters the query in its [`Ledger`] of pages not yet decided. A page
//! whose query matches an earlier page still in the ledger waits for that page's verdict, and
//! for its record when it is indexed: so every page is judged against exactly the earlier pages
//! that are indexed, as one process judges it, and two copies fetched at once by two processes
//! are never both indexed. The decider reads the owner's index and the answers as one index
//! ([`Merged`]), and the other hosts' templates as the answers give them ([`PartTemplates`]).
//!
//! What stays with a site's owner: its frontier, politeness and robots.txt, its templates, its
//! rules (a rule covers the URLs of one host, and all its evidence comes from that host's pages),
//! its skip and failure logs. A link to another process's site is forwarded to that site's owner
//! ([`PartEvent::Link`]); nothing else of a page leaves its owner, except its record to a page
//! that matched it.
//!
//! ```
//! use simcrawl_crawl::partition::{Ledger, Place, Query};
//!
//! let mut ledger = Ledger::new(3);
//! let first = Place { round: 1, process: 0, seq: 0 };
//! let copy = Place { round: 1, process: 1, seq: 0 };
//! let query = |simhash| Query { simhash, body: 1, text: 2, keys: vec![], wanted: vec![] };
//! assert!(ledger.enter(first, query(0b1011)).is_empty());
//! // Sent in the same round by another process, within k bits of the first: it waits for it.
//! assert_eq!(ledger.enter(copy, Query { body: 9, text: 8, ..query(0b1001) }), vec![first]);
//! assert_eq!(ledger.resolve(first), vec![copy]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::decider::{IndexView, TemplateView};
use crate::error::CrawlError;
use crate::evidence::Policy;
use crate::pages::{PageIndex, PageRecord};
use crate::template::LineKey;
use simcrawl_dedup::{SimHash, Sketch};
use simcrawl_store::codec::{Codec, CodecError, Reader, write_bytes_element, write_element};
use std::collections::BTreeMap;

/// A page's place in the crawl's total order: its query's round, the process that sent it, and
/// its number among that process's queries of the round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// The round its query went in.
    pub round: u64,
    /// The process that fetched it.
    pub process: u32,
    /// Its number in that process's message.
    pub seq: u32,
}

/// What the other processes need to know of a fetched page to find their pages it may copy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Query {
    /// xxh3-128 of its body.
    pub body: u128,
    /// xxh3-128 of its normalised main text.
    pub text: u128,
    /// SimHash of its main text.
    pub simhash: u64,
    /// The key hashes it will be indexed under (its key under the rules, its lease's, its own).
    pub keys: Vec<u128>,
    /// The key hashes its decision reads besides (the canonical it declares, its counterparts
    /// under the mirrors the learner weighs).
    pub wanted: Vec<u128>,
}

impl Query {
    /// Whether a page decided before this one, queried as `earlier`, can be what this one is
    /// judged against, or decides with this one's record: the same body or main text, SimHash
    /// within `k`, or a key one of them is indexed under and the other has or reads.
    fn may_copy(&self, earlier: &Query, k: u32) -> bool {
        self.body == earlier.body
            || self.text == earlier.text
            || (self.simhash ^ earlier.simhash).count_ones() <= k
            || earlier
                .keys
                .iter()
                .any(|key| self.keys.contains(key) || self.wanted.contains(key))
            || self.keys.iter().any(|key| earlier.wanted.contains(key))
    }
}

fn put_keys(keys: &[u128], out: &mut Vec<u8>) {
    write_element(&(keys.len() as u32), out);
    for key in keys {
        write_element(key, out);
    }
}

fn get_keys(r: &mut Reader<'_>) -> Result<Vec<u128>, CodecError> {
    let n: u32 = r.element()?;
    (0..n.min(1 << 16)).map(|_| r.element()).collect()
}

impl Codec for Query {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&self.body, out);
        write_element(&self.text, out);
        write_element(&self.simhash, out);
        put_keys(&self.keys, out);
        put_keys(&self.wanted, out);
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<Query>(bytes);
        let query = Query {
            body: r.element()?,
            text: r.element()?,
            simhash: r.element()?,
            keys: get_keys(&mut r)?,
            wanted: get_keys(&mut r)?,
        };
        r.finish()?;
        Ok(query)
    }
}

/// The queries of pages not yet decided, anywhere, in the crawl's order: every process holds
/// the same ledger (it enters every query and resolves every verdict in the same order).
#[derive(Debug, Default)]
pub struct Ledger {
    k: u32,
    entries: BTreeMap<Place, Entry>,
}

#[derive(Debug)]
struct Entry {
    query: Query,
    /// The later pages whose queries matched this one.
    waiters: Vec<Place>,
}

impl Ledger {
    /// An empty ledger for near-duplicates within `k` bits.
    pub fn new(k: u32) -> Ledger {
        Ledger {
            k,
            entries: BTreeMap::new(),
        }
    }

    /// Enters the query of the page at `place` (after every place entered before), and returns
    /// the undecided earlier pages it must wait for, each of which now lists it as a waiter.
    pub fn enter(&mut self, place: Place, query: Query) -> Vec<Place> {
        let mut wait = Vec::new();
        for (earlier, entry) in self.entries.range_mut(..place) {
            if query.may_copy(&entry.query, self.k) {
                entry.waiters.push(place);
                wait.push(*earlier);
            }
        }
        self.entries.insert(
            place,
            Entry {
                query,
                waiters: Vec::new(),
            },
        );
        wait
    }

    /// The page at `place` is decided: out of the ledger. Returns the pages that waited for it.
    pub fn resolve(&mut self, place: Place) -> Vec<Place> {
        self.entries
            .remove(&place)
            .map(|e| e.waiters)
            .unwrap_or_default()
    }

    /// The later pages whose queries matched the page at `place`.
    pub fn waiters(&self, place: Place) -> &[Place] {
        self.entries.get(&place).map_or(&[], |e| &e.waiters)
    }

    /// Pages not yet decided.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No page undecided.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Ids of other processes' pages, as the decider sees them: above this bit, the process (four
/// bits) and its own id (27 bits); never one of this process's ids, which count from 0.
pub const REMOTE_BIT: u32 = 1 << 31;

/// The most processes a partitioned crawl takes: a remote page's id holds its process in four
/// bits ([`remote_id`]).
pub const MAX_PROCESSES: u32 = 16;

/// The id the decider gives page `id` of `process`, when it fits.
pub fn remote_id(process: u32, id: u32) -> Option<u32> {
    (process < 16 && id < (1 << 27)).then_some(REMOTE_BIT | (process << 27) | id)
}

/// Another process's indexed page, as its owner sent it to a page that may copy it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRecord {
    /// The process that indexed it.
    pub process: u32,
    /// Its record there (its id is that process's).
    pub record: PageRecord,
    /// The key hashes of the query it is indexed under there.
    pub keys: Vec<u128>,
    /// Its main text without its host's template lines, normalised, when its host has a
    /// template.
    pub without_template: Option<String>,
}

impl Codec for RemoteRecord {
    fn encode_into(&self, out: &mut Vec<u8>) {
        write_element(&self.process, out);
        write_bytes_element(&self.record.encode(), out);
        put_keys(&self.keys, out);
        write_element(&self.without_template.is_some(), out);
        if let Some(text) = &self.without_template {
            write_element(text, out);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new::<RemoteRecord>(bytes);
        let process = r.element()?;
        let record = PageRecord::decode(&r.element::<Vec<u8>>()?)?;
        let keys = get_keys(&mut r)?;
        let without_template = if r.element::<bool>()? {
            Some(r.element()?)
        } else {
            None
        };
        r.finish()?;
        Ok(RemoteRecord {
            process,
            record,
            keys,
            without_template,
        })
    }
}

impl RemoteRecord {
    /// Its id for the decider ([`remote_id`]).
    fn id(&self) -> Option<u32> {
        remote_id(self.process, self.record.id)
    }

    /// Whether its page is on `host` (`host[:port]`, as [`crate::learn::authority`] spells
    /// it), read off its URL as serialised (no parse: a decision asks this of every remote
    /// record for every host whose template it reads).
    fn on_host(&self, host: &str) -> bool {
        url_authority(&self.record.url) == Some(host)
    }
}

/// The authority of a serialised absolute URL (`http://host:8080/p` → `host:8080`), as
/// [`crate::learn::authority`] gives it for the parsed URL: the serialisation leaves out a
/// scheme's default port, as `Url::port` does, and a record's URL carries no credentials.
fn url_authority(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    Some(
        authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host),
    )
}

/// What one process tells another in a round of a partitioned crawl.
#[derive(Debug, Clone, PartialEq)]
pub enum PartEvent {
    /// A page fetched, to every process: its place is the round, the sender and the number of
    /// the query among the sender's.
    Query(Query),
    /// To the owner of the page at `to`: this process's pages it may copy.
    Answer {
        /// The page asked about.
        to: Place,
        /// The pages.
        records: Vec<RemoteRecord>,
    },
    /// To every process: the page at `place` is decided (`indexed`, or skipped).
    Verdict {
        /// The page.
        place: Place,
        /// It was indexed.
        indexed: bool,
    },
    /// To the owner of its site: a URL met here, and the address class its referrer answered from
    /// (the owner's fetcher lets a private page's links reach private addresses, as here).
    Link(simcrawl_frontier::Forwarded, simcrawl_fetch::AddressClass),
    /// To the owner of the site of key `key`: has it met the key? A learned rule gave the key to
    /// a URL queued at the sender.
    Claim {
        /// The key's hash.
        key: u128,
    },
    /// To every process: a mirror rule put in force (`active`) or revoked by the sender.
    Rule {
        /// The rule.
        rule: crate::learn::Rule,
        /// In force, or revoked.
        active: bool,
    },
    /// The answer to a [`PartEvent::Claim`]: whether the key was met.
    Claimed {
        /// The key's hash.
        key: u128,
        /// It was met before.
        seen: bool,
    },
}

impl PartEvent {
    /// Its kind, in a word.
    pub fn kind(&self) -> &'static str {
        match self {
            PartEvent::Query(_) => "query",
            PartEvent::Answer { .. } => "answer",
            PartEvent::Verdict { .. } => "verdict",
            PartEvent::Link(..) => "link",
            PartEvent::Claim { .. } => "claim",
            PartEvent::Claimed { .. } => "claimed",
            PartEvent::Rule { .. } => "rule",
        }
    }

    /// Its bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        match self {
            PartEvent::Query(q) => {
                out.push(1);
                q.encode_into(&mut out);
            }
            PartEvent::Answer { to, records } => {
                out.push(2);
                put_place(to, &mut out);
                write_element(&(records.len() as u32), &mut out);
                for r in records {
                    write_bytes_element(&r.encode(), &mut out);
                }
            }
            PartEvent::Verdict { place, indexed } => {
                out.push(3);
                put_place(place, &mut out);
                write_element(indexed, &mut out);
            }
            PartEvent::Rule { rule, active } => {
                out.push(7);
                write_element(active, &mut out);
                write_element(&rule.code(), &mut out);
                for field in rule.kind().fields() {
                    write_element(&field.to_string(), &mut out);
                }
            }
            PartEvent::Claim { key } => {
                out.push(5);
                write_element(key, &mut out);
            }
            PartEvent::Claimed { key, seen } => {
                out.push(6);
                write_element(key, &mut out);
                write_element(seen, &mut out);
            }
            PartEvent::Link(l, class) => {
                out.push(4);
                write_element(&crate::decide::recorder::class_code(*class), &mut out);
                write_element(&l.owner, &mut out);
                write_element(&l.url, &mut out);
                write_element(&l.depth, &mut out);
                write_element(&l.referrer.is_some(), &mut out);
                write_element(&l.referrer.clone().unwrap_or_default(), &mut out);
                write_element(&l.kind.to_byte(), &mut out);
                write_element(&l.hint, &mut out);
            }
        }
        out
    }

    /// An event from its bytes.
    pub fn decode(bytes: &[u8]) -> Result<PartEvent, CodecError> {
        let (&tag, rest) = bytes
            .split_first()
            .ok_or_else(|| CodecError::invalid::<PartEvent>("an empty event"))?;
        let event = match tag {
            1 => PartEvent::Query(Query::decode(rest)?),
            2 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let to = get_place(&mut r)?;
                let n: u32 = r.element()?;
                let records = (0..n.min(1 << 16))
                    .map(|_| RemoteRecord::decode(&r.element::<Vec<u8>>()?))
                    .collect::<Result<Vec<_>, _>>()?;
                r.finish()?;
                PartEvent::Answer { to, records }
            }
            3 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let place = get_place(&mut r)?;
                let indexed = r.element()?;
                r.finish()?;
                PartEvent::Verdict { place, indexed }
            }
            4 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let class = crate::decide::recorder::class_of_code(r.element()?);
                let owner = r.element()?;
                let url = r.element()?;
                let depth = r.element()?;
                let has_referrer: bool = r.element()?;
                let referrer: String = r.element()?;
                let kind =
                    simcrawl_frontier::ViaKind::from_byte(r.element()?).ok_or_else(|| {
                        CodecError::invalid::<PartEvent>("unknown way a URL was found")
                    })?;
                let hint = r.element()?;
                r.finish()?;
                PartEvent::Link(
                    simcrawl_frontier::Forwarded {
                        owner,
                        url,
                        depth,
                        referrer: has_referrer.then_some(referrer),
                        kind,
                        hint,
                    },
                    class,
                )
            }
            5 => PartEvent::Claim {
                key: u128::decode(rest)?,
            },
            6 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let key = r.element()?;
                let seen = r.element()?;
                r.finish()?;
                PartEvent::Claimed { key, seen }
            }
            7 => {
                let mut r = Reader::new::<PartEvent>(rest);
                let active = r.element()?;
                let code: u8 = r.element()?;
                let count = crate::learn::Rule::field_count(code)
                    .ok_or_else(|| CodecError::invalid::<PartEvent>(format!("rule kind {code}")))?;
                let fields = (0..count)
                    .map(|_| r.element::<String>())
                    .collect::<Result<Vec<_>, _>>()?;
                r.finish()?;
                let rule = crate::learn::Rule::from_fields(code, fields)
                    .ok_or_else(|| CodecError::invalid::<PartEvent>("a rule's fields"))?;
                PartEvent::Rule { rule, active }
            }
            _ => {
                return Err(CodecError::invalid::<PartEvent>(format!(
                    "event kind {tag}"
                )));
            }
        };
        Ok(event)
    }
}

fn put_place(place: &Place, out: &mut Vec<u8>) {
    write_element(&place.round, out);
    write_element(&place.process, out);
    write_element(&place.seq, out);
}

fn get_place(r: &mut Reader<'_>) -> Result<Place, CodecError> {
    Ok(Place {
        round: r.element()?,
        process: r.element()?,
        seq: r.element()?,
    })
}

/// The answer of `index` (this process's pages, `process`) to `query`: the records of its pages
/// the query's page may copy (the same body or text, within k, indexed under a key it reads),
/// each with its text without its host's template (`templates`) when the host has one.
pub fn answer<T: TemplateView + ?Sized>(
    index: &PageIndex,
    templates: &mut T,
    process: u32,
    query: &Query,
) -> Result<Vec<RemoteRecord>, CrawlError> {
    let mut ids: Vec<u32> = Vec::new();
    ids.extend(IndexView::body_copy(index, query.body)?);
    ids.extend(IndexView::text_copy(index, query.text)?);
    ids.extend(
        IndexView::near(index, SimHash(query.simhash))
            .into_iter()
            .map(|(_, id)| id),
    );
    let mut keyed: Vec<(u128, u32)> = Vec::new();
    for key in query.keys.iter().chain(&query.wanted) {
        if let Some(id) = index.by_key(*key)? {
            keyed.push((*key, id));
            ids.push(id);
        }
    }
    ids.sort_unstable();
    ids.dedup();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(record) = index.get(id)? else {
            continue;
        };
        let host = url::Url::parse(&record.url)
            .map(|u| crate::learn::authority(&u))
            .unwrap_or_default();
        let without_template = if templates.has_template(&host)? {
            Some(templates.without_template(&host, &record.text)?)
        } else {
            None
        };
        out.push(RemoteRecord {
            process,
            keys: keyed
                .iter()
                .filter(|(_, i)| *i == id)
                .map(|(k, _)| *k)
                .collect(),
            record,
            without_template,
        });
    }
    Ok(out)
}

/// The other processes' pages a page being decided may copy: what their answers brought.
#[derive(Debug, Clone, Default)]
pub struct Remote {
    records: Vec<RemoteRecord>,
}

impl Remote {
    /// No remote page: the decider reads this process's index alone.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Adds the pages of an answer (a page already here is kept once).
    pub fn extend(&mut self, records: impl IntoIterator<Item = RemoteRecord>) {
        for record in records {
            if !self
                .records
                .iter()
                .any(|r| r.process == record.process && r.record.id == record.record.id)
            {
                self.records.push(record);
            }
        }
    }

    fn by_id(&self, id: u32) -> Option<&RemoteRecord> {
        if id & REMOTE_BIT == 0 {
            return None;
        }
        self.records.iter().find(|r| r.id() == Some(id))
    }

    /// The page with the smallest id for the decider (by process, then by its id there) that
    /// `keep` accepts.
    fn first(&self, keep: impl Fn(&RemoteRecord) -> bool) -> Option<u32> {
        self.records
            .iter()
            .filter(|r| keep(r))
            .filter_map(RemoteRecord::id)
            .min()
    }
}

/// This process's index and the remote pages of one decision, read as one index.
pub struct Merged<'a> {
    /// This process's pages.
    pub local: &'a PageIndex,
    /// The others' pages the page may copy.
    pub remote: &'a Remote,
}

impl IndexView for Merged<'_> {
    fn policy(&self) -> Policy {
        self.local.policy()
    }

    fn body_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        // The local map may compare part of a digest: a page of another process with the whole
        // digest is not passed over for a local page without it.
        if let Some(id) = IndexView::body_copy(self.local, digest)?
            && (self.remote.is_empty()
                || self.local.get(id)?.is_some_and(|r| r.body_digest == digest))
        {
            return Ok(Some(id));
        }
        Ok(self.remote.first(|r| r.record.body_digest == digest))
    }

    fn page_by_key(&self, key: u128) -> Result<Option<u32>, CrawlError> {
        if let Some(id) = self.local.by_key(key)? {
            return Ok(Some(id));
        }
        Ok(self.remote.first(|r| r.keys.contains(&key)))
    }

    fn text_copy(&self, digest: u128) -> Result<Option<u32>, CrawlError> {
        if let Some(id) = IndexView::text_copy(self.local, digest)?
            && (self.remote.is_empty()
                || self.local.get(id)?.is_some_and(|r| r.text_digest == digest))
        {
            return Ok(Some(id));
        }
        Ok(self.remote.first(|r| r.record.text_digest == digest))
    }

    fn near(&self, simhash: SimHash) -> Vec<(u32, u32)> {
        let mut near = IndexView::near(self.local, simhash);
        let k = self.local.policy().k;
        for r in &self.remote.records {
            let distance = simhash.distance(SimHash(r.record.simhash));
            if distance <= k
                && let Some(id) = r.id()
            {
                near.push((distance, id));
            }
        }
        near
    }

    fn record(&self, id: u32) -> Result<Option<PageRecord>, CrawlError> {
        if id & REMOTE_BIT != 0 {
            return Ok(self.remote.by_id(id).map(|r| PageRecord {
                id,
                ..r.record.clone()
            }));
        }
        self.local.get(id)
    }

    fn sketch_of(&self, record: &PageRecord) -> Result<Option<Sketch>, CrawlError> {
        if record.id & REMOTE_BIT != 0 {
            return match &record.sketch {
                Some(bytes) => Ok(Some(Sketch::from_bytes(bytes)?)),
                None => Ok(None),
            };
        }
        self.local.sketch_of(record)
    }
}

/// This process's host templates, and the other processes' hosts as their answers describe
/// them (a host is another process's when a remote page of it is in the decision).
pub struct PartTemplates<'a, T: TemplateView + ?Sized> {
    /// This process's templates.
    pub local: &'a mut T,
    /// The others' pages of the decision.
    pub remote: &'a Remote,
}

impl<T: TemplateView + ?Sized> PartTemplates<'_, T> {
    fn remote_host(&self, host: &str) -> Option<&RemoteRecord> {
        self.remote.records.iter().find(|r| r.on_host(host))
    }
}

impl<T: TemplateView + ?Sized> TemplateView for PartTemplates<'_, T> {
    fn template_words(&mut self, host: &str, keys: &[LineKey]) -> Result<usize, CrawlError> {
        self.local.template_words(host, keys)
    }

    fn has_template(&mut self, host: &str) -> Result<bool, CrawlError> {
        match self.remote_host(host) {
            Some(_) => Ok(self
                .remote
                .records
                .iter()
                .any(|r| r.without_template.is_some() && r.on_host(host))),
            None => self.local.has_template(host),
        }
    }

    fn without_template(&mut self, host: &str, main_text: &str) -> Result<String, CrawlError> {
        if self.remote_host(host).is_some() {
            if let Some(text) = self
                .remote
                .records
                .iter()
                .find(|r| r.record.text == main_text && r.on_host(host))
                .and_then(|r| r.without_template.clone())
            {
                return Ok(text);
            }
            // A host without template lines: its text, normalised line by line.
            return crate::decider::NoTemplates.without_template(host, main_text);
        }
        self.local.without_template(host, main_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_s_host_is_read_off_its_url_as_the_learner_spells_it() {
        for url in [
            "http://docs.test/a/b.html",
            "https://docs.test:443/a",
            "http://127.0.0.1:8080/?q=1",
            "http://[::1]:9000/x#f",
            "https://Ünïcode.test/p",
            "http://host.test",
            "http://user:secret@host.test:81/p",
        ] {
            let parsed = url::Url::parse(url).unwrap();
            assert_eq!(
                url_authority(parsed.as_str()),
                Some(crate::learn::authority(&parsed).as_str()),
                "{url}"
            );
        }
        assert_eq!(url_authority("not a url"), None);
    }

    fn place(round: u64, process: u32, seq: u32) -> Place {
        Place {
            round,
            process,
            seq,
        }
    }

    fn query(simhash: u64, body: u128, text: u128) -> Query {
        Query {
            body,
            text,
            simhash,
            keys: vec![],
            wanted: vec![],
        }
    }

    #[test]
    fn a_query_waits_for_the_earlier_undecided_pages_it_may_copy_and_no_other() {
        let mut ledger = Ledger::new(3);
        let a = place(1, 0, 0);
        let b = place(1, 1, 0);
        let c = place(1, 1, 1);
        let d = place(2, 0, 0);
        assert!(ledger.enter(a, query(0, 1, 1)).is_empty());
        // Far from a, another body and text: no wait.
        assert!(ledger.enter(b, query(u64::MAX, 2, 2)).is_empty());
        // The same text as a, far in SimHash: waits for a.
        assert_eq!(ledger.enter(c, query(0xFFFF, 3, 1)), vec![a]);
        // A key b is indexed under, read by d: waits for b; within 3 bits of a: waits for a.
        let mut q = query(0b111, 4, 4);
        q.wanted = vec![77];
        ledger.resolve(b);
        assert_eq!(ledger.enter(d, q.clone()), vec![a]);
        assert_eq!(ledger.waiters(a), &[c, d]);
        let e = place(2, 0, 1);
        let mut keyed = query(u64::MAX, 5, 5);
        keyed.keys = vec![77];
        let mut ledger2 = Ledger::new(3);
        ledger2.enter(b, keyed);
        assert_eq!(ledger2.enter(e, q.clone()), vec![b]);
        // An earlier page that reads a key this one is indexed under: this one waits for it too.
        let mut ledger3 = Ledger::new(3);
        let mut reads = query(u64::MAX, 6, 6);
        reads.wanted = vec![88];
        ledger3.enter(b, reads);
        let mut has = query(0, 7, 7);
        has.keys = vec![88];
        assert_eq!(ledger3.enter(e, has), vec![b]);
        assert_eq!(ledger.resolve(a), vec![c, d]);
        assert_eq!(ledger.len(), 2);
    }

    #[test]
    fn a_query_and_a_remote_record_come_back_as_they_went() {
        let mut q = query(42, 7, 9);
        q.keys = vec![1, 2];
        q.wanted = vec![3];
        assert_eq!(Query::decode(&q.encode()).unwrap(), q);
        let store = simcrawl_store::Store::temporary().unwrap();
        let mut index = PageIndex::open(&store, 3, 0.8).unwrap();
        let url = url::Url::parse("http://127.0.0.1:1/a").unwrap();
        let text: String = (0..80).map(|i| format!("w{} ", i * 31 % 97)).collect();
        let html = format!("<title>T</title><article><p>{text}</p></article>");
        let analysis = crate::Analyzer::default().analyze_html(html.as_bytes(), &html, &url, None);
        let id = index.insert(url.as_str(), 5, 0, 0, &analysis).unwrap();
        let mut ask = query(analysis.simhash.0, 0, 0);
        ask.wanted = vec![5];
        let found = answer(&index, &mut crate::decider::NoTemplates, 2, &ask).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].keys, vec![5]);
        let back = RemoteRecord::decode(&found[0].encode()).unwrap();
        assert_eq!(back, found[0]);
        // Read through the merged view of another process, it is a near page with a remote id.
        let other = simcrawl_store::Store::temporary().unwrap();
        let local = PageIndex::open(&other, 3, 0.8).unwrap();
        let mut remote = Remote::default();
        remote.extend(found);
        let merged = Merged {
            local: &local,
            remote: &remote,
        };
        let rid = remote_id(2, id).unwrap();
        assert_eq!(merged.near(analysis.simhash), vec![(0, rid)]);
        assert_eq!(merged.page_by_key(5).unwrap(), Some(rid));
        assert_eq!(merged.record(rid).unwrap().unwrap().url, url.as_str());
        assert!(
            merged
                .sketch_of(&merged.record(rid).unwrap().unwrap())
                .unwrap()
                .is_some()
        );
        assert_eq!(merged.page_by_key(6).unwrap(), None);
        let events = [
            PartEvent::Query(ask),
            PartEvent::Answer {
                to: place(3, 1, 4),
                records: remote.records.clone(),
            },
            PartEvent::Verdict {
                place: place(9, 2, 0),
                indexed: true,
            },
            PartEvent::Link(
                simcrawl_frontier::Forwarded {
                    owner: 1,
                    url: "http://127.0.0.1:9/b".into(),
                    depth: 3,
                    referrer: Some("http://127.0.0.1:1/a".into()),
                    kind: simcrawl_frontier::ViaKind::Link,
                    hint: 12345,
                },
                simcrawl_fetch::AddressClass::Private,
            ),
            PartEvent::Claim { key: 99 },
            PartEvent::Rule {
                rule: crate::learn::Rule::Mirror(crate::rules::MirrorRule {
                    from: "127.0.0.1:2/mirror".into(),
                    to: "127.0.0.1:3".into(),
                }),
                active: true,
            },
            PartEvent::Claimed {
                key: 98,
                seen: true,
            },
        ];
        for event in events {
            assert_eq!(PartEvent::decode(&event.encode()).unwrap(), event);
        }
    }
}
