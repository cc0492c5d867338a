//! Code generation back ends.

pub mod kernels;
pub mod rust;
mod vector;
