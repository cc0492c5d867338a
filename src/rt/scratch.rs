//! Storage for intermediate funcs: 64-byte aligned, so that the first element
//! of a buffer starts a cache line (and any vector register); zeroed, or left
//! as the allocator gives it for generated code, which writes every element
//! of a func's buffer before reading it (in a profile of the Harris
//! pipeline, memset took 11% and page faults on fresh pages about 13%).
//!
//! ```text
//! let mut blur_x = Scratch::<u32, 2>::zeroed([w + 2, 4])?;   // 64-byte aligned
//! let w = blur_x.view_mut().with_origin([-1, 0]);
//! ```

use core::marker::PhantomData;
use core::ptr::NonNull;
use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};

use crate::element::Element;
use crate::layout::{dense_strides, element_count};
use crate::view::View;
use crate::view_mut::ViewMut;

/// The alignment of every intermediate buffer, in bytes.
pub const ALIGN: usize = 64;

/// A dense buffer of `shape` (x fastest) owned by generated code.
pub struct Scratch<T: Element, const N: usize> {
    ptr: NonNull<T>,
    len: usize,
    shape: [usize; N],
    _owns: PhantomData<T>,
}

// SAFETY: a `Scratch` owns its elements like a `Vec<T>` does, and element
// types are plain numbers.
unsafe impl<T: Element, const N: usize> Send for Scratch<T, N> {}
// SAFETY: as for `Send`; shared access only reads.
unsafe impl<T: Element, const N: usize> Sync for Scratch<T, N> {}

impl<T: Element, const N: usize> Scratch<T, N> {
    /// A buffer of `shape` filled with zeros, or `None` when its size
    /// overflows or the memory cannot be had.
    pub fn zeroed(shape: [usize; N]) -> Option<Self> {
        // SAFETY: zero bytes are a valid value of every element type
        // (integers and floats), so every element is written.
        unsafe { Self::allocate(shape, true) }
    }

    /// A buffer of `shape` whose elements are not initialized (in builds with
    /// debug assertions, every byte is 0xA5 instead, so that a read of an
    /// element never written shows as a wrong value in tests), or `None` when
    /// its size overflows or the memory cannot be had.
    ///
    /// # Safety
    ///
    /// No element may be read, through a view or otherwise, before it has been
    /// written.
    pub unsafe fn uninit(shape: [usize; N]) -> Option<Self> {
        // SAFETY: the caller writes each element before reading it.
        unsafe { Self::allocate(shape, false) }
    }

    /// # Safety
    ///
    /// Unless `zero`, as for [`Scratch::uninit`].
    unsafe fn allocate(shape: [usize; N], zero: bool) -> Option<Self> {
        let len = element_count(shape)?;
        let bytes = len.checked_mul(core::mem::size_of::<T>())?;
        let ptr = if bytes == 0 {
            // Aligned, never dereferenced (no element to read).
            NonNull::new(ALIGN as *mut T)?
        } else {
            let layout = Layout::from_size_align(bytes, ALIGN).ok()?;
            // SAFETY: the layout has a non-zero size.
            let raw = unsafe {
                if zero {
                    alloc_zeroed(layout)
                } else {
                    alloc(layout)
                }
            };
            if !zero && cfg!(debug_assertions) && !raw.is_null() {
                // SAFETY: `raw` points to `bytes` bytes just allocated.
                unsafe { raw.write_bytes(0xA5, bytes) };
            }
            NonNull::new(raw as *mut T)?
        };
        Some(Scratch {
            ptr,
            len,
            shape,
            _owns: PhantomData,
        })
    }

    /// Its extent per dimension.
    pub fn shape(&self) -> [usize; N] {
        self.shape
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A view of the whole buffer, origin at 0.
    pub fn view(&self) -> View<'_, T, N> {
        // SAFETY: the buffer is dense over `shape`, and `&self` keeps it
        // alive and unwritten while the view lives.
        unsafe {
            View::from_raw_parts(
                self.ptr.as_ptr(),
                self.len,
                self.shape,
                dense_strides(self.shape),
            )
        }
    }

    /// A mutable view of the whole buffer, origin at 0.
    pub fn view_mut(&mut self) -> ViewMut<'_, T, N> {
        // SAFETY: dense strides map every coordinate to its own offset below
        // `len`; `&mut self` makes the view the only access.
        unsafe {
            ViewMut::from_raw_parts(
                self.ptr.as_ptr(),
                self.len,
                self.shape,
                dense_strides(self.shape),
            )
        }
    }
}

impl<T: Element, const N: usize> core::fmt::Debug for Scratch<T, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Scratch {{ shape: {:?} }}", self.shape)
    }
}

impl<T: Element, const N: usize> Drop for Scratch<T, N> {
    fn drop(&mut self) {
        let bytes = self.len * core::mem::size_of::<T>();
        if bytes != 0 {
            let layout = Layout::from_size_align(bytes, ALIGN).expect("valid when allocated");
            // SAFETY: allocated in `allocate` with this layout.
            unsafe { dealloc(self.ptr.as_ptr() as *mut u8, layout) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_aligned_and_writable() {
        for shape in [[7usize, 3], [1, 1], [64, 2], [0, 5]] {
            let mut s = Scratch::<u16, 2>::zeroed(shape).unwrap();
            assert_eq!(s.len(), shape[0] * shape[1]);
            assert_eq!(s.ptr.as_ptr() as usize % ALIGN, 0);
            assert!(s.view().to_buffer().as_slice().iter().all(|&v| v == 0));
            if s.len() > 1 {
                let mut w = s.view_mut().with_origin([-1, 2]);
                w.set([-1, 2], 7);
                w.set([shape[0] as i64 - 2, shape[1] as i64 + 1], 9);
                let b = s.view().to_buffer();
                assert_eq!(b.as_slice()[0], 7);
                assert_eq!(*b.as_slice().last().unwrap(), 9);
            }
        }
        let f = Scratch::<f64, 1>::zeroed([3]).unwrap();
        assert_eq!(f.view().to_buffer().as_slice(), &[0.0; 3]);
    }

    #[test]
    fn sizes_that_overflow_are_refused() {
        assert!(Scratch::<u64, 2>::zeroed([usize::MAX / 2, 3]).is_none());
        assert!(Scratch::<u64, 1>::zeroed([usize::MAX / 4]).is_none());
    }
}
