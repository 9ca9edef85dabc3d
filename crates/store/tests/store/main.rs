//! Integration tests of simcrawl-store: one test binary, a module per subject.
//!
//! Some tests re-run this binary as a child process (see `util::spawn_helper`): the child runs one of
//! the `helper_*` tests, which are `#[ignore]`d and do nothing unless their environment variable is set.

mod api;
mod crash;
mod errors;
mod model;
mod reading;
mod records;
mod tables;
mod util;
