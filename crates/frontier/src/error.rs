//! [`FrontierError`]: what can go wrong, as opposed to what the frontier decides.
//!
//! A URL refused by scope, a trap guard or a budget is not an error: it is an
//! [`Admission`](crate::Admission). Errors are a store that fails, a configuration that cannot
//! work, or a caller that breaks the protocol (completing a lease twice).

use simcrawl_store::StoreError;

/// Everything that can go wrong in the frontier.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrontierError {
    /// The store failed while the frontier was doing `doing`.
    #[error("frontier store operation failed while {doing}: {source}")]
    Store {
        /// What the frontier was doing ("pushing a URL to its host queue", ...).
        doing: &'static str,
        /// The store's error, which names the tree.
        #[source]
        source: StoreError,
    },

    /// A configuration value cannot work.
    #[error("invalid frontier configuration: {field}: {reason}")]
    Config {
        /// The [`FrontierConfig`](crate::FrontierConfig) field (`include[2]`, `max_in_flight`, ...).
        field: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A lease that this frontier did not hand out, or that was already completed. Leases do not
    /// survive a restart: what was in flight is handed out again with new leases.
    #[error(
        "unknown lease for {url} (host {host}): it was already completed, or handed out before a restart"
    )]
    UnknownLease {
        /// The lease's URL.
        url: String,
        /// The lease's host.
        host: String,
    },

    /// A robots.txt answer for a request this frontier is not waiting for.
    #[error("no robots.txt request is outstanding for {origin}")]
    UnknownRobotsRequest {
        /// The origin named in the answer.
        origin: String,
    },

    /// A lease of the wrong kind was passed (a page lease to `sitemap_fetched`).
    #[error("lease for {url} is a {found} lease, expected a {expected} lease")]
    WrongLeaseKind {
        /// The lease's URL.
        url: String,
        /// What the lease is.
        found: &'static str,
        /// What the method takes.
        expected: &'static str,
    },

    /// A record in the store is not what the frontier wrote (the store is damaged, or was written
    /// by an incompatible build).
    #[error("frontier record in `{tree}` is inconsistent: {detail}")]
    Corrupt {
        /// The tree.
        tree: &'static str,
        /// What is wrong.
        detail: String,
    },
}

/// Attaches what the frontier was doing to a store error.
pub(crate) trait Doing<T> {
    /// The value, or a [`FrontierError::Store`] saying what failed.
    fn doing(self, doing: &'static str) -> Result<T, FrontierError>;
}

impl<T> Doing<T> for Result<T, StoreError> {
    fn doing(self, doing: &'static str) -> Result<T, FrontierError> {
        self.map_err(|source| FrontierError::Store { doing, source })
    }
}
