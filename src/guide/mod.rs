//! A user guide: how to write, call and schedule pipelines.
//!
//! The [`pipeline!`](crate::pipeline!) macro compiles a small functional
//! language for image-processing and stencil pipelines into Rust, while your
//! crate builds. You write *what* each output pixel is, as definitions of
//! functions over an integer grid; separately, a *schedule* says how to run
//! it (which intermediate results to store, in which order, on how many
//! threads, in vector registers or not). The macro checks both, infers the
//! region every stage must cover, and expands to plain loop nests with rayon
//! parallelism and explicit SIMD code. Mistakes in the language are compile
//! errors at your tokens; bad arguments are `Err` values returned before any
//! work is done.
//!
//! The pages, in reading order:
//!
//! 1. [A first pipeline](first_pipeline): a blur in five minutes, how to
//!    call it, and what errors look like.
//! 2. [The language](language): everything that can appear inside
//!    `pipeline!`: parameters, funcs, types and arithmetic, built-ins,
//!    boundary conditions, reductions, updates, templates and compile-time
//!    loops, sizes.
//! 3. [The generated API](generated_api): the function and module each
//!    pipeline becomes, the runtime types ([`Buffer`](crate::Buffer),
//!    [`View`](crate::View), [`ViewMut`](crate::ViewMut)), errors, and the
//!    `image` and `ndarray` features.
//! 4. [Scheduling](scheduling): every directive, what it does to the loop
//!    nest, and how to read `SCHEDULE` and `LOWERED`.
//! 5. [Errors](errors): every compile-time message of the language and of
//!    schedules, with what to do about it.
//! 6. [Worked examples](examples): the six example programs of the
//!    repository (blur, unsharp mask, Harris corners, histogram equalization,
//!    pyramids, bilateral grid), built up from the other pages.
//!
//! Every code block in the guide is a test that runs with `cargo test`, so
//! the guide describes what the compiler does today. Where that falls short
//! of the plan, the pages say so; in particular:
//!
//! - the auto-scheduler ([the automatic
//!   schedule](scheduling#the-automatic-schedule)) decides from how funcs
//!   read each other, without measuring: a hand schedule can still beat it;
//! - the GPU versions (`NAME::cuda`) stage no func in shared memory yet and
//!   copy their images to the device and back at every call;
//! - vector code is emitted for x86-64 (SSE4.1, AVX2, AVX-512); other targets
//!   run the scalar version of every loop.

#[doc = include_str!("first_pipeline.md")]
pub mod first_pipeline {}

#[doc = include_str!("language.md")]
pub mod language {}

#[doc = include_str!("generated_api.md")]
pub mod generated_api {}

#[doc = include_str!("scheduling.md")]
pub mod scheduling {}

#[doc = include_str!("errors.md")]
pub mod errors {}

#[doc = include_str!("examples.md")]
pub mod examples {}
