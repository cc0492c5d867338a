//! Code generation back ends.

pub mod rust;
mod vector;
