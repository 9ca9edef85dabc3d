//! Which optional rules shape the canonical key.
//!
//! The always-applied rules (WHATWG parsing, fragment, percent-encoding, default port, trailing dot
//! of the host, empty query and stray `&`) have no switch: they never change which resource a URL
//! names. Every other rule is a field here. [`HostOption`] names the path switches a learned rule
//! can turn on for one `host[:port]`.

use std::fmt;
use std::str::FromStr;

use crate::error::RuleError;

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

/// An opt-in path rule that can be turned on for one `host[:port]` only, by a learned rule
/// ([`LearnedRules::add_host_option`](crate::LearnedRules::add_host_option)).
///
/// Each is the [`CanonOptions`] switch of the same name; on its authority it applies exactly as if
/// the switch were on. (`www_equals_bare` and `http_equals_https` are about the host and the
/// scheme; learned aliases cover them per site.) Its name is the word of the CLI flag:
///
/// ```
/// use simcrawl_url::HostOption;
///
/// let option: HostOption = "collapse-slashes".parse()?;
/// assert_eq!(option, HostOption::CollapseSlashes);
/// assert_eq!(HostOption::StripIndexPages.as_str(), "strip-index-pages");
/// # Ok::<(), simcrawl_url::RuleError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostOption {
    /// `collapse-slashes`: [`CanonOptions::collapse_slashes`].
    CollapseSlashes,
    /// `strip-index-pages`: [`CanonOptions::strip_index_pages`].
    StripIndexPages,
    /// `ignore-trailing-slash`: [`CanonOptions::ignore_trailing_slash`].
    IgnoreTrailingSlash,
    /// `lowercase-path`: [`CanonOptions::lowercase_path`].
    LowercasePath,
}

impl HostOption {
    /// Every host option, in the order of the [`CanonOptions`] fields (the order rules list and
    /// encode them in).
    pub const ALL: [HostOption; 4] = [
        HostOption::CollapseSlashes,
        HostOption::StripIndexPages,
        HostOption::IgnoreTrailingSlash,
        HostOption::LowercasePath,
    ];

    /// The option's name, the word of its CLI flag (`collapse-slashes`).
    pub const fn as_str(self) -> &'static str {
        match self {
            HostOption::CollapseSlashes => "collapse-slashes",
            HostOption::StripIndexPages => "strip-index-pages",
            HostOption::IgnoreTrailingSlash => "ignore-trailing-slash",
            HostOption::LowercasePath => "lowercase-path",
        }
    }

    /// Whether the switch of the same name is on in `options`.
    pub const fn is_on_in(self, options: &CanonOptions) -> bool {
        match self {
            HostOption::CollapseSlashes => options.collapse_slashes,
            HostOption::StripIndexPages => options.strip_index_pages,
            HostOption::IgnoreTrailingSlash => options.ignore_trailing_slash,
            HostOption::LowercasePath => options.lowercase_path,
        }
    }

    /// Turns the switch of the same name on in `options`.
    pub fn turn_on(self, options: &mut CanonOptions) {
        match self {
            HostOption::CollapseSlashes => options.collapse_slashes = true,
            HostOption::StripIndexPages => options.strip_index_pages = true,
            HostOption::IgnoreTrailingSlash => options.ignore_trailing_slash = true,
            HostOption::LowercasePath => options.lowercase_path = true,
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for HostOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for HostOption {
    type Err = RuleError;
    /// Parses a name as [`as_str`](HostOption::as_str) gives it, ASCII case-insensitively.
    fn from_str(s: &str) -> Result<Self, RuleError> {
        HostOption::ALL
            .into_iter()
            .find(|o| o.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| RuleError::UnknownHostOption {
                input: s.to_owned(),
            })
    }
}

/// A set of [`HostOption`]s: those learned for one `host[:port]`
/// ([`LearnedRules::host_options`](crate::LearnedRules::host_options)).
///
/// ```
/// use simcrawl_url::{HostOption, HostOptionSet};
///
/// let mut set = HostOptionSet::new();
/// set.insert(HostOption::LowercasePath);
/// set.insert(HostOption::CollapseSlashes);
/// assert!(set.contains(HostOption::LowercasePath) && !set.contains(HostOption::StripIndexPages));
/// assert_eq!(set.iter().collect::<Vec<_>>(), [HostOption::CollapseSlashes, HostOption::LowercasePath]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HostOptionSet(u8);

impl HostOptionSet {
    /// The empty set.
    pub const fn new() -> Self {
        Self(0)
    }

    /// Whether `option` is in the set.
    pub const fn contains(self, option: HostOption) -> bool {
        self.0 & option.bit() != 0
    }

    /// Adds `option`; returns whether it was not there yet.
    pub fn insert(&mut self, option: HostOption) -> bool {
        let added = !self.contains(option);
        self.0 |= option.bit();
        added
    }

    /// Removes `option`; returns whether it was there.
    pub fn remove(&mut self, option: HostOption) -> bool {
        let removed = self.contains(option);
        self.0 &= !option.bit();
        removed
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The number of options in the set.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The options in the set, in [`HostOption::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = HostOption> {
        HostOption::ALL
            .into_iter()
            .filter(move |&o| self.contains(o))
    }

    /// Both sets' options.
    pub const fn union(self, other: HostOptionSet) -> HostOptionSet {
        HostOptionSet(self.0 | other.0)
    }
}

impl FromIterator<HostOption> for HostOptionSet {
    fn from_iter<I: IntoIterator<Item = HostOption>>(iter: I) -> Self {
        let mut set = HostOptionSet::new();
        for option in iter {
            set.insert(option);
        }
        set
    }
}
