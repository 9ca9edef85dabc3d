//! Test harness: the loopback server, body encoders, and fetchers with test settings.

pub mod encode;
pub mod server;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use simcrawl_fetch::{FetchConfig, Fetcher};

pub use server::{Reply, Server};

pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// The default configuration with short backoffs, so that retry tests on the real clock are quick.
pub fn config() -> FetchConfig {
    FetchConfig {
        backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        ..FetchConfig::default()
    }
}

/// Pins `host` to 127.0.0.1 (no DNS query is ever sent for it).
pub fn pin(config: &mut FetchConfig, host: &str) {
    config.resolve.insert(host.to_owned(), vec![LOOPBACK]);
}

pub fn fetcher(config: FetchConfig) -> Fetcher {
    Fetcher::new(config).expect("a valid test configuration")
}
