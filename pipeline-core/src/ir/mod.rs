//! The intermediate representation: scalar types, expressions and the checked
//! pipeline (funcs over an infinite integer domain, as in Halide).

mod expr;
mod pipeline;
pub mod print;
mod stmt;
mod types;

pub use expr::*;
pub use pipeline::*;
pub use stmt::*;
pub use types::Type;
