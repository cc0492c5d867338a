//! Schedules: how each func is computed (DESIGN.md 4.9), separate from what it
//! computes. [`model`] holds the data; `front::schedule` builds it from a
//! `schedule` block; the default schedule is [`Schedule::default_for`].

pub mod model;
pub mod update;

pub use model::*;
