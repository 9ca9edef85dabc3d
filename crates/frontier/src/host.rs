//! The in-memory side of the per-host queues: one [`HostState`] per active host, the ready heap
//! ordered by when each host is due, and the list of idle hosts that may be dropped from memory.
//!
//! What is in memory per host is bounded whatever its queue holds: the depths that have items
//! (with their lengths), at most one head item, the leases in flight, and its robots.txt state per
//! origin. The items themselves stay in the store.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use crate::records::{HostRecord, QueuedUrl};
use crate::robots::RobotsState;

/// The first item of a host's queues that is not leased.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) depth: u32,
    pub(crate) seq: u64,
    pub(crate) item: QueuedUrl,
}

/// One origin's robots.txt state, inside its host.
#[derive(Debug)]
pub(crate) struct Origin {
    pub(crate) origin: Box<str>,
    pub(crate) robots: RobotsState,
    /// Consecutive unreachable answers (kept across the states, for the back-off).
    pub(crate) failures: u32,
    /// The crawl-delay its robots.txt asks for.
    pub(crate) crawl_delay: Option<Duration>,
}

/// A host in memory.
#[derive(Debug)]
pub(crate) struct HostState {
    pub(crate) name: Box<str>,
    /// The durable record; `dirty` when it changed since it was written.
    pub(crate) record: HostRecord,
    pub(crate) dirty: bool,
    /// Depths with queued items (leased ones included) and how many, sorted by depth.
    pub(crate) depths: Vec<(u32, u64)>,
    /// The first unleased item, once loaded.
    pub(crate) head: Option<Head>,
    /// Leased items: (depth, seq).
    pub(crate) leased: Vec<(u32, u64)>,
    /// Leased items whose response has arrived ([`Frontier::answered`](crate::Frontier::answered)):
    /// still leased, no longer a request to the host.
    pub(crate) answered: Vec<(u32, u64)>,
    /// Leased items answered and analysed whose decision waits for something else (a sharded
    /// crawl's round: [`Frontier::hold`](crate::Frontier::hold)): no request, and not ahead.
    pub(crate) held: Vec<(u32, u64)>,
    /// Held items whose decision waits for more of the host's pages
    /// ([`Frontier::set_aside`](crate::Frontier::set_aside)): they never keep the host's slot.
    pub(crate) set_aside: Vec<(u32, u64)>,
    /// robots.txt requests out for this host's origins.
    pub(crate) robots_in_flight: u32,
    /// Whether the head waits for a robots.txt answer.
    pub(crate) waiting_for_robots: bool,
    /// Not before this instant (politeness, deferral, robots back-off); `None` is "now".
    pub(crate) next_due: Option<Instant>,
    /// The origins seen on this host, with their robots.txt.
    pub(crate) origins: Vec<Origin>,
    /// The ticket of this host's live entry in the ready heap.
    pub(crate) ticket: Option<u64>,
    /// The due time and depth of that entry.
    pub(crate) scheduled_at: (Option<Instant>, u32),
    /// Whether the host is on the idle list, and the mark of its entry there.
    pub(crate) idle: bool,
    pub(crate) idle_mark: u64,
    /// Pages handed out in this session (saturating), for [`Lease::after_crash`](crate::Lease).
    pub(crate) session_handouts: u32,
    /// The `Retry-After` (ms, 0 = none) over the cap that parked the host for this session
    /// ([`Frontier::server_asked_delay`](crate::Frontier::server_asked_delay)). Not stored: the
    /// next session asks the host again.
    pub(crate) retry_parked_ms: u64,
}

impl HostState {
    pub(crate) fn new(name: &str, record: HostRecord) -> HostState {
        HostState {
            name: name.into(),
            record,
            dirty: false,
            depths: Vec::new(),
            head: None,
            leased: Vec::new(),
            answered: Vec::new(),
            held: Vec::new(),
            set_aside: Vec::new(),
            robots_in_flight: 0,
            waiting_for_robots: false,
            next_due: None,
            origins: Vec::new(),
            ticket: None,
            scheduled_at: (None, 0),
            idle: false,
            idle_mark: 0,
            session_handouts: 0,
            retry_parked_ms: 0,
        }
    }

