//! Shapes, strides and the checks that make a strided view safe to use.
//!
//! A view maps coordinate `c` to the element at offset
//! `sum((c[d] - origin[d]) * strides[d])` from its first element. Before a view is
//! built, these checks establish its invariants:
//!
//! - **Invariant:** every coordinate inside the shape maps to an offset below the
//!   length of the memory the view borrows ([`check_in_range`]).
//! - **Invariant (mutable views only):** no two coordinates inside the shape map to
//!   the same offset ([`check_injective`]).
//!
//! ```text
//! shape [4, 3], strides [1, 5], 15 elements  -> fine (rows padded to 5)
//! shape [4, 3], strides [1, 2], mutable      -> InvalidLayout: rows overlap
//! ```

use crate::error::{dim_name, Error};

/// The number of elements of `shape`, or `None` if it overflows `usize`.
///
/// A shape with a zero extent has no elements, however large its other extents.
pub(crate) fn element_count<const N: usize>(shape: [usize; N]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape
        .iter()
        .try_fold(1usize, |count, &extent| count.checked_mul(extent))
}

/// The strides of a dense layout with `x` fastest: `[1, w, w * h, ...]`.
///
/// Strides of an empty shape can overflow without harm, since no coordinate is
/// ever mapped through them; they saturate instead of panicking.
pub(crate) fn dense_strides<const N: usize>(shape: [usize; N]) -> [usize; N] {
    let mut strides = [0; N];
    let mut step = 1usize;
    for d in 0..N {
        strides[d] = step;
        step = step.saturating_mul(shape[d]);
    }
    strides
}

/// The offset of the element at `rel`, a coordinate relative to the view's origin.
///
/// The arithmetic wraps: callers either know `rel` is inside the shape (where the
/// in-range invariant rules out overflow) or check the result against the length.
#[inline(always)]
pub(crate) fn offset_of<const N: usize>(rel: [usize; N], strides: &[usize; N]) -> usize {
    let mut offset = 0usize;
    for d in 0..N {
        offset = offset.wrapping_add(rel[d].wrapping_mul(strides[d]));
    }
    offset
}

/// The offset of global coordinate `c` in a layout at `origin` whose
/// dimension 0 has stride 1 (the caller knows it; `strides[0]` is not read).
///
/// The sum is ordered so that what does not depend on `c[0]` comes first:
/// in a loop along dimension 0, the compiler then moves it out and every
/// view read at `x + k` is one base address plus `x`, whatever its origin.
#[inline(always)]
pub(crate) fn dense_offset_of<const N: usize>(
    c: &[i64; N],
    origin: &[i64; N],
    strides: &[usize; N],
) -> usize {
    let mut rest = 0usize;
    for d in 1..N {
        let rel = c[d].wrapping_sub(origin[d]) as usize;
        rest = rest.wrapping_add(rel.wrapping_mul(strides[d]));
    }
    rest.wrapping_sub(origin[0] as usize)
        .wrapping_add(c[0] as usize)
}

/// Asks the processor to start fetching the cache line of the element one
/// row after global coordinate `c` (dimension 1 one higher) in a layout at
/// `origin` from `ptr` whose dimension 0 has stride 1. Only a hint: the
/// address is computed with wrapping arithmetic and never dereferenced (a
/// prefetch does not fault, even past the end of the data), and it does
/// nothing for a layout of one dimension or off x86-64.
#[inline(always)]
pub(crate) fn prefetch_next_row<T, const N: usize>(
    ptr: *const T,
    c: &[i64; N],
    origin: &[i64; N],
    strides: &[usize; N],
) {
    if N < 2 {
        return;
    }
    let offset = dense_offset_of(c, origin, strides).wrapping_add(strides[1]);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints the cache; it reads nothing and never
    // faults, whatever the address.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(ptr.wrapping_add(offset) as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, offset);
}

/// Whether the global coordinate `c` lies inside the box at `origin` of `shape`.
///
/// Exact for every input: the difference is taken in `i128`.
pub(crate) fn contains_coord<const N: usize>(
    c: &[i64; N],
    origin: &[i64; N],
    shape: &[usize; N],
) -> bool {
    (0..N).all(|d| {
        let rel = c[d] as i128 - origin[d] as i128;
        rel >= 0 && rel < shape[d] as i128
    })
}

