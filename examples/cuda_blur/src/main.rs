//! A 3x3 blur of a 16-bit image on the GPU beside the CPU: both outputs
//! must be equal, bit for bit. Writes `out/cuda_blur.png` (the GPU's, or
//! the CPU's where there is no GPU).

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
        blur_x.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
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