    /// Whether its URLs stay queued and are not handed out: parked for a robots.txt
    /// crawl-delay over the cap (durably), or for a `Retry-After` over it (this session).
    pub(crate) fn parked(&self) -> bool {
        self.record.parked_delay_ms != 0 || self.retry_parked_ms != 0
    }

    /// Items queued, leased ones included.
    pub(crate) fn queued(&self) -> u64 {
        self.depths.iter().map(|(_, n)| n).sum()
    }

    /// Requests in flight: leases and robots.txt requests, less the leases whose response has
    /// arrived, up to `ahead` of them
    /// ([`FrontierConfig::max_answered_ahead`](crate::FrontierConfig::max_answered_ahead)). They
    /// free their slots, so that fetching the next page overlaps processing these; more do not:
    /// every page fetched ahead of what the caller has processed is a page fetched before the
    /// evidence of the last (a mirror rule learned later).
    pub(crate) fn in_flight(&self, ahead: u32) -> u32 {
        // A host's first pages are where its rules are learned: there, a held page keeps its
        // slot, so that no more of them are fetched ahead of their verdicts than one process
        // fetches (a sharded crawl decides a page a round or two after its fetch).
        let held = if self.session_handouts >= crate::RUN_AHEAD_AFTER {
            self.held.len()
        } else {
            self.set_aside.len()
        };
        let open = self.leased.len() - held - self.answered.len().min(ahead as usize);
        u32::try_from(open).unwrap_or(u32::MAX) + self.robots_in_flight
    }

    /// Whether some queued item is not leased.
    pub(crate) fn has_unleased(&self) -> bool {
        self.queued() > self.leased.len() as u64
    }

    /// The smallest depth with an unleased item (for ordering hosts that are due together).
    pub(crate) fn min_depth(&self) -> u32 {
        if let Some(head) = &self.head {
            return head.depth;
        }
        self.depths
            .iter()
            .find(|(depth, n)| *n > self.leased.iter().filter(|(d, _)| d == depth).count() as u64)
            .map_or(u32::MAX, |(depth, _)| *depth)
    }

    /// Counts one more item at `depth`.
    pub(crate) fn add_item(&mut self, depth: u32) {
        self.add_items(depth, 1);
    }

    /// Counts `n` more items at `depth`.
    pub(crate) fn add_items(&mut self, depth: u32, n: u64) {
        match self.depths.binary_search_by_key(&depth, |(d, _)| *d) {
            Ok(i) => self.depths[i].1 += n,
            Err(i) => self.depths.insert(i, (depth, n)),
        }
    }

    /// Counts one item fewer at `depth`.
    pub(crate) fn remove_item(&mut self, depth: u32) {
        if let Ok(i) = self.depths.binary_search_by_key(&depth, |(d, _)| *d) {
            self.depths[i].1 -= 1;
            if self.depths[i].1 == 0 {
                self.depths.remove(i);
            }
        }
    }

    /// Pushes the politeness clock to at least `at`.
    pub(crate) fn not_before(&mut self, at: Instant) {
        if self.next_due.is_none_or(|due| due < at) {
            self.next_due = Some(at);
        }
    }

    /// The robots.txt state of `origin`, created as not loaded.
    pub(crate) fn origin_mut(&mut self, origin: &str) -> &mut Origin {
        let index = match self.origins.iter().position(|o| &*o.origin == origin) {
            Some(i) => i,
            None => {
                self.origins.push(Origin {
                    origin: origin.into(),
                    robots: RobotsState::NotLoaded,
                    failures: 0,
                    crawl_delay: None,
                });
                self.origins.len() - 1
            }
        };
        &mut self.origins[index]
    }

    /// The largest crawl-delay any of its origins asks for.
    pub(crate) fn crawl_delay(&self) -> Option<Duration> {
        self.origins.iter().filter_map(|o| o.crawl_delay).max()
    }
}

/// An entry of the ready heap: hosts come out by due time, then depth, then age of the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    due: Option<Instant>,
    depth: u32,
    ticket: u64,
    id: u32,
}

/// What the top of the ready heap says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// This host is due now.
    Host(u32),
    /// The next host is due at this instant.
    At(Instant),
    /// No host is scheduled.
    Nothing,
}

