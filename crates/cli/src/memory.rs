//! The binaries' allocator settings (`simcrawl` and `simcrawl-bench`, which includes this file):
//! libraries leave the allocator to the program that embeds them.
//!
//! How a crawl process keeps glibc's allocator from holding memory it no longer uses.
//!
//! glibc gives each thread that allocates an arena of its own, up to eight per core, and returns
//! an arena's free memory to the system only from its top. A crawl allocates on many threads:
//! the fetches on tokio's workers, the page analyses on the blocking pool (a new thread whenever
//! all are busy), the full-text index on its own. Each arena then stays as large as the most it
//! ever held, its free pages pinned by the few blocks that live on (a queued URL parsed by an
//! analysis, a response's headers). Measured with `simcrawl-bench grow` at 100 k pages of a large test
//! web: 329–392 MiB resident with glibc's default arenas (sixteen on two cores), of which the heap
//! in use was 127–129 MiB; 191 MiB with four arenas, at the same CPU time per page.
//!
//! Both binaries now allocate through jemalloc (their `#[global_allocator]`), whose CPU per page
//! stays flat as a crawl's heap grows where glibc's did not; the cap still bounds what C code and a
//! library embedding the crawl with glibc's malloc allocate.

/// The most arenas the allocator may make: enough that the threads at work on two cores seldom
/// wait for one another's allocations, few enough that their free memory is shared.
pub const MAX_ARENAS: i32 = 4;

/// Caps glibc's arenas at [`MAX_ARENAS`]. Call it first thing in `main`, before any thread is
/// started (an arena made before stays). Elsewhere than glibc it does nothing.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets one of the allocator's parameters.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MAX_ARENAS);
    }
}

/// How long jemalloc keeps pages freed but not returned, in milliseconds (its default: 10,000).
pub const DIRTY_DECAY_MS: isize = 1_000;

/// Makes jemalloc, the binaries' allocator, return the pages a crawl frees within
/// [`DIRTY_DECAY_MS`]: with its default of ten seconds the frontier's 10 M queued URLs held 283 MiB
/// after the queues' commits freed their buffers, against 266 with glibc's malloc trimmed, and a
/// short crawl's peak RSS was 40 MB higher. Call it first thing in `main`, with
/// [`limit_arenas`]: arenas made later take the new default. Where jemalloc is not the allocator
/// it only tunes jemalloc's own idle state.
pub fn return_freed_pages_sooner() {
    for name in [
        &b"arenas.dirty_decay_ms\0"[..],
        &b"arena.0.dirty_decay_ms\0"[..],
    ] {
        // Called before logging is set up; where jemalloc is not the allocator the write fails
        // and the default stays, which is harmless.
        // SAFETY: each name is a NUL-terminated jemalloc control whose value is a `ssize_t`
        // (`isize`), as written.
        let _ = unsafe { tikv_jemalloc_ctl::raw::write(name, DIRTY_DECAY_MS) };
    }
}
