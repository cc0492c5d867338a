//! Borrowed, mutable, strided images: [`ViewMut`] and the [`AsViewMut`] trait.
//!
//! A mutable view is what a pipeline writes its output into. It can be split into
//! disjoint pieces ([`ViewMut::split_at`]) that different threads fill at once;
//! the pieces keep global coordinates, so each thread writes `out(x, y)` at the
//! same `(x, y)` it would use for the whole image.
//!
//! ```text
//! let (top, bottom) = out.view_mut().split_at(1, 540);  // y < 540 | y >= 540
//! rayon::join(|| fill(top), || fill(bottom));
//! ```

use core::fmt;
use core::marker::PhantomData;

use crate::buffer::check_length;
use crate::element::Element;
use crate::error::Error;
use crate::layout::{
    check_in_range, check_injective, contains_coord, copy_strided, crop_offset, dense_offset_of,
    dense_strides, for_each_coord, offset_of, prefetch_next_row,
};
use crate::region::Region;
use crate::view::{outside_view, AsView, View};

/// Anything a pipeline can write as an `N`-dimensional image of `T`.
///
/// Generated pipelines take their outputs as `&mut impl AsViewMut<T, N>`, so a
/// [`Buffer`](crate::Buffer) and a [`ViewMut`] both work, and with the `image`
/// feature so do `image::ImageBuffer`s.
pub trait AsViewMut<T: Element, const N: usize> {
    /// A mutable view of the image in its own coordinates.
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N>;
}

/// A borrowed, mutable, strided `N`-dimensional image of `T`.
///
/// The element at global coordinate `c` is the one at offset
/// `sum((c[d] - origin[d]) * strides[d])` from `ptr`.
///
/// **Invariant:** every coordinate inside `shape` maps to a distinct element of
/// `ptr..ptr + len`, memory that this view may read and write for `'a`. No two
/// coordinates share an element, so views whose regions do not overlap never
/// touch the same element, even when their memory ranges interleave. This is what
/// makes [`ViewMut::split_at`] sound.
pub struct ViewMut<'a, T, const N: usize> {
    ptr: *mut T,
    len: usize,
    shape: [usize; N],
    strides: [usize; N],
    origin: [i64; N],
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `ViewMut` is an exclusive borrow of the elements its coordinates map
// to, like `&'a mut [T]`, which is `Send` when `T: Send`. Pieces from `split_at`
// share a memory range but never an element, so moving one to another thread
// cannot race with its siblings.
unsafe impl<T: Element, const N: usize> Send for ViewMut<'_, T, N> {}
// SAFETY: through `&ViewMut` only reads are possible (`get`, `at`, `as_view`), as
// through `&&mut [T]`, which is `Sync` when `T: Sync`; every `Element` is `Sync`.
unsafe impl<T: Element, const N: usize> Sync for ViewMut<'_, T, N> {}

impl<'a, T: Element, const N: usize> ViewMut<'a, T, N> {
    /// A dense mutable view of `data` (x fastest) with its origin at 0.
    ///
    /// Fails with [`Error::LengthMismatch`] unless `data` holds exactly one element
    /// per coordinate of `shape`.
    pub fn from_slice(data: &'a mut [T], shape: [usize; N]) -> Result<Self, Error> {
        check_length(data.len(), shape)?;
        // SAFETY: a dense layout of exactly `data.len()` elements maps the
        // coordinates one to one onto `data`, which is borrowed mutably for 'a.
        Ok(unsafe {
            Self::from_raw_parts(data.as_mut_ptr(), data.len(), shape, dense_strides(shape))
        })
    }

