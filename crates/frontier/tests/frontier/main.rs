//! Integration tests of simcrawl-frontier: one test binary, a module per subject.
//!
//! `resume` re-runs this binary as a child process that is killed with SIGKILL (see
//! `util::spawn_helper`): the child runs the `#[ignore]`d helper test, which does nothing unless
//! its environment variable is set.

mod admission;
mod fuzz;
mod model;
mod politeness;
mod resume;
mod robots;
mod scale;
mod sitemaps;
mod util;
