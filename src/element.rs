//! The element types a pipeline can read and write.
//!
//! Buffers and views hold one of the ten numeric types of the DSL (the guide's
//! `pipeline::guide::language`): `u8 u16 u32 u64 i8 i16 i32 i64 f32 f64`. `bool` is a type of
//! expressions only; it is never stored, so it is not an [`Element`].
//!
//! ```text
//! Buffer<u16, 2>   // fine: u16 is an Element
//! Buffer<bool, 2>  // compile error: bool is not an Element
//! ```

use core::fmt::Debug;

mod sealed {
    /// Keeps the set of element types closed: generated code and the SIMD back
    /// ends are written for exactly these ten types.
    pub trait Sealed {}
}

/// A type that buffers and views can hold: one of `u8 u16 u32 u64 i8 i16 i32 i64
/// f32 f64`.
///
/// The trait is sealed. Generated code relies on the list being closed, because
/// it emits arithmetic and SIMD code per element type.
pub trait Element:
    Copy + Default + PartialEq + Send + Sync + Debug + 'static + sealed::Sealed
{
    /// The type's name as written in Rust and in the DSL, such as `"u16"`.
    const NAME: &'static str;
}

macro_rules! impl_element {
    ($($ty:ident)*) => {
        $(
            impl sealed::Sealed for $ty {}

            impl Element for $ty {
                const NAME: &'static str = stringify!($ty);
            }
        )*
    };
}

impl_element!(u8 u16 u32 u64 i8 i16 i32 i64 f32 f64);

#[cfg(test)]
mod tests {
    use super::Element;

    #[test]
    fn names_match_the_rust_type_names() {
        assert_eq!(u8::NAME, "u8");
        assert_eq!(u16::NAME, "u16");
        assert_eq!(u32::NAME, "u32");
        assert_eq!(u64::NAME, "u64");
        assert_eq!(i8::NAME, "i8");
        assert_eq!(i16::NAME, "i16");
        assert_eq!(i32::NAME, "i32");
        assert_eq!(i64::NAME, "i64");
        assert_eq!(f32::NAME, "f32");
        assert_eq!(f64::NAME, "f64");
    }
}
