//! A crawl split over several processes: the frame of what one process tells another in a
//! round, and what they say when a session starts.
//!
//! Each process fetches the sites it owns ([`simcrawl_frontier::Shard`]: a jump consistent hash of
//! the registrable domain), keeps its own store and decides its own pages; what it asks and tells
//! the others (a page's query, the answers, verdicts, links of their sites, mirror rules) is
//! [`crate::partition`]'s protocol. In each round (`simcrawl_dist::Mesh`) a process sends every
//! process a [`Message`]: those events addressed to it, and the sender's [`Status`], from which every
//! process concludes the same round that the crawl is over (every process idle and silent,
//! twice: after the first, each process has its young rules' skips checked, as one process does
//! when it runs dry) or stopping (one was asked to stop). A session starts with a [`Hello`]:
//! the digest of the flags every process must share, the last round applied, and the messages
//! sent in the last rounds, so that a process killed before it applied them takes the links
//! the others sent it.

use crate::decide::Core;
use crate::error::CrawlError;
use simcrawl_store::codec::{CodecError, Reader, write_bytes_element, write_element};

/// The version of the messages' wire form: every process of a crawl runs the same simcrawl.
const WIRE_VERSION: u8 = 6;

/// What a process says in a round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    /// Where it stands.
    pub status: Status,
    /// Its events for the receiver since the last round ([`crate::partition::PartEvent`]s).
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

/// A process's first message of a session: where it stands in the rounds of the crawl, so that a
/// process that stopped before it applied the last rounds (a kill) catches up from one that did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hello {
    /// A digest of what its decisions depend on ([`config_digest`]): processes that disagree
    /// would not decide alike.
    pub config: u64,
    /// The same part by part ([`config_parts`]), to name what differs.
    pub parts: Vec<u64>,
    /// The last round it applied.
    pub applied: Option<u64>,
    /// The last rounds it sent, with its messages to each process (in process order), in order.
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
        write_element(&(self.parts.len() as u64), &mut out);
        for part in &self.parts {
            write_element(part, &mut out);
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
        // The parts came after the rest (a hello without them is of an earlier build).
        let parts = if r.clone().rest().is_empty() {
            Vec::new()
        } else {
            let n: u64 = r.element()?;
            (0..n)
                .map(|_| r.element())
                .collect::<Result<Vec<u64>, _>>()?
        };
        r.finish()?;
        Ok(Hello {
            config,
            parts,
            applied: has_applied.then_some(applied),
            logged,
        })
    }
}

/// What a process's decisions depend on, part by part, each with what names it to a user: the
/// seeds, the near-duplicate threshold and MinHash check, the URL normalisation, the learning
/// thresholds, which links are followed, the scope, the trap guards, the depth limit and the number
/// of processes. Every process of a crawl must have the same; a process that differs is told which.
pub fn config_parts(config: &crate::CrawlConfig) -> Vec<(&'static str, u64)> {
    let f = &config.frontier;
    let digest = |what: String| xxhash_rust::xxh3::xxh3_64(what.as_bytes());
    vec![
        ("the seeds", digest(format!("{:?}", config.seeds))),
        ("--k", digest(config.k.to_string())),
        ("--jaccard", digest(config.jaccard.to_string())),
        (
            "the URL normalisation flags",
            digest(format!("{:?}", config.canon)),
        ),
        (
            "the learning flags (--min-evidence, --min-agreement, --mirror-agreement, --verify-every, --verify-every-max)",
            digest(format!("{:?}", config.learn)),
        ),
        (
            "--follow-duplicate-links",
            digest(config.follow_duplicate_links.to_string()),
        ),
        (
            "--max-links-per-page",
            digest(config.max_links_per_page.to_string()),
        ),
        ("--no-dedup", digest(config.dedup.to_string())),
        ("--scope", digest(format!("{:?}", f.scope))),
        ("--include", digest(format!("{:?}", f.include))),
        ("--exclude", digest(format!("{:?}", f.exclude))),
        ("the trap limits", digest(format!("{:?}", f.traps))),
        ("--max-depth", digest(format!("{:?}", f.max_depth))),
        (
            "--processes",
            digest(format!("{:?}", f.shard.map(|s| s.count()))),
        ),
    ]
}

/// One digest of [`config_parts`].
pub fn config_digest(config: &crate::CrawlConfig) -> u64 {
    let parts: Vec<u8> = config_parts(config)
        .iter()
        .flat_map(|(_, d)| d.to_le_bytes())
        .collect();
    xxhash_rust::xxh3::xxh3_64(&parts)
}

/// What of `theirs` (another process's [`config_parts`] digests, in order) differs from `ours`,
/// by name; none when the two do not even have as many (another build of simcrawl).
pub fn config_differences(ours: &[(&'static str, u64)], theirs: &[u64]) -> Vec<&'static str> {
    if ours.len() != theirs.len() {
        return Vec::new();
    }
    ours.iter()
        .zip(theirs)
        .filter(|((_, a), b)| a != *b)
        .map(|((name, _), _)| *name)
        .collect()
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
            parts: vec![1, 2, 3],
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
    fn a_process_with_other_flags_is_told_which() {
        let ours = crate::CrawlConfig::new("/s", vec!["http://a.test/".into()]);
        let mut theirs = ours.clone();
        theirs.k = 5;
        theirs.frontier.max_depth = Some(2);
        let parts = config_parts(&ours);
        let their_parts: Vec<u64> = config_parts(&theirs).iter().map(|(_, d)| *d).collect();
        assert_eq!(
            config_differences(&parts, &their_parts),
            vec!["--k", "--max-depth"]
        );
        assert_ne!(config_digest(&ours), config_digest(&theirs));
        let same: Vec<u64> = parts.iter().map(|(_, d)| *d).collect();
        assert!(config_differences(&parts, &same).is_empty());
        // A hello without its parts is of another build: nothing to name.
        assert!(config_differences(&parts, &[]).is_empty());
        let old = Hello {
            config: 7,
            ..Hello::default()
        };
        let mut bytes = old.encode();
        // The parts' count (a u64), which an earlier build did not write.
        bytes.truncate(bytes.len() - std::mem::size_of::<u64>());
        assert_eq!(Hello::decode(&bytes).unwrap(), old);
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
