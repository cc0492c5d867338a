//! A 3x3 blur of a 16-bit image on the GPU beside the CPU: both outputs
//! must be equal, bit for bit. Then the kernels alone, on images kept in
//! device memory (`pipeline::cuda::DeviceBuffer`), with the memory
//! bandwidth they reach. Writes `out/cuda_blur.png` (the GPU's, or the
//! CPU's where there is no GPU).

use pipeline::cuda::DeviceBuffer;
use pipeline::{pipeline, Buffer, Error};
use std::time::Instant;

pipeline! {
    /// Separable 3x3 box blur; edges repeat the border pixel.
    pub fn blur3x3(input: Image<u16, 2>) -> Image<u16, 2> {
        let clamped = input.clamp_edge();
        blur_x(x, y) = (clamped(x - 1, y) as u32 + clamped(x, y) as u32 + clamped(x + 1, y) as u32) / 3;
        out(x, y) = ((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3) as u16;
        out
    }
    schedule blur3x3 for cuda {
        // One kernel: each block computes its tile of `blur_x` (32 x 10)
        // in shared memory, then its 32 x 8 tile of `out` from it.
        blur_x.compute_at(out, xo);
        out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (3840, 2160);
    let input = Buffer::<u16, 2>::from_fn([w, h], |[x, y]| {
        let checker = ((x / 64 + y / 64) % 2) as u16 * 30000;
        checker + ((x * 7 + y * 13) % 4096) as u16
    });
    let mut cpu = Buffer::<u16, 2>::new([w, h]);
    let start = Instant::now();
    blur3x3(&input, &mut cpu)?;
    println!("CPU: {:.2} ms", start.elapsed().as_secs_f64() * 1e3);
    let mut gpu = Buffer::<u16, 2>::new([w, h]);
    let start = Instant::now();
    let shown = match blur3x3::cuda(&input, &mut gpu) {
        Ok(()) => {
            println!(
                "GPU: {:.2} ms (copies to and from the device included)",
                start.elapsed().as_secs_f64() * 1e3
            );
            assert!(cpu.as_slice() == gpu.as_slice(), "the GPU's output differs from the CPU's");
            println!("the outputs are equal");
            kernels_alone(&input, &cpu)?;
            &gpu
        }
        Err(Error::CudaUnavailable { reason }) => {
            println!("no GPU version here: {reason}");
            &cpu
        }
        Err(e) => return Err(e.into()),
    };
    std::fs::create_dir_all("out")?;
    let bytes: Vec<u8> = shown.as_slice().iter().map(|v| (v >> 8) as u8).collect();
    image::GrayImage::from_raw(w as u32, h as u32, bytes)
        .ok_or("image size")?
        .save("out/cuda_blur.png")?;
    println!("wrote out/cuda_blur.png");
    Ok(())
}

/// Times the kernels alone on device buffers (the median of 20 calls) and
/// checks their output once more.
fn kernels_alone(input: &Buffer<u16, 2>, cpu: &Buffer<u16, 2>) -> Result<(), Error> {
    let on_gpu = DeviceBuffer::upload(input)?;
    let mut out = DeviceBuffer::<u16, 2>::new(input.shape())?;
    blur3x3::cuda_device(&on_gpu, &mut out)?; // warm up
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        blur3x3::cuda_device(&on_gpu, &mut out)?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    // Each pixel read once and written once, at least.
    let bytes = 2.0 * (input.len() * std::mem::size_of::<u16>()) as f64;
    println!(
        "GPU kernels alone: {:.3} ms, {:.0} GB/s of the least traffic (median of 20 calls on device buffers)",
        t * 1e3,
        bytes / t / 1e9
    );
    assert!(out.download()? == *cpu, "the GPU's output differs from the CPU's");
    Ok(())
}
