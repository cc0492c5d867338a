//! Code generation back ends.
//!
//! `rust` emits the macro's Rust (its `vector` child the vector loops),
//! `kernels` the per-level kernel copies and their dispatch, `cuda` CUDA
//! C++; `names` is what the emitters share: the names of what generated
//! code binds (the facts of the lowered loops they share are
//! `analysis::lanes`). `code` is the text the Rust emitters write (with
//! the `code!` macro).

pub(crate) mod code;
pub mod cuda;
pub mod kernels;
mod names;
pub mod rust;
