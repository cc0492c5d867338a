//! Image-processing and stencil pipelines compiled at build time.
//!
//! Write an algorithm in the small functional language of the [`pipeline!`]
//! macro; the macro schedules it and expands to plain Rust loop nests. This crate
//! is what that Rust runs against:
//!
//! - [`Buffer`]: an owned, dense image, `x` fastest.
//! - [`View`] and [`ViewMut`]: borrowed, strided images placed at any origin.
//!   Coordinates are global: a crop keeps every element at its coordinate.
//! - [`AsView`] and [`AsViewMut`]: what generated functions take, so buffers,
//!   views and (with the `image` feature) `image::ImageBuffer`s all work.
//! - [`Error`]: why a pipeline refused its arguments, in words a person can act on.
//!
//! The [`guide`] explains the language, the generated API and scheduling, with examples.
//!
//! ```
//! use pipeline::{pipeline, Buffer};
//!
//! pipeline! {
//!     /// Separable 3x3 box blur of a 16-bit image; edges repeat the border pixel.
//!     pub fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
//!         let clamped = input.clamp_edge();
//!         blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
//!         out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
//!         out
//!     }
//! }
//!
//! let input = Buffer::<u16, 2>::from_fn([64, 48], |[x, y]| if x < 32 { 300 } else { 600 });
//! let mut out = Buffer::<u16, 2>::new(blur3x3::output_shape(input.shape()));
//! blur3x3(&input, &mut out)?;
//! assert_eq!((out[[0, 0]], out[[31, 5]], out[[32, 5]], out[[63, 47]]), (300, 400, 500, 600));
//! # Ok::<(), pipeline::Error>(())
//! ```
//!
//! Features: `image` (views of `image::ImageBuffer`), `ndarray` (`TryFrom`
//! `ArrayView`/`ArrayViewMut`), `cuda` (reserved for GPU versions of pipelines;
//! it generates nothing yet).

#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

mod buffer;
pub mod cuda;
mod element;
mod error;
mod hugepages;
mod interop;
mod layout;
mod region;
mod trace;
mod view;
mod view_mut;

pub mod guide;
#[doc(hidden)]
pub mod rt;

pub use buffer::Buffer;
pub use element::Element;
pub use error::Error;
pub use pipeline_macros::pipeline;
pub use region::Region;
pub use trace::{record_allocations, Allocation};
pub use view::{AsView, View};
pub use view_mut::{AsViewMut, ViewMut};
