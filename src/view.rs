//! Borrowed, read-only, strided images: [`View`] and the [`AsView`] trait.
//!
//! A view borrows elements it does not own and lays them out with explicit strides
//! (in elements) and an origin: the coordinate of its first element. Coordinates
//! passed to a view are *global*: cropping a view keeps every element at the
//! coordinate it had, so a pipeline can read an input at the same coordinates
//! whichever crop of it it is given.
//!
//! ```text
//! let v = View::from_slice(&data, [640, 480])?.with_origin([100, 50]);
//! v.at([100, 50]) == data[0];  v.crop([110, 60], [8, 8])?.at([110, 60]) == data[10 + 640 * 10]
//! ```

use core::fmt;
use core::marker::PhantomData;

use crate::buffer::{check_length, Buffer};
use crate::element::Element;
use crate::error::Error;
use crate::layout::{
    check_in_range, contains_coord, crop_offset, dense_offset_of, dense_strides, offset_of,
    prefetch_next_row,
};
use crate::region::Region;

/// Anything a pipeline can read as an `N`-dimensional image of `T`.
///
/// Generated pipelines take their inputs as `&impl AsView<T, N>`, so a
/// [`Buffer`], a [`View`] and a [`ViewMut`](crate::ViewMut) all work, and with the
/// `image` feature so do `image::ImageBuffer`s.
pub trait AsView<T: Element, const N: usize> {
    /// A read-only view of the image in its own coordinates.
    fn as_view(&self) -> View<'_, T, N>;
}

/// A borrowed, read-only, strided `N`-dimensional image of `T`.
///
/// The element at global coordinate `c` is the one at offset
/// `sum((c[d] - origin[d]) * strides[d])` from the first element.
///
/// **Invariant:** every coordinate inside `shape` maps to an offset below `len`,
/// and `ptr..ptr + len` is memory borrowed for `'a` that nothing mutates while the
/// view lives. Strides may alias (a stride of 0 repeats a row), since nothing is
/// written through a view.
///
/// The view keeps a pointer and a length rather than a `&'a [T]` on purpose: a
/// view of a [`ViewMut`](crate::ViewMut) piece from
/// [`ViewMut::split_at`](crate::ViewMut::split_at) (or of a strided ndarray view)
/// spans memory that holds other pieces' elements, which other threads may be
/// writing. A shared slice over that memory would assert that none of it changes,
/// which is not true; a pointer asserts nothing about the elements it never reads.
pub struct View<'a, T, const N: usize> {
    ptr: *const T,
    len: usize,
    shape: [usize; N],
    strides: [usize; N],
    origin: [i64; N],
    _borrow: PhantomData<&'a [T]>,
}

// SAFETY: a `View` is a shared borrow of `T`s, like `&'a [T]`, which is `Send` and
// `Sync` exactly when `T: Sync`; every `Element` is `Sync`.
unsafe impl<T: Element, const N: usize> Send for View<'_, T, N> {}
// SAFETY: as for `Send`: sharing a `View` only ever reads the `T`s it borrows.
unsafe impl<T: Element, const N: usize> Sync for View<'_, T, N> {}

impl<T: Element, const N: usize> Clone for View<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Element, const N: usize> Copy for View<'_, T, N> {}

impl<'a, T: Element, const N: usize> View<'a, T, N> {
    /// A dense view of `data` (x fastest) with its origin at 0.
    ///
    /// Fails with [`Error::LengthMismatch`] unless `data` holds exactly one element
    /// per coordinate of `shape`.
    pub fn from_slice(data: &'a [T], shape: [usize; N]) -> Result<Self, Error> {
        check_length(data.len(), shape)?;
        // SAFETY: a dense layout of exactly `data.len()` elements maps every
        // coordinate inside `data`, which is borrowed for 'a.
        Ok(unsafe { Self::from_raw_parts(data.as_ptr(), data.len(), shape, dense_strides(shape)) })
    }

    /// A view of `data` with explicit `strides` (in elements), origin at 0.
    ///
    /// Fails with [`Error::InvalidLayout`] if some coordinate of `shape` would map
    /// past the end of `data` (or its offset overflows). Strides may repeat
    /// elements (a stride of 0 is fine), and a shape with a zero extent is valid
    /// with any strides.
    pub fn with_strides(
        data: &'a [T],
        shape: [usize; N],
        strides: [usize; N],
    ) -> Result<Self, Error> {
        check_in_range(data.len(), shape, strides)?;
        // SAFETY: just checked that every coordinate maps inside `data`, which is
        // borrowed for 'a.
        Ok(unsafe { Self::from_raw_parts(data.as_ptr(), data.len(), shape, strides) })
    }

