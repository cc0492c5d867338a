//! Analyses over the IR: simplification, interval arithmetic, bounds inference.

pub mod bounds;
pub mod interval;
pub mod simplify;