    /// A mutable view of `data` with explicit `strides` (in elements), origin at 0.
    ///
    /// Fails with [`Error::InvalidLayout`] if some coordinate of `shape` would map
    /// past the end of `data`, or if two coordinates would share an element (see
    /// the message for the rule). A shape with a zero extent is valid with any
    /// strides.
    pub fn with_strides(
        data: &'a mut [T],
        shape: [usize; N],
        strides: [usize; N],
    ) -> Result<Self, Error> {
        check_in_range(data.len(), shape, strides)?;
        check_injective(shape, strides)?;
        // SAFETY: just checked that the coordinates map one to one into `data`,
        // which is borrowed mutably for 'a.
        Ok(unsafe { Self::from_raw_parts(data.as_mut_ptr(), data.len(), shape, strides) })
    }

    /// A mutable view over raw parts, with its origin at 0.
    ///
    /// # Safety
    ///
    /// Every coordinate inside `shape` must map through `strides` to a distinct
    /// offset below `len`, and `ptr..ptr + len` must lie in one allocation whose
    /// elements at those offsets nothing else reads or writes for `'a`.
    pub(crate) unsafe fn from_raw_parts(
        ptr: *mut T,
        len: usize,
        shape: [usize; N],
        strides: [usize; N],
    ) -> Self {
        debug_assert!(check_in_range(len, shape, strides).is_ok());
        debug_assert!(check_injective(shape, strides).is_ok());
        ViewMut {
            ptr,
            len,
            shape,
            strides,
            origin: [0; N],
            _borrow: PhantomData,
        }
    }

    /// The same view placed with its first element at global coordinate `origin`.
    pub fn with_origin(self, origin: [i64; N]) -> Self {
        ViewMut { origin, ..self }
    }

    /// The global coordinate of the first element.
    pub fn origin(&self) -> [i64; N] {
        self.origin
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> [usize; N] {
        self.shape
    }

    /// The distance in elements between neighbours along each dimension.
    pub fn strides(&self) -> [usize; N] {
        self.strides
    }

    /// The global coordinates the view covers.
    pub fn region(&self) -> Region<N> {
        Region::new(self.origin, self.shape)
    }

    /// The element at the view's origin (for a CUDA launcher, which copies
    /// the view's span back to it by its strides). Not part of the public
    /// API.
    #[doc(hidden)]
    pub fn __origin_ptr_mut(&mut self) -> *mut T {
        self.ptr
    }

    /// A shorter-lived mutable view of the same elements, leaving `self` usable
    /// once it is gone.
    pub fn reborrow(&mut self) -> ViewMut<'_, T, N> {
        ViewMut {
            _borrow: PhantomData,
            ..*self
        }
    }

