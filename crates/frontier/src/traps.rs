//! The trap guards: cheap checks on the shape of a URL that catch calendars, session paths and
//! relative-link loops (`/a/b/a/b/a/b/...`) before they fill a queue.

use simcrawl_url::Url;

use crate::admission::Trap;
use crate::config::TrapLimits;

/// The first guard `url` (the URL to fetch, `text` its serialisation) fails, if any.
///
/// Path segments are the `/`-separated parts of the path; empty ones (from `//` or a trailing `/`)
/// are not counted. Query parameters are the non-empty `&`-separated parts of the query.
pub(crate) fn check(url: &Url, text: &str, limits: &TrapLimits) -> Option<Trap> {
    if text.len() > limits.max_url_len {
        return Some(Trap::UrlTooLong {
            len: text.len(),
            max: limits.max_url_len,
        });
    }
    let path = url.path();
    // Non-empty segments: bytes other than `/` that follow a `/` or start the path.
    let mut count = 0;
    let mut after_slash = true;
    for &byte in path.as_bytes() {
        let slash = byte == b'/';
        count += usize::from(after_slash && !slash);
        after_slash = slash;
    }
    if count > limits.max_segments {
        return Some(Trap::TooManySegments {
            count,
            max: limits.max_segments,
        });
    }
    // No segment can repeat too often in a path that short (most paths). Most paths that can
    // have at most 16 segments, kept on the stack.
    let mut stack = [""; 16];
    let heap: Vec<&str>;
    let segments: &[&str] = if count <= limits.max_segment_repeats {
        &[]
    } else if count <= stack.len() {
        for (slot, segment) in stack
            .iter_mut()
            .zip(path.split('/').filter(|segment| !segment.is_empty()))
        {
            *slot = segment;
        }
        &stack[..count]
    } else {
        heap = path
            .split('/')
            .filter(|segment| !segment.is_empty())
            .collect();
        &heap
    };
    // At most `max_segments` segments: counting by pairs is cheaper than hashing them.
    for (i, segment) in segments.iter().enumerate() {
        if segments[..i].contains(segment) {
            continue; // counted at its first occurrence
        }
        let count = segments[i..].iter().filter(|s| *s == segment).count();
        if count > limits.max_segment_repeats {
            return Some(Trap::RepeatedSegment {
                segment: (*segment).to_owned(),
                count,
                max: limits.max_segment_repeats,
            });
        }
    }
    if let Some(query) = url.query() {
        // Non-empty parameters: bytes other than `&` that follow a `&` or start the query.
        let mut count = 0;
        let mut after_amp = true;
        for &byte in query.as_bytes() {
            let amp = byte == b'&';
            count += usize::from(after_amp && !amp);
            after_amp = amp;
        }
        if count > limits.max_params {
            return Some(Trap::TooManyParams {
                count,
                max: limits.max_params,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trap(input: &str) -> Option<Trap> {
        let url = Url::parse(input).expect("test URL parses");
        check(&url, url.as_str(), &TrapLimits::default())
    }

    #[test]
    fn ordinary_urls_pass() {
        assert_eq!(trap("https://example.com/"), None);
        assert_eq!(trap("https://example.com/a/b/c?x=1&y=2"), None);
        // Three repeats are allowed; empty segments do not count.
        assert_eq!(trap("https://example.com/a/b/a/c/a//"), None);
    }

    #[test]
    fn url_length() {
        let at_limit = format!("https://example.com/{}", "x".repeat(2048 - 20));
        assert_eq!(at_limit.len(), 2048);
        assert_eq!(trap(&at_limit), None);
        let over = format!("{at_limit}y");
        assert_eq!(
            trap(&over),
            Some(Trap::UrlTooLong {
                len: 2049,
                max: 2048
            })
        );
    }

    #[test]
    fn repeated_segments_need_not_be_adjacent() {
        assert_eq!(
            trap("https://example.com/a/b/a/b/a/b/a/b"),
            Some(Trap::RepeatedSegment {
                segment: "a".into(),
                count: 4,
                max: 3
            })
        );
        assert_eq!(
            trap("https://example.com/x/cal/cal/cal/cal"),
            Some(Trap::RepeatedSegment {
                segment: "cal".into(),
                count: 4,
                max: 3
            })
        );
    }

    #[test]
    fn repeats_are_found_in_paths_of_any_length() {
        let limits = TrapLimits {
            max_segments: 64,
            ..TrapLimits::default()
        };
        // Distinct segments, then a fourth "a" at the end: 16 segments (on the stack) and 20.
        for n in [12, 16] {
            let mut path: String = (0..n - 1).map(|i| format!("/s{i}")).collect();
            path = path.replacen("/s1/", "/a/", 1).replacen("/s3/", "/a/", 1);
            path = path.replacen("/s5/", "/a/", 1);
            let input = format!("https://example.com{path}/a");
            let url = Url::parse(&input).expect("test URL parses");
            assert_eq!(
                check(&url, url.as_str(), &limits),
                Some(Trap::RepeatedSegment {
                    segment: "a".into(),
                    count: 4,
                    max: 3
                }),
                "{input}"
            );
        }
        // 40 segments (on the heap), each of ten four times.
        let long: String = (0..40).map(|i| format!("/s{}", i % 10)).collect();
        let url = Url::parse(&format!("https://example.com{long}")).expect("test URL parses");
        assert_eq!(
            check(&url, url.as_str(), &limits),
            Some(Trap::RepeatedSegment {
                segment: "s0".into(),
                count: 4,
                max: 3
            })
        );
        let distinct: String = (0..30).map(|i| format!("/s{i}")).collect();
        let url = Url::parse(&format!("https://example.com{distinct}")).expect("test URL parses");
        assert_eq!(check(&url, url.as_str(), &limits), None);
    }

    #[test]
    fn segment_count() {
        let sixteen: String = (0..16).map(|i| format!("/s{i}")).collect();
        assert_eq!(trap(&format!("https://example.com{sixteen}")), None);
        assert_eq!(
            trap(&format!("https://example.com{sixteen}/s16")),
            Some(Trap::TooManySegments { count: 17, max: 16 })
        );
    }

    #[test]
    fn param_count() {
        let params = |n: usize| {
            (0..n)
                .map(|i| format!("p{i}=1"))
                .collect::<Vec<_>>()
                .join("&")
        };
        assert_eq!(trap(&format!("https://example.com/?{}", params(32))), None);
        assert_eq!(
            trap(&format!("https://example.com/?{}&&", params(33))),
            Some(Trap::TooManyParams { count: 33, max: 32 })
        );
    }
}
