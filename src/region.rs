//! Rectangular regions of the integer coordinate space.
//!
//! A [`Region`] is a box given by its smallest coordinate and its extent in each
//! dimension, like Halide's `Region` of `(min, extent)` ranges. Views use regions to
//! say which coordinates they cover; the run-time checks of generated code compare
//! the region a pipeline needs with the region an input covers.
//!
//! ```text
//! Region::new([-1, 0], [1922, 1080])   prints as   [-1, 1921) x [0, 1080)
//! ```

use core::fmt;

/// A box of integer coordinates: `min[d] <= c[d] < min[d] + shape[d]` in every
/// dimension `d`.
///
/// A region with a zero in its shape is empty. Coordinates are `i64`, so a region
/// can sit anywhere, including at negative coordinates.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Region<const N: usize> {
    /// The smallest coordinate in each dimension.
    pub min: [i64; N],
    /// The number of coordinates in each dimension.
    pub shape: [usize; N],
}

impl<const N: usize> Region<N> {
    /// The region that starts at `min` and spans `shape`.
    pub fn new(min: [i64; N], shape: [usize; N]) -> Self {
        Region { min, shape }
    }

    /// The region that starts at the origin and spans `shape`.
    pub fn from_shape(shape: [usize; N]) -> Self {
        Region { min: [0; N], shape }
    }

    /// Whether the region holds no coordinate at all.
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// The largest coordinate in dimension `d`, `min + shape - 1`.
    ///
    /// For an empty dimension this is `min - 1`. The result saturates at the ends of
    /// `i64` for regions that reach past them.
    ///
    /// # Panics
    ///
    /// If `d >= N`.
    pub fn max(&self, d: usize) -> i64 {
        let max = self.min[d] as i128 + self.shape[d] as i128 - 1;
        max.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Whether every coordinate of `other` is also a coordinate of `self`.
    ///
    /// An empty region holds no coordinate, so every region contains it.
    pub fn contains(&self, other: &Region<N>) -> bool {
        if other.is_empty() {
            return true;
        }
        // Ends are computed in i128 so that regions near the ends of i64 compare
        // exactly instead of wrapping.
        (0..N).all(|d| self.min[d] <= other.min[d] && other.end_i128(d) <= self.end_i128(d))
    }

    /// One past the largest coordinate in dimension `d`, exactly.
    pub(crate) fn end_i128(&self, d: usize) -> i128 {
        self.min[d] as i128 + self.shape[d] as i128
    }
}

/// Prints the half-open range of each dimension, joined by ` x `, such as
/// `[0, 1920) x [0, 1080)`; a region of no dimensions prints as `[]`.
impl<const N: usize> fmt::Display for Region<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if N == 0 {
            return f.write_str("[]");
        }
        for d in 0..N {
            if d > 0 {
                f.write_str(" x ")?;
            }
            write!(f, "[{}, {})", self.min[d], self.end_i128(d))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Region;

    #[test]
    fn display_is_half_open_per_dimension() {
        assert_eq!(
            Region::from_shape([1920, 1080]).to_string(),
            "[0, 1920) x [0, 1080)"
        );
        assert_eq!(
            Region::new([-1, 5, 0], [3, 0, 4]).to_string(),
            "[-1, 2) x [5, 5) x [0, 4)"
        );
        assert_eq!(Region::<0>::from_shape([]).to_string(), "[]");
    }

    #[test]
    fn max_is_the_last_coordinate() {
        let r = Region::new([-3, 10], [4, 0]);
        assert_eq!(r.max(0), 0);
        assert_eq!(r.max(1), 9);
        assert!(r.is_empty());
        assert!(!Region::new([-3], [4]).is_empty());
        assert_eq!(Region::new([i64::MAX], [5]).max(0), i64::MAX);
    }

    #[test]
    fn contains_compares_every_dimension() {
        let outer = Region::new([-2, -2], [10, 10]);
        assert!(outer.contains(&Region::new([-2, -2], [10, 10])));
        assert!(outer.contains(&Region::new([0, 3], [8, 5])));
        assert!(!outer.contains(&Region::new([0, 3], [9, 5])));
        assert!(!outer.contains(&Region::new([-3, 3], [1, 1])));
        assert!(!outer.contains(&Region::new([0, 7], [1, 2])));
    }

    #[test]
    fn empty_regions_are_contained_by_anything() {
        let empty = Region::new([1000, -1000], [0, 5]);
        assert!(Region::new([0, 0], [1, 1]).contains(&empty));
        assert!(Region::new([0, 0], [0, 0]).contains(&empty));
        assert!(!empty.contains(&Region::new([1000, -1000], [1, 1])));
    }

    #[test]
    fn contains_is_exact_near_the_ends_of_i64() {
        let top = Region::new([i64::MAX - 1], [2]);
        assert!(top.contains(&Region::new([i64::MAX], [1])));
        assert!(!Region::new([i64::MAX - 1], [1]).contains(&Region::new([i64::MAX], [1])));
        assert!(!top.contains(&Region::new([i64::MAX], [2])));
    }
}
