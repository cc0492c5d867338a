//! Storage for intermediate funcs: 64-byte aligned, so that the first element
//! of a buffer starts a cache line (and any vector register); zeroed, or left
//! as the allocator gives it for generated code, which writes every element
//! of a func's buffer before reading it (in a profile of the Harris
//! pipeline, memset took 11% and page faults on fresh pages about 13%).
//! Large blocks are kept in a pool when freed and reused by later buffers
//! (at most 128 MiB, oldest freed first), so that repeated calls of a
//! pipeline do not fault in fresh pages every time; small ones (per-row
//! buffers) in a cache of a few per thread, so that the next row reuses the
//! last one's block without going through the system allocator. Valgrind's
//! memcheck is told of both (`super::memcheck`): a kept block is not
//! addressable, a reused one undefined, as if freed and allocated afresh.
//!
//! ```text
//! let mut blur_x = Scratch::<u32, 2>::zeroed([w + 2, 4])?;   // 64-byte aligned
//! let w = blur_x.view_mut().with_origin([-1, 0]);
//! ```

use core::marker::PhantomData;
use core::ptr::NonNull;
use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::cell::RefCell;
use std::sync::Mutex;

use super::memcheck;
use crate::element::Element;
use crate::layout::{dense_strides, element_count};
use crate::view::View;
use crate::view_mut::ViewMut;

/// The alignment of every intermediate buffer, in bytes.
pub const ALIGN: usize = 64;

/// Blocks of at least this many bytes go back to [`POOL`] when freed.
const POOL_MIN_BYTES: usize = 256 << 10;

/// The most bytes [`POOL`] keeps (the oldest blocks are freed first).
const POOL_MAX_BYTES: usize = 128 << 20;

/// Large blocks freed by earlier buffers, for the next ones.
///
/// A pipeline allocates the same intermediate buffers on every call. Freed to
/// the system allocator, large ones go back to the operating system (glibc
/// unmaps them or trims its heap), and the next call faults in and zeroes
/// every page again: in the Harris pipeline (three 8 MB intermediates) the
/// time per call varied from 6.5 to 15 ms with the allocator's history. Kept
/// here, the pages stay mapped; small blocks (per-row buffers) stay with the
/// system allocator, which keeps them anyway.
static POOL: Mutex<Vec<Block>> = Mutex::new(Vec::new());

/// The most small blocks [`SMALL`] keeps per thread.
const SMALL_MAX_BLOCKS: usize = 8;

thread_local! {
    /// Small blocks freed on this thread, for the next ones.
    ///
    /// A func computed at a consumer's row allocates its buffer for every
    /// row, and gets the same size each time: in a profile of the Harris
    /// pipeline, glibc's free and malloc (`malloc_consolidate`, `_int_free`)
    /// of those blocks took about 3% of the time. Kept here, without a lock,
    /// the next row takes the block the last one freed.
    static SMALL: RefCell<SmallBlocks> = const { RefCell::new(SmallBlocks(Vec::new())) };
}

/// The blocks of [`SMALL`], freed when their thread ends.
struct SmallBlocks(Vec<Block>);

impl Drop for SmallBlocks {
    fn drop(&mut self) {
        self.0.drain(..).for_each(free);
    }
}

/// Frees `block` to the system allocator.
fn free(block: Block) {
    let layout = layout(block.bytes).expect("valid when allocated");
    // SAFETY: allocated by `take_block` with this layout.
    unsafe { dealloc(block.ptr.as_ptr(), layout) }
}

/// Of `blocks`, the index of the smallest that holds `bytes` and is within a
/// quarter of that size; of those, the last freed.
fn best_fit(blocks: &[Block], bytes: usize) -> Option<usize> {
    blocks
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, b)| b.bytes >= bytes && b.bytes - bytes <= bytes / 4)
        .min_by_key(|(_, b)| b.bytes)
        .map(|(i, _)| i)
}

/// An allocation of `bytes` bytes aligned to [`ALIGN`].
struct Block {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: a block is memory nobody else refers to.
unsafe impl Send for Block {}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes, ALIGN).ok()
}

/// A block of at least `bytes` bytes (non-zero): a pooled one within a
/// quarter of that size when there is one, else a new one.
fn take_block(bytes: usize) -> Option<Block> {
    // The last freed of the best fits is the likeliest to be in cache.
    let reused = if bytes >= POOL_MIN_BYTES {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        best_fit(&pool, bytes).map(|i| pool.remove(i))
    } else {
        SMALL
            .try_with(|small| {
                let mut small = small.borrow_mut();
                best_fit(&small.0, bytes).map(|i| small.0.remove(i))
            })
            .ok()
            .flatten()
    };
    if let Some(block) = reused {
        // To memcheck, as if fresh: the bytes asked for undefined, the rest
        // of the block out of bounds.
        memcheck::undefined(block.ptr.as_ptr(), bytes);
        // SAFETY: `bytes` is within the block.
        memcheck::no_access(
            unsafe { block.ptr.as_ptr().add(bytes) },
            block.bytes - bytes,
        );
        return Some(block);
    }
    let layout = layout(bytes)?;
    // SAFETY: the layout has a non-zero size.
    let ptr = NonNull::new(unsafe { alloc(layout) })?;
    crate::hugepages::advise(ptr.as_ptr(), bytes);
    Some(Block { ptr, bytes })
}

