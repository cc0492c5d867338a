//! The pipelines of the repository (every `pipeline!` of the examples and
//! tests, as text) and random data for them, shared by the tests that run
//! them under many schedules.

#![allow(dead_code)]

use pipeline_core::interp::{Image, Value};
use pipeline_core::ir::{Pipeline, Type};
use std::path::Path;

pub mod compiled;
pub mod schedule;

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// The `pipeline!` invocations in a Rust file, as text.
pub fn invocations(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("pipeline! {") {
        let body = &rest[i + "pipeline! {".len()..];
        let mut depth = 1;
        let mut end = 0;
        for (k, ch) in body.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

/// The names of the pipelines (not templates) of an invocation.
pub fn pipeline_names(source: &str) -> Vec<String> {
    source
        .split("fn ")
        .skip(1)
        .filter_map(|s| {
            let name: String = s
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = &s[name.len()..];
            let ret = after.split('{').next().unwrap_or("");
            (!ret.contains("-> Func")).then_some(name)
        })
        .collect()
}

/// Removes every `schedule NAME { ... }` block of an invocation.
pub fn without_schedules(source: &str) -> String {
    let mut out = String::new();
    let mut rest = source;
    while let Some(i) = rest.find("schedule ") {
        out.push_str(&rest[..i]);
        let block = &rest[i..];
        let open = block.find('{').unwrap();
        let close = block[open..].find('}').unwrap() + open;
        rest = &block[close + 1..];
    }
    out.push_str(rest);
    out
}

pub fn random_image(ty: Type, min: Vec<i64>, shape: Vec<usize>, rng: &mut Rng) -> Image {
    let mut img = Image::new(ty, min, shape);
    for v in &mut img.data {
        let bits = rng.next();
        *v = match ty {
            Type::F32 => Value::F32((bits % 2000) as f32 / 1000.0 - 0.5),
            Type::F64 => Value::F64((bits % 2000) as f64 / 1000.0 - 0.5),
            Type::Bool => Value::Bool(bits & 1 == 1),
            t => Value::Int(t.wrap(bits as i128)),
        };
    }
    img
}

/// Random inputs of `p` over `[-1, w] x [-1, h] x ..` and its outputs over
/// `[1, w - 1] x [1, h - 1] x ..` (inputs are read past the output region).
pub fn images(p: &Pipeline, w: usize, h: usize, rng: &mut Rng) -> (Vec<Image>, Vec<Image>) {
    let extent = |d: usize| [w, h, 3, 2][d];
    let inputs = p
        .inputs
        .iter()
        .map(|i| {
            let shape = (0..i.dims).map(|d| extent(d) + 2).collect();
            random_image(i.ty, vec![-1; i.dims], shape, rng)
        })
        .collect();
    let outputs = p
        .outputs
        .iter()
        .map(|&o| {
            let f = &p.funcs[o];
            let shape = (0..f.dims()).map(|d| extent(d) - 1).collect();
            Image::new(f.ty, vec![1; f.dims()], shape)
        })
        .collect();
    (inputs, outputs)
}

/// The scalar parameters every run uses.
pub fn params_of(p: &Pipeline) -> Vec<Value> {
    p.params
        .iter()
        .map(|q| match q.ty {
            Type::F32 => Value::F32(1.25),
            Type::F64 => Value::F64(0.75),
            t => Value::Int(t.wrap(3)),
        })
        .collect()
}

/// Every pipeline of the repository's tests and examples.
pub fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in ["examples", "tests"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            if file.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            for inv in invocations(&text) {
                if inv.contains('$') {
                    continue; // inside a macro_rules! template
                }
                for name in pipeline_names(&without_schedules(&inv)) {
                    out.push((inv.clone(), name));
                }
            }
        }
    }
    out
}

/// Two images hold the same values, floats compared bit for bit.
pub fn same_bits(a: &Image, b: &Image) -> bool {
    a.data.len() == b.data.len()
        && a.data.iter().zip(&b.data).all(|(x, y)| match (x, y) {
            (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
            (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
            (x, y) => x == y,
        })
}
