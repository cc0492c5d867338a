//! Analyses over the IR: simplification, interval arithmetic, bounds inference,
//! value ranges.

pub mod bounds;
pub mod interval;
pub mod simplify;
pub mod values;
