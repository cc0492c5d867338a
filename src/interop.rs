//! Views of other crates' images and arrays, behind cargo features.
//!
//! - `image`: `image::ImageBuffer`s of `Luma<T>` are 2-D (`x, y`); of `Rgb<T>`
//!   and `Rgba<T>` are 3-D (`x, y, c`) with the channels interleaved, so their
//!   strides are `[channels, channels * width, 1]`. They implement [`AsView`] and
//!   [`AsViewMut`], so they can be passed to pipelines directly.
//! - `ndarray`: `ArrayView`s and `ArrayViewMut`s convert with `TryFrom`. ndarray
//!   indexes row-major (`a[[y, x]]`, last axis fastest) and we index x first, so
//!   the axes are reversed: an ndarray of shape `(h, w)` becomes a view of shape
//!   `[w, h]`, and `view.at([x, y]) == a[[y, x]]`.
//!
//! ```text
//! blur3x3(&gray_image, &mut out_image)?;                  // image: ImageBuffer<Luma<u16>, Vec<u16>>
//! let v = View::try_from(array.view())?;                  // ndarray: shape (480, 640) -> [640, 480]
//! ```

#[allow(unused_imports)]
use crate::{AsView, AsViewMut, Element, Error, View, ViewMut};

#[cfg(feature = "image")]
mod image_impls {
    use super::*;
    use ::image::{ImageBuffer, Luma, Pixel, Rgb, Rgba};

    /// The shape and strides of a `width x height` image of `channels` interleaved
    /// channels, as `N`-dimensional `(x, y[, c])` coordinates.
    fn layout<const N: usize>(
        width: u32,
        height: u32,
        channels: usize,
    ) -> ([usize; N], [usize; N]) {
        let (w, h) = (width as usize, height as usize);
        let mut shape = [1; N];
        let mut strides = [0; N];
        shape[0] = w;
        shape[1] = h;
        strides[0] = channels;
        strides[1] = channels * w;
        if N == 3 {
            shape[2] = channels;
            strides[2] = 1;
        }
        (shape, strides)
    }

    macro_rules! impl_image {
        ($($pixel:ident => $n:literal),*) => {
            $(
                /// Coordinates `(x, y)` for gray images, `(x, y, c)` for colour ones.
                impl<T: Element> AsView<T, $n> for ImageBuffer<$pixel<T>, Vec<T>>
                where
                    $pixel<T>: Pixel<Subpixel = T>,
                {
                    fn as_view(&self) -> View<'_, T, $n> {
                        let channels = <$pixel<T> as Pixel>::CHANNEL_COUNT as usize;
                        let (shape, strides) = layout(self.width(), self.height(), channels);
                        View::with_strides(&**self, shape, strides)
                            .expect("an ImageBuffer holds width * height * channels samples")
                    }
                }

                /// Coordinates `(x, y)` for gray images, `(x, y, c)` for colour ones.
                impl<T: Element> AsViewMut<T, $n> for ImageBuffer<$pixel<T>, Vec<T>>
                where
                    $pixel<T>: Pixel<Subpixel = T>,
                {
                    fn as_view_mut(&mut self) -> ViewMut<'_, T, $n> {
                        let channels = <$pixel<T> as Pixel>::CHANNEL_COUNT as usize;
                        let (shape, strides) = layout(self.width(), self.height(), channels);
                        ViewMut::with_strides(&mut **self, shape, strides)
                            .expect("an ImageBuffer holds width * height * channels samples")
                    }
                }
            )*
        };
    }

    impl_image!(Luma => 2, Rgb => 3, Rgba => 3);

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::Buffer;

        #[test]
        fn luma_images_are_x_y_views() {
            let img = ImageBuffer::<Luma<u16>, Vec<u16>>::from_fn(5, 3, |x, y| {
                Luma([(x + 10 * y) as u16])
            });
            let v = img.as_view();
            assert_eq!(v.shape(), [5, 3]);
            assert_eq!(v.strides(), [1, 5]);
            assert_eq!(v.at([4, 2]), 24);
            let copy = v.to_buffer();
            assert_eq!(copy.as_slice(), img.as_raw().as_slice());
        }

        #[test]
        fn rgb_and_rgba_images_are_x_y_c_views() {
            let img =
                ImageBuffer::<Rgb<u8>, Vec<u8>>::from_fn(4, 2, |x, y| Rgb([x as u8, y as u8, 7]));
            let v = img.as_view();
            assert_eq!(v.shape(), [4, 2, 3]);
            assert_eq!(v.strides(), [3, 12, 1]);
            assert_eq!(v.at([3, 1, 0]), 3);
            assert_eq!(v.at([3, 1, 1]), 1);
            assert_eq!(v.at([3, 1, 2]), 7);

            let img = ImageBuffer::<Rgba<f32>, Vec<f32>>::from_fn(2, 3, |x, y| {
                Rgba([x as f32, y as f32, 0.5, 1.0])
            });
            let v = img.as_view();
            assert_eq!(v.shape(), [2, 3, 4]);
            assert_eq!(v.at([1, 2, 1]), 2.0);
            assert_eq!(v.at([1, 2, 3]), 1.0);
        }

        #[test]
        fn writes_through_views_land_in_the_image() {
            let mut img = ImageBuffer::<Rgba<u16>, Vec<u16>>::new(3, 2);
            let mut v = img.as_view_mut();
            v.set([2, 1, 3], 999);
            v.crop([0, 0, 0], [3, 1, 1]).unwrap().fill(5);
            assert_eq!(img.get_pixel(2, 1).0, [0, 0, 0, 999]);
            assert_eq!(img.get_pixel(1, 0).0, [5, 0, 0, 0]);

            // A round trip: image -> buffer -> image.
            let gray =
                ImageBuffer::<Luma<u8>, Vec<u8>>::from_fn(7, 4, |x, y| Luma([(x * y) as u8]));
            let buffer: Buffer<u8, 2> = gray.as_view().to_buffer();
            let mut back = ImageBuffer::<Luma<u8>, Vec<u8>>::new(7, 4);
            back.as_view_mut().copy_from(&buffer.view()).unwrap();
            assert_eq!(back, gray);
        }

        #[test]
        fn images_pass_where_pipelines_take_views() {
            fn invert(input: &impl AsView<u8, 2>, out: &mut impl AsViewMut<u8, 2>) {
                let input = input.as_view();
                let mut out = out.as_view_mut();
                let r = out.region();
                for y in r.min[1]..r.min[1] + r.shape[1] as i64 {
                    for x in r.min[0]..r.min[0] + r.shape[0] as i64 {
                        out.set([x, y], 255 - input.at([x, y]));
                    }
                }
            }
            let img = ImageBuffer::<Luma<u8>, Vec<u8>>::from_fn(3, 3, |x, _| Luma([x as u8]));
            let mut out = ImageBuffer::<Luma<u8>, Vec<u8>>::new(3, 3);
            invert(&img, &mut out);
            assert_eq!(out.get_pixel(2, 1).0, [253]);
        }
    }
}

