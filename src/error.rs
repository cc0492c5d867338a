//! The errors of the runtime and of generated pipelines.
//!
//! Every error is a user error: something about the arguments a caller passed
//! (an input too small for the output asked for, a slice of the wrong length, a
//! layout that does not fit its slice). Messages are full sentences that name the
//! offending value and say what to do about it.
//!
//! ```text
//! blur3x3(&small_input, &mut big_output)
//!   -> Err(Error::InputTooSmall { input: "input", needed: [-1..1921, -1..1081], given: [0..640, 0..480] })
//! ```

use core::fmt;
use core::ops::Range;

/// Why a pipeline, a buffer or a view could not be used as asked.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// An input does not cover the region the pipeline reads from it.
    ///
    /// The region needed follows from the output region through bounds inference;
    /// it is checked before any work is done.
    InputTooSmall {
        /// The input's parameter name in the pipeline.
        input: &'static str,
        /// The coordinates read from the input, per dimension (half-open).
        needed: Vec<Range<i64>>,
        /// The coordinates the input covers, per dimension (half-open).
        given: Vec<Range<i64>>,
    },
    /// The data handed to a buffer or view holds the wrong number of elements
    /// for the shape asked for.
    LengthMismatch {
        /// The shape asked for.
        shape: Vec<usize>,
        /// The number of elements that shape needs (the product of its extents).
        expected: usize,
        /// The number of elements given.
        got: usize,
    },
    /// A shape and strides do not describe a valid layout of the given slice.
    InvalidLayout {
        /// What is wrong with the layout, as a sentence.
        reason: String,
    },
    /// A crop asks for coordinates outside the view it crops.
    OutOfBounds {
        /// The region asked for.
        region: String,
        /// The region the view covers.
        bounds: String,
    },
    /// A buffer of the shape asked for cannot be allocated: its element count
    /// or its size in bytes overflows, or the allocator refused the memory
    /// ([`Buffer::try_new`](crate::Buffer::try_new)).
    BufferTooLarge {
        /// The shape asked for.
        shape: Vec<usize>,
        /// The bytes it needs, when that fits in a `u128`.
        bytes: Option<u128>,
    },
    /// A region is too large to compute or to allocate: a coordinate does not fit
    /// in `i32`, its element count overflows `usize`, or the allocation failed.
    RegionTooLarge {
        /// The func whose region this is.
        func: &'static str,
        /// The region, as half-open ranges per dimension.
        region: String,
    },
    /// Two shapes that must agree do not.
    ShapeMismatch {
        /// What was being done, such as `"ViewMut::copy_from"`.
        what: String,
        /// The shape required.
        expected: String,
        /// The shape given.
        got: String,
    },
    /// A func's schedule bounds it (`f.bound(x, min, extent)`) to fewer
    /// coordinates than the pipeline needs of it for this call.
    BoundTooSmall {
        /// The func.
        func: &'static str,
        /// The dimension's variable.
        dim: &'static str,
        /// The coordinates needed, half-open.
        needed: core::ops::Range<i64>,
        /// The coordinates the bound allows, half-open.
        bound: core::ops::Range<i64>,
    },
    /// An output's schedule fixes the region it computes (`out.bound(x, min,
    /// extent)`), and the output buffer does not cover that region: the
    /// pipeline would write outside it.
    OutputOutsideBound {
        /// The output's func.
        output: &'static str,
        /// The dimension's variable.
        dim: &'static str,
        /// The coordinates the bound fixes, half-open.
        bound: core::ops::Range<i64>,
        /// The coordinates the output buffer covers, half-open.
        given: core::ops::Range<i64>,
    },
    /// An input's layout is not the one its pipeline's schedule declares
    /// (`rgb.dim(0).set_stride(3)`, Halide's `set_stride`), which the
    /// generated code reads it by.
    StrideMismatch {
        /// The input's parameter name in the pipeline.
        input: &'static str,
        /// The dimension whose stride differs.
        dim: usize,
        /// The stride the schedule declares, in elements.
        declared: usize,
        /// The input's strides, in elements, per dimension.
        strides: Vec<usize>,
    },
    /// The CUDA version of a pipeline cannot run on this machine or build.
    CudaUnavailable {
        /// Why, as a sentence.
        reason: String,
    },
    /// The CUDA runtime reported an error while the pipeline ran on the GPU
    /// (out of device memory, a failed launch); its outputs are not
    /// written.
    CudaFailed {
        /// The pipeline.
        pipeline: &'static str,
        /// The `cudaError_t` code.
        code: i32,
    },
    /// The CUDA runtime reported an error while a
    /// [`DeviceBuffer`](crate::cuda::DeviceBuffer) was made or copied (out
    /// of device memory, for one).
    CudaBufferFailed {
        /// What was being done, such as `"DeviceBuffer::upload"`.
        operation: &'static str,
        /// The `cudaError_t` code.
        code: i32,
    },
    /// The pipeline was built with `PIPELINE_KERNELS=only:LEVEL` (as the
    /// tuner's benchmarks are), and the processor runs below the one
    /// kernel it has.
    KernelUnavailable {
        /// The pipeline.
        pipeline: &'static str,
        /// The level of its only kernel.
        kernel: &'static str,
        /// The level this processor runs at (`PIPELINE_ISA` included).
        running: &'static str,
    },
}

