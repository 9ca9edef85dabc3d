//! [`FrontierStats`]: what the frontier has done and holds now.

use std::time::Duration;

use crate::config::RobotsPolicy;
use crate::counters::FrontierCounters;

/// The counters and the live state of a frontier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierStats {
    /// Every counter (durable; see [`Counter`](crate::Counter)).
    pub counters: FrontierCounters,
    /// URLs queued now, leased ones included.
    pub queued: u64,
    /// Requests in flight (leases and robots.txt requests).
    pub in_flight: u32,
    /// Hosts with queued URLs.
    pub hosts_with_queue: usize,
    /// Hosts held in memory (with queued URLs, in flight, or idle and not dropped yet).
    pub hosts_in_memory: usize,
    /// Queue heads held in memory: at most one per host, whatever its queue holds.
    pub heads_in_memory: usize,
    /// Entries in the ready heap, stale ones included.
    pub ready_heap_entries: usize,
    /// Hosts parked for asking a crawl-delay (or, in this session, a `Retry-After`) over the cap.
    pub parked_hosts: usize,
    /// Hosts with queued URLs that wait for their robots.txt: asked and not answered yet, or
    /// unreachable and to be asked again after a back-off.
    pub hosts_waiting_for_robots: usize,
    /// Whether robots.txt is obeyed in this session. Whether it was ignored in any session of the
    /// crawl is the counter `frontier.robots.ignored_sessions`.
    pub robots: RobotsPolicy,
}

/// A host parked for asking a crawl-delay over the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedHost {
    /// The host.
    pub host: String,
    /// The crawl-delay its robots.txt asks for (zero when only a `Retry-After` parked it).
    pub crawl_delay: Duration,
    /// The `Retry-After` over the cap its server asked for in this session, when that parked it.
    pub retry_after: Option<Duration>,
    /// URLs waiting in its queue.
    pub queued: u64,
}
