//! What the comparison benches share: the inputs' values (compare.py and
//! benches/cuda/halide_driver.cpp compute the same) and the raw bytes of an
//! output, for comparing it with Halide's.

#![allow(dead_code)]

/// A deterministic 32-bit hash of a coordinate, the inputs' source of values.
/// compare.py computes the same function with numpy's wrapping u32 arithmetic.
pub fn hash(x: usize, y: usize, c: usize) -> u32 {
    let mut h = (x as u32).wrapping_mul(0x9E37_79B1)
        ^ (y as u32).wrapping_mul(0x85EB_CA77)
        ^ (c as u32).wrapping_mul(0xC2B2_AE3D);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    h
}

/// The float inputs: a gentle ramp in [0, 0.75) plus noise in [0, 0.0625) from
/// the hash, so that the unsharp mask's output is mostly not clamped. The value
/// is an integer below 2^24 divided by 2^24, so exactly representable in f32.
pub fn ramp_and_noise(x: usize, y: usize, c: usize) -> f32 {
    let ramp = ((x + 2 * y + 97 * c) % 4096) as u32 * 3072;
    let noise = (hash(x, y, c) >> 22) * 1024;
    (ramp + noise) as f32 / 16_777_216.0
}

/// Element types that can be dumped as raw little-endian bytes.
pub trait Raw: Copy {
    fn extend_le(self, bytes: &mut Vec<u8>);
}
impl Raw for u8 {
    fn extend_le(self, bytes: &mut Vec<u8>) {
        bytes.push(self);
    }
}
impl Raw for u16 {
    fn extend_le(self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(&self.to_le_bytes());
    }
}
impl Raw for f32 {
    fn extend_le(self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(&self.to_le_bytes());
    }
}