/// The name of dimension `d` in messages: the DSL calls the first four `x`, `y`,
/// `c` and `w`.
pub(crate) fn dim_name(d: usize) -> String {
    match d {
        0 => "x".to_string(),
        1 => "y".to_string(),
        2 => "c".to_string(),
        3 => "w".to_string(),
        _ => format!("dimension {d}"),
    }
}

/// Writes ranges as `x in [a, b), y in [c, d)`.
fn write_ranges(f: &mut fmt::Formatter<'_>, ranges: &[Range<i64>]) -> fmt::Result {
    if ranges.is_empty() {
        return f.write_str("the single point of a 0-dimensional image");
    }
    for (d, r) in ranges.iter().enumerate() {
        if d > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{} in [{}, {})", dim_name(d), r.start, r.end)?;
    }
    Ok(())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InputTooSmall {
                input,
                needed,
                given,
            } => {
                write!(f, "input `{input}` is too small: the pipeline reads ")?;
                write_ranges(f, needed)?;
                f.write_str(", but the input covers ")?;
                write_ranges(f, given)?;
                let short: Vec<String> = needed
                    .iter()
                    .zip(given)
                    .enumerate()
                    .filter(|(_, (n, g))| n.start < g.start || n.end > g.end)
                    .map(|(d, _)| dim_name(d))
                    .collect();
                if !short.is_empty() {
                    write!(f, " (it falls short in {})", short.join(" and "))?;
                }
                f.write_str(
                    ". Pad or enlarge the input, shrink the output, or read the input \
                     through a boundary condition such as `.clamp_edge()`.",
                )
            }
            Error::LengthMismatch {
                shape,
                expected,
                got,
            } => write!(
                f,
                "shape {shape:?} needs {expected} elements, but the data holds {got}; \
                 pass exactly one element per coordinate, x fastest, or change the shape"
            ),
            Error::InvalidLayout { reason } => write!(f, "invalid view layout: {reason}"),
            Error::OutOfBounds { region, bounds } => write!(
                f,
                "the region {region} is not inside the view, which covers {bounds}; \
                 crop to a region inside the view"
            ),
            Error::BufferTooLarge { shape, bytes } => match bytes {
                Some(b) => write!(
                    f,
                    "a buffer of shape {shape:?} needs {b} bytes, more than can be allocated here; \
                     use a smaller shape or process the image in pieces"
                ),
                None => write!(
                    f,
                    "a buffer of shape {shape:?} has more elements than a usize can count; \
                     use a smaller shape or process the image in pieces"
                ),
            },
            Error::RegionTooLarge { func, region } => write!(
                f,
                "the region {region} of `{func}` is too large: every coordinate must \
                 fit in an i32 and the elements must fit in memory; ask for a smaller \
                 output or compute it in pieces"
            ),
            Error::ShapeMismatch {
                what,
                expected,
                got,
            } => write!(
                f,
                "{what} needs shape {expected}, but got shape {got}; pass views of the same shape"
            ),
            Error::BoundTooSmall {
                func,
                dim,
                needed,
                bound,
            } => write!(
                f,
                "`{func}` is bounded to {dim} in [{}, {}) by its schedule, but this call needs \
                 [{}, {}); widen the bound, or ask for a smaller output",
                bound.start, bound.end, needed.start, needed.end
            ),
            Error::OutputOutsideBound {
                output,
                dim,
                bound,
                given,
            } => write!(
                f,
                "output `{output}` is computed over {dim} in [{}, {}) because its schedule says \
                 `{output}.bound({dim}, {}, {})`, but the output buffer covers [{}, {}); pass an \
                 output that covers exactly the bound, or change the bound",
                bound.start,
                bound.end,
                bound.start,
                bound.end - bound.start,
                given.start,
                given.end
            ),
            Error::StrideMismatch {
                input,
                dim,
                declared,
                strides,
            } => write!(
                f,
                "input `{input}` has stride {} in {} (strides {strides:?}), but the pipeline's \
                 schedule declares `{input}.dim({dim}).set_stride({declared})`; pass a view of \
                 that layout, or drop the declaration to accept any layout",
                strides.get(*dim).copied().unwrap_or(0),
                dim_name(*dim),
            ),
            Error::CudaUnavailable { reason } => write!(
                f,
                "the CUDA version of this pipeline cannot run: {reason}; call the CPU \
                 version instead, or build with the `cuda` feature on a machine with \
                 nvcc and an NVIDIA GPU"
            ),
            Error::CudaFailed { pipeline, code } => write!(
                f,
                "pipeline `{pipeline}` failed on the GPU: CUDA error {code} ({}); its \
                 outputs were not written",
                crate::rt::cuda_error_name(*code)
            ),
            Error::CudaBufferFailed { operation, code } => write!(
                f,
                "{operation} failed on the GPU: CUDA error {code} ({})",
                crate::rt::cuda_error_name(*code)
            ),
            Error::KernelUnavailable {
                pipeline,
                kernel,
                running,
            } => write!(
                f,
                "pipeline `{pipeline}` was built with only its {kernel} kernel \
                 (PIPELINE_KERNELS=only:..), and this processor runs at {running}: \
                 build without that setting"
            ),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn input_too_small_names_the_input_the_regions_and_the_remedy() {
        let e = Error::InputTooSmall {
            input: "input",
            needed: vec![-1..1921, 0..1080],
            given: vec![0..1920, 0..1080],
        };
        let msg = e.to_string();
        assert!(msg.contains("input `input` is too small"), "{msg}");
        assert!(
            msg.contains("reads x in [-1, 1921), y in [0, 1080)"),
            "{msg}"
        );
        assert!(
            msg.contains("covers x in [0, 1920), y in [0, 1080)"),
            "{msg}"
        );
        assert!(msg.contains("falls short in x)"), "{msg}");
        assert!(msg.contains("Pad or enlarge the input"), "{msg}");
        assert!(msg.contains("shrink the output"), "{msg}");
        assert!(msg.contains("`.clamp_edge()`"), "{msg}");
    }

    #[test]
    fn input_too_small_names_the_higher_dimensions() {
        let e = Error::InputTooSmall {
            input: "frames",
            needed: vec![0..1, 0..1, 0..4, 0..2, 0..1],
            given: vec![0..1, 0..1, 0..3, 0..1, 0..1],
        };
        let msg = e.to_string();
        assert!(
            msg.contains("c in [0, 4), w in [0, 2), dimension 4 in [0, 1)"),
            "{msg}"
        );
        assert!(msg.contains("falls short in c and w)"), "{msg}");
    }

    #[test]
    fn every_variant_has_an_actionable_message() {
        let cases = [
            (
                Error::LengthMismatch {
                    shape: vec![4, 3],
                    expected: 12,
                    got: 11,
                },
                "shape [4, 3] needs 12 elements, but the data holds 11",
            ),
            (
                Error::InvalidLayout {
                    reason: "strides reach past the slice".into(),
                },
                "invalid view layout: strides reach past the slice",
            ),
            (
                Error::OutOfBounds {
                    region: "[0, 5)".into(),
                    bounds: "[0, 4)".into(),
                },
                "the region [0, 5) is not inside the view, which covers [0, 4)",
            ),
            (
                Error::BufferTooLarge {
                    shape: vec![1 << 40, 1 << 20],
                    bytes: Some(1 << 60),
                },
                "a buffer of shape [1099511627776, 1048576] needs 1152921504606846976 bytes",
            ),
            (
                Error::RegionTooLarge {
                    func: "blur_x",
                    region: "[0, 4294967296)".into(),
                },
                "the region [0, 4294967296) of `blur_x` is too large",
            ),
            (
                Error::OutputOutsideBound {
                    output: "out",
                    dim: "x",
                    bound: 0..64,
                    given: 0..32,
                },
                "output `out` is computed over x in [0, 64) because its schedule says \
                 `out.bound(x, 0, 64)`, but the output buffer covers [0, 32)",
            ),
            (
                Error::ShapeMismatch {
                    what: "copy_from".into(),
                    expected: "[2, 2]".into(),
                    got: "[2, 3]".into(),
                },
                "copy_from needs shape [2, 2], but got shape [2, 3]",
            ),
            (
                Error::StrideMismatch {
                    input: "rgb",
                    dim: 0,
                    declared: 3,
                    strides: vec![1, 640, 307200],
                },
                "input `rgb` has stride 1 in x (strides [1, 640, 307200]), but the pipeline's \
                 schedule declares `rgb.dim(0).set_stride(3)`; pass a view of that layout",
            ),
            (
                Error::CudaUnavailable {
                    reason: "no GPU was found".into(),
                },
                "the CUDA version of this pipeline cannot run: no GPU was found",
            ),
            (
                Error::KernelUnavailable {
                    pipeline: "blur",
                    kernel: "avx2",
                    running: "scalar",
                },
                "pipeline `blur` was built with only its avx2 kernel (PIPELINE_KERNELS=only:..), and this processor runs at scalar",
            ),
        ];
        for (error, expected) in cases {
            let msg = error.to_string();
            assert!(
                msg.contains(expected),
                "{msg:?} should contain {expected:?}"
            );
            let boxed: Box<dyn std::error::Error> = Box::new(error.clone());
            assert_eq!(boxed.to_string(), msg);
        }
    }
}