/// Every host in memory, the ready heap and the idle list.
#[derive(Debug, Default)]
pub(crate) struct HostTable {
    slots: Vec<Option<HostState>>,
    free: Vec<u32>,
    by_name: HashMap<Box<str>, u32>,
    heap: BinaryHeap<Reverse<Entry>>,
    idle: VecDeque<(u32, u64)>,
    idle_count: usize,
    next_ticket: u64,
    /// The id `id` found last: links mostly come in runs on one host.
    last_found: Cell<u32>,
}

impl HostTable {
    pub(crate) fn id(&self, name: &str) -> Option<u32> {
        let last = self.last_found.get();
        if self.slot_named(last, name) {
            return Some(last);
        }
        let id = self.by_name.get(name).copied()?;
        self.last_found.set(id);
        Some(id)
    }

    /// Whether slot `id` holds the host `name` (a cheap check of an id kept from earlier).
    pub(crate) fn slot_named(&self, id: u32, name: &str) -> bool {
        self.slots
            .get(id as usize)
            .and_then(Option::as_ref)
            .is_some_and(|h| &*h.name == name)
    }

    pub(crate) fn insert(&mut self, state: HostState) -> u32 {
        let name = state.name.clone();
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(state);
                id
            }
            None => {
                self.slots.push(Some(state));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 hosts in memory")
            }
        };
        self.by_name.insert(name, id);
        id
    }

    pub(crate) fn get(&self, id: u32) -> &HostState {
        self.slots[id as usize]
            .as_ref()
            .expect("host ids in use point at a host")
    }

    /// The host in slot `id`, if that slot is in use.
    pub(crate) fn slot_mut(&mut self, id: u32) -> Option<&mut HostState> {
        self.slots.get_mut(id as usize).and_then(Option::as_mut)
    }

    pub(crate) fn get_mut(&mut self, id: u32) -> &mut HostState {
        self.slots[id as usize]
            .as_mut()
            .expect("host ids in use point at a host")
    }

    /// Every host in memory.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &HostState> {
        self.slots.iter().flatten()
    }

    pub(crate) fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Hosts in memory with something queued or in flight.
    pub(crate) fn active(&self) -> usize {
        self.len().saturating_sub(self.idle_count)
    }

    /// Puts `id` on the ready heap at its due time and depth, replacing its live entry if that
    /// differs.
    pub(crate) fn schedule(&mut self, id: u32) {
        let host = self.get(id);
        let key = (host.next_due, host.min_depth());
        if host.ticket.is_some() && host.scheduled_at == key {
            return;
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let host = self.get_mut(id);
        host.ticket = Some(ticket);
        host.scheduled_at = key;
        self.heap.push(Reverse(Entry {
            due: key.0,
            depth: key.1,
            ticket,
            id,
        }));
    }

    /// Takes `id` off the ready heap (its entry becomes stale).
    pub(crate) fn unschedule(&mut self, id: u32) {
        self.get_mut(id).ticket = None;
    }

    /// Pops the host due soonest if it is due at `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Due {
        while let Some(Reverse(top)) = self.heap.peek().copied() {
            let live = self.slots[top.id as usize]
                .as_ref()
                .is_some_and(|h| h.ticket == Some(top.ticket));
            if !live {
                self.heap.pop();
                continue;
            }
            if let Some(due) = top.due
                && due > now
            {
                return Due::At(due);
            }
            self.heap.pop();
            self.get_mut(top.id).ticket = None;
            return Due::Host(top.id);
        }
        Due::Nothing
    }

    /// Entries in the heap, stale ones included (for the memory tests).
    pub(crate) fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Marks `id` idle (nothing queued, nothing in flight).
    pub(crate) fn mark_idle(&mut self, id: u32) {
        let host = self.get_mut(id);
        if host.idle {
            return;
        }
        host.idle = true;
        host.idle_mark += 1;
        let mark = host.idle_mark;
        self.idle.push_back((id, mark));
        self.idle_count += 1;
        if self.idle.len() > 2 * self.idle_count + 1024 {
            // Entries of hosts that became active again pile up: keep the current ones only.
            let slots = &self.slots;
            self.idle.retain(|&(id, mark)| {
                slots[id as usize]
                    .as_ref()
                    .is_some_and(|h| h.idle && h.idle_mark == mark)
            });
        }
    }

    /// Marks `id` active again.
    pub(crate) fn mark_active(&mut self, id: u32) {
        let host = self.get_mut(id);
        if host.idle {
            host.idle = false;
            self.idle_count -= 1;
        }
    }

    /// Removes idle hosts, oldest first, while more than `keep` are idle and the oldest's
    /// politeness delay has passed at `now`. Returns the removed hosts (to write their records).
    pub(crate) fn evict_idle(&mut self, keep: usize, now: Instant) -> Vec<HostState> {
        let mut evicted = Vec::new();
        while self.idle_count > keep {
            let Some((id, mark)) = self.idle.pop_front() else {
                break;
            };
            let current = self.slots[id as usize]
                .as_ref()
                .is_some_and(|h| h.idle && h.idle_mark == mark);
            if !current {
                continue; // it became active since, or was removed
            }
            if self.get(id).next_due.is_some_and(|due| due > now) {
                // Dropping it now would forget when it may be asked again.
                self.idle.push_front((id, mark));
                break;
            }
            let state = self.slots[id as usize].take().expect("checked above");
            self.by_name.remove(&state.name);
            self.free.push(id);
            self.idle_count -= 1;
            evicted.push(state);
        }
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str) -> HostState {
        let mut state = HostState::new(name, HostRecord::default());
        state.add_item(1);
        state
    }

    #[test]
    fn soonest_due_first_then_shallowest() {
        let t0 = Instant::now();
        let mut table = HostTable::default();
        let a = table.insert(host("a"));
        let b = table.insert(host("b"));
        let c = table.insert(host("c"));
        table.get_mut(a).next_due = Some(t0 + Duration::from_secs(2));
        table.get_mut(b).next_due = Some(t0 + Duration::from_secs(1));
        table.get_mut(c).next_due = Some(t0 + Duration::from_secs(1));
        table.get_mut(c).add_item(0);
        for id in [a, b, c] {
            table.schedule(id);
        }
        assert_eq!(table.pop_due(t0), Due::At(t0 + Duration::from_secs(1)));
        let later = t0 + Duration::from_secs(5);
        assert_eq!(table.pop_due(later), Due::Host(c));
        assert_eq!(table.pop_due(later), Due::Host(b));
        assert_eq!(table.pop_due(later), Due::Host(a));
        assert_eq!(table.pop_due(later), Due::Nothing);
    }

    #[test]
    fn rescheduling_leaves_one_live_entry() {
        let t0 = Instant::now();
        let mut table = HostTable::default();
        let a = table.insert(host("a"));
        table.schedule(a);
        table.schedule(a); // same key: no new entry
        assert_eq!(table.heap_len(), 1);
        table.get_mut(a).next_due = Some(t0 + Duration::from_secs(3));
        table.schedule(a);
        assert_eq!(table.heap_len(), 2);
        assert_eq!(table.pop_due(t0), Due::At(t0 + Duration::from_secs(3)));
        table.unschedule(a);
        assert_eq!(table.pop_due(t0 + Duration::from_secs(9)), Due::Nothing);
    }

    #[test]
    fn idle_hosts_are_evicted_oldest_first_once_polite() {
        let t0 = Instant::now();
        let mut table = HostTable::default();
        let ids: Vec<u32> = ["a", "b", "c"]
            .iter()
            .map(|n| table.insert(HostState::new(n, HostRecord::default())))
            .collect();
        table.get_mut(ids[0]).next_due = Some(t0 + Duration::from_secs(1));
        for id in &ids {
            table.mark_idle(*id);
        }
        // `a` is oldest but not yet polite to forget.
        assert!(table.evict_idle(1, t0).is_empty());
        let evicted = table.evict_idle(1, t0 + Duration::from_secs(1));
        let names: Vec<&str> = evicted.iter().map(|h| &*h.name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(table.len(), 1);
        assert_eq!(table.id("c"), Some(ids[2]));
        // A reactivated host is not evicted.
        table.mark_active(ids[2]);
        assert!(table.evict_idle(0, t0 + Duration::from_secs(9)).is_empty());
        // Slots are reused.
        let d = table.insert(HostState::new("d", HostRecord::default()));
        assert!(d == ids[0] || d == ids[1]);
    }
}
