//! Which page a request target names: the route key.
//!
//! The test web answers the way common servers do, so that URL variants really are variants:
//! repeated slashes in the path are merged (nginx's `merge_slashes`), a trailing `index.html`
//! names its directory, and only the query parameters a page depends on (`page` and `sort`,
//! for section listings) are read, in any order; every other parameter (tracking, session,
//! `visit`, anything) is ignored. The fragment is never part of a request; it is dropped here
//! for the manifest's lookups.

/// The query parameters that select content. All others are ignored.
const CONTENT_PARAMS: [&str; 2] = ["page", "sort"];

/// The route key of a request target (`/path?query`): merged slashes, no trailing
/// `index.html`, content parameters only, sorted.
pub(crate) fn route_key(target: &str) -> String {
    let target = target.split_once('#').map_or(target, |(t, _)| t);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut key = String::with_capacity(target.len());
    for c in path.chars() {
        if !(c == '/' && key.ends_with('/')) {
            key.push(c);
        }
    }
    if key.ends_with("/index.html") {
        key.truncate(key.len() - "index.html".len());
    }
    if !key.starts_with('/') {
        key.insert(0, '/');
    }
    let mut params: Vec<&str> = query
        .split('&')
        .filter(|p| {
            let name = p.split_once('=').map_or(*p, |(n, _)| n);
            CONTENT_PARAMS.contains(&name)
        })
        .collect();
    if !params.is_empty() {
        params.sort_unstable();
        key.push('?');
        key.push_str(&params.join("&"));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::route_key;

    #[test]
    fn variants_share_a_key() {
        for (target, key) in [
            ("/", "/"),
            ("", "/"),
            ("/index.html", "/"),
            ("//index.html", "/"),
            ("/section/world/index.html", "/section/world/"),
            ("/section//world/", "/section/world/"),
            ("/articles//5.html", "/articles/5.html"),
            ("/articles/5.html?", "/articles/5.html"),
            ("/articles/5.html#comments", "/articles/5.html"),
            ("/articles/5.html?utm_source=x&gclid=y", "/articles/5.html"),
            ("/articles/5.html?visit=0123abcd", "/articles/5.html"),
            (
                "/section/a/?sort=date&page=2",
                "/section/a/?page=2&sort=date",
            ),
            (
                "/section/a/?utm_medium=m&page=2&fbclid=z&sort=date",
                "/section/a/?page=2&sort=date",
            ),
            (
                "/mirror/site/section/a/index.html",
                "/mirror/site/section/a/",
            ),
        ] {
            assert_eq!(route_key(target), key, "{target}");
        }
    }

    #[test]
    fn different_pages_keep_different_keys() {
        assert_ne!(
            route_key("/articles/5.html"),
            route_key("/articles/50.html")
        );
        assert_ne!(
            route_key("/section/a/?page=2"),
            route_key("/section/a/?page=3")
        );
        assert_ne!(route_key("/index.htm"), route_key("/"));
        assert_ne!(route_key("/aindex.html"), route_key("/a"));
    }
}
