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

/// The number of elements of `shape` and their size in bytes as `T`s, or
/// [`Error::BufferTooLarge`] when either overflows `usize`.
pub(crate) fn byte_size<T, const N: usize>(shape: [usize; N]) -> Result<(usize, usize), Error> {
    let count = element_count(shape).ok_or_else(|| too_large(shape, None))?;
    let bytes = count as u128 * core::mem::size_of::<T>() as u128;
    let size = usize::try_from(bytes).map_err(|_| too_large(shape, Some(bytes)))?;
    Ok((count, size))
}

/// [`Error::BufferTooLarge`] for `shape`, of `bytes` when they are known.
pub(crate) fn too_large<const N: usize>(shape: [usize; N], bytes: Option<u128>) -> Error {
    Error::BufferTooLarge {
        shape: shape.to_vec(),
        bytes,
    }
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

/// Copies every element of `shape` from the layout at `src` to the one at
/// `dst`, row by row along dimension 0. The outer dimensions go in the
/// order of their smaller stride of the two, smallest first, so that
/// consecutive rows touch nearby memory on one side: the three channels of
/// an interleaved RGB row, read or written, before the next row.
/// Rows of small constant strides (1 to 4 on either side, the other 1) are
/// loops the compiler vectorizes, with AVX2 where the kernels' level
/// ([`crate::rt::isa`]) has it: 3-5 times as fast as with the baseline SSE2
/// for the channels of an interleaved RGB image. A copy of
/// [`PARALLEL_COPY`] elements or more is split along the outermost of those
/// dimensions into pieces copied on rayon's threads.
///
/// # Safety
///
/// Both layouts must hold every coordinate of `shape` in range of their
/// pointers, the elements written must not overlap those read, and `dst`'s
/// layout must map distinct coordinates to distinct elements.
pub(crate) unsafe fn copy_strided<T: Copy + Send + Sync, const N: usize>(
    src: *const T,
    src_strides: &[usize; N],
    dst: *mut T,
    dst_strides: &[usize; N],
    shape: [usize; N],
) {
    if shape.contains(&0) {
        return;
    }
    if N == 0 {
        // SAFETY: a 0-dimensional layout holds one element (the caller's
        // promise).
        unsafe { *dst = *src };
        return;
    }
    let mut order: [usize; N] = core::array::from_fn(|d| d);
    order[1..].sort_by_key(|&d| (src_strides[d].min(dst_strides[d]), d));
    // The level is the calling thread's (`with_isa` sets it per thread).
    let wide = cfg!(target_arch = "x86_64") && crate::rt::isa() >= crate::rt::Isa::Avx2;
    let outer = order[N - 1];
    let threads = rayon::current_num_threads();
    let count: usize = shape.iter().product();
    if N == 1 || threads == 1 || count < PARALLEL_COPY || shape[outer] == 1 {
        // SAFETY: the caller's promise.
        return unsafe { copy_rows(src, src_strides, dst, dst_strides, shape, &order, wide) };
    }
    /// The pointers, shared by the pieces: they read and write distinct
    /// elements (distinct coordinates of an injective `dst`).
    #[derive(Clone, Copy)]
    struct Shared<T>(*const T, *mut T);
    // SAFETY: see above; the elements are `Send + Sync`.
    unsafe impl<T: Send + Sync> Send for Shared<T> {}
    // SAFETY: as above.
    unsafe impl<T: Send + Sync> Sync for Shared<T> {}
    let pieces = (4 * threads).min(shape[outer]);
    let shared = Shared(src, dst);
    let piece = |k: usize| {
        let ptrs = shared;
        let (lo, hi) = (shape[outer] * k / pieces, shape[outer] * (k + 1) / pieces);
        let mut part = shape;
        part[outer] = hi - lo;
        // SAFETY: coordinates `lo..hi` of `outer` are inside the shape, so
        // the piece's layouts are in range; pieces hold distinct coordinates.
        unsafe {
            copy_rows(
                ptrs.0.add(lo * src_strides[outer]),
                src_strides,
                ptrs.1.add(lo * dst_strides[outer]),
                dst_strides,
                part,
                &order,
                wide,
            )
        }
    };
    use rayon::prelude::*;
    (0..pieces).into_par_iter().for_each(piece);
}

/// Copies of at least this many elements run on rayon's threads (an
/// element costs about a nanosecond to copy, a piece some microseconds to
/// hand to a thread).
pub(crate) const PARALLEL_COPY: usize = 1 << 16;

/// [`copy_strided`] on this thread: rows along dimension 0, the outer
/// dimensions in `order` (from `order[1]`, innermost).
///
/// # Safety
///
/// As [`copy_strided`]'s; `wide` only where the processor has AVX2.
unsafe fn copy_rows<T: Copy, const N: usize>(
    src: *const T,
    src_strides: &[usize; N],
    dst: *mut T,
    dst_strides: &[usize; N],
    shape: [usize; N],
    order: &[usize; N],
    wide: bool,
) {
    let (n, s, d) = (shape[0], src_strides[0], dst_strides[0]);
    // Planes into an interleaved layout (channels of stride 1 in `dst`,
    // x of stride `d` = their count), or back: the rows of all channels
    // at once, which the compiler turns into shuffles, where each row
    // alone would be a strided loop of single elements.
    if N > 1 {
        let k = order[1];
        let c = shape[k];
        if s == 1 && d == c && dst_strides[k] == 1 && (2..=4).contains(&c) {
            odometer(shape, order, 2, |rel| {
                let (from, to) = (offset_of(rel, src_strides), offset_of(rel, dst_strides));
                // SAFETY: the `c` rows from `rel` are inside the shape (as
                // below), and `dst`'s row of `c n` elements holds theirs.
                unsafe { planes(src.add(from), dst.add(to), src_strides[k], n, c, true, wide) };
            });
            return;
        }
        if d == 1 && s == c && src_strides[k] == 1 && (2..=4).contains(&c) {
            odometer(shape, order, 2, |rel| {
                let (from, to) = (offset_of(rel, src_strides), offset_of(rel, dst_strides));
                // SAFETY: as above, the other way round.
                unsafe {
                    planes(
                        src.add(from),
                        dst.add(to),
                        dst_strides[k],
                        n,
                        c,
                        false,
                        wide,
                    )
                };
            });
            return;
        }
    }
    odometer(shape, order, 1, |rel| {
        let (from, to) = (offset_of(rel, src_strides), offset_of(rel, dst_strides));
        // SAFETY: `rel` is inside the shape with `rel[0] == 0`, so the row's
        // elements are in range of both pointers (the caller's promise).
        unsafe { copy_row(src.add(from), s, dst.add(to), d, n, wide) };
    });
}

/// `n` elements from every `s`-th element at `src` to every `d`-th at `dst`,
/// with AVX2 if `wide`.
///
/// # Safety
///
/// As [`copy_strided`], for the row; `wide` only where the processor has
/// AVX2.
#[inline(always)]
unsafe fn copy_row<T: Copy>(src: *const T, s: usize, dst: *mut T, d: usize, n: usize, wide: bool) {
    // SAFETY (of each call): as `copy_row`'s.
    unsafe {
        match (s, d) {
            (1, 1) => core::ptr::copy(src, dst, n),
            (2, 1) => fixed::<T, 2, 1>(src, dst, n, wide),
            (3, 1) => fixed::<T, 3, 1>(src, dst, n, wide),
            (4, 1) => fixed::<T, 4, 1>(src, dst, n, wide),
            (1, 2) => fixed::<T, 1, 2>(src, dst, n, wide),
            (1, 3) => fixed::<T, 1, 3>(src, dst, n, wide),
            (1, 4) => fixed::<T, 1, 4>(src, dst, n, wide),
            _ => {
                for i in 0..n {
                    *dst.add(d.wrapping_mul(i)) = *src.add(s.wrapping_mul(i));
                }
            }
        }
    }
}

/// Between `c` rows of `n` elements, `step` apart, and one row of their
/// `c n` elements interleaved (element `i` of row `j` at `c i + j`): from
/// the rows at `src` into the interleaved row at `dst` if `into`, else from
/// the interleaved row at `src` into the rows at `dst`. With AVX2 if `wide`.
///
/// # Safety
///
/// As [`copy_row`]'s, for the rows and the interleaved row; `c` is 2 to 4.
#[inline(always)]
unsafe fn planes<T: Copy>(
    src: *const T,
    dst: *mut T,
    step: usize,
    n: usize,
    c: usize,
    into: bool,
    wide: bool,
) {
    // SAFETY (of each call): as `planes`'.
    unsafe {
        match (c, into) {
            (2, true) => planes_c::<T, 2, true>(src, dst, step, n, wide),
            (3, true) => planes_c::<T, 3, true>(src, dst, step, n, wide),
            (_, true) => planes_c::<T, 4, true>(src, dst, step, n, wide),
            (2, false) => planes_c::<T, 2, false>(src, dst, step, n, wide),
            (3, false) => planes_c::<T, 3, false>(src, dst, step, n, wide),
            (_, false) => planes_c::<T, 4, false>(src, dst, step, n, wide),
        }
    }
}

/// [`planes`] for a constant count `C` of rows, which the compiler turns
/// into vector loads, shuffles and stores.
///
/// # Safety
///
/// As [`planes`]'.
#[inline(always)]
unsafe fn planes_c<T: Copy, const C: usize, const INTO: bool>(
    src: *const T,
    dst: *mut T,
    step: usize,
    n: usize,
    wide: bool,
) {
    #[inline(always)]
    unsafe fn each<T: Copy, const C: usize, const INTO: bool>(
        src: *const T,
        dst: *mut T,
        step: usize,
        n: usize,
    ) {
        for i in 0..n {
            for j in 0..C {
                // SAFETY: as `planes`'.
                unsafe {
                    if INTO {
                        *dst.add(C * i + j) = *src.add(j * step + i);
                    } else {
                        *dst.add(j * step + i) = *src.add(C * i + j);
                    }
                }
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn each_avx2<T: Copy, const C: usize, const INTO: bool>(
        src: *const T,
        dst: *mut T,
        step: usize,
        n: usize,
    ) {
        // SAFETY: as `planes`'.
        unsafe { each::<T, C, INTO>(src, dst, step, n) }
    }
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: as `planes`'; `wide` says the processor has AVX2.
        return unsafe { each_avx2::<T, C, INTO>(src, dst, step, n) };
    }
    let _ = wide;
    // SAFETY: as `planes`'.
    unsafe { each::<T, C, INTO>(src, dst, step, n) }
}

/// A row of constant strides `S` and `D`, which the compiler vectorizes:
/// compiled for AVX2 if `wide`.
///
/// # Safety
///
/// As [`copy_row`]'s.
#[inline(always)]
unsafe fn fixed<T: Copy, const S: usize, const D: usize>(
    src: *const T,
    dst: *mut T,
    n: usize,
    wide: bool,
) {
    #[inline(always)]
    unsafe fn each<T: Copy, const S: usize, const D: usize>(src: *const T, dst: *mut T, n: usize) {
        for i in 0..n {
            // SAFETY: as `fixed`'s.
            unsafe { *dst.add(D * i) = *src.add(S * i) };
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn each_avx2<T: Copy, const S: usize, const D: usize>(
        src: *const T,
        dst: *mut T,
        n: usize,
    ) {
        // SAFETY: as `fixed`'s.
        unsafe { each::<T, S, D>(src, dst, n) }
    }
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: as `fixed`'s; `wide` says the processor has AVX2.
        return unsafe { each_avx2::<T, S, D>(src, dst, n) };
    }
    let _ = wide;
    // SAFETY: as `fixed`'s.
    unsafe { each::<T, S, D>(src, dst, n) }
}

/// Calls `f` on every coordinate inside `shape`, relative to the origin, in memory
/// order of a dense layout (x fastest).
pub(crate) fn for_each_coord<const N: usize>(shape: [usize; N], f: impl FnMut([usize; N])) {
    odometer(shape, &core::array::from_fn(|d| d), 0, f);
}

/// Calls `f` on every coordinate inside `shape` whose dimensions
/// `order[..skip]` are 0, the dimensions `order[skip..]` counting like an
/// odometer, `order[skip]` fastest.
fn odometer<const N: usize>(
    shape: [usize; N],
    order: &[usize; N],
    skip: usize,
    mut f: impl FnMut([usize; N]),
) {
    if shape.contains(&0) {
        return;
    }
    let mut rel = [0usize; N];
    loop {
        f(rel);
        // Bump the fastest dimension, carrying into the next whenever one
        // wraps around.
        let mut k = skip;
        loop {
            if k >= N {
                return;
            }
            let d = order[k];
            rel[d] += 1;
            if rel[d] < shape[d] {
                break;
            }
            rel[d] = 0;
            k += 1;
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
    use crate::rt::{with_isa, Isa};

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

    /// Copies between every pair of layouts of a 5x4x3 shape, which take
    /// every branch of `copy_row` (strides 1 to 4 on either side, and others)
    /// and every order of the outer dimensions, and checks each element.
    #[test]
    fn strided_copies_move_every_element_to_its_coordinate() {
        // A small shape, and one large enough to be copied in pieces on
        // rayon's threads.
        for shape in [[5, 4, 3], [97, 230, 3]] {
            let [w, h, _] = shape;
            let layouts: [[usize; 3]; 7] = [
                [1, w, w * h],                   // dense
                [3, 3 * w, 1],                   // interleaved channels
                [2, 2 * w, 2 * w * h],           // every other element
                [4, 4 * w, 4 * w * h],           // every fourth
                [3 * h, 3, 1],                   // x outermost
                [7, 7 * w + 1, (7 * w + 1) * h], // padded rows and a stride of 7
                [1, 3 * w, w],                   // planes of rows interleaved
            ];
            let span = |strides: &[usize; 3]| {
                (0..3).map(|d| (shape[d] - 1) * strides[d]).sum::<usize>() + 1
            };
            // The baseline loops and, where the processor has it, the AVX2 ones.
            for level in [Isa::Scalar, Isa::Avx2] {
                for from in &layouts {
                    let src: Vec<u32> = (0..span(from) as u32).map(|v| v * 3 + 1).collect();
                    for to in &layouts {
                        let mut dst = vec![0u32; span(to)];
                        // SAFETY: both layouts are in range of their vectors
                        // (`span`), which are distinct, and each is injective.
                        with_isa(level, || unsafe {
                            copy_strided(src.as_ptr(), from, dst.as_mut_ptr(), to, shape)
                        });
                        let mut wrong = 0;
                        for_each_coord(shape, |rel| {
                            wrong +=
                                usize::from(src[offset_of(rel, from)] != dst[offset_of(rel, to)]);
                        });
                        assert_eq!(wrong, 0, "{shape:?} at {level:?}: {from:?} -> {to:?}");
                    }
                }
            }
        }
        let mut one = [0u8];
        // SAFETY: one element each.
        unsafe { copy_strided::<u8, 0>([9u8].as_ptr(), &[], one.as_mut_ptr(), &[], []) };
        assert_eq!(one, [9]);
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
