//! Build-time tools for the `pipeline` crate.
//!
//! **The offline tuner.** `cargo pipeline tune` (this crate's
//! `cargo-pipeline` binary: `cargo install pipeline-build`) finds the
//! `pipeline!` invocations of the crate it runs in, times candidate
//! schedules of each pipeline that reads the schedule cache (no block, or
//! a block of facts with `auto;`), starting from the auto-scheduler's
//! choice and climbing from the fastest, and writes the winner to
//! `pipeline-schedules.toml` beside `Cargo.toml`. The macro reads that
//! file at every build: a tuned build needs no tuning, no JIT and no
//! network. The guide's scheduling page (*Tuned schedules*) says how to
//! use it; [`tune::tune`] is the same as a library call.
//!
//! Every candidate is checked exactly as the macro checks a cache entry,
//! compiled, and its outputs compared with the reference interpreter at a
//! small odd size before it is timed.

pub mod bench;
pub mod cuda;
pub mod progress;
pub mod scan;
pub mod tune;
pub mod verify;

pub use cuda::cuda;
