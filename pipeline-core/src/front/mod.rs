//! The front end: parsing, checking and elaboration of the DSL.

pub mod check;
pub mod directives;
pub mod parse;
pub mod quick;
pub mod schedule;
