//! Owned, dense images: [`Buffer`].
//!
//! A buffer owns its elements in one `Vec`, laid out with `x` fastest: the element
//! at `[x, y, c]` of a `w x h x channels` buffer sits at index `x + w * y + w * h * c`.
//! Its coordinates start at 0; take a [`View`] with a different origin to place it
//! elsewhere.
//!
//! ```text
//! let mut b = Buffer::<u16, 2>::new([4, 3]);  // 12 zeros
//! b[[1, 2]] = 7;                              // b.as_slice()[1 + 4 * 2] == 7
//! ```

use core::fmt;
use core::ops::{Index, IndexMut};

use crate::element::Element;
use crate::error::Error;
use crate::layout::{element_count, for_each_coord};
use crate::view::{AsView, View};
use crate::view_mut::{AsViewMut, ViewMut};

/// An owned, dense `N`-dimensional image of `T`, `x` fastest.
#[derive(Clone, PartialEq)]
pub struct Buffer<T, const N: usize> {
    data: Vec<T>,
    shape: [usize; N],
}

/// An empty `Vec` with room for exactly the elements of `shape`, and their
/// number, or the error that says why there is no room.
fn reserve<T, const N: usize>(shape: [usize; N]) -> Result<(Vec<T>, usize), Error> {
    let (count, bytes) = crate::layout::byte_size::<T, N>(shape)?;
    let data = crate::hugepages::try_vec(count)
        .ok_or_else(|| crate::layout::too_large(shape, Some(bytes as u128)))?;
    Ok((data, count))
}

impl<T: Element, const N: usize> Buffer<T, N> {
    /// A buffer of `shape` filled with `T::default()` (zero).
    ///
    /// # Panics
    ///
    /// Like `Vec`, if the number of elements overflows `usize` ("capacity
    /// overflow") or the allocation fails; [`Buffer::try_new`] returns an
    /// `Err` instead.
    pub fn new(shape: [usize; N]) -> Self {
        let count = element_count(shape).expect("capacity overflow");
        let mut data = vec![T::default(); count];
        // The zeroed pages are not touched yet (the allocator maps them
        // fresh), so the advice still applies to them.
        crate::hugepages::advise(data.as_mut_ptr().cast(), core::mem::size_of_val(&data[..]));
        Buffer { data, shape }
    }

    /// A buffer of `shape` filled with `T::default()`, or
    /// [`Error::BufferTooLarge`] when its size overflows or the memory cannot
    /// be had: [`Buffer::new`] for shapes that come from outside the program.
    pub fn try_new(shape: [usize; N]) -> Result<Self, Error> {
        let (mut data, count) = reserve::<T, N>(shape)?;
        data.resize(count, T::default());
        Ok(Buffer { data, shape })
    }

    /// [`Buffer::from_fn`], or [`Error::BufferTooLarge`] when the buffer
    /// cannot be allocated (`f` is then never called).
    pub fn try_from_fn(
        shape: [usize; N],
        mut f: impl FnMut([usize; N]) -> T,
    ) -> Result<Self, Error> {
        let (mut data, _) = reserve::<T, N>(shape)?;
        for_each_coord(shape, |c| data.push(f(c)));
        Ok(Buffer { data, shape })
    }

    /// A buffer of `shape` that takes ownership of `data`, laid out `x` fastest.
    ///
    /// Fails with [`Error::LengthMismatch`] unless `data` holds exactly one element
    /// per coordinate.
    pub fn from_vec(data: Vec<T>, shape: [usize; N]) -> Result<Self, Error> {
        check_length(data.len(), shape)?;
        Ok(Buffer { data, shape })
    }

    /// A buffer of `shape` whose element at `[x, y, ...]` is `f([x, y, ...])`.
    ///
    /// `f` is called once per coordinate, in memory order (x fastest).
    ///
    /// # Panics
    ///
    /// Like [`Buffer::new`], if the buffer cannot be allocated.
    pub fn from_fn(shape: [usize; N], mut f: impl FnMut([usize; N]) -> T) -> Self {
        let count = element_count(shape).expect("capacity overflow");
        let mut data: Vec<T> = Vec::with_capacity(count);
        crate::hugepages::advise(data.as_mut_ptr().cast(), count * core::mem::size_of::<T>());
        for_each_coord(shape, |c| data.push(f(c)));
        Buffer { data, shape }
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> [usize; N] {
        self.shape
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the buffer holds no element (some extent is zero).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements in memory order (x fastest).
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements in memory order (x fastest), mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The elements in memory order (x fastest), by value.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// A read-only view of the whole buffer, with its origin at 0.
    pub fn view(&self) -> View<'_, T, N> {
        View::from_slice(&self.data, self.shape).expect("a buffer's length matches its shape")
    }

    /// A mutable view of the whole buffer, with its origin at 0.
    pub fn view_mut(&mut self) -> ViewMut<'_, T, N> {
        ViewMut::from_slice(&mut self.data, self.shape)
            .expect("a buffer's length matches its shape")
    }