    /// A view over raw parts, with its origin at 0.
    ///
    /// # Safety
    ///
    /// Every coordinate inside `shape` must map below `len` through `strides`, and
    /// `ptr..ptr + len` must lie in one allocation, be readable for `'a` and not be
    /// mutated at the elements the view maps while it lives.
    pub(crate) unsafe fn from_raw_parts(
        ptr: *const T,
        len: usize,
        shape: [usize; N],
        strides: [usize; N],
    ) -> Self {
        debug_assert!(check_in_range(len, shape, strides).is_ok());
        View {
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
        View { origin, ..self }
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

    /// The part of the view at global coordinates `origin..origin + shape`.
    ///
    /// The result keeps global coordinates: its origin is `origin`, and each
    /// element keeps the coordinate it had. Fails with [`Error::OutOfBounds`] if
    /// the region is not inside the view; an empty region is inside any view.
    pub fn crop(&self, origin: [i64; N], shape: [usize; N]) -> Result<View<'a, T, N>, Error> {
        let offset = crop_offset(self.origin, self.shape, self.strides, origin, shape)?;
        Ok(View {
            // SAFETY: `offset` is the offset of a coordinate inside the view (or 0),
            // so by the invariant it is below `len` (or the crop is empty and the
            // pointer is never read through).
            ptr: unsafe { self.ptr.add(offset) },
            len: self.len - offset,
            shape,
            strides: self.strides,
            origin,
            _borrow: PhantomData,
        })
    }

    /// The element at global coordinate `c`, or `None` outside the view.
    pub fn get(&self, c: [i64; N]) -> Option<T> {
        if !contains_coord(&c, &self.origin, &self.shape) {
            return None;
        }
        let rel = core::array::from_fn(|d| c[d].wrapping_sub(self.origin[d]) as usize);
        // SAFETY: `c` is inside the view, so by the invariant its offset is below `len`.
        Some(unsafe { self.read(offset_of(rel, &self.strides)) })
    }

    /// The element at global coordinate `c`: the hot path of generated code.
    ///
    /// Debug builds check that `c` is inside the view. Release builds only check
    /// that the element read lies inside the borrowed memory, which is one
    /// comparison, the same a slice index costs: reading outside the view returns
    /// some element of the borrowed memory or panics, and is never undefined
    /// behaviour. Generated code checks its regions up front instead.
    ///
    /// # Panics
    ///
    /// If `c` maps outside the borrowed memory (in debug builds: outside the view).
    #[inline(always)]
    #[track_caller]
    pub fn at(&self, c: [i64; N]) -> T {
        debug_assert!(
            contains_coord(&c, &self.origin, &self.shape),
            "coordinate {c:?} is outside the view's region {}",
            self.region()
        );
        let rel = core::array::from_fn(|d| c[d].wrapping_sub(self.origin[d]) as usize);
        let offset = offset_of(rel, &self.strides);
        if offset >= self.len {
            outside_view(&c, &self.origin, &self.shape);
        }
        // SAFETY: just checked that the offset is inside the borrowed memory.
        unsafe { self.read(offset) }
    }

    /// The element at global coordinate `c`, unchecked: for generated code
    /// only, at coordinates that bounds inference proved inside the view (the
    /// entry function checked the view covers them). Debug builds check.
    ///
    /// # Safety
    ///
    /// `c` must be inside the view's region.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load(&self, c: [i64; N]) -> T {
        debug_assert!(
            contains_coord(&c, &self.origin, &self.shape),
            "coordinate {c:?} is outside the view's region {}",
            self.region()
        );
        let rel = core::array::from_fn(|d| c[d].wrapping_sub(self.origin[d]) as usize);
        // SAFETY: the caller keeps `c` inside the view, whose coordinates all
        // map below `len`.
        unsafe { self.read(offset_of(rel, &self.strides)) }
    }

