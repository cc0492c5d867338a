//! Schedules: how each func is computed (`pipeline::guide::scheduling`), separate from what it
//! computes. [`model`] holds the data; `front::schedule` builds it from a
//! `schedule` block; the default schedule is [`Schedule::default_for`].

pub mod auto;
pub mod cache;
pub mod model;
pub mod update;

pub use model::*;
