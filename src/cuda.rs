//! Images in GPU memory, for running pipelines one after another on the
//! device without copies through the host.
//!
//! `NAME::cuda` copies its inputs to the device and its outputs back on
//! every call. `NAME::cuda_device` takes [`DeviceBuffer`]s instead and
//! reads and writes them where they are, so a chain of pipelines pays for
//! one upload and one download, and a benchmark can time the kernels
//! alone:
//!
//! ```text
//! use pipeline::cuda::DeviceBuffer;
//! let on_gpu = DeviceBuffer::upload(&input)?;              // host -> device
//! let mut blurred = DeviceBuffer::<u16, 2>::new(on_gpu.shape())?;
//! blur::cuda_device(&on_gpu, &mut blurred)?;              // no copies
//! let mut sharp = DeviceBuffer::<u16, 2>::new(on_gpu.shape())?;
//! sharpen::cuda_device(&blurred, &mut sharp)?;
//! let result: pipeline::Buffer<u16, 2> = sharp.download()?; // device -> host
//! ```
//!
//! A device buffer is dense, `x` fastest, with an origin like a
//! [`View`](crate::View)'s ([`DeviceBuffer::with_origin`]). Its memory comes
//! from a pool: a dropped buffer's memory serves the next one that fits
//! (cudaMalloc and cudaFree synchronize the whole device, as Halide's
//! runtime also avoids).
//!
//! The CUDA runtime is linked into `pipeline` by its build script when
//! the `cuda` feature is on and a CUDA toolkit is found as
//! `pipeline_build::cuda()` finds nvcc (`NVCC`, `CUDA_HOME`, `CUDA_PATH`,
//! `PATH`). Without it, or without a device, every constructor returns
//! [`Error::CudaUnavailable`].

use crate::layout::dense_strides;
use crate::{AsView, AsViewMut, Buffer, Element, Error, Region};
use core::marker::PhantomData;

/// A dense `N`-dimensional image of `T` in the memory of the GPU, owned:
/// made by [`DeviceBuffer::new`] or [`DeviceBuffer::upload`], read back by
/// [`DeviceBuffer::download`], and passed to pipelines' `cuda_device`
/// entries.
pub struct DeviceBuffer<T: Element, const N: usize> {
    /// The first element, in device memory (null when empty).
    ptr: *mut T,
    origin: [i64; N],
    shape: [usize; N],
    _owns: PhantomData<T>,
}

// SAFETY: the pointer is an address in device memory that host code never
// dereferences; the buffer owns its allocation like a `Vec<T>` owns its.
unsafe impl<T: Element, const N: usize> Send for DeviceBuffer<T, N> {}
// SAFETY: as above: `&DeviceBuffer` gives no access to the memory but a
// copy to the host or a pipeline's read.
unsafe impl<T: Element, const N: usize> Sync for DeviceBuffer<T, N> {}

impl<T: Element, const N: usize> DeviceBuffer<T, N> {
    /// A buffer of `shape` on the device, filled with zeros, its origin at
    /// 0.
    pub fn new(shape: [usize; N]) -> Result<Self, Error> {
        let buffer = Self::uninit("DeviceBuffer::new", shape)?;
        let bytes = buffer.len() * core::mem::size_of::<T>();
        if bytes > 0 {
            // SAFETY: `ptr` holds `bytes` bytes of device memory.
            runtime::check("DeviceBuffer::new", unsafe {
                runtime::memset(buffer.ptr.cast(), bytes)
            })?;
        }
        Ok(buffer)
    }

    /// A copy of `image` on the device, with its shape and origin.
    pub fn upload(image: &impl AsView<T, N>) -> Result<Self, Error> {
        let view = image.as_view();
        let mut buffer =
            Self::uninit("DeviceBuffer::upload", view.shape())?.with_origin(view.origin());
        buffer.copy_from_host(image)?;
        Ok(buffer)
    }

