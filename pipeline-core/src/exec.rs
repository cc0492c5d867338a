//! Executes lowered loop nests directly, without compiling them: the same
//! statements code generation emits, run by the interpreter's arithmetic.
//!
//! This lets tests check loop synthesis (splits, tails, compute_at, sliding
//! windows, storage folding) for many schedules in one process, against the
//! reference interpreter. Parallel loops run in order, which is one of the
//! orders their iterations may take; every store must land inside the buffer
//! allocated for it, every read inside what was computed (unwritten points
//! hold a poison value that makes the comparison fail).

use crate::interp::{fold_coords, Frame, Image, Machine, Value};
use crate::ir::*;
use crate::Lowered;

/// Runs a lowered pipeline: `inputs` and `params` in declaration order, one
/// output image per output, whose region says what to compute.
pub fn run_lowered(
    l: &Lowered,
    inputs: &[Image],
    params: &[Value],
    outputs: &mut [Image],
) -> Result<(), String> {
    let p = &l.pipeline;
    let b = &l.bounds;
    if outputs.iter().all(|o| o.shape.contains(&0)) {
        return Ok(());
    }
    let mut m = Machine::prepare(p, b, inputs, params, outputs, l.local_syms())?;
    // Outputs written in place are their own buffers.
    for (k, &f) in p.outputs.iter().enumerate() {
        if crate::lower::loops::writes_output_directly(p, f) {
            m.funcs[f] = Some(outputs[k].clone());
        }
    }
    let mut x = Exec {
        m,
        loops: Vec::new(),
        coords: Vec::new(),
        outputs,
    };
    x.stmt(&l.body);
    for (k, &f) in p.outputs.iter().enumerate() {
        if crate::lower::loops::writes_output_directly(p, f) {
            x.outputs[k] = x.m.funcs[f].take().expect("the output buffer");
        }
    }
    Ok(())
}

/// The values of the bounds program's symbols for these inputs and
/// outputs, as the generated entry computes them (for tests that run the
/// CUDA emitter's launchers, which take them from the Rust entry).
pub fn global_symbols(
    l: &Lowered,
    inputs: &[Image],
    params: &[Value],
    outputs: &[Image],
) -> Result<Vec<i64>, String> {
    let m = Machine::prepare(&l.pipeline, &l.bounds, inputs, params, outputs, 0)?;
    Ok(m.syms)
}

struct Exec<'a, 'o> {
    m: Machine<'a>,
    loops: Vec<(LoopVar, i64)>,
    coords: Vec<(Coord, i128)>,
    outputs: &'o mut [Image],
}

/// A value no pipeline computes by accident, marking unwritten points.
fn poison(ty: Type) -> Value {
    match ty {
        Type::F32 => Value::F32(f32::from_bits(0x7fc0_dead)),
        Type::F64 => Value::F64(f64::from_bits(0x7ff8_0000_dead_beef)),
        Type::Bool => Value::Bool(true),
        t => Value::Int(t.wrap(0x5eed_dead_beef)),
    }
}

impl Exec<'_, '_> {
    fn eval(&self, e: &Expr) -> i64 {
        self.m
            .eval(e, &Frame::with_loops(&[], &[], &self.loops))
            .int_value() as i64
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } => {
                let (min, max): (Vec<i64>, Vec<i64>) = region
                    .iter()
                    .map(|(a, z)| (self.eval(a), self.eval(z)))
                    .unzip();
                let shape: Vec<usize> = min
                    .iter()
                    .zip(&max)
                    .map(|(a, z)| if z < a { 0 } else { (z - a + 1) as usize })
                    .collect();
                assert!(
                    shape.iter().product::<usize>() <= 1 << 26,
                    "exec: allocation of {} too large: {shape:?}",
                    self.m.p.funcs[*func].name
                );
                let ty = self.m.p.funcs[*func].ty;
                let mut img = Image::new(ty, min, shape);
                img.data.iter_mut().for_each(|v| *v = poison(ty));
                let saved = (
                    self.m.funcs[*func].replace(img),
                    std::mem::replace(&mut self.m.folds[*func], fold.clone()),
                );
                self.stmt(body);
                self.m.funcs[*func] = saved.0;
                self.m.folds[*func] = saved.1;
            }
            Stmt::For {
                var,
                min,
                max,
                body,
                ..
            } => {
                let (lo, hi) = (self.eval(min), self.eval(max));
                let mut v = lo;
                while v <= hi {
                    self.loops.push((var.clone(), v));
                    self.stmt(body);
                    self.loops.pop();
                    v += 1;
                }
            }
            Stmt::LetSym { sym, value, body } => {
                self.m.syms[*sym] = self.eval(value);
                self.stmt(body);
            }
            Stmt::LetCoord { coord, value, body } => {
                // Generated code binds coordinates as i32.
                let v = Type::I32.wrap(self.eval(value) as i128);
                self.coords.push((*coord, v));
                self.stmt(body);
                self.coords.pop();
            }
            Stmt::If { cond, body } => {
                let c = self.m.eval(cond, &Frame::with_loops(&[], &[], &self.loops));
                if c == Value::Bool(true) {
                    self.stmt(body);
                }
            }
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => {
                let f = *func;
                let dims = self.m.p.funcs[f].dims();
                let find = |c: Coord| {
                    self.coords
                        .iter()
                        .rev()
                        .find(|(k, _)| *k == c)
                        .map(|(_, v)| *v)
                        .unwrap_or(0)
                };
                let vars: Vec<i128> = (0..dims).map(|d| find(Coord::Pure(f, d))).collect();
                let rvars: Vec<i128> = match update {
                    Some(k) => (0..self.m.p.funcs[f].updates[*k].rdom.len())
                        .map(|r| find(Coord::Reduction(f, *k, r)))
                        .collect(),
                    None => Vec::new(),
                };
                let frame = Frame::with_loops(&vars, &rvars, &self.loops);
                let mut c: Vec<i64> = args
                    .iter()
                    .map(|a| self.m.eval(a, &frame).int_value() as i64)
                    .collect();
                let v = self.m.eval(value, &frame);
                fold_coords(&mut c, &self.m.folds[f]);
                let name = &self.m.p.funcs[f].name;
                let img = self.m.funcs[f]
                    .as_mut()
                    .unwrap_or_else(|| panic!("exec: store to `{name}` without a buffer"));
                assert!(
                    img.set(&c, v),
                    "exec: store to `{name}` at {c:?} outside its buffer {:?}+{:?}",
                    img.min,
                    img.shape
                );
            }
            Stmt::CopyToOutput { func, output } => {
                let src = self.m.funcs[*func]
                    .as_ref()
                    .expect("computed before it is copied");
                let out = &mut self.outputs[*output];
                let (min, shape) = (out.min.clone(), out.shape.clone());
                let mut c = min.clone();
                if shape.contains(&0) {
                    return;
                }
                loop {
                    out.set(&c, src.get(&c).expect("the output region was computed"));
                    let mut d = 0;
                    loop {
                        if d == c.len() {
                            return;
                        }
                        c[d] += 1;
                        if c[d] < min[d] + shape[d] as i64 {
                            break;
                        }
                        c[d] = min[d];
                        d += 1;
                    }
                }
            }
            Stmt::Block(v) => v.iter().for_each(|s| self.stmt(s)),
        }
    }
}
