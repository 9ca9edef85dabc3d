//! Which optional rules shape the canonical key.
//!
//! The always-applied rules (WHATWG parsing, fragment, percent-encoding, default port, trailing dot
//! of the host, empty query and stray `&`) have no switch: they never change which resource a URL
//! names. Every other rule is a field here.

/// Switches for the rules that are not always applied.
///
/// [`Default`] turns on the four rules that are safe on the open web (strip userinfo, sort the
/// query, drop session ids, drop tracking parameters) and leaves the six that merge URLs a server
/// *could* tell apart off. [`CanonOptions::minimal`] and [`CanonOptions::all`] are the two ends.
///
/// ```
/// use simcrawl_url::CanonOptions;
///
/// let options = CanonOptions { www_equals_bare: true, ..CanonOptions::default() };
/// assert!(options.sort_query && options.www_equals_bare && !options.lowercase_path);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CanonOptions {
    /// Drop `user:password@` from the key (on by default). The URL to fetch keeps it.
    pub strip_userinfo: bool,
    /// Sort query parameters by name (on by default). The sort is stable: parameters with the
    /// same name keep their relative order, because `a=1&a=2` and `a=2&a=1` can differ.
    pub sort_query: bool,
    /// Drop known session-id parameters (on by default): `jsessionid` (also as the `;jsessionid=`
    /// path parameter), `phpsessid`, `aspsessionid*`, `cfid`, `cftoken`, `sid`, `sessionid` and
    /// the like, but only when the value looks like a token, so `sid=3` is kept.
    pub drop_session_ids: bool,
    /// Drop known tracking parameters (on by default): `utm_*`, `gclid`, `fbclid`, `msclkid`,
    /// `mc_eid`, `_ga`, `igshid` and the like.
    pub drop_tracking: bool,
    /// Treat `www.example.com` as `example.com` (off by default).
    pub www_equals_bare: bool,
    /// Treat `https://` as `http://` (off by default). Only URLs on their scheme's default port
    /// are merged, so `https://h:8443/` keeps its scheme.
    pub http_equals_https: bool,
    /// Collapse runs of `/` in the path to one (off by default).
    pub collapse_slashes: bool,
    /// Treat `dir/index.html` (and `index.htm`, `index.php`, `default.aspx`, `default.asp`) as
    /// `dir/` (off by default). The file name is matched case-sensitively unless
    /// [`lowercase_path`](Self::lowercase_path) is also on.
    pub strip_index_pages: bool,
    /// Treat `/dir/` as `/dir` (off by default). The root path `/` stays.
    pub ignore_trailing_slash: bool,
    /// Lowercase the path's ASCII letters (off by default; for servers that ignore case).
    /// Percent-escapes keep their uppercase hex and the query is never lowercased.
    pub lowercase_path: bool,
}

impl CanonOptions {
    /// Only the always-applied rules: every switch off.
    pub const fn minimal() -> Self {
        Self {
            strip_userinfo: false,
            sort_query: false,
            drop_session_ids: false,
            drop_tracking: false,
            www_equals_bare: false,
            http_equals_https: false,
            collapse_slashes: false,
            strip_index_pages: false,
            ignore_trailing_slash: false,
            lowercase_path: false,
        }
    }

    /// Every rule on: the most URLs merged, for sites known to be lenient.
    pub const fn all() -> Self {
        Self {
            strip_userinfo: true,
            sort_query: true,
            drop_session_ids: true,
            drop_tracking: true,
            www_equals_bare: true,
            http_equals_https: true,
            collapse_slashes: true,
            strip_index_pages: true,
            ignore_trailing_slash: true,
            lowercase_path: true,
        }
    }
}

impl Default for CanonOptions {
    fn default() -> Self {
        Self {
            strip_userinfo: true,
            sort_query: true,
            drop_session_ids: true,
            drop_tracking: true,
            ..Self::minimal()
        }
    }
}