    /// Copies `image` into this buffer, element by relative position: its
    /// shape must be this buffer's ([`Error::ShapeMismatch`]).
    pub fn copy_from_host(&mut self, image: &impl AsView<T, N>) -> Result<(), Error> {
        let view = image.as_view();
        self.same_shape("DeviceBuffer::copy_from_host", view.shape())?;
        if self.is_empty() {
            return Ok(());
        }
        // Dense as this buffer is, or packed first.
        let packed;
        let data: &[T] = if view.strides() == dense_strides(self.shape) {
            // SAFETY: a view with dense strides over a shape holds its
            // elements from its origin, in order (its invariant).
            unsafe { core::slice::from_raw_parts(view.__origin_ptr(), self.len()) }
        } else {
            packed = view.to_buffer();
            packed.as_slice()
        };
        // SAFETY: `data` and the device allocation both hold `len()`
        // elements.
        runtime::check("DeviceBuffer::copy_from_host", unsafe {
            runtime::upload(
                self.ptr.cast(),
                data.as_ptr().cast(),
                core::mem::size_of_val(data),
            )
        })
    }

    /// A copy of the buffer in host memory (its origin is not kept: a
    /// [`Buffer`]'s is 0).
    pub fn download(&self) -> Result<Buffer<T, N>, Error> {
        let mut host = Buffer::try_new(self.shape)?;
        self.download_dense(host.as_mut_slice())?;
        Ok(host)
    }

    /// Copies the buffer into `image`, element by relative position: its
    /// shape must be this buffer's ([`Error::ShapeMismatch`]).
    pub fn copy_to_host(&self, image: &mut impl AsViewMut<T, N>) -> Result<(), Error> {
        let mut view = image.as_view_mut();
        self.same_shape("DeviceBuffer::copy_to_host", view.shape())?;
        if self.is_empty() {
            return Ok(());
        }
        if view.strides() == dense_strides(self.shape) {
            // SAFETY: as in `copy_from_host`, and the view is mutable.
            let data =
                unsafe { core::slice::from_raw_parts_mut(view.__origin_ptr_mut(), self.len()) };
            return self.download_dense(data);
        }
        let host = self.download()?;
        view.copy_from(&host.view())
    }

    /// The buffer with its first element at coordinate `origin`.
    pub fn with_origin(mut self, origin: [i64; N]) -> Self {
        self.origin = origin;
        self
    }

    /// The coordinate of the first element.
    pub fn origin(&self) -> [i64; N] {
        self.origin
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> [usize; N] {
        self.shape
    }

    /// The distance in elements between neighbours along each dimension:
    /// dense, dimension 0 fastest.
    pub fn strides(&self) -> [usize; N] {
        dense_strides(self.shape)
    }

    /// The coordinates the buffer holds.
    pub fn region(&self) -> Region<N> {
        Region::new(self.origin, self.shape)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device address of the first element, for CUDA code of the
    /// caller's own (null when empty). Host code must not dereference it.
    pub fn as_device_ptr(&self) -> *const T {
        self.ptr
    }

    /// The device address of the first element, for a pipeline's
    /// `cuda_device` entry, which writes the buffer.
    #[doc(hidden)]
    pub fn __device_ptr_mut(&mut self) -> *mut T {
        self.ptr
    }

    /// A buffer of `shape` whose elements are not set yet.
    fn uninit(what: &'static str, shape: [usize; N]) -> Result<Self, Error> {
        let (_, bytes) = crate::layout::byte_size::<T, N>(shape)?;
        let ptr = if bytes == 0 {
            // Nothing to allocate, but say so now if there is no device:
            // a buffer exists only where pipelines can run on it.
            runtime::available(what)?;
            core::ptr::null_mut()
        } else {
            runtime::alloc(what, bytes)?.cast()
        };
        Ok(DeviceBuffer {
            ptr,
            origin: [0; N],
            shape,
            _owns: PhantomData,
        })
    }

    fn same_shape(&self, what: &str, other: [usize; N]) -> Result<(), Error> {
        if other == self.shape {
            return Ok(());
        }
        Err(Error::ShapeMismatch {
            what: what.to_string(),
            expected: format!("{:?}", self.shape),
            got: format!("{other:?}"),
        })
    }

    fn download_dense(&self, data: &mut [T]) -> Result<(), Error> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: `data` and the device allocation both hold `len()`
        // elements.
        runtime::check("DeviceBuffer::download", unsafe {
            runtime::download(
                data.as_mut_ptr().cast(),
                self.ptr.cast(),
                core::mem::size_of_val(data),
            )
        })
    }
}

impl<T: Element, const N: usize> Drop for DeviceBuffer<T, N> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            runtime::release(self.ptr.cast(), self.len() * core::mem::size_of::<T>());
        }
    }
}

