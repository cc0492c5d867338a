//! Analyses over the IR: simplification, interval arithmetic, bounds inference,
//! value ranges, and what a vectorized loop's lanes run.

pub mod bounds;
pub mod interval;
pub(crate) mod lanes;
pub mod simplify;
pub mod values;