    /// The element at global coordinate `c` of a view whose dimension 0
    /// has stride 1, unchecked (see [`View::load`]): its offset is the
    /// coordinate plus what the other dimensions give, so a loop along
    /// dimension 0 walks consecutive addresses (which the compiler can
    /// vectorize) instead of multiplying by a stride it does not know.
    /// Generated code reads a func's own buffers this way.
    ///
    /// # Safety
    ///
    /// `c` must be inside the view's region, and dimension 0 must have
    /// stride 1 (or extent 1).
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load_unit(&self, c: [i64; N]) -> T {
        debug_assert!(
            N == 0 || self.strides[0] == 1 || self.shape[0] <= 1,
            "unit-stride load from a strided view"
        );
        // SAFETY: the caller keeps `c` inside the view, of stride 1 in
        // dimension 0.
        unsafe { *self.dense_ptr(c, 1) }
    }

    /// The `W` elements from global coordinate `c` along dimension 0 (`c`,
    /// `c + 1`, ... in the first coordinate) as one unaligned vector load,
    /// unchecked: for vectorized generated code, at coordinates bounds
    /// inference proved inside the view, of a view whose dimension 0 is dense
    /// (the entry makes a dense copy of one that is not:
    /// [`crate::rt::dense_input`]). Debug builds check both.
    ///
    /// # Safety
    ///
    /// Every one of the `W` coordinates must be inside the view's region, and
    /// dimension 0 must have stride 1.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load_dense<const W: usize>(&self, c: [i64; N]) -> [T; W] {
        // SAFETY: the `W` lanes are consecutive elements inside the view
        // (the caller's promise, which `dense_ptr` needs too).
        unsafe { core::ptr::read_unaligned(self.dense_ptr(c, W) as *const [T; W]) }
    }

    /// The `W` elements at coordinates `c[0] + (i + odd) / 2` along
    /// dimension 0 (lane `i`), unchecked: for vectorized generated code
    /// reading at `x / 2 + k` along a vectorized `x`, `c` being lane 0's
    /// coordinates and `odd` whether lane 0's `x` is odd. Reads the
    /// `(W - 1 + odd) / 2 + 1` elements once and doubles them in registers
    /// of the level `isa` ([`crate::rt::simd::Upsample`]).
    ///
    /// # Safety
    ///
    /// As for [`View::load_dense`], for those elements: each is a lane's.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load_doubled<I, const W: usize>(&self, isa: I, c: [i64; N], odd: bool) -> [T; W]
    where
        I: crate::rt::simd::Upsample<T>,
    {
        let span = (W + odd as usize).saturating_sub(1) / 2 + 1;
        // SAFETY: the span is consecutive elements inside the view (the
        // caller's promise, which `dense_ptr` needs too).
        unsafe { isa.load_doubled::<W>(self.dense_ptr(c, span), odd) }
    }

    /// The `W` elements at coordinates `c[0] + i` along dimension 0, each
    /// clamped into `[min, min + extent)` as [`crate::rt::clamp_coord`] does
    /// (an input read through `clamp_edge`), for the edges of vectorized
    /// generated code: one dense load when no lane needs clamping, else one
    /// load per lane.
    ///
    /// # Safety
    ///
    /// `[min, min + extent)` along dimension 0, at the other coordinates of
    /// `c`, must be inside the view's region (with `extent > 0`), and
    /// dimension 0 must have stride 1.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load_dense_clamped<const W: usize>(
        &self,
        c: [i64; N],
        min: i32,
        extent: i32,
    ) -> [T; W] {
        let (min, max) = (min as i64, min as i64 + extent as i64 - 1);
        let first = c[0];
        if first >= min && first.saturating_add(W as i64 - 1) <= max {
            // SAFETY: every lane is inside [min, max], inside the view.
            return unsafe { self.load_dense(c) };
        }
        // A loop rather than `core::array::from_fn`, which LLVM inlined
        // into some kernels and called out of line in others (3.6% more
        // instructions in the AVX2 kernel of a 1920x1080 blur there).
        let lane = |i: usize| {
            let mut at = c;
            at[0] = first.saturating_add(i as i64).clamp(min, max);
            // SAFETY: clamped into [min, max], inside the view.
            unsafe { self.load(at) }
        };
        let mut out = [lane(0); W];
        for (i, v) in out.iter_mut().enumerate().skip(1) {
            *v = lane(i);
        }
        out
    }

    /// The elements at `W` coordinates, lane `i` at `[c[0][i], c[1][i],
    /// ...]`, unchecked: for vectorized generated code, at coordinates
    /// bounds inference proved inside the view. The offsets are computed in
    /// `i32` vectors of the level `isa` and read by its gather
    /// ([`crate::rt::simd::Gather`]); a view of more than `i32::MAX`
    /// elements is read one lane at a time. `dense0` says that dimension
    /// 0 has stride 1 (the generated code knows it of a func's buffer),
    /// which spares its multiply. Debug builds check the coordinates.
    ///
    /// # Safety
    ///
    /// Every lane's coordinate must be inside the view's region, and if
    /// `dense0`, dimension 0 must have stride 1.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn gather<I, const W: usize>(&self, isa: I, c: [[i32; W]; N], dense0: bool) -> [T; W]
    where
        I: crate::rt::simd::Gather<T> + crate::rt::simd::Arith<i32>,
    {
        #[cfg(debug_assertions)]
        self.check_lanes(&c, dense0);
        if self.len > i32::MAX as usize {
            // SAFETY: the caller keeps every lane inside the view.
            return core::array::from_fn(|i| unsafe {
                self.load(core::array::from_fn(|d| c[d][i] as i64))
            });
        }
        let offset = self.offsets_i32(isa, &c, dense0);
        // SAFETY: each lane's offset is that of an element inside the view,
        // below `len` (the caller's promise), and the view's `len` elements
        // are readable for its lifetime.
        unsafe { isa.gather(self.ptr, self.len, offset) }
    }

    /// Debug builds' check of the lanes of a gather or of tap offsets:
    /// each inside the view, and dimension 0 dense if `dense0`.
    #[cfg(debug_assertions)]
    #[track_caller]
    fn check_lanes<const W: usize>(&self, c: &[[i32; W]; N], dense0: bool) {
        (0..W).for_each(|i| {
            let at = core::array::from_fn(|d| c[d][i] as i64);
            assert!(
                contains_coord(&at, &self.origin, &self.shape),
                "coordinate {at:?} is outside the view's region {}",
                self.region()
            );
        });
        assert!(!dense0 || N == 0 || self.strides[0] == 1 || self.shape[0] <= 1);
    }

    /// The offsets of the elements at the lanes' coordinates `c`, as
    /// vectors of `i32`, for a view of at most `i32::MAX` elements whose
    /// lanes are all inside it (and whose dimension 0 has stride 1 if
    /// `dense0`).
    #[inline(always)]
    fn offsets_i32<I, const W: usize>(&self, isa: I, c: &[[i32; W]; N], dense0: bool) -> [i32; W]
    where
        I: crate::rt::simd::Arith<i32>,
    {
        // Every in-range offset, and each dimension's part of it, lies in
        // `[0, len)`, so fits `i32`; a stride that does not fit belongs to a
        // dimension of extent 1, whose part is 0 whatever the wrapped
        // product.
        let mut offset = [0i32; W];
        for (d, &cd) in c.iter().enumerate() {
            let rel = isa.sub(cd, [self.origin[d] as i32; W]);
            let part = if d == 0 && dense0 {
                rel
            } else {
                isa.mul(rel, [self.strides[d] as i32; W])
            };
            offset = if d == 0 { part } else { isa.add(offset, part) };
        }
        offset
    }

    /// The offsets of the elements at the lanes' coordinates `c`, for
    /// vectorized generated code that reads a group of loads ("taps")
    /// whose coordinates differ from `c` by constants: the offsets are
    /// computed once, as vectors where they fit `i32`, and
    /// [`View::taps`] reads each tap at them plus its
    /// [`View::tap_delta`]. A trilinear interpolation reads its 8 taps
    /// this way, each by the level's gather at one set of offsets plus the
    /// tap's distance, where [`View::gather`] would recompute the offsets
    /// for each tap.
    ///
    /// # Safety
    ///
    /// Every lane's coordinate must be inside the view's region, and if
    /// `dense0`, dimension 0 must have stride 1.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn tap_offsets<I, const W: usize>(
        &self,
        isa: I,
        c: [[i32; W]; N],
        dense0: bool,
    ) -> [isize; W]
    where
        I: crate::rt::simd::Arith<i32>,
    {
        #[cfg(debug_assertions)]
        self.check_lanes(&c, dense0);
        if self.len > i32::MAX as usize {
            return core::array::from_fn(|i| {
                let rel = core::array::from_fn(|d| {
                    (c[d][i] as i64).wrapping_sub(self.origin[d]) as usize
                });
                offset_of(rel, &self.strides) as isize
            });
        }
        let offset = self.offsets_i32(isa, &c, dense0);
        core::array::from_fn(|i| offset[i] as isize)
    }

    /// How far in elements a tap at coordinates `k` (per dimension) from
    /// those of [`View::tap_offsets`] lies from them: `sum k[d]
    /// strides[d]`, wrapping (only its sum with an in-range offset is
    /// used).
    #[doc(hidden)]
    #[inline(always)]
    pub fn tap_delta(&self, k: [i64; N]) -> isize {
        (0..N).fold(0isize, |acc, d| {
            acc.wrapping_add((k[d] as isize).wrapping_mul(self.strides[d] as isize))
        })
    }

    /// `W` elements, lane `i` at offset `offsets[i] + delta`: one tap of
    /// a group ([`View::tap_offsets`]), read by the level's gather where
    /// its lanes fill whole registers of the level
    /// ([`crate::rt::simd::Gather::tap_bytes`]: 32 bytes at AVX2, 64 at
    /// AVX-512; none on processors where gathers do not pay,
    /// [`crate::rt::tap_gathers`]), else (and in a view of more than
    /// `i32::MAX` elements) a load a lane. On a Xeon (2026-11-28), gathering the bilateral grid's
    /// slice (8 taps of two grids) took the whole pipeline from 27.7-28.2
    /// to 22.8-23.2 ms at 8 lanes in an AVX2 kernel; at 16 lanes in an
    /// AVX-512 kernel it was 0.86 of the loads' time on the tuner's inputs
    /// and no faster on the Halide comparison's; at 8 lanes in an AVX-512
    /// kernel, 1.3x slower (LLVM spilled and shuffled the gathered
    /// vectors). A stage of 8-lane `f32` vectors in an AVX-512 kernel now
    /// runs at AVX2 ([`crate::rt::simd::Level::Narrow`]).
    ///
    /// # Safety
    ///
    /// Every lane's offset must be that of an element inside the view: the
    /// tap's own coordinates inside its region.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn taps<I, const W: usize>(
        &self,
        isa: I,
        offsets: &[isize; W],
        delta: isize,
    ) -> [T; W]
    where
        I: crate::rt::simd::Gather<T>,
    {
        #[cfg(debug_assertions)]
        for &o in offsets {
            let at = o.wrapping_add(delta);
            assert!(
                (0..self.len as isize).contains(&at),
                "tap offset {at} is outside the view's {} elements",
                self.len
            );
        }
        let bytes = isa.tap_bytes();
        let whole = bytes != 0 && (W * core::mem::size_of::<T>()).is_multiple_of(bytes);
        if !whole || self.len > i32::MAX as usize {
            // SAFETY: the caller keeps every lane inside the view.
            return core::array::from_fn(|i| unsafe {
                self.read(offsets[i].wrapping_add(delta) as usize)
            });
        }
        // Each lane's offset lies in `[0, len)`, so fits `i32`.
        let at = core::array::from_fn(|i| (offsets[i] as i32).wrapping_add(delta as i32));
        // SAFETY: every lane's element is inside the view (the caller's
        // promise), whose `len` elements are readable.
        unsafe { isa.gather(self.ptr, self.len, at) }
    }

    /// Hints the processor to fetch the element one row after global
    /// coordinate `c` (dimension 1 plus one) into the cache, for vectorized
    /// generated code that walks rows in order: the next row's loads (or
    /// stores) then find their lines there. Any coordinate is allowed, also
    /// outside the view; nothing is read.
    #[doc(hidden)]
    #[inline(always)]
    pub fn prefetch_next_row(&self, c: [i64; N]) {
        prefetch_next_row(self.ptr, &c, &self.origin, &self.strides);
    }

    /// A pointer to the element at global coordinate `c`, from which `n`
    /// elements along dimension 0 are read: for vectorized generated code
    /// that reads a span in registers (stride-2 loads), at coordinates
    /// bounds inference proved inside the view, of a view whose dimension 0
    /// is dense. Debug builds check both.
    ///
    /// # Safety
    ///
    /// The `n` coordinates from `c` must be inside the view's region (the
    /// pointer is then valid for reading them), and dimension 0 must have
    /// stride 1.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn dense_ptr(&self, c: [i64; N], n: usize) -> *const T {
        debug_assert!(
            n <= 1 || self.strides[0] == 1,
            "vector load from a strided view"
        );
        let base = self.dense_lanes_from(&c, n);
        // SAFETY: the span is inside the view, so its start is in bounds.
        unsafe { self.ptr.add(base) }
    }

    /// A pointer to the element at global coordinate `c`, from which the
    /// memory up to the element at `c + (w - 1) step` in the first
    /// coordinate is read: for vectorized generated code that reads the
    /// span between `w` lanes `step` apart in registers and picks the lanes
    /// from it (an input whose dimension 0 has the stride its schedule
    /// declares, e.g. interleaved RGB). Debug builds check the lanes.
    ///
    /// # Safety
    ///
    /// The `w` coordinates must be inside the view's region, and
    /// `step * strides[0] > 0`: the span then lies between two elements of
    /// the borrowed memory.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn lanes_ptr(&self, c: [i64; N], step: i64, w: usize) -> *const T {
        debug_assert!(
            w <= 1 || (step > 0 && self.strides[0] > 0),
            "a span read backwards"
        );
        let base = self.lanes_from(&c, step, w);
        // SAFETY: the first lane is inside the view, so in bounds.
        unsafe { self.ptr.add(base) }
    }

    /// The `W` elements at `c`, `c + step`, `c + 2 step`, ... in the first
    /// coordinate, one load per lane, unchecked (see [`View::load_dense`]).
    ///
    /// # Safety
    ///
    /// Every one of the `W` coordinates must be inside the view's region.
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub unsafe fn load_strided<const W: usize>(&self, c: [i64; N], step: i64) -> [T; W] {
        let base = self.lanes_from(&c, step, W);
        let lane = (step as usize).wrapping_mul(self.strides[0]);
        // SAFETY: each lane's offset is that of a coordinate inside the view.
        core::array::from_fn(|i| unsafe { self.read(base.wrapping_add(i.wrapping_mul(lane))) })
    }

    /// The offset of `c`; debug builds check that the `w` lanes from it
    /// `step` apart along dimension 0 are inside the view.
    #[inline(always)]
    #[track_caller]
    fn lanes_from(&self, c: &[i64; N], step: i64, w: usize) -> usize {
        debug_assert!(
            w == 0
                || (contains_coord(c, &self.origin, &self.shape)
                    && contains_coord(&last_lane(*c, step, w), &self.origin, &self.shape)),
            "lanes from {c:?} by {step} are not all inside the view's region {}",
            self.region()
        );
        let rel = core::array::from_fn(|d| c[d].wrapping_sub(self.origin[d]) as usize);
        offset_of(rel, &self.strides)
    }

    /// [`View::lanes_from`] with step 1 on a view whose dimension 0 is dense.
    #[inline(always)]
    #[track_caller]
    fn dense_lanes_from(&self, c: &[i64; N], w: usize) -> usize {
        debug_assert!(
            w == 0
                || (contains_coord(c, &self.origin, &self.shape)
                    && contains_coord(&last_lane(*c, 1, w), &self.origin, &self.shape)),
            "lanes from {c:?} are not all inside the view's region {}",
            self.region()
        );
        dense_offset_of(c, &self.origin, &self.strides)
    }

    /// Copies the view into a new dense buffer of the same shape (its coordinates
    /// then start at 0).
    pub fn to_buffer(&self) -> Buffer<T, N> {
        Buffer::from_fn(self.shape, |rel| {
            // SAFETY: `from_fn` passes coordinates inside the shape only.
            unsafe { self.read(offset_of(rel, &self.strides)) }
        })
    }

    /// The element at `offset` from the first one.
    ///
    /// # Safety
    ///
    /// `offset < self.len`.
    #[inline(always)]
    unsafe fn read(&self, offset: usize) -> T {
        debug_assert!(offset < self.len);
        // SAFETY: the caller keeps `offset` below `len`, and the invariant makes
        // `ptr..ptr + len` readable for 'a.
        unsafe { *self.ptr.add(offset) }
    }
}

