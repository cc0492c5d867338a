//! Scalar types of the DSL and their properties.
//!
//! Every expression has exactly one of these types. Integer types wrap (two's
//! complement), floats follow IEEE 754, `bool` is the type of comparisons.

use std::fmt;

/// A scalar type of the DSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `bool`: the result of comparisons and logical operators.
    Bool,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`: also the type of coordinates, pure variables and extents.
    I32,
    /// `i64`: also the type in which bounds are computed.
    I64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl Type {
    /// All element types an image may have, in the order the guide lists them (`pipeline::guide::language`).
    pub const ELEMENTS: [Type; 10] = [
        Type::U8,
        Type::U16,
        Type::U32,
        Type::U64,
        Type::I8,
        Type::I16,
        Type::I32,
        Type::I64,
        Type::F32,
        Type::F64,
    ];

    /// Parses a Rust type name (`u8`, `f32`, `bool`, ...).
    pub fn from_name(name: &str) -> Option<Type> {
        Some(match name {
            "bool" => Type::Bool,
            "u8" => Type::U8,
            "u16" => Type::U16,
            "u32" => Type::U32,
            "u64" => Type::U64,
            "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "f32" => Type::F32,
            "f64" => Type::F64,
            _ => return None,
        })
    }

    /// The Rust spelling of the type.
    pub fn name(self) -> &'static str {
        match self {
            Type::Bool => "bool",
            Type::U8 => "u8",
            Type::U16 => "u16",
            Type::U32 => "u32",
            Type::U64 => "u64",
            Type::I8 => "i8",
            Type::I16 => "i16",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::F32 => "f32",
            Type::F64 => "f64",
        }
    }

    /// True for the eight integer types.
    pub fn is_int(self) -> bool {
        !matches!(self, Type::Bool | Type::F32 | Type::F64)
    }

    /// True for f32 and f64.
    pub fn is_float(self) -> bool {
        matches!(self, Type::F32 | Type::F64)
    }

    /// True for the signed integer types.
    pub fn is_signed(self) -> bool {
        matches!(self, Type::I8 | Type::I16 | Type::I32 | Type::I64)
    }

    /// Width in bits (bool counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            Type::Bool => 1,
            Type::U8 | Type::I8 => 8,
            Type::U16 | Type::I16 => 16,
            Type::U32 | Type::I32 | Type::F32 => 32,
            Type::U64 | Type::I64 | Type::F64 => 64,
        }
    }

    /// Smallest value of an integer type.
    pub fn int_min(self) -> i128 {
        if self.is_signed() {
            -(1i128 << (self.bits() - 1))
        } else {
            0
        }
    }

    /// Largest value of an integer type.
    pub fn int_max(self) -> i128 {
        match self {
            Type::Bool => 1,
            t if t.is_signed() => (1i128 << (t.bits() - 1)) - 1,
            t => (1i128 << t.bits()) - 1,
        }
    }

    /// The unsigned integer type of the same width (`absd`'s result type).
    pub fn to_unsigned(self) -> Type {
        match self {
            Type::I8 => Type::U8,
            Type::I16 => Type::U16,
            Type::I32 => Type::U32,
            Type::I64 => Type::U64,
            t => t,
        }
    }

    /// The signed integer type of a width.
    pub fn signed_of_bits(bits: u32) -> Type {
        match bits {
            8 => Type::I8,
            16 => Type::I16,
            32 => Type::I32,
            _ => Type::I64,
        }
    }

    /// Wraps a mathematical integer into this integer type (two's complement).
    pub fn wrap(self, v: i128) -> i128 {
        match self {
            Type::Bool => v & 1,
            t => {
                let bits = t.bits();
                let m = v & ((1i128 << bits) - 1);
                if t.is_signed() && m >= 1i128 << (bits - 1) {
                    m - (1i128 << bits)
                } else {
                    m
                }
            }
        }
    }

    /// The type of mixed arithmetic, the guide's *Expressions and types*: same type -> that type; int
    /// with float -> the float; ints of different width -> the wider; same
    /// width, mixed signedness -> the signed one. `None` when bools are involved.
    pub fn unify(a: Type, b: Type) -> Option<Type> {
        if a == b {
            return Some(a);
        }
        if a == Type::Bool || b == Type::Bool {
            return None;
        }
        Some(match (a.is_float(), b.is_float()) {
            (true, true) => {
                if a.bits() >= b.bits() {
                    a
                } else {
                    b
                }
            }
            (true, false) => a,
            (false, true) => b,
            (false, false) => {
                if a.bits() > b.bits() {
                    a
                } else if b.bits() > a.bits() {
                    b
                } else {
                    Type::signed_of_bits(a.bits())
                }
            }
        })
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Type::{self, *};

    #[test]
    fn unify_follows_the_promotion_rules() {
        assert_eq!(Type::unify(U8, U8), Some(U8));
        assert_eq!(Type::unify(U8, F32), Some(F32));
        assert_eq!(Type::unify(I64, F32), Some(F32));
        assert_eq!(Type::unify(F32, F64), Some(F64));
        assert_eq!(Type::unify(U8, U16), Some(U16));
        assert_eq!(Type::unify(I8, U16), Some(U16));
        assert_eq!(Type::unify(U32, I32), Some(I32));
        assert_eq!(Type::unify(U8, I8), Some(I8));
        assert_eq!(Type::unify(Bool, I32), None);
        assert_eq!(Type::unify(Bool, Bool), Some(Bool));
    }

    #[test]
    fn wrap_is_twos_complement() {
        assert_eq!(U8.wrap(256), 0);
        assert_eq!(U8.wrap(-1), 255);
        assert_eq!(I8.wrap(128), -128);
        assert_eq!(I32.wrap(i32::MAX as i128 + 1), i32::MIN as i128);
        assert_eq!(U64.wrap(-1), u64::MAX as i128);
        assert_eq!(I64.wrap(i64::MIN as i128 - 1), i64::MAX as i128);
    }

    #[test]
    fn ranges() {
        assert_eq!(I16.int_min(), -32768);
        assert_eq!(I16.int_max(), 32767);
        assert_eq!(U16.int_max(), 65535);
        assert_eq!(U64.int_max(), u64::MAX as i128);
    }
}