/// Returns `block` to this thread's small blocks or to the pool, or to the
/// system allocator when they are full.
fn give_block(block: Block) {
    // To memcheck, as if freed: kept for reuse, the block is nobody's.
    memcheck::no_access(block.ptr.as_ptr(), block.bytes);
    if block.bytes < POOL_MIN_BYTES {
        let mut block = Some(block);
        let _ = SMALL.try_with(|small| {
            let mut small = small.borrow_mut();
            small.0.extend(block.take());
            if small.0.len() > SMALL_MAX_BLOCKS {
                free(small.0.remove(0));
            }
        });
        // The thread is ending: its cache is gone.
        block.into_iter().for_each(free);
        return;
    }
    if block.bytes > POOL_MAX_BYTES {
        return free(block);
    }
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    pool.push(block);
    let mut kept: usize = pool.iter().map(|b| b.bytes).sum();
    while kept > POOL_MAX_BYTES {
        let oldest = pool.remove(0);
        kept -= oldest.bytes;
        free(oldest);
    }
}

/// A dense buffer of `shape` (x fastest) owned by generated code.
pub struct Scratch<T: Element, const N: usize> {
    ptr: NonNull<T>,
    len: usize,
    shape: [usize; N],
    /// The bytes of the block behind `ptr` (0: no block).
    block: usize,
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
        if bytes == 0 {
            return Some(Scratch {
                // Aligned, never dereferenced (no element to read).
                ptr: NonNull::new(ALIGN as *mut T)?,
                len,
                shape,
                block: 0,
                _owns: PhantomData,
            });
        }
        let block = if zero && bytes < POOL_MIN_BYTES {
            // SAFETY: the layout has a non-zero size.
            let ptr = NonNull::new(unsafe { alloc_zeroed(layout(bytes)?) })?;
            Block { ptr, bytes }
        } else {
            let block = take_block(bytes)?;
            let fill = if zero {
                Some(0)
            } else {
                cfg!(debug_assertions).then_some(0xA5)
            };
            if let Some(byte) = fill {
                // SAFETY: the block holds at least `bytes` bytes.
                unsafe { block.ptr.as_ptr().write_bytes(byte, bytes) };
            }
            block
        };
        Some(Scratch {
            ptr: block.ptr.cast(),
            len,
            shape,
            block: block.bytes,
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
        if self.block != 0 {
            give_block(Block {
                ptr: self.ptr.cast(),
                bytes: self.block,
            });
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
    fn large_blocks_are_reused_and_rezeroed() {
        // A size no other test uses, so that the block found is this one.
        let shape = [POOL_MIN_BYTES / 4 + 4099, 1];
        let first = {
            let mut s = Scratch::<u32, 2>::zeroed(shape).unwrap();
            s.view_mut().set([5, 0], 77);
            s.ptr
        };
        let again = Scratch::<u32, 2>::zeroed(shape).unwrap();
        assert_eq!(again.ptr, first, "the freed block is reused");
        assert!(again.view().to_buffer().as_slice().iter().all(|&v| v == 0));
        assert_eq!(again.ptr.as_ptr() as usize % ALIGN, 0);
        // A much smaller request does not take a block four times its size.
        drop(again);
        let small = Scratch::<u32, 2>::zeroed([shape[0] / 4, 1]).unwrap();
        assert_ne!(small.ptr, first);
    }

    #[test]
    fn small_blocks_are_reused_on_their_thread() {
        // A size no other test uses, so that the block found is this one.
        let shape = [1013, 3];
        let first = {
            let mut s = Scratch::<u32, 2>::zeroed(shape).unwrap();
            s.view_mut().set([5, 0], 77);
            s.ptr
        };
        // SAFETY: not read.
        let again = unsafe { Scratch::<u32, 2>::uninit(shape) }.unwrap();
        assert_eq!(again.ptr, first, "the freed block is reused");
        drop(again);
        let zeroed = Scratch::<u32, 2>::zeroed(shape).unwrap();
        assert!(zeroed.view().to_buffer().as_slice().iter().all(|&v| v == 0));
        // Another thread has its own blocks.
        let ptr = zeroed.ptr.as_ptr() as usize;
        drop(zeroed);
        let other = std::thread::spawn(move || {
            // SAFETY: not read.
            let s = unsafe { Scratch::<u32, 2>::uninit(shape) }.unwrap();
            s.ptr.as_ptr() as usize
        })
        .join()
        .unwrap();
        assert_ne!(other, ptr);
    }

    #[test]
    fn sizes_that_overflow_are_refused() {
        assert!(Scratch::<u64, 2>::zeroed([usize::MAX / 2, 3]).is_none());
        assert!(Scratch::<u64, 1>::zeroed([usize::MAX / 4]).is_none());
    }
}