    /// The index into `data` of coordinate `index`, panicking like a slice when it
    /// is out of range.
    #[inline]
    fn linear_index(&self, index: [usize; N]) -> usize {
        let mut linear = 0;
        let mut step = 1;
        for d in 0..N {
            if index[d] >= self.shape[d] {
                index_out_of_range(&index, &self.shape);
            }
            linear += index[d] * step;
            step *= self.shape[d];
        }
        linear
    }
}

/// Checks that `len` elements are exactly what `shape` needs.
pub(crate) fn check_length<const N: usize>(len: usize, shape: [usize; N]) -> Result<(), Error> {
    match element_count(shape) {
        Some(expected) if expected == len => Ok(()),
        Some(expected) => Err(Error::LengthMismatch {
            shape: shape.to_vec(),
            expected,
            got: len,
        }),
        None => Err(Error::InvalidLayout {
            reason: format!("shape {shape:?} has more elements than a usize can count"),
        }),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn index_out_of_range(index: &[usize], shape: &[usize]) -> ! {
    panic!("index {index:?} is out of range for a buffer of shape {shape:?}")
}

impl<T: Element, const N: usize> Index<[usize; N]> for Buffer<T, N> {
    type Output = T;

    /// The element at `index`, counted from 0 in each dimension.
    ///
    /// # Panics
    ///
    /// If any coordinate is not below its extent.
    #[inline]
    #[track_caller]
    fn index(&self, index: [usize; N]) -> &T {
        &self.data[self.linear_index(index)]
    }
}

impl<T: Element, const N: usize> IndexMut<[usize; N]> for Buffer<T, N> {
    /// The element at `index`, counted from 0 in each dimension, mutably.
    ///
    /// # Panics
    ///
    /// If any coordinate is not below its extent.
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, index: [usize; N]) -> &mut T {
        let linear = self.linear_index(index);
        &mut self.data[linear]
    }
}

/// Prints the element type and shape only, such as `Buffer<u16, 2> { shape: [1920,
/// 1080] }`: a megapixel of numbers helps nobody.
impl<T: Element, const N: usize> fmt::Debug for Buffer<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Buffer<{}, {}> {{ shape: {:?} }}",
            T::NAME,
            N,
            self.shape
        )
    }
}

impl<T: Element, const N: usize> AsView<T, N> for Buffer<T, N> {
    fn as_view(&self) -> View<'_, T, N> {
        self.view()
    }
}