impl<T, const N: usize> View<'_, T, N> {
    /// The pointer to the element at the view's origin.
    pub(crate) fn origin_ptr(&self) -> *const T {
        self.ptr
    }

    /// The element at the view's origin (for a CUDA launcher, which copies
    /// the view's span from it by its strides). Not part of the public API.
    #[doc(hidden)]
    pub fn __origin_ptr(&self) -> *const T {
        self.ptr
    }
}

/// The coordinate of the last of `w` lanes from `c` by `step` along
/// dimension 0 (for debug checks of vector accesses).
pub(crate) fn last_lane<const N: usize>(mut c: [i64; N], step: i64, w: usize) -> [i64; N] {
    c[0] = c[0].wrapping_add(step.wrapping_mul(w as i64 - 1));
    c
}

/// Panics for a coordinate outside a view; kept out of line so that the hot
/// accessors stay small.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn outside_view(c: &[i64], origin: &[i64], shape: &[usize]) -> ! {
    let region: Vec<String> = origin
        .iter()
        .zip(shape)
        .map(|(&o, &s)| format!("[{}, {})", o, o as i128 + s as i128))
        .collect();
    panic!(
        "coordinate {c:?} is outside the view's region {}",
        region.join(" x ")
    )
}

/// Prints the element type, region and strides, not the elements.
impl<T: Element, const N: usize> fmt::Debug for View<'_, T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "View<{}, {}> {{ region: {}, strides: {:?} }}",
            T::NAME,
            N,
            self.region(),
            self.strides
        )
    }
}