#[cfg(feature = "ndarray")]
mod ndarray_impls {
    use super::*;
    use crate::layout::{check_in_range, check_injective};
    use ::ndarray::{ArrayView, ArrayViewMut, Dim, Dimension};

    /// Our shape and strides for an ndarray layout, axes reversed, and the number
    /// of elements from the first to the last one it maps.
    ///
    /// A negative stride along an axis with more than one element is refused: our
    /// views step forward from their first element. Along an axis of one element
    /// the stride is never used, so it is taken as 0.
    fn reversed_layout<const N: usize>(
        nd_shape: &[usize],
        nd_strides: &[isize],
    ) -> Result<([usize; N], [usize; N], usize), Error> {
        let mut shape = [0; N];
        let mut strides = [0; N];
        for d in 0..N {
            let axis = N - 1 - d;
            shape[d] = nd_shape[axis];
            strides[d] = match usize::try_from(nd_strides[axis]) {
                Ok(stride) => stride,
                Err(_) if nd_shape[axis] <= 1 => 0,
                Err(_) => {
                    return Err(Error::InvalidLayout {
                        reason: format!(
                            "ndarray axis {axis} has the negative stride {}, which views do not \
                             support; copy it with `.as_standard_layout()`, or reverse the axis \
                             back with `.invert_axis()` and mirror the coordinates",
                            nd_strides[axis]
                        ),
                    })
                }
            };
        }
        // ndarray keeps every element inside its allocation, so the offset of the
        // last one fits; the checked arithmetic only keeps this function total.
        let last = (0..N).try_fold(0usize, |offset, d| {
            shape[d]
                .saturating_sub(1)
                .checked_mul(strides[d])?
                .checked_add(offset)
        });
        let span = match last {
            _ if shape.contains(&0) => 0,
            Some(last) if last < isize::MAX as usize => last + 1,
            _ => {
                return Err(Error::InvalidLayout {
                    reason: format!(
                        "ndarray layout of shape {nd_shape:?} and strides {nd_strides:?} \
                         reaches past the largest offset a view can hold"
                    ),
                })
            }
        };
        check_in_range(span, shape, strides)?;
        Ok((shape, strides, span))
    }

    impl<'a, T: Element, const N: usize> TryFrom<ArrayView<'a, T, Dim<[usize; N]>>> for View<'a, T, N>
    where
        Dim<[usize; N]>: Dimension,
    {
        type Error = Error;

        /// Views an ndarray with its axes reversed (shape `(h, w)` becomes `[w, h]`).
        /// Fails with [`Error::InvalidLayout`] on a negative stride.
        fn try_from(array: ArrayView<'a, T, Dim<[usize; N]>>) -> Result<Self, Error> {
            let (shape, strides, span) = reversed_layout::<N>(array.shape(), array.strides())?;
            // SAFETY: with non-negative strides the first element is the lowest
            // address, and every element lies within `span` of it inside the
            // array's allocation, borrowed shared for 'a. Elements in between that
            // the array does not map are never read.
            Ok(unsafe { View::from_raw_parts(array.as_ptr(), span, shape, strides) })
        }
    }

