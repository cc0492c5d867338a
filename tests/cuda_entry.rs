//! `NAME::cuda` and `NAME::cuda_device` (the `cuda` feature) in a crate
//! whose build script did not compile the GPU versions, as this one: every
//! call returns
//! `Error::CudaUnavailable` saying what to do, and writes nothing.

#![cfg(feature = "cuda")]

use pipeline::{pipeline, Buffer, Error};

pipeline! {
    fn blur(input: Image<u16, 2>, k: u16) -> Image<u16, 2> {
        let c = input.clamp_edge();
        bx(x, y) = c(x - 1, y) / 3 + c(x, y) / 3 + c(x + 1, y) / 3;
        out(x, y) = (bx(x, y - 1) / 3 + bx(x, y) / 3 + bx(x, y + 1) / 3) * k;
        out
    }
    schedule blur for cuda {
        bx.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
}

#[test]
fn without_the_build_script_the_gpu_entry_is_unavailable_and_writes_nothing() {
    let input = Buffer::<u16, 2>::from_fn([9, 7], |[x, y]| (x * 10 + y) as u16);
    let mut out = Buffer::<u16, 2>::from_fn([9, 7], |_| 7);
    match blur::cuda(&input, 2, &mut out) {
        Err(Error::CudaUnavailable { reason }) => {
            assert!(
                reason.contains("pipeline_build::cuda().compile()"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(out.as_slice().iter().all(|&v| v == 7));
    // Device buffers exist only where `pipeline` links the CUDA runtime
    // and a device answers; either way, the device entry needs the build
    // script too.
    match pipeline::cuda::DeviceBuffer::upload(&input) {
        Ok(on_gpu) => {
            let mut d_out = pipeline::cuda::DeviceBuffer::<u16, 2>::new([9, 7]).unwrap();
            assert!(matches!(
                blur::cuda_device(&on_gpu, 2, &mut d_out),
                Err(Error::CudaUnavailable { .. })
            ));
        }
        Err(e) => assert!(matches!(e, Error::CudaUnavailable { .. }), "{e}"),
    }
    // The CPU entry is unchanged.
    blur(&input, 2, &mut out).unwrap();
}

/// The launchers' own error code for a buffer too large for their kernels
/// has a message that says what to do.
#[test]
fn a_buffer_too_large_for_the_kernels_says_how_to_build_for_it() {
    let name = pipeline::rt::cuda_error_name(pipeline_core::codegen::cuda::TOO_LARGE);
    assert!(name.contains("PIPELINE_CUDA_LARGE_BUFFERS=1"), "{name}");
}
