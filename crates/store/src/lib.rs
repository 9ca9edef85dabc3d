//! simcrawl's persistent store: typed, named trees over sled 0.34.7, guarded by a lock file.
//!
//! This is the only crate in simcrawl that knows sled. It gives the rest of the crawler a few durable
//! data structures with stable, documented byte formats:
//!
//! - [`Tree<K, V>`]: a named tree with typed keys and values, ordered by key, with an atomic
//!   [`insert_if_absent`](Tree::insert_if_absent) (pages, digests, fingerprints, rules).
//! - [`Counters`]: named `u64` counters with atomic updates, so that totals never need a full scan.
//! - [`Log<V>`]: an append-only log with monotonic `u64` ids (the skip log), in a records file,
//!   its length committed with the queues.
//! - [`Records<V>`]: values by dense `u32` id in an append-only file beside sled, read with two
//!   `pread`s and held nowhere in memory (the page records: sled holds memory for every entry).
//! - [`Queues<Q, V>`]: durable FIFO queues, one per key, with lengths in memory (the per-host queues
//!   of the frontier), [`KeySet`]: a set of 128-bit keys in memory (the seen set), and [`KeyMap`]:
//!   128-bit keys to `u32`s (the page index's digests), its older members in unnamed files with an
//!   index in memory. They are written behind:
//!   changes are kept in memory and committed together in one sled transaction
//!   ([`Store::commit`], [`Store::flush`]), because a sled write per URL would cap the frontier near
//!   20,000 URLs per second, and sled holds 20–50 bytes of memory per entry it keeps.
//!
//! A [`Store`] is one directory used by one process at a time: a second process gets a
//! [`StoreError::Locked`] naming the lock file and the pid holding it. Every way opening can fail is a
//! typed [`StoreError`] that names the path and says what to do. The store records a
//! [`SCHEMA_VERSION`] and refuses a store written with another one.
//!
//! # What this crate is not for
//!
//! It does not know URLs, pages, fingerprints or hosts, and it decides nothing: it stores the bytes of
//! whatever [`Codec`] types its callers define, and answers questions like "was this key new?". What a
//! key means, and what to do about it, belongs to the crates that call it (`frontier`, `crawl`).
//!
//! # Layout
//!
//! - `store`: [`Store`], [`Options`]: opening, the schema check, handing out typed handles,
//!   [`flush`](Store::flush) and when to call it.
//! - [`codec`]: the [`Codec`] trait, its impls for integers, strings, bytes and tuples, and helpers
//!   for writing codecs of records. All byte formats are documented there.
//! - `tree`: [`Tree`] and its iterator [`Iter`].
//! - `meta`: the reserved `meta` tree, the schema version and [`Counters`].
//! - `log`: [`Log`].
//! - `queue`: [`Queues`] and [`QueueIter`], and the commit order.
//! - `keyset`: [`KeySet`] and [`KeyMap`].
//! - `records`: [`Records`] and its format.
//! - `lock`: the lock file ([`LOCK_FILE_NAME`]).
//! - `error`: [`StoreError`].
//!
//! # On disk
//!
//! ```text
//! <store>/simcrawl.lock        holder's pid; locked with flock while a process uses the store
//! <store>/simcrawl.store       written once the store is initialised (tells damage from a new store)
//! <store>/sled/                sled's files
//! <store>/<name>.records       a Records' or a Log's values, in frames (see `records`)
//! <store>/<name>.index         its index: each id's frame
//! ```
//!
//! Tree names are chosen by callers. `meta` and names starting with `meta/` are reserved by this crate,
//! names starting with `__sled__` by sled.
//!
//! # Example
//!
//! ```
//! use simcrawl_store::{Store, StoreError};
//!
//! # fn main() -> Result<(), StoreError> {
//! let store = Store::temporary()?; // `Store::open(dir)` for a real one
//!
//! // A typed tree used as a set: 128-bit URL key hash -> nothing.
//! let seen = store.tree::<u128, ()>("seen")?;
//! assert!(seen.insert_if_absent(&0xfeed, &())?); // new
//! assert!(!seen.insert_if_absent(&0xfeed, &())?); // already seen
//!
//! // A counter in the meta tree.
//! let counters = store.counters();
//! counters.add("urls_seen", 1)?;
//! assert_eq!(counters.get("urls_seen")?, 1);
//!
//! // The append-only log: ids start at 1 and only grow.
//! let skips = store.log::<String>("skips")?;
//! let id = skips.append(&"https://example.com/a?utm=x duplicates /a".to_owned())?;
//! assert_eq!(skips.last_id()?, Some(id));
//!
//! // Records by dense id, in a file beside sled's: ids 0, 1, 2, ...
//! let docs = store.records::<String>("docs")?;
//! let page = docs.push(&"the first page's record".to_owned())?;
//! assert_eq!(docs.get(page)?.as_deref(), Some("the first page's record"));
//!
//! // One durable queue per host; lease the head, remove it when the work is done.
//! let queues = store.queues::<String, String>("queues")?;
//! let host = "example.com".to_owned();
//! queues.push_back(&host, &"https://example.com/".to_owned())?;
//! queues.push_back(&host, &"https://example.com/b".to_owned())?;
//! let (seq, url) = queues.front(&host)?.expect("queued");
//! assert_eq!(url, "https://example.com/");
//! queues.remove(&host, seq)?; // acknowledged
//! assert_eq!(queues.len(&host)?, 1);
//!
//! store.flush()?; // at a checkpoint, and before exiting
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod codec;
mod error;
mod keyset;
mod lock;
mod log;
mod meta;
mod owner;
mod queue;
mod records;
mod store;
mod tree;

pub use codec::{Codec, CodecError, EncodeAs};
pub use error::{BackendError, StoreError};
pub use keyset::{
    Absent, KEYS_PER_CHUNK, KeyMap, KeySet, Probe, RECENT_MAX, SPILL_MIN_MEMBERS, SpillingKeySet,
};
pub use lock::LOCK_FILE_NAME;
pub use log::{LOG_CHUNK, Log, LogIter};
pub use meta::{Counters, META_TREE, SCHEMA_VERSION};
pub use queue::{
    CHUNK_ITEMS, HEAD_CACHE_BYTES, PENDING_MAX, PENDING_REMOVALS_MAX, QueueIter, Queues,
};
pub use records::{RecordIter, Records};
pub use store::{INITIALISED_FILE_NAME, Options, SLED_DIR_NAME, Store};
pub use tree::{Iter, Tree};
