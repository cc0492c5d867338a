//! Code generation back ends.
//!
//! `rust` emits the macro's Rust (its `vector` child the vector loops),
//! `kernels` the per-level kernel copies and their dispatch, `cuda` CUDA
//! C++; `lanes` and `names` are what the emitters share: facts of the
//! lowered loops and the names of what generated code binds.

pub mod cuda;
pub mod kernels;
mod lanes;
mod names;
pub mod rust;