    /// A read-only view of the same elements, at the same coordinates.
    pub fn as_view(&self) -> View<'_, T, N> {
        // SAFETY: the invariant of `self` gives the in-range part; while the view
        // lives, `self` is borrowed shared, so nothing writes its elements.
        unsafe {
            View::from_raw_parts(self.ptr as *const T, self.len, self.shape, self.strides)
                .with_origin(self.origin)
        }
    }

    /// The part of the view at global coordinates `origin..origin + shape`,
    /// borrowed from `self`.
    ///
    /// The result keeps global coordinates: its origin is `origin`. Fails with
    /// [`Error::OutOfBounds`] if the region is not inside the view; an empty
    /// region is inside any view.
    pub fn crop(
        &mut self,
        origin: [i64; N],
        shape: [usize; N],
    ) -> Result<ViewMut<'_, T, N>, Error> {
        self.reborrow().into_crop(origin, shape)
    }

    /// Like [`ViewMut::crop`], but consumes the view and keeps its lifetime.
    pub fn into_crop(
        self,
        origin: [i64; N],
        shape: [usize; N],
    ) -> Result<ViewMut<'a, T, N>, Error> {
        let offset = crop_offset(self.origin, self.shape, self.strides, origin, shape)?;
        // SAFETY: the sub-box's coordinates are a subset of the view's, so they map
        // to distinct elements below `len`; `offset` is one of them (or 0).
        Ok(unsafe { self.shifted(offset, shape, origin) })
    }

    /// The element at global coordinate `c`, or `None` outside the view.
    pub fn get(&self, c: [i64; N]) -> Option<T> {
        if !contains_coord(&c, &self.origin, &self.shape) {
            return None;
        }
        Some(self.at(c))
    }

    /// The element at global coordinate `c`.
    ///
    /// # Panics
    ///
    /// If `c` is outside the view.
    #[inline(always)]
    #[track_caller]
    pub fn at(&self, c: [i64; N]) -> T {
        let offset = self.checked_offset(&c);
        // SAFETY: `checked_offset` only returns offsets of coordinates inside the
        // view, which the invariant puts below `len`.
        unsafe { *self.ptr.add(offset) }
    }

    /// Writes `v` at global coordinate `c`.
    ///
    /// # Panics
    ///
    /// If `c` is outside the view.
    #[inline(always)]
    #[track_caller]
    pub fn set(&mut self, c: [i64; N], v: T) {
        let offset = self.checked_offset(&c);
        // SAFETY: as in `at`; `&mut self` makes the write exclusive, and the
        // invariant keeps it off every sibling piece's elements.
        unsafe { *self.ptr.add(offset) = v }
    }

    /// The element at global coordinate `c`, unchecked (see [`View::load`]).
    ///
    /// # Safety
    ///
    /// `c` must be inside the view's region.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load(&self, c: [i64; N]) -> T {
        // SAFETY: the caller keeps `c` inside the view.
        unsafe { *self.ptr.add(self.unchecked_offset(&c)) }
    }

    /// Writes `v` at global coordinate `c`, unchecked (see [`View::load`]).
    ///
    /// # Safety
    ///
    /// `c` must be inside the view's region.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn store(&mut self, c: [i64; N], v: T) {
        // SAFETY: the caller keeps `c` inside the view; `&mut self` makes the
        // write exclusive.
        unsafe { *self.ptr.add(self.unchecked_offset(&c)) = v }
    }

    /// The element at `c` of a view whose dimension 0 has stride 1,
    /// unchecked (see [`View::load_unit`]).
    ///
    /// # Safety
    ///
    /// `c` must be inside the view's region, and dimension 0 must have
    /// stride 1 (or extent 1).
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load_unit(&self, c: [i64; N]) -> T {
        let at = self.unit_offset(&c);
        // SAFETY: the caller keeps `c` inside the view.
        unsafe { *self.ptr.add(at) }
    }

    /// Writes `v` at `c` of a view whose dimension 0 has stride 1,
    /// unchecked (see [`View::load_unit`]).
    ///
    /// # Safety
    ///
    /// `c` must be inside the view's region, and dimension 0 must have
    /// stride 1 (or extent 1).
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn store_unit(&mut self, c: [i64; N], v: T) {
        let at = self.unit_offset(&c);
        // SAFETY: the caller keeps `c` inside the view; `&mut self` makes
        // the write exclusive.
        unsafe { *self.ptr.add(at) = v }
    }

    /// The offset of `c` in a view of stride 1 in dimension 0; debug builds
    /// check both.
    #[inline(always)]
    #[track_caller]
    fn unit_offset(&self, c: &[i64; N]) -> usize {
        debug_assert!(
            N == 0 || self.strides[0] == 1 || self.shape[0] <= 1,
            "unit-stride access to a strided view"
        );
        self.debug_check(c);
        dense_offset_of(c, &self.origin, &self.strides)
    }

    /// The `W` elements from `c` along dimension 0, one vector load,
    /// unchecked (see [`View::load_dense`]).
    ///
    /// # Safety
    ///
    /// Every one of the `W` coordinates must be inside the view's region, and
    /// dimension 0 must have stride 1.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load_dense<const W: usize>(&self, c: [i64; N]) -> [T; W] {
        let base = self.dense_lanes(&c, W);
        // SAFETY: the `W` lanes are consecutive elements inside the view.
        unsafe { core::ptr::read_unaligned(self.ptr.add(base) as *const [T; W]) }
    }

    /// Hints the processor to fetch the element one row after `c`, for the
    /// stores of the next row (see [`View::prefetch_next_row`]).
    #[doc(hidden)]
    #[inline(always)]
    pub fn prefetch_next_row(&self, c: [i64; N]) {
        prefetch_next_row(self.ptr, &c, &self.origin, &self.strides);
    }

    /// Writes the `W` elements of `v` from `c` along dimension 0, unchecked
    /// (see [`View::load_dense`]): one unaligned vector store.
    ///
    /// # Safety
    ///
    /// Every one of the `W` coordinates must be inside the view's region, and
    /// dimension 0 must have stride 1.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn store_dense<const W: usize>(&mut self, c: [i64; N], v: [T; W]) {
        let base = self.dense_lanes(&c, W);
        // SAFETY: the `W` lanes are consecutive elements inside the view;
        // `&mut self` makes the write exclusive.
        unsafe { core::ptr::write_unaligned(self.ptr.add(base) as *mut [T; W], v) }
    }

    /// The offset of `c`; debug builds check that dimension 0 is dense and
    /// that all `w` lanes from `c` along it are inside.
    #[inline(always)]
    #[track_caller]
    fn dense_lanes(&self, c: &[i64; N], w: usize) -> usize {
        debug_assert!(
            w <= 1 || self.strides[0] == 1,
            "vector access to a strided view"
        );
        debug_assert!(
            w == 0 || contains_coord(&crate::view::last_lane(*c, 1, w), &self.origin, &self.shape),
            "lanes from {c:?} are not all inside the view's region {}",
            self.region()
        );
        self.debug_check(c);
        dense_offset_of(c, &self.origin, &self.strides)
    }

    /// The offset of global coordinate `c`, checked in debug builds only.
    #[inline(always)]
    #[track_caller]
    fn unchecked_offset(&self, c: &[i64; N]) -> usize {
        offset_of(self.unchecked_rel(c), &self.strides)
    }

    /// `c` relative to the view's origin, checked in debug builds only.
    #[inline(always)]
    #[track_caller]
    fn unchecked_rel(&self, c: &[i64; N]) -> [usize; N] {
        self.debug_check(c);
        core::array::from_fn(|d| c[d].wrapping_sub(self.origin[d]) as usize)
    }

    /// Debug builds check that `c` is inside the view.
    #[inline(always)]
    #[track_caller]
    fn debug_check(&self, c: &[i64; N]) {
        debug_assert!(
            contains_coord(c, &self.origin, &self.shape),
            "coordinate {c:?} is outside the view's region {}",
            self.region()
        );
    }

    /// The offset of global coordinate `c`, panicking unless it is inside the view.
    ///
    /// The comparison per dimension is the whole cost: it is what keeps the pointer
    /// arithmetic inside the view, in release builds too.
    #[inline(always)]
    #[track_caller]
    fn checked_offset(&self, c: &[i64; N]) -> usize {
        let mut rel = [0usize; N];
        for d in 0..N {
            // Wrapping then reinterpreting as unsigned turns every coordinate below
            // the origin into a huge value, so one comparison checks both ends. A
            // wrapped value that lands inside the shape still names a coordinate
            // of the view, so it is never unsafe, only surprising.
            rel[d] = c[d].wrapping_sub(self.origin[d]) as usize;
            if rel[d] >= self.shape[d] {
                outside_view(c, &self.origin, &self.shape);
            }
        }
        offset_of(rel, &self.strides)
    }

    /// Writes `v` at every coordinate of the view.
    pub fn fill(&mut self, v: T) {
        for_each_coord(self.shape, |rel| {
            // SAFETY: `for_each_coord` passes coordinates inside the shape only.
            unsafe { *self.ptr.add(offset_of(rel, &self.strides)) = v }
        });
    }

    /// Copies `src` into this view by relative position: the element at `src`'s
    /// origin goes to this view's origin, and so on.
    ///
    /// Fails with [`Error::ShapeMismatch`] unless both have the same shape; their
    /// origins may differ.
    pub fn copy_from(&mut self, src: &View<'_, T, N>) -> Result<(), Error> {
        if src.shape() != self.shape {
            return Err(Error::ShapeMismatch {
                what: "ViewMut::copy_from".to_string(),
                expected: format!("{:?}", self.shape),
                got: format!("{:?}", src.shape()),
            });
        }
        // SAFETY: both layouts hold every coordinate of the common shape in
        // range, and this view's maps distinct coordinates to distinct
        // elements (the views' invariants); its elements are not aliased by
        // `src`, which borrows other memory or shares it only through
        // `unsafe` constructors that promise as much.
        unsafe {
            copy_strided(
                src.origin_ptr(),
                &src.strides(),
                self.ptr,
                &self.strides,
                self.shape,
            )
        };
        Ok(())
    }

    /// Splits the view along dimension `dim` at global coordinate `at`: the first
    /// piece holds the coordinates below `at`, the second those at or above it.
    ///
    /// `at` is clamped into the view's range, so one piece may be empty. Both
    /// pieces keep global coordinates. They share the memory range of `self` but
    /// no element, by the invariant, so they can be written from different threads.
    ///
    /// # Panics
    ///
    /// If `dim >= N`.
    pub fn split_at(self, dim: usize, at: i64) -> (ViewMut<'a, T, N>, ViewMut<'a, T, N>) {
        assert!(
            dim < N,
            "cannot split a {N}-dimensional view along dimension {dim}"
        );
        let start = self.origin[dim] as i128;
        let at = (at as i128).clamp(start, start + self.shape[dim] as i128);
        self.split_after(dim, (at - start) as usize)
    }

    /// Splits the view along `dim` after its first `head` coordinates, which must be
    /// at most the extent of `dim`.
    pub(crate) fn split_after(
        self,
        dim: usize,
        head: usize,
    ) -> (ViewMut<'a, T, N>, ViewMut<'a, T, N>) {
        assert!(head <= self.shape[dim]);
        let mut first_shape = self.shape;
        first_shape[dim] = head;
        let mut second_shape = self.shape;
        second_shape[dim] -= head;
        let mut second_origin = self.origin;
        // When the second piece is empty its origin may be one past i64::MAX; it is
        // never used as a coordinate then, so wrapping is harmless.
        second_origin[dim] = self.origin[dim].wrapping_add(head as i64);

        // The second piece starts `head` steps along `dim`, which is a coordinate
        // of the view only if the second piece is non-empty.
        let offset = if second_shape.contains(&0) {
            0
        } else {
            head * self.strides[dim]
        };
        // SAFETY: both pieces' coordinates are disjoint subsets of the view's, so
        // they map to distinct elements below `len`, and `offset` is the offset of
        // the second piece's first coordinate (or 0 for an empty piece).
        unsafe {
            (
                self.shifted(0, first_shape, self.origin),
                self.shifted(offset, second_shape, second_origin),
            )
        }
    }

    /// A view of the sub-box at `origin` of `shape`, whose first element is at
    /// `offset` from this view's first element.
    ///
    /// # Safety
    ///
    /// The sub-box must be inside this view (or empty), `offset` must be the offset
    /// of its first coordinate (0 if empty), and no other live view may hold its
    /// elements.
    unsafe fn shifted(
        &self,
        offset: usize,
        shape: [usize; N],
        origin: [i64; N],
    ) -> ViewMut<'a, T, N> {
        debug_assert!(offset < self.len || offset == 0);
        ViewMut {
            // SAFETY: the caller keeps `offset` inside `ptr..ptr + len`.
            ptr: unsafe { self.ptr.add(offset) },
            len: self.len - offset,
            shape,
            strides: self.strides,
            origin,
            _borrow: PhantomData,
        }
    }
}