/// Calls `f` on every coordinate inside `shape`, relative to the origin, in memory
/// order of a dense layout (x fastest).
pub(crate) fn for_each_coord<const N: usize>(shape: [usize; N], mut f: impl FnMut([usize; N])) {
    if shape.contains(&0) {
        return;
    }
    let mut rel = [0usize; N];
    loop {
        f(rel);
        // Advance like an odometer: bump x, carrying into the next dimension
        // whenever one wraps around.
        let mut d = 0;
        loop {
            if d == N {
                return;
            }
            rel[d] += 1;
            if rel[d] < shape[d] {
                break;
            }
            rel[d] = 0;
            d += 1;
        }
    }
}

/// Checks that every coordinate of `shape` maps inside `len` elements.
///
/// Shapes with a zero extent map no coordinate, so they fit any length.
pub(crate) fn check_in_range<const N: usize>(
    len: usize,
    shape: [usize; N],
    strides: [usize; N],
) -> Result<(), Error> {
    if shape.contains(&0) {
        return Ok(());
    }
    let last = (0..N).try_fold(0usize, |offset, d| {
        (shape[d] - 1)
            .checked_mul(strides[d])
            .and_then(|step| offset.checked_add(step))
    });
    match last {
        Some(last) if last < len => Ok(()),
        Some(last) => Err(Error::InvalidLayout {
            reason: format!(
                "shape {shape:?} with strides {strides:?} reaches element {last}, but the \
                 slice holds only {len} elements; use smaller strides, a smaller shape or a \
                 longer slice"
            ),
        }),
        None => Err(Error::InvalidLayout {
            reason: format!(
                "shape {shape:?} with strides {strides:?} reaches past the largest offset \
                 a usize can hold; use smaller strides or a smaller shape"
            ),
        }),
    }
}

/// Checks that no two coordinates of `shape` map to the same element, as a mutable
/// view requires.
///
/// The test is the usual sufficient one: order the dimensions that have more than
/// one coordinate by stride; each must step over everything the smaller ones
/// cover (`stride[k] >= stride[k - 1] * extent[k - 1]`, and the smallest stride is
/// at least 1). Dense layouts, padded rows, interleaved channels and any crop of
/// them pass. A few exotic injective layouts (strides `[2, 3]` over extents `[2, 2]`)
/// are rejected; nothing that passes can alias.
pub(crate) fn check_injective<const N: usize>(
    shape: [usize; N],
    strides: [usize; N],
) -> Result<(), Error> {
    if shape.contains(&0) {
        return Ok(());
    }
    let mut dims: Vec<usize> = (0..N).filter(|&d| shape[d] > 1).collect();
    dims.sort_by_key(|&d| strides[d]);
    let mut covered = 1usize;
    let mut previous: Option<usize> = None;
    for &d in &dims {
        if strides[d] < covered {
            let why = match previous {
                None => format!(
                    "dimension {} has {} coordinates but stride 0",
                    dim_name(d),
                    shape[d]
                ),
                Some(p) => format!(
                    "the stride {} of dimension {} is less than the {} elements that \
                     dimension {} spans (stride {} times extent {})",
                    strides[d],
                    dim_name(d),
                    covered,
                    dim_name(p),
                    strides[p],
                    shape[p]
                ),
            };
            return Err(Error::InvalidLayout {
                reason: format!(
                    "a mutable view needs a distinct element for every coordinate, but shape \
                     {shape:?} with strides {strides:?} maps several coordinates to one \
                     element: {why}; use strides such as the dense {:?}",
                    dense_strides(shape)
                ),
            });
        }
        // Saturating loses nothing: a stride as large as usize::MAX on a dimension
        // with two coordinates already fails `check_in_range`, which runs first.
        covered = strides[d].saturating_mul(shape[d]);
        previous = Some(d);
    }
    Ok(())
}

