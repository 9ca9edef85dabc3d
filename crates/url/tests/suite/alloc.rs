//! Allocation counts on the hot path: canonicalising a typical URL must stay cheap.
//!
//! A counting global allocator (per thread, so parallel tests do not disturb each other)
//! checks how many heap allocations one call makes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use simcrawl_url::{CanonOptions, Canonicalizer, FetchUrl};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is a
// const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// `(url, most allocations for key_of)`: one for the key's string, one more for splitting a
/// query, one more when percent-escapes must be rewritten.
const TYPICAL: &[(&str, usize)] = &[
    (
        "https://www.example.com/products/widgets/blue-widget-2000.html",
        1,
    ),
    (
        "https://www.example.com/products/widgets/blue-widget-2000.html?color=blue&size=m&ref=home",
        2,
    ),
    (
        "https://www.example.com/products/widgets/blue-widget-2000.html?size=m&color=blue&utm_source=x",
        2,
    ),
    (
        "http://Example.com:80/a/../b/%7euser/page.html?b=2&&a=1#top",
        3,
    ),
];

#[test]
fn typical_urls_allocate_only_the_strings_they_return() {
    let canon = Canonicalizer::new(CanonOptions::default(), Default::default());
    for &(url, most) in TYPICAL {
        let fetch = FetchUrl::parse(url, None).unwrap();
        let key_of = allocations(|| drop(canon.key_of(&fetch)));
        assert!(
            key_of <= most,
            "key_of({url:?}) allocated {key_of} times, expected at most {most}"
        );
        // Canonicalising is parsing plus building the key: no copy, no second parse.
        let parse = allocations(|| drop(FetchUrl::parse(url, None)));
        let full = allocations(|| drop(canon.canonicalize(url, None)));
        assert_eq!(full, parse + key_of, "canonicalize({url:?})");
    }
}