impl<T: Element, const N: usize> AsViewMut<T, N> for Buffer<T, N> {
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N> {
        self.view_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_is_zeroed_and_dense() {
        let b = Buffer::<u16, 3>::new([4, 3, 2]);
        assert_eq!(b.shape(), [4, 3, 2]);
        assert_eq!(b.len(), 24);
        assert!(!b.is_empty());
        assert!(b.as_slice().iter().all(|&v| v == 0));
        assert!(Buffer::<f32, 2>::new([0, 5]).is_empty());
    }

    #[test]
    #[should_panic(expected = "capacity overflow")]
    fn new_panics_on_capacity_overflow() {
        let _ = Buffer::<u8, 2>::new([usize::MAX, 2]);
    }

    #[test]
    fn try_new_returns_an_error_where_new_would_panic_or_abort() {
        // The element count overflows usize.
        let e = Buffer::<u8, 2>::try_new([usize::MAX, 2]).unwrap_err();
        assert_eq!(
            e,
            Error::BufferTooLarge {
                shape: vec![usize::MAX, 2],
                bytes: None
            }
        );
        assert!(
            e.to_string()
                .contains("more elements than a usize can count"),
            "{e}"
        );
        // The count fits, the bytes do not (2^62 u32s).
        let e = Buffer::<u32, 2>::try_new([1 << 31, 1 << 31]).unwrap_err();
        assert_eq!(
            e,
            Error::BufferTooLarge {
                shape: vec![1 << 31, 1 << 31],
                bytes: Some(1 << 64)
            }
        );
        // Both fit, the allocator refuses (2^60 bytes).
        let e = Buffer::<u8, 2>::try_new([1 << 40, 1 << 20]).unwrap_err();
        assert!(
            e.to_string()
                .contains("1152921504606846976 bytes, more than can be allocated"),
            "{e}"
        );
        let mut called = false;
        let e = Buffer::<u8, 2>::try_from_fn([1 << 40, 1 << 20], |_| {
            called = true;
            0
        });
        assert!(e.is_err() && !called);
        // Sizes that fit are the same buffers as `new` and `from_fn` give.
        assert_eq!(
            Buffer::<u16, 2>::try_new([3, 2]).unwrap(),
            Buffer::new([3, 2])
        );
        assert_eq!(Buffer::<u16, 2>::try_new([0, usize::MAX]).unwrap().len(), 0);
        let f = |[x, y]: [usize; 2]| (x + 10 * y) as u16;
        assert_eq!(
            Buffer::try_from_fn([3, 2], f).unwrap(),
            Buffer::from_fn([3, 2], f)
        );
    }

    #[test]
    fn from_fn_calls_in_memory_order_and_indexes_x_fastest() {
        let mut calls = Vec::new();
        let b = Buffer::<u32, 3>::from_fn([4, 3, 2], |[x, y, c]| {
            calls.push([x, y, c]);
            (x + 10 * y + 100 * c) as u32
        });
        assert_eq!(calls.len(), 24);
        assert_eq!(calls[1], [1, 0, 0]);
        assert_eq!(calls[4], [0, 1, 0]);
        assert_eq!(calls[12], [0, 0, 1]);
        for (i, &v) in b.as_slice().iter().enumerate() {
            let (x, y, c) = (i % 4, i / 4 % 3, i / 12);
            assert_eq!(v, (x + 10 * y + 100 * c) as u32);
            assert_eq!(b[[x, y, c]], v);
        }
    }

    #[test]
    fn index_mut_writes_the_dense_position() {
        let mut b = Buffer::<i8, 2>::new([4, 3]);
        b[[1, 2]] = -7;
        assert_eq!(b.as_slice()[1 + 4 * 2], -7);
        b.as_mut_slice()[0] = 3;
        assert_eq!(b[[0, 0]], 3);
        assert_eq!(b.clone().into_vec().len(), 12);
    }

    #[test]
    #[should_panic(expected = "index [4, 0] is out of range for a buffer of shape [4, 3]")]
    fn index_panics_out_of_range() {
        let b = Buffer::<u8, 2>::new([4, 3]);
        let _ = b[[4, 0]];
    }

    #[test]
    fn from_vec_checks_the_length() {
        let b = Buffer::from_vec(vec![1u8, 2, 3, 4, 5, 6], [3, 2]).unwrap();
        assert_eq!(b[[2, 1]], 6);
        let err = Buffer::from_vec(vec![1u8; 5], [3, 2]).unwrap_err();
        assert_eq!(
            err,
            Error::LengthMismatch {
                shape: vec![3, 2],
                expected: 6,
                got: 5
            }
        );
        let err = Buffer::from_vec(vec![1u8; 5], [usize::MAX, 3]).unwrap_err();
        assert!(matches!(err, Error::InvalidLayout { .. }), "{err}");
    }

    #[test]
    fn zero_dimensional_buffers_hold_one_element() {
        let mut b = Buffer::<f64, 0>::new([]);
        assert_eq!(b.len(), 1);
        b[[]] = 2.5;
        assert_eq!(b.view().at([]), 2.5);
    }

    #[test]
    fn debug_is_short_and_equality_compares_contents() {
        let a = Buffer::<u16, 2>::new([1920, 1080]);
        assert_eq!(format!("{a:?}"), "Buffer<u16, 2> { shape: [1920, 1080] }");
        let mut b = a.clone();
        assert_eq!(a, b);
        b[[5, 5]] = 1;
        assert_ne!(a, b);
        assert_ne!(Buffer::<u8, 2>::new([2, 3]), Buffer::<u8, 2>::new([3, 2]));
    }
}