/// The offset from the first element of a view (at `origin`, of `shape`, with
/// `strides`) to the first element of its sub-box at `crop_origin` of `crop_shape`,
/// or `Error::OutOfBounds` if the sub-box leaves the view.
///
/// An empty sub-box fits anywhere and starts at offset 0.
pub(crate) fn crop_offset<const N: usize>(
    origin: [i64; N],
    shape: [usize; N],
    strides: [usize; N],
    crop_origin: [i64; N],
    crop_shape: [usize; N],
) -> Result<usize, Error> {
    use crate::region::Region;
    let bounds = Region::new(origin, shape);
    let region = Region::new(crop_origin, crop_shape);
    if !bounds.contains(&region) {
        return Err(Error::OutOfBounds {
            region: region.to_string(),
            bounds: bounds.to_string(),
        });
    }
    if region.is_empty() {
        return Ok(0);
    }
    let rel: [usize; N] = core::array::from_fn(|d| (crop_origin[d] - origin[d]) as usize);
    Ok(offset_of(rel, &strides))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_count_overflow_and_zero_extents() {
        assert_eq!(element_count([4, 3, 2]), Some(24));
        assert_eq!(element_count::<0>([]), Some(1));
        assert_eq!(element_count([usize::MAX, 2]), None);
        assert_eq!(element_count([usize::MAX, 2, 0]), Some(0));
    }

    #[test]
    fn dense_strides_put_x_fastest() {
        assert_eq!(dense_strides([4, 3, 2]), [1, 4, 12]);
        assert_eq!(dense_strides([0, usize::MAX, usize::MAX]), [1, 0, 0]);
    }

    #[test]
    fn for_each_coord_visits_in_memory_order() {
        let mut seen = Vec::new();
        for_each_coord([2, 3], |c| seen.push(c));
        assert_eq!(seen, [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]);
        let mut count = 0;
        for_each_coord::<0>([], |_| count += 1);
        assert_eq!(count, 1);
        for_each_coord([3, 0], |_| count += 1);
        assert_eq!(count, 1);
    }

    #[test]
    fn in_range_accepts_exact_fits_and_rejects_one_past() {
        assert!(check_in_range(15, [4, 3], [1, 5]).is_ok());
        assert!(check_in_range(14, [4, 3], [1, 5]).is_ok());
        let err = check_in_range(13, [4, 3], [1, 5]).unwrap_err();
        assert!(matches!(&err, Error::InvalidLayout { reason } if reason.contains("element 13")));
        assert!(check_in_range(0, [0, 1_000_000], [1, 1_000_000]).is_ok());
        let err = check_in_range(10, [3, 3], [usize::MAX, 1]).unwrap_err();
        assert!(err.to_string().contains("largest offset"), "{err}");
    }

    #[test]
    fn injectivity_accepts_padded_and_interleaved_layouts() {
        assert!(check_injective([4, 3], [1, 4]).is_ok());
        assert!(check_injective([4, 3], [1, 7]).is_ok());
        assert!(check_injective([4, 3, 3], [3, 12, 1]).is_ok());
        assert!(check_injective([4, 1], [1, 0]).is_ok());
        assert!(check_injective([4, 0], [0, 0]).is_ok());
        assert!(check_injective([3, 4], [4, 1]).is_ok());
    }

    #[test]
    fn injectivity_rejects_overlaps_and_zero_strides() {
        let err = check_injective([4, 3], [1, 2]).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("stride 2 of dimension y is less than the 4 elements"),
            "{msg}"
        );
        let err = check_injective([4, 3], [0, 4]).unwrap_err();
        assert!(err
            .to_string()
            .contains("dimension x has 4 coordinates but stride 0"));
        assert!(check_injective([2, 2], [2, 2]).is_err());
        assert!(check_injective([2, 2], [2, 3]).is_err());
    }

    #[test]
    fn crop_offset_is_relative_to_the_origin() {
        assert_eq!(
            crop_offset([10, 20], [4, 3], [1, 5], [11, 21], [2, 2]),
            Ok(6)
        );
        assert_eq!(
            crop_offset([10, 20], [4, 3], [1, 5], [99, 99], [0, 2]),
            Ok(0)
        );
        let err = crop_offset([10, 20], [4, 3], [1, 5], [11, 21], [4, 2]).unwrap_err();
        assert_eq!(
            err,
            Error::OutOfBounds {
                region: "[11, 15) x [21, 23)".into(),
                bounds: "[10, 14) x [20, 23)".into()
            }
        );
    }
}