impl<T: Element, const N: usize> AsView<T, N> for View<'_, T, N> {
    fn as_view(&self) -> View<'_, T, N> {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(n: usize) -> Vec<i32> {
        (0..n as i32).collect()
    }

    #[test]
    fn from_slice_is_dense_with_origin_zero() {
        let data = iota(12);
        let v = View::from_slice(&data, [4, 3]).unwrap();
        assert_eq!(v.shape(), [4, 3]);
        assert_eq!(v.strides(), [1, 4]);
        assert_eq!(v.origin(), [0, 0]);
        assert_eq!(v.region(), Region::from_shape([4, 3]));
        assert_eq!(v.at([1, 2]), 9);
        assert_eq!(v.get([3, 2]), Some(11));
        assert_eq!(v.get([4, 0]), None);
        assert_eq!(v.get([0, -1]), None);
    }

    /// Every run of 16 lanes from 20 before the clamped range to past its
    /// end, on a view whose origin is not zero: the lanes are the elements
    /// at the clamped coordinates, by one dense load or lane by lane.
    #[test]
    fn clamped_dense_loads_repeat_the_edge_elements() {
        let data = iota(40 * 3);
        let v = View::from_slice(&data, [40, 3])
            .unwrap()
            .crop([3, 1], [30, 2])
            .unwrap();
        let (min, extent) = (3, 30);
        for first in -20..50 {
            // SAFETY: [min, min + extent) at row 2 is inside the view.
            let got: [i32; 16] = unsafe { v.load_dense_clamped([first, 2], min, extent) };
            let want: [i32; 16] = core::array::from_fn(|i| {
                v.at([
                    (first + i as i64).clamp(min as i64, (min + extent - 1) as i64),
                    2,
                ])
            });
            assert_eq!(got, want, "from {first}");
        }
    }

    #[test]
    fn from_slice_rejects_the_wrong_length() {
        let data = iota(11);
        let err = View::from_slice(&data, [4, 3]).unwrap_err();
        assert_eq!(
            err,
            Error::LengthMismatch {
                shape: vec![4, 3],
                expected: 12,
                got: 11
            }
        );
    }

    #[test]
    fn strided_view_with_origin_uses_global_coordinates() {
        // Rows of 4 padded to 6, placed at (100, -50).
        let data = iota(18);
        let v = View::with_strides(&data, [4, 3], [1, 6])
            .unwrap()
            .with_origin([100, -50]);
        assert_eq!(v.at([100, -50]), 0);
        assert_eq!(v.at([103, -48]), 15);
        assert_eq!(v.get([104, -48]), None);
        assert_eq!(v.get([99, -48]), None);
        assert_eq!(v.region().to_string(), "[100, 104) x [-50, -47)");
        assert_eq!(
            v.to_buffer().as_slice(),
            &[0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15]
        );
    }

    #[test]
    fn with_strides_accepts_aliasing_but_not_out_of_range() {
        let data = iota(4);
        // A stride of 0 repeats the one row three times.
        let v = View::with_strides(&data, [4, 3], [1, 0]).unwrap();
        assert_eq!(v.at([2, 2]), 2);
        // Rows of 3 starting one element apart overlap.
        let overlapping = View::with_strides(&data, [3, 2], [1, 1]).unwrap();
        assert_eq!(overlapping.at([2, 1]), 3);
        let err = View::with_strides(&data, [4, 2], [1, 2]).unwrap_err();
        assert!(matches!(&err, Error::InvalidLayout { reason } if reason.contains("element 5")));
        let err = View::with_strides(&data, [2, 2], [usize::MAX / 2, 3]).unwrap_err();
        assert!(matches!(err, Error::InvalidLayout { .. }));
        // Zero-size shapes are valid whatever the strides.
        let empty: &[i32] = &[];
        assert!(View::with_strides(empty, [0, 7], [99, 1000]).is_ok());
    }

    #[test]
    fn crop_keeps_global_coordinates() {
        let data = iota(30);
        let v = View::from_slice(&data, [6, 5])
            .unwrap()
            .with_origin([-2, 10]);
        let c = v.crop([0, 12], [3, 2]).unwrap();
        assert_eq!(c.origin(), [0, 12]);
        assert_eq!(c.shape(), [3, 2]);
        assert_eq!(c.at([0, 12]), v.at([0, 12]));
        assert_eq!(c.at([2, 13]), v.at([2, 13]));
        assert_eq!(c.at([2, 13]), 4 + 6 * 3);
        assert_eq!(c.get([3, 12]), None);
        assert_eq!(c.to_buffer().as_slice(), &[14, 15, 16, 20, 21, 22]);
        // Cropping a crop works in the same coordinates.
        let cc = c.crop([1, 13], [2, 1]).unwrap();
        assert_eq!(cc.to_buffer().as_slice(), &[21, 22]);
    }

    #[test]
    fn crop_outside_the_view_is_an_error() {
        let data = iota(30);
        let v = View::from_slice(&data, [6, 5])
            .unwrap()
            .with_origin([-2, 10]);
        let err = v.crop([-3, 10], [2, 2]).unwrap_err();
        assert_eq!(
            err,
            Error::OutOfBounds {
                region: "[-3, -1) x [10, 12)".into(),
                bounds: "[-2, 4) x [10, 15)".into()
            }
        );
        assert!(v.crop([3, 14], [2, 1]).is_err());
        // An empty crop is inside any view.
        let e = v.crop([1000, 1000], [0, 3]).unwrap();
        assert_eq!(e.region(), Region::new([1000, 1000], [0, 3]));
        assert!(e.to_buffer().is_empty());
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "outside the view's region"))]
    fn at_outside_the_view_panics_in_debug_builds() {
        let data = iota(12);
        let v = View::from_slice(&data, [4, 3]).unwrap();
        // In release builds this reads a neighbouring element of the slice.
        assert_eq!(v.at([4, 0]), 4);
    }

    #[test]
    #[should_panic(expected = "outside the view's region")]
    fn at_outside_the_memory_always_panics() {
        let data = iota(12);
        let v = View::from_slice(&data, [4, 3]).unwrap();
        v.at([0, 3]);
    }

    #[test]
    fn debug_shows_type_region_and_strides() {
        let data = iota(12);
        let v = View::from_slice(&data, [4, 3]).unwrap().with_origin([1, 1]);
        assert_eq!(
            format!("{v:?}"),
            "View<i32, 2> { region: [1, 5) x [1, 4), strides: [1, 4] }"
        );
    }

    #[test]
    fn views_can_be_shared_across_threads() {
        let data = iota(12);
        let v = View::from_slice(&data, [4, 3]).unwrap();
        let sum: i32 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|y| s.spawn(move || (0..4).map(|x| v.at([x, y])).sum::<i32>()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(sum, 66);
    }

    #[test]
    fn prefetch_accepts_any_coordinate_and_changes_nothing() {
        let data = iota(12);
        let v = View::from_slice(&data, [4, 3])
            .unwrap()
            .with_origin([-2, 5]);
        let far = [i64::MIN, -1, 0, 1, i64::MAX];
        for x in far {
            for y in far {
                v.prefetch_next_row([x, y]);
            }
        }
        let line = View::from_slice(&data, [12]).unwrap();
        line.prefetch_next_row([i64::MAX]);
        assert_eq!(data, iota(12));
        assert_eq!(v.at([1, 7]), 11);
    }
}