impl<T: Element, const N: usize> core::fmt::Debug for DeviceBuffer<T, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("origin", &self.origin)
            .field("shape", &self.shape)
            .finish()
    }
}

impl<T: Element, const N: usize> crate::rt::Extents<N> for DeviceBuffer<T, N> {
    fn region(&self) -> Region<N> {
        DeviceBuffer::region(self)
    }
    fn strides(&self) -> [usize; N] {
        DeviceBuffer::strides(self)
    }
}

/// The CUDA runtime, where the build script linked it.
#[cfg(pipeline_cudart)]
mod runtime {
    use crate::Error;
    use core::ffi::c_void;
    use std::sync::Mutex;

    extern "C" {
        fn cudaMalloc(ptr: *mut *mut c_void, bytes: usize) -> i32;
        fn cudaFree(ptr: *mut c_void) -> i32;
        fn cudaMemcpy(dst: *mut c_void, src: *const c_void, bytes: usize, kind: i32) -> i32;
        fn cudaMemset(ptr: *mut c_void, value: i32, bytes: usize) -> i32;
        fn cudaGetDeviceCount(count: *mut i32) -> i32;
    }
    const HOST_TO_DEVICE: i32 = 1;
    const DEVICE_TO_HOST: i32 = 2;

    /// Freed blocks kept for reuse: (address, bytes), at most `KEEP`
    /// bytes in all.
    static POOL: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
    const KEEP: usize = 1 << 30;

    /// `Ok` if a code says success, else the error for `what`.
    pub fn check(what: &'static str, code: i32) -> Result<(), Error> {
        match code {
            0 => Ok(()),
            _ if crate::rt::no_cuda_device(code) => Err(Error::CudaUnavailable {
                reason: format!(
                    "{what} found no usable CUDA device: {}",
                    crate::rt::cuda_error_name(code)
                ),
            }),
            _ => Err(Error::CudaBufferFailed {
                operation: what,
                code,
            }),
        }
    }

    pub fn available(what: &'static str) -> Result<(), Error> {
        let mut count = 0;
        // SAFETY: the runtime writes one `int`.
        check(what, unsafe { cudaGetDeviceCount(&mut count) })?;
        if count == 0 {
            return check(what, 100);
        }
        Ok(())
    }

    pub fn alloc(what: &'static str, bytes: usize) -> Result<*mut c_void, Error> {
        {
            let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
            let best = pool
                .iter()
                .enumerate()
                .filter(|(_, &(_, size))| size >= bytes && size / 2 <= bytes)
                .min_by_key(|(_, &(_, size))| size)
                .map(|(i, _)| i);
            if let Some(i) = best {
                return Ok(pool.swap_remove(i).0 as *mut c_void);
            }
        }
        let mut ptr = core::ptr::null_mut();
        // SAFETY: the runtime writes one pointer.
        check(what, unsafe { cudaMalloc(&mut ptr, bytes) })?;
        Ok(ptr)
    }