    impl<'a, T: Element, const N: usize> TryFrom<ArrayViewMut<'a, T, Dim<[usize; N]>>>
        for ViewMut<'a, T, N>
    where
        Dim<[usize; N]>: Dimension,
    {
        type Error = Error;

        /// Views an ndarray mutably with its axes reversed (shape `(h, w)` becomes
        /// `[w, h]`). Fails with [`Error::InvalidLayout`] on a negative stride or on
        /// a layout that maps two indices to one element.
        fn try_from(mut array: ArrayViewMut<'a, T, Dim<[usize; N]>>) -> Result<Self, Error> {
            let (shape, strides, span) = reversed_layout::<N>(array.shape(), array.strides())?;
            check_injective(shape, strides)?;
            // SAFETY: as for `View`, the mapped elements lie within `span` of the
            // first one; the array borrows them exclusively for 'a and we just
            // checked they are distinct. Elements in between that the array does
            // not map are never touched.
            Ok(unsafe { ViewMut::from_raw_parts(array.as_mut_ptr(), span, shape, strides) })
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use ::ndarray::{s, Array2, Array3, Array4, ArrayView1};

        #[test]
        fn axes_are_reversed() {
            let a = Array2::from_shape_fn((3, 4), |(y, x)| (x + 10 * y) as u16);
            let v = View::try_from(a.view()).unwrap();
            assert_eq!(v.shape(), [4, 3]);
            assert_eq!(v.strides(), [1, 4]);
            for y in 0..3 {
                for x in 0..4 {
                    assert_eq!(v.at([x as i64, y as i64]), a[[y, x]]);
                }
            }
            assert_eq!(v.to_buffer().as_slice(), a.as_slice().unwrap());
        }

        #[test]
        fn sliced_and_transposed_arrays_round_trip() {
            let a = Array3::from_shape_fn((2, 5, 6), |(c, y, x)| (x + 10 * y + 100 * c) as i32);
            let sliced = a.slice(s![.., 1..4, ..;2]);
            let v = View::try_from(sliced).unwrap();
            assert_eq!(v.shape(), [3, 3, 2]);
            let b = v.to_buffer();
            for ((c, y, x), &value) in sliced.indexed_iter() {
                assert_eq!(b[[x, y, c]], value);
            }

            let t = a.index_axis(::ndarray::Axis(0), 1);
            let t = t.t();
            let v = View::try_from(t).unwrap();
            assert_eq!(v.shape(), [5, 6]);
            assert_eq!(v.at([2, 3]), t[[3, 2]]);

            let one = ArrayView1::from(&[7.0f64, 8.0][..]);
            assert_eq!(View::try_from(one).unwrap().at([1]), 8.0);
        }

        #[test]
        fn negative_strides_are_refused() {
            let a = Array2::<u8>::zeros((3, 4));
            let err = View::try_from(a.slice(s![..;-1, ..])).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidLayout { reason } if reason.contains("negative stride")),
                "{err}"
            );
            // One row read backwards has nothing to step over.
            assert!(View::try_from(a.slice(s![1..2;-1, ..])).is_ok());
        }

        #[test]
        fn mutable_views_write_into_the_array() {
            let mut a = Array4::<f32>::zeros((2, 3, 4, 5));
            {
                let mut v = ViewMut::try_from(a.view_mut()).unwrap();
                assert_eq!(v.shape(), [5, 4, 3, 2]);
                v.set([4, 3, 2, 1], 1.5);
            }
            assert_eq!(a[[1, 2, 3, 4]], 1.5);

            let mut b = Array2::<u32>::zeros((4, 6));
            {
                let strided = b.slice_mut(s![1..3, ..;2]);
                let mut v = ViewMut::try_from(strided).unwrap().with_origin([10, 20]);
                v.fill(3);
                v.set([12, 21], 9);
            }
            let expected = [
                [0, 0, 0, 0, 0, 0],
                [3, 0, 3, 0, 3, 0],
                [3, 0, 3, 0, 9, 0],
                [0, 0, 0, 0, 0, 0],
            ];
            for (y, row) in expected.iter().enumerate() {
                for (x, &value) in row.iter().enumerate() {
                    assert_eq!(b[[y, x]], value);
                }
            }
        }

        #[test]
        fn interleaved_mutable_views_are_independent() {
            let mut a = Array2::<u8>::zeros((2, 6));
            let (even, odd) = a.multi_slice_mut((s![.., ..;2], s![.., 1..;2]));
            let mut even = ViewMut::try_from(even).unwrap();
            let mut odd = ViewMut::try_from(odd).unwrap();
            std::thread::scope(|s| {
                s.spawn(move || even.fill(1));
                s.spawn(move || {
                    odd.fill(2);
                    assert_eq!(odd.as_view().at([0, 0]), 2);
                });
            });
            assert_eq!(a.row(1).to_vec(), [1, 2, 1, 2, 1, 2]);
        }
    }
}
