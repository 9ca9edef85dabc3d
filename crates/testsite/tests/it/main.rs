//! Integration tests of simcrawl-testsite: one test binary.
//!
//! - `generate`: determinism, distinct texts, copies and versions, without a network;
//! - `manifest`: the ground truth agrees with the pages (links, reachability, robots);
//! - `serve`: every host over loopback, the request log, shutdown.

mod generate;
mod manifest;
mod serve;
mod util;