    /// Keeps a block of `bytes` for the next allocation it fits, or frees
    /// it past the pool's limit. The size recorded is the one asked for,
    /// at most the block's own.
    pub fn release(ptr: *mut c_void, bytes: usize) {
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        let kept: usize = pool.iter().map(|&(_, size)| size).sum();
        if kept + bytes <= KEEP {
            pool.push((ptr as usize, bytes));
        } else {
            // SAFETY: `ptr` came from cudaMalloc and nothing else owns it.
            unsafe { cudaFree(ptr) };
        }
    }

    /// # Safety
    /// `ptr` holds `bytes` bytes of device memory.
    pub unsafe fn memset(ptr: *mut c_void, bytes: usize) -> i32 {
        cudaMemset(ptr, 0, bytes)
    }

    /// # Safety
    /// `dst` holds `bytes` of device memory, `src` as many of host memory.
    pub unsafe fn upload(dst: *mut c_void, src: *const c_void, bytes: usize) -> i32 {
        cudaMemcpy(dst, src, bytes, HOST_TO_DEVICE)
    }

    /// # Safety
    /// `dst` holds `bytes` of host memory, `src` as many of device memory.
    pub unsafe fn download(dst: *mut c_void, src: *const c_void, bytes: usize) -> i32 {
        cudaMemcpy(dst, src, bytes, DEVICE_TO_HOST)
    }
}

/// Without the CUDA runtime: no device buffer can be made.
#[cfg(not(pipeline_cudart))]
mod runtime {
    use crate::Error;
    use core::ffi::c_void;

    fn unavailable() -> Error {
        Error::CudaUnavailable {
            reason:
                "`pipeline` was built without the CUDA runtime: enable its `cuda` feature on a \
                     machine with a CUDA toolkit (NVCC, CUDA_HOME, CUDA_PATH or nvcc on PATH)"
                    .to_string(),
        }
    }

    pub fn check(_: &'static str, _: i32) -> Result<(), Error> {
        Err(unavailable())
    }

    pub fn available(_: &'static str) -> Result<(), Error> {
        Err(unavailable())
    }

    pub fn alloc(_: &'static str, _: usize) -> Result<*mut c_void, Error> {
        Err(unavailable())
    }

    pub fn release(_: *mut c_void, _: usize) {}

    pub unsafe fn memset(_: *mut c_void, _: usize) -> i32 {
        -1
    }

    pub unsafe fn upload(_: *mut c_void, _: *const c_void, _: usize) -> i32 {
        -1
    }

    pub unsafe fn download(_: *mut c_void, _: *const c_void, _: usize) -> i32 {
        -1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Here (no GPU) every constructor says why it cannot run; with a GPU,
    /// a round trip keeps every element, strided views included.
    #[test]
    fn buffers_round_trip_or_say_why_not() {
        let host = Buffer::<u16, 2>::from_fn([7, 5], |[x, y]| (x * 31 + y * 7) as u16);
        match DeviceBuffer::upload(&host.view().with_origin([-3, 2])) {
            Err(Error::CudaUnavailable { reason }) => {
                eprintln!("no device buffers here: {reason}");
                assert!(matches!(
                    DeviceBuffer::<u8, 1>::new([0]),
                    Err(Error::CudaUnavailable { .. })
                ));
            }
            Err(e) => panic!("{e}"),
            Ok(d) => {
                assert_eq!(
                    (d.origin(), d.shape(), d.strides()),
                    ([-3, 2], [7, 5], [1, 7])
                );
                assert_eq!(d.download().unwrap(), host);
                let mut strided = Buffer::<u16, 2>::new([9, 5]);
                let mut crop = strided.view_mut().into_crop([1, 0], [7, 5]).unwrap();
                d.copy_to_host(&mut crop).unwrap();
                assert_eq!(crop.as_view().to_buffer(), host);
                let zeros = DeviceBuffer::<u16, 2>::new([7, 5]).unwrap();
                assert!(zeros.download().unwrap().as_slice().iter().all(|&v| v == 0));
                assert!(matches!(
                    zeros.copy_to_host(&mut Buffer::<u16, 2>::new([5, 7])),
                    Err(Error::ShapeMismatch { .. })
                ));
            }
        }
    }
}