/// Prints the element type, region and strides, not the elements.
impl<T: Element, const N: usize> fmt::Debug for ViewMut<'_, T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ViewMut<{}, {}> {{ region: {}, strides: {:?} }}",
            T::NAME,
            N,
            self.region(),
            self.strides
        )
    }
}

impl<T: Element, const N: usize> AsView<T, N> for ViewMut<'_, T, N> {
    fn as_view(&self) -> View<'_, T, N> {
        ViewMut::as_view(self)
    }
}

impl<T: Element, const N: usize> AsViewMut<T, N> for ViewMut<'_, T, N> {
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N> {
        self.reborrow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Buffer;

    #[test]
    fn set_and_at_use_global_coordinates() {
        let mut data = vec![0u16; 12];
        let mut v = ViewMut::from_slice(&mut data, [4, 3])
            .unwrap()
            .with_origin([10, -5]);
        assert_eq!(v.region(), Region::new([10, -5], [4, 3]));
        assert_eq!(v.strides(), [1, 4]);
        v.set([11, -3], 7);
        assert_eq!(v.at([11, -3]), 7);
        assert_eq!(v.get([11, -3]), Some(7));
        assert_eq!(v.get([14, -3]), None);
        assert_eq!(v.as_view().at([11, -3]), 7);
        assert_eq!(data[1 + 4 * 2], 7);
    }

    #[test]
    #[should_panic(
        expected = "coordinate [14, -3] is outside the view's region [10, 14) x [-5, -2)"
    )]
    fn set_outside_the_view_panics() {
        let mut data = vec![0u16; 12];
        let mut v = ViewMut::from_slice(&mut data, [4, 3])
            .unwrap()
            .with_origin([10, -5]);
        // Offset 4 + 4 * 2 is inside the slice; the check is on coordinates.
        v.set([14, -3], 1);
    }

    #[test]
    #[should_panic(expected = "outside the view's region")]
    fn at_below_the_origin_panics() {
        let mut data = vec![0u16; 12];
        let v = ViewMut::from_slice(&mut data, [4, 3])
            .unwrap()
            .with_origin([10, -5]);
        v.at([9, -4]);
    }

    #[test]
    fn from_slice_rejects_the_wrong_length() {
        let mut data = vec![0u8; 13];
        let err = ViewMut::from_slice(&mut data, [4, 3]).unwrap_err();
        assert_eq!(
            err,
            Error::LengthMismatch {
                shape: vec![4, 3],
                expected: 12,
                got: 13
            }
        );
    }

    #[test]
    fn with_strides_accepts_padding_and_interleaving() {
        let mut data = vec![0i32; 18];
        let mut v = ViewMut::with_strides(&mut data, [4, 3], [1, 6]).unwrap();
        v.fill(1);
        assert_eq!(data.iter().sum::<i32>(), 12);
        assert_eq!(&data[4..6], &[0, 0]);

        // Two channels interleaved: (x, y, c) with strides [2, 8, 1].
        let mut data = vec![0i32; 16];
        let mut v = ViewMut::with_strides(&mut data, [4, 2, 2], [2, 8, 1]).unwrap();
        v.set([1, 1, 1], 5);
        assert_eq!(data[2 + 8 + 1], 5);
    }

    #[test]
    fn with_strides_rejects_aliasing_layouts() {
        let mut data = vec![0i32; 18];
        let err = ViewMut::with_strides(&mut data, [4, 3], [1, 2]).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidLayout { reason } if reason.contains("distinct element")),
            "{err}"
        );
        assert!(ViewMut::with_strides(&mut data, [4, 3], [1, 0]).is_err());
        assert!(ViewMut::with_strides(&mut data, [3, 3], [3, 3]).is_err());
        // The read-only view accepts the same aliasing layout.
        assert!(View::with_strides(&data, [4, 3], [1, 2]).is_ok());
    }

    #[test]
    fn with_strides_rejects_out_of_range_layouts() {
        // The last row needs only its first 4 elements: 16 in all.
        let mut data = vec![0i32; 16];
        assert!(ViewMut::with_strides(&mut data, [4, 3], [1, 6]).is_ok());
        let err = ViewMut::with_strides(&mut data[..15], [4, 3], [1, 6]).unwrap_err();
        assert!(matches!(&err, Error::InvalidLayout { reason } if reason.contains("element 15")));
        let mut empty: Vec<i32> = Vec::new();
        assert!(ViewMut::with_strides(&mut empty, [4, 0], [0, 0]).is_ok());
    }

    #[test]
    fn crops_keep_global_coordinates_and_write_through() {
        let mut b = Buffer::<u8, 2>::new([6, 5]);
        {
            let mut v = b.view_mut().with_origin([-3, 100]);
            let mut c = v.crop([-1, 101], [3, 2]).unwrap();
            assert_eq!(c.origin(), [-1, 101]);
            c.fill(9);
            c.set([1, 102], 4);
            assert!(c.crop([-2, 101], [1, 1]).is_err());
            let mut inner = v.reborrow().into_crop([0, 102], [1, 1]).unwrap();
            assert_eq!(inner.at([0, 102]), 9);
            inner.set([0, 102], 8);
            let err = v.into_crop([2, 100], [2, 1]).unwrap_err();
            assert_eq!(
                err,
                Error::OutOfBounds {
                    region: "[2, 4) x [100, 101)".into(),
                    bounds: "[-3, 3) x [100, 105)".into()
                }
            );
        }
        let expected_rows = [[0, 0, 0, 0, 0, 0], [0, 0, 9, 9, 9, 0], [0, 0, 9, 8, 4, 0]];
        for (y, row) in expected_rows.iter().enumerate() {
            for (x, &v) in row.iter().enumerate() {
                assert_eq!(b[[x, y]], v, "at ({x}, {y})");
            }
        }
    }

    #[test]
    fn copy_from_goes_by_relative_position() {
        let src = Buffer::<i16, 2>::from_fn([3, 2], |[x, y]| (x + 10 * y) as i16);
        let src_view = src.view().with_origin([50, 50]);
        let mut dst = Buffer::<i16, 2>::new([5, 4]);
        let mut dst_view = dst.view_mut().with_origin([-2, -2]);
        dst_view
            .crop([-1, 0], [3, 2])
            .unwrap()
            .copy_from(&src_view)
            .unwrap();
        assert_eq!(dst[[1, 2]], 0);
        assert_eq!(dst[[3, 3]], 12);
        assert_eq!(dst[[2, 2]], 1);

        let err = dst.view_mut().copy_from(&src.view()).unwrap_err();
        assert_eq!(
            err,
            Error::ShapeMismatch {
                what: "ViewMut::copy_from".into(),
                expected: "[5, 4]".into(),
                got: "[3, 2]".into()
            }
        );
    }

    #[test]
    fn copy_from_a_strided_source() {
        let data: Vec<u32> = (0..20).collect();
        let src = View::with_strides(&data, [2, 3], [2, 7]).unwrap();
        let mut dst = Buffer::<u32, 2>::new([2, 3]);
        dst.view_mut().copy_from(&src).unwrap();
        assert_eq!(dst.as_slice(), &[0, 2, 7, 9, 14, 16]);
    }

    /// Splits `view` along every dimension at several points and counts the writes
    /// each coordinate receives.
    #[test]
    fn split_at_covers_every_coordinate_once() {
        for dim in 0..3 {
            for at in [-100, 0, 1, 2, 3, 4, 100] {
                let mut counts = Buffer::<u32, 3>::new([4, 3, 2]);
                let view = counts.view_mut().with_origin([1, 0, -1]);
                let (mut a, mut b) = view.split_at(dim, at);
                let origin = [1, 0, -1];
                let split = at.clamp(origin[dim], origin[dim] + [4, 3, 2][dim] as i64);
                assert_eq!(a.origin(), origin);
                assert_eq!(a.shape()[dim] as i64, split - origin[dim]);
                assert_eq!(b.origin()[dim], split);
                for piece in [&mut a, &mut b] {
                    let r = piece.region();
                    crate::layout::for_each_coord(r.shape, |rel| {
                        let c = core::array::from_fn(|d| r.min[d] + rel[d] as i64);
                        let old = piece.at(c);
                        piece.set(c, old + 1);
                    });
                }
                assert!(
                    counts.as_slice().iter().all(|&n| n == 1),
                    "dim {dim}, at {at}"
                );
            }
        }
    }

    #[test]
    fn split_pieces_write_from_different_threads() {
        let mut b = Buffer::<u64, 2>::new([7, 5]);
        let view = b.view_mut().with_origin([-3, 0]);
        let (left, right) = view.split_at(0, 0);
        std::thread::scope(|s| {
            for mut piece in [left, right] {
                s.spawn(move || {
                    let r = piece.region();
                    crate::layout::for_each_coord(r.shape, |rel| {
                        let c = [r.min[0] + rel[0] as i64, r.min[1] + rel[1] as i64];
                        piece.set(c, (c[0] + 3 + 7 * c[1]) as u64);
                    });
                });
            }
        });
        assert_eq!(b.into_vec(), (0..35).collect::<Vec<u64>>());
    }

    /// Pieces split along x interleave in memory. Reading one piece through a
    /// `View` while another thread writes its sibling must not assert anything
    /// about the sibling's elements; this is why `View` holds a pointer and not a
    /// slice (Miri reports a data race on the slice version of this test).
    #[test]
    fn a_piece_can_be_read_as_a_view_while_its_sibling_is_written() {
        let mut b = Buffer::<u32, 2>::from_fn([4, 4], |[x, _]| x as u32);
        let (mut left, mut right) = b.view_mut().split_at(0, 2);
        std::thread::scope(|s| {
            s.spawn(move || {
                for _ in 0..10 {
                    let v = left.as_view();
                    let sum: u32 = (0..4).map(|y| v.at([1, y])).sum();
                    left.set([0, 0], sum);
                }
            });
            s.spawn(move || right.fill(7));
        });
        assert_eq!(b[[0, 0]], 4);
        assert_eq!(b[[3, 3]], 7);
    }

    #[test]
    #[should_panic(expected = "cannot split a 2-dimensional view along dimension 2")]
    fn split_at_panics_on_a_missing_dimension() {
        let mut b = Buffer::<u8, 2>::new([2, 2]);
        let _ = b.view_mut().split_at(2, 0);
    }

    #[test]
    fn as_view_mut_reborrows() {
        // The shapes generated code takes its arguments in.
        fn write_first(out: &mut impl AsViewMut<u8, 1>, v: u8) {
            let mut out = out.as_view_mut();
            let first = out.origin();
            out.set(first, v);
        }
        fn read_first(input: &impl AsView<u8, 1>) -> u8 {
            let input = input.as_view();
            input.at(input.origin())
        }
        let mut b = Buffer::<u8, 1>::new([3]);
        write_first(&mut b, 1);
        let mut v = b.view_mut().into_crop([1], [2]).unwrap();
        write_first(&mut v, 2);
        assert_eq!(read_first(&v), 2);
        assert_eq!(read_first(&v.as_view()), 2);
        assert_eq!(read_first(&b), 1);
        assert_eq!(b.as_slice(), &[1, 2, 0]);
        assert_eq!(
            format!("{:?}", b.view_mut()),
            "ViewMut<u8, 1> { region: [0, 3), strides: [1] }"
        );
    }
}
