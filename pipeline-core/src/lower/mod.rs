//! Lowering passes, one per file, in pipeline order (see [`crate::lower_pipeline`]).

pub mod cse;
pub mod hoist;
pub mod inline;
pub mod loops;
pub mod partition;
mod stagewise;
pub mod tails;

pub(crate) use stagewise::{map_stages, tails_and_cse};
