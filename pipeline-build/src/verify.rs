//! Each candidate's outputs against the interpreter: the benchmark crate
//! writes the inputs and every candidate's outputs at a small size
//! (`bench`, `verify` mode); here they are read back and compared, integers
//! exactly and floats bit for bit (any NaN equals any NaN).

use pipeline_core::interp::{self, Image, Value};
use pipeline_core::ir::{Pipeline, Type};
use std::path::Path;

/// Reads `DIR/NAME.region` and `DIR/NAME.bin` as an image of `ty`.
fn read(dir: &Path, name: &str, ty: Type) -> Result<Image, String> {
    let region = std::fs::read_to_string(dir.join(format!("{name}.region")))
        .map_err(|e| format!("{name}.region: {e}"))?;
    let mut lines = region.lines();
    let numbers = |line: Option<&str>| -> Vec<i64> {
        line.unwrap_or("")
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect()
    };
    let min = numbers(lines.next());
    let shape: Vec<usize> = numbers(lines.next()).iter().map(|&s| s as usize).collect();
    let bytes =
        std::fs::read(dir.join(format!("{name}.bin"))).map_err(|e| format!("{name}.bin: {e}"))?;
    let size = if ty == Type::Bool {
        1
    } else {
        ty.bits() as usize / 8
    };
    let count: usize = shape.iter().product();
    if bytes.len() != count * size {
        return Err(format!(
            "{name}.bin holds {} bytes, not {count} values of {}",
            bytes.len(),
            ty.name()
        ));
    }
    let mut img = Image::new(ty, min, shape);
    img.data = bytes.chunks(size).map(|b| value(b, ty)).collect();
    Ok(img)
}

/// The little-endian value of `ty` in `b`.
fn value(b: &[u8], ty: Type) -> Value {
    let mut wide = [0u8; 16];
    wide[..b.len()].copy_from_slice(b);
    let raw = u128::from_le_bytes(wide);
    match ty {
        Type::Bool => Value::Bool(raw != 0),
        Type::F32 => Value::F32(f32::from_bits(raw as u32)),
        Type::F64 => Value::F64(f64::from_bits(raw as u64)),
        t if t.is_signed() => {
            // Sign-extend from the type's width.
            let shift = 128 - t.bits();
            Value::Int(((raw << shift) as i128) >> shift)
        }
        _ => Value::Int(raw as i128),
    }
}

/// Two values are the same: floats bit for bit, any NaN for any NaN.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (x, y) => x == y,
    }
}

/// The interpreter's outputs for the inputs the benchmark wrote in `dir`,
/// over the regions candidate `tag` wrote.
pub fn expected(
    p: &Pipeline,
    params: &[Value],
    dir: &Path,
    tag: usize,
) -> Result<Vec<Image>, String> {
    let inputs: Vec<Image> = p
        .inputs
        .iter()
        .enumerate()
        .map(|(k, i)| read(dir, &format!("in{k}"), i.ty))
        .collect::<Result<_, _>>()?;
    let mut outputs: Vec<Image> = p
        .outputs
        .iter()
        .enumerate()
        .map(|(k, &f)| {
            read(dir, &format!("{tag}_out{k}"), p.funcs[f].ty)
                .map(|o| Image::new(o.ty, o.min, o.shape))
        })
        .collect::<Result<_, _>>()?;
    interp::run(p, &inputs, params, &mut outputs)?;
    Ok(outputs)
}

/// Whether candidate `tag`'s outputs in `dir` equal `expected`: `Err` with
/// the first difference.
pub fn compare(p: &Pipeline, dir: &Path, tag: usize, expected: &[Image]) -> Result<(), String> {
    for (k, want) in expected.iter().enumerate() {
        let got = read(dir, &format!("{tag}_out{k}"), want.ty)?;
        if got.min != want.min || got.shape != want.shape {
            return Err(format!("output {k} covers another region"));
        }
        if let Some(i) = (0..want.data.len()).find(|&i| !same(&got.data[i], &want.data[i])) {
            let mut c = want.min.clone();
            let mut rest = i;
            for (c, &n) in c.iter_mut().zip(&want.shape) {
                *c += (rest % n) as i64;
                rest /= n;
            }
            return Err(format!(
                "output `{}` differs from the interpreter at {c:?}: {:?}, expected {:?}",
                p.funcs[p.outputs[k]].name, got.data[i], want.data[i]
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_written() {
        assert_eq!(value(&(-3i16).to_le_bytes(), Type::I16), Value::Int(-3));
        assert_eq!(value(&40000u16.to_le_bytes(), Type::U16), Value::Int(40000));
        assert_eq!(value(&(-1i64).to_le_bytes(), Type::I64), Value::Int(-1));
        assert_eq!(value(&[1], Type::Bool), Value::Bool(true));
        assert_eq!(value(&1.5f32.to_le_bytes(), Type::F32), Value::F32(1.5));
        assert!(same(&Value::F32(f32::NAN), &Value::F32(-f32::NAN)));
        assert!(!same(&Value::F32(0.0), &Value::F32(-0.0)));
    }
}
