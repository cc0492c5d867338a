//! What the examples share: procedural noise for their generated inputs and
//! PNG output. Included by each example with `#[path = "support/mod.rs"]`.

#![allow(dead_code)]

use pipeline::Buffer;

/// Uniform noise in [0, 1) at a pixel: a hash of the position and `k` stirred by two
/// rounds of xorshift, each followed by a multiply (xorshift*) so that no pattern of the
/// coordinates survives.
pub fn noise(x: usize, y: usize, k: u32) -> f32 {
    let mut s = (x as u32)
        .wrapping_mul(0x9E37_79B1)
        .wrapping_add((y as u32).wrapping_mul(0x85EB_CA77))
        ^ k.wrapping_mul(0xC2B2_AE3D);
    for _ in 0..2 {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s = s.wrapping_mul(0x2545_F491);
    }
    (s >> 8) as f32 / (1u32 << 24) as f32
}

/// Converts a value in [0, 1] to 8 bits, clamping what lies outside.
pub fn to_u8(value: f32) -> u8 {
    (value.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// Writes a planar `[w, h, 3]` f32 buffer as an 8-bit RGB PNG.
pub fn save_rgb(buffer: &Buffer<f32, 3>, path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let [w, h, _] = buffer.shape();
    let image = image::RgbImage::from_fn(w as u32, h as u32, |x, y| {
        let (x, y) = (x as usize, y as usize);
        image::Rgb([0, 1, 2].map(|c| to_u8(buffer[[x, y, c]])))
    });
    image.save(path)?;
    println!("wrote {path}");
    Ok(())
}

/// Writes a gray f32 buffer as an 8-bit PNG, mapping each value with `map` and clamping
/// the result to [0, 1].
pub fn save_gray(
    buffer: &Buffer<f32, 2>,
    path: &str,
    map: impl Fn(f32) -> f32,
) -> Result<(), Box<dyn std::error::Error>> {
    let [w, h] = buffer.shape();
    let image = image::GrayImage::from_fn(w as u32, h as u32, |x, y| {
        let value = map(buffer[[x as usize, y as usize]]);
        image::Luma([(value.clamp(0.0, 1.0) * 255.0).round() as u8])
    });
    image.save(path)?;
    println!("wrote {path}");
    Ok(())
}

/// Writes an 8-bit gray buffer as a PNG.
pub fn save_gray8(buffer: &Buffer<u8, 2>, path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let [w, h] = buffer.shape();
    let image = image::GrayImage::from_raw(w as u32, h as u32, buffer.as_slice().to_vec())
        .ok_or("buffer length does not match its shape")?;
    image.save(path)?;
    println!("wrote {path}");
    Ok(())
}

/// Writes a 16-bit gray buffer as a 16-bit PNG.
pub fn save_gray16(buffer: &Buffer<u16, 2>, path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let [w, h] = buffer.shape();
    let image = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(
        w as u32,
        h as u32,
        buffer.as_slice().to_vec(),
    )
    .ok_or("buffer length does not match its shape")?;
    image.save(path)?;
    println!("wrote {path}");
    Ok(())
}
