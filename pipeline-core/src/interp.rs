//! The reference interpreter: evaluates a checked pipeline directly from its
//! definitions. It is the ground truth every schedule is tested against.
//!
//! It realizes every live func (nothing inlined) over the region bounds
//! inference gives it, in definition order, then applies the updates in
//! order over their reduction domains (first dimension innermost, pure
//! variables outermost). Arithmetic is written independently of the code
//! generator, on `i128` values wrapped into their type, so the two check each
//! other. A read outside a realized region is a bounds-inference bug and
//! panics with the func and coordinates.

use crate::analysis::bounds::{self, BoundsProgram};
use crate::ir::*;

/// A scalar value. Integers hold their value (already wrapped into the type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// Any integer type.
    Int(i128),
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
    /// `bool`.
    Bool(bool),
}

impl Value {
    pub(crate) fn int_value(self) -> i128 {
        self.int()
    }

    fn int(self) -> i128 {
        match self {
            Value::Int(v) => v,
            Value::Bool(b) => b as i128,
            other => panic!("internal error (interp): expected an integer, found {other:?}"),
        }
    }

    fn bool(self) -> bool {
        match self {
            Value::Bool(b) => b,
            other => panic!("internal error (interp): expected a bool, found {other:?}"),
        }
    }

    fn float(self) -> f64 {
        match self {
            Value::F32(v) => v as f64,
            Value::F64(v) => v,
            other => panic!("internal error (interp): expected a float, found {other:?}"),
        }
    }
}

/// A dense image of values with a region (x fastest).
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Element type.
    pub ty: Type,
    /// First coordinate per dimension.
    pub min: Vec<i64>,
    /// Extent per dimension.
    pub shape: Vec<usize>,
    /// Values in memory order.
    pub data: Vec<Value>,
}

impl Image {
    /// An image filled with zeros of `ty`.
    pub fn new(ty: Type, min: Vec<i64>, shape: Vec<usize>) -> Image {
        let zero = match ty {
            Type::F32 => Value::F32(0.0),
            Type::F64 => Value::F64(0.0),
            Type::Bool => Value::Bool(false),
            _ => Value::Int(0),
        };
        let n = shape.iter().product();
        Image {
            ty,
            min,
            shape,
            data: vec![zero; n],
        }
    }

    fn offset(&self, c: &[i64]) -> Option<usize> {
        let mut off = 0usize;
        let mut stride = 1usize;
        for ((&c, &min), &extent) in c.iter().zip(&self.min).zip(&self.shape) {
            let r = c - min;
            if r < 0 || r >= extent as i64 {
                return None;
            }
            off += r as usize * stride;
            stride *= extent;
        }
        Some(off)
    }

    /// The value at global coordinates, if inside.
    pub fn get(&self, c: &[i64]) -> Option<Value> {
        self.offset(c).map(|o| self.data[o])
    }

    /// Sets the value at global coordinates; false if outside.
    pub fn set(&mut self, c: &[i64], v: Value) -> bool {
        match self.offset(c) {
            Some(o) => {
                self.data[o] = v;
                true
            }
            None => false,
        }
    }

    fn region_text(min: &[i64], max: &[i64]) -> String {
        min.iter()
            .zip(max)
            .map(|(a, b)| format!("[{a}, {})", b + 1))
            .collect::<Vec<_>>()
            .join(" x ")
    }
}

pub(crate) struct Frame<'a> {
    vars: &'a [i128],
    rvars: &'a [i128],
    /// Values of the `let` bindings in scope, innermost last.
    lets: std::cell::RefCell<Vec<(usize, Value)>>,
    /// Values of loop variables (lowered statements only).
    loops: &'a [(LoopVar, i64)],
}

impl<'a> Frame<'a> {
    pub(crate) fn new(vars: &'a [i128], rvars: &'a [i128]) -> Frame<'a> {
        Frame {
            vars,
            rvars,
            lets: Default::default(),
            loops: &[],
        }
    }

    pub(crate) fn with_loops(
        vars: &'a [i128],
        rvars: &'a [i128],
        loops: &'a [(LoopVar, i64)],
    ) -> Frame<'a> {
        Frame {
            loops,
            ..Frame::new(vars, rvars)
        }
    }
}

pub(crate) struct Machine<'a> {
    pub(crate) p: &'a Pipeline,
    pub(crate) inputs: &'a [Image],
    pub(crate) params: &'a [Value],
    pub(crate) syms: Vec<i64>,
    pub(crate) funcs: Vec<Option<Image>>,
    /// Storage folding of each func's current buffer (empty: none).
    pub(crate) folds: Vec<Vec<Option<i64>>>,
}

impl<'a> Machine<'a> {
    /// A machine with the bounds program evaluated for these outputs (plus
    /// `extra_syms` symbols for lowered statements to bind), after checking
    /// every input covers what it must.
    pub(crate) fn prepare(
        p: &'a Pipeline,
        b: &BoundsProgram,
        inputs: &'a [Image],
        params: &'a [Value],
        outputs: &[Image],
        extra_syms: usize,
    ) -> Result<Machine<'a>, String> {
        let mut m = Machine {
            p,
            inputs,
            params,
            syms: vec![0; b.syms.len() + extra_syms],
            funcs: vec![None; p.funcs.len()],
            folds: vec![Vec::new(); p.funcs.len()],
        };
        for (k, region) in b.outputs.iter().enumerate() {
            for (d, &(lo, hi)) in region.iter().enumerate() {
                m.syms[lo] = outputs[k].min[d];
                m.syms[hi] = outputs[k].min[d] + outputs[k].shape[d] as i64 - 1;
            }
        }
        for (s, def) in b.syms.iter().enumerate() {
            if let Some(v) = &def.value {
                let frame = Frame::new(&[], &[]);
                m.syms[s] = m.eval(v, &frame).int() as i64;
            }
        }
        for (i, region) in b.inputs.iter().enumerate() {
            let (min, max): (Vec<i64>, Vec<i64>) =
                region.iter().map(|&(a, z)| (m.syms[a], m.syms[z])).unzip();
            if min.iter().zip(&max).any(|(a, z)| z < a) {
                continue;
            }
            let img = &inputs[i];
            let inside = (0..min.len())
                .all(|d| min[d] >= img.min[d] && max[d] < img.min[d] + img.shape[d] as i64);
            if !inside {
                let given: Vec<i64> = (0..min.len())
                    .map(|d| img.min[d] + img.shape[d] as i64 - 1)
                    .collect();
                return Err(format!(
                    "input `{}` is too small: needed {}, given {}",
                    p.inputs[i].name,
                    Image::region_text(&min, &max),
                    Image::region_text(&img.min, &given)
                ));
            }
        }
        Ok(m)
    }
}

/// Wraps folded coordinates into their storage.
pub(crate) fn fold_coords(c: &mut [i64], fold: &[Option<i64>]) {
    for (c, f) in c.iter_mut().zip(fold) {
        if let Some(n) = f {
            *c = c.rem_euclid(*n);
        }
    }
}

/// Runs a pipeline: `inputs` and `params` in declaration order, one output
/// image per output whose region (min and shape) says what to compute.
pub fn run(
    p: &Pipeline,
    inputs: &[Image],
    params: &[Value],
    outputs: &mut [Image],
) -> Result<(), String> {
    run_with(p, &bounds::infer(p), inputs, params, outputs)
}

/// [`run`] with a bounds program computed by the caller.
pub fn run_with(
    p: &Pipeline,
    b: &BoundsProgram,
    inputs: &[Image],
    params: &[Value],
    outputs: &mut [Image],
) -> Result<(), String> {
    if inputs.len() != p.inputs.len()
        || params.len() != p.params.len()
        || outputs.len() != p.outputs.len()
    {
        return Err("wrong number of inputs, params or outputs".into());
    }
    for (img, decl) in inputs.iter().zip(&p.inputs) {
        if img.ty != decl.ty || img.shape.len() != decl.dims {
            return Err(format!(
                "input `{}` has the wrong type or dimensions",
                decl.name
            ));
        }
    }
    if outputs.iter().all(|o| o.shape.contains(&0)) {
        return Ok(());
    }
    let mut m = Machine::prepare(p, b, inputs, params, outputs, 0)?;
    for f in p.live_funcs() {
        let region = &b.realized[f];
        let (min, max): (Vec<i64>, Vec<i64>) =
            region.iter().map(|&(a, z)| (m.syms[a], m.syms[z])).unzip();
        let shape: Vec<usize> = min
            .iter()
            .zip(&max)
            .map(|(a, z)| if z < a { 0 } else { (z - a + 1) as usize })
            .collect();
        if shape.iter().any(|&s| s > 0) && shape.iter().product::<usize>() > 1 << 28 {
            return Err(format!(
                "func `{}` needs a region too large to interpret",
                p.funcs[f].name
            ));
        }
        let func = &p.funcs[f];
        let mut img = Image::new(func.ty, min.clone(), shape.clone());
        for_each_point(&min, &shape, |c| {
            let vars: Vec<i128> = c.iter().map(|&v| v as i128).collect();
            let v = m.eval(&func.pure, &Frame::new(&vars, &[]));
            img.set(c, v);
        });
        m.funcs[f] = Some(img);
        for u in &func.updates {
            m.update(f, u, &b.consumed[f]);
        }
    }
    for (k, &f) in p.outputs.iter().enumerate() {
        let src = m.funcs[f].as_ref().expect("outputs are live");
        let out = &mut outputs[k];
        let (min, shape) = (out.min.clone(), out.shape.clone());
        for_each_point(&min, &shape, |c| {
            let v = src.get(c).unwrap_or_else(|| {
                panic!(
                    "internal error (interp): output `{}` not computed at {c:?}",
                    p.funcs[f].name
                )
            });
            out.set(c, v);
        });
    }
    Ok(())
}

/// Calls `f` for every point of a region, x fastest.
fn for_each_point(min: &[i64], shape: &[usize], mut f: impl FnMut(&[i64])) {
    if shape.contains(&0) {
        return;
    }
    let mut c: Vec<i64> = min.to_vec();
    loop {
        f(&c);
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

impl Machine<'_> {
    fn update(&mut self, f: FuncId, u: &Update, consumed: &[(SymId, SymId)]) {
        let frame0 = Frame::new(&[], &[]);
        let rmin: Vec<i64> = u
            .rdom
            .iter()
            .map(|r| self.eval(&r.min, &frame0).int() as i64)
            .collect();
        let rext: Vec<i64> = u
            .rdom
            .iter()
            .map(|r| self.eval(&r.extent, &frame0).int() as i64)
            .collect();
        if rext.iter().any(|&e| e <= 0) {
            return;
        }
        // Pure variables range over the consumed region where they appear.
        let dims = self.p.funcs[f].dims();
        let (mut pmin, mut pshape) = (vec![0i64; dims], vec![1usize; dims]);
        for d in 0..dims {
            if matches!(u.args[d].kind, ExprKind::Var(_)) {
                let (lo, hi) = (self.syms[consumed[d].0], self.syms[consumed[d].1]);
                if hi < lo {
                    return;
                }
                pmin[d] = lo;
                pshape[d] = (hi - lo + 1) as usize;
            }
        }
        let rshape: Vec<usize> = rext.iter().map(|&e| e as usize).collect();
        // Reduction variables innermost, pure variables outermost.
        for_each_point(&pmin.clone(), &pshape, |pc| {
            let vars: Vec<i128> = pc.iter().map(|&v| v as i128).collect();
            for_each_point(&rmin, &rshape, |rc| {
                let rvars: Vec<i128> = rc.iter().map(|&v| v as i128).collect();
                let frame = Frame::new(&vars, &rvars);
                let coords: Vec<i64> = u
                    .args
                    .iter()
                    .map(|a| self.eval(a, &frame).int() as i64)
                    .collect();
                let v = self.eval(&u.value, &frame);
                let img = self.funcs[f].as_mut().expect("realized before its updates");
                if !img.set(&coords, v) {
                    panic!(
                        "internal error (interp): update of `{}` writes {coords:?} outside its realized region (a bounds inference bug)",
                        self.p.funcs[f].name
                    );
                }
            });
        });
    }

    pub(crate) fn eval(&self, e: &Expr, fr: &Frame) -> Value {
        crate::deep(|| self.eval_here(e, fr))
    }

    fn eval_here(&self, e: &Expr, fr: &Frame) -> Value {
        use ExprKind as K;
        let ty = e.ty;
        match &e.kind {
            K::Int(v) => Value::Int(*v),
            K::Float(v) => float_value(ty, *v),
            K::Bool(b) => Value::Bool(*b),
            K::Var(d) => Value::Int(fr.vars[*d]),
            K::RVar(r) => Value::Int(fr.rvars[*r]),
            K::Param(i) => self.params[*i],
            K::InputMin(i, d) => Value::Int(Type::I32.wrap(self.inputs[*i].min[*d] as i128)),
            K::InputExtent(i, d) => Value::Int(Type::I32.wrap(self.inputs[*i].shape[*d] as i128)),
            K::Sym(s) => Value::Int(self.syms[*s] as i128),
            K::Loop(v) => Value::Int(
                fr.loops
                    .iter()
                    .rev()
                    .find(|(l, _)| l == v)
                    .unwrap_or_else(|| {
                        panic!("internal error (exec): loop {} is not running", v.name)
                    })
                    .1 as i128,
            ),
            K::LetVar(id) => fr
                .lets
                .borrow()
                .iter()
                .rev()
                .find(|(i, _)| i == id)
                .map(|(_, v)| *v)
                .unwrap_or_else(|| panic!("internal error (interp): let {id} is not in scope")),
            K::Let { id, value, body } => {
                let v = self.eval(value, fr);
                fr.lets.borrow_mut().push((*id, v));
                let r = self.eval(body, fr);
                fr.lets.borrow_mut().pop();
                r
            }
            K::Unary(op, a) => {
                let a = self.eval(a, fr);
                match (op, a) {
                    (UnOp::Neg, Value::Int(v)) => Value::Int(ty.wrap(-v)),
                    (UnOp::Neg, Value::F32(v)) => Value::F32(-v),
                    (UnOp::Neg, Value::F64(v)) => Value::F64(-v),
                    (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
                    (UnOp::Not, Value::Int(v)) => Value::Int(ty.wrap(!v)),
                    (UnOp::Abs, Value::Int(v)) => Value::Int(ty.wrap(v.abs())),
                    (UnOp::Abs, Value::F32(v)) => Value::F32(v.abs()),
                    (UnOp::Abs, Value::F64(v)) => Value::F64(v.abs()),
                    (op, a) => panic!("internal error (interp): {op:?} on {a:?}"),
                }
            }
            K::Binary(op, a, b) => {
                let (x, y) = (self.eval(a, fr), self.eval(b, fr));
                binary(*op, a.ty, x, y)
            }
            K::Select(c, a, b) => {
                if self.eval(c, fr).bool() {
                    self.eval(a, fr)
                } else {
                    self.eval(b, fr)
                }
            }
            K::Cast(a) => cast(ty, self.eval(a, fr), false),
            K::SaturatingCast(a) => cast(ty, self.eval(a, fr), true),
            K::Math(m, args) => {
                let arg = |i: usize| args.get(i).map_or(0.0, |a| self.eval(a, fr).float());
                let (x, y, z) = (arg(0), arg(1), arg(2));
                if ty == Type::F32 {
                    Value::F32(math_f32(*m, x as f32, y as f32, z as f32))
                } else {
                    Value::F64(math_f64(*m, x, y, z))
                }
            }
            K::Load { source, args, .. } => {
                let mut c: Vec<i64> = args.iter().map(|a| self.eval(a, fr).int() as i64).collect();
                if let Source::Func(f) = source {
                    fold_coords(&mut c, &self.folds[*f]);
                }
                match source {
                    Source::Input(i) => self.inputs[*i].get(&c).unwrap_or_else(|| {
                        panic!(
                            "internal error (interp): read of input `{}` at {c:?} outside the checked region (a bounds inference bug)",
                            self.p.inputs[*i].name
                        )
                    }),
                    Source::Func(f) => {
                        let img = self.funcs[*f].as_ref().unwrap_or_else(|| {
                            panic!("internal error (interp): `{}` read before it is computed", self.p.funcs[*f].name)
                        });
                        img.get(&c).unwrap_or_else(|| {
                            panic!(
                                "internal error (interp): read of `{}` at {c:?} outside its realized region {:?}+{:?} (a bounds inference bug)",
                                self.p.funcs[*f].name, img.min, img.shape
                            )
                        })
                    }
                }
            }
            K::Boundary {
                mode,
                coord,
                min,
                extent,
            } => {
                let c = self.eval(coord, fr).int() as i64;
                let lo = self.eval(min, fr).int() as i64;
                let n = self.eval(extent, fr).int() as i64;
                Value::Int(boundary(*mode, c, lo, n) as i128)
            }
        }
    }
}

/// Maps a coordinate into `[min, min + n)` (the guide's *Boundary conditions*, `pipeline::guide::language`).
pub fn boundary(mode: BoundaryMode, c: i64, min: i64, n: i64) -> i64 {
    if n <= 0 {
        return min;
    }
    let r = c - min;
    let m = match mode {
        BoundaryMode::ClampEdge | BoundaryMode::GuardedClamp => r.clamp(0, n - 1),
        BoundaryMode::Wrap => r.rem_euclid(n),
        BoundaryMode::Mirror => {
            let m = r.rem_euclid(2 * n);
            if m < n {
                m
            } else {
                2 * n - 1 - m
            }
        }
        BoundaryMode::MirrorInterior => {
            if n == 1 {
                0
            } else {
                let m = r.rem_euclid(2 * n - 2);
                if m < n {
                    m
                } else {
                    2 * n - 2 - m
                }
            }
        }
    };
    min + m
}

fn float_value(ty: Type, v: f64) -> Value {
    if ty == Type::F32 {
        Value::F32(v as f32)
    } else {
        Value::F64(v)
    }
}

fn binary(op: BinOp, ty: Type, x: Value, y: Value) -> Value {
    use BinOp as B;
    match (x, y) {
        (Value::Bool(a), Value::Bool(b)) => Value::Bool(match op {
            B::And => a & b,
            B::Or => a | b,
            B::Xor => a ^ b,
            B::Eq => a == b,
            B::Ne => a != b,
            B::Lt => !a & b,
            B::Le => a <= b,
            B::Gt => a & !b,
            B::Ge => a >= b,
            _ => panic!("internal error (interp): {op:?} on bools"),
        }),
        (Value::Int(a), Value::Int(b)) => {
            let bits = ty.bits() as i128;
            let v = match op {
                B::Add => a + b,
                B::Sub => a - b,
                B::Mul => a.wrapping_mul(b),
                B::Div => {
                    if b == 0 {
                        0
                    } else {
                        a.div_euclid(b)
                    }
                }
                B::Rem => {
                    if b == 0 {
                        0
                    } else {
                        a.rem_euclid(b)
                    }
                }
                B::Min => a.min(b),
                B::Max => a.max(b),
                B::And => a & b,
                B::Or => a | b,
                B::Xor => a ^ b,
                B::Shl => a << b.rem_euclid(bits),
                B::Shr => a >> b.rem_euclid(bits),
                B::Eq => return Value::Bool(a == b),
                B::Ne => return Value::Bool(a != b),
                B::Lt => return Value::Bool(a < b),
                B::Le => return Value::Bool(a <= b),
                B::Gt => return Value::Bool(a > b),
                B::Ge => return Value::Bool(a >= b),
            };
            Value::Int(ty.wrap(v))
        }
        (Value::F32(a), Value::F32(b)) => match float_op(op, a as f64, b as f64, |a, b, op| {
            f32_op(op, a as f32, b as f32) as f64
        }) {
            Ok(v) => Value::F32(v as f32),
            Err(c) => Value::Bool(c),
        },
        (Value::F64(a), Value::F64(b)) => match float_op(op, a, b, |a, b, op| f64_op(op, a, b)) {
            Ok(v) => Value::F64(v),
            Err(c) => Value::Bool(c),
        },
        (x, y) => panic!("internal error (interp): {op:?} on {x:?} and {y:?}"),
    }
}

/// Float arithmetic, once per float type; `%` is the floored remainder.
macro_rules! arith {
    ($name:ident, $t:ty) => {
        fn $name(op: BinOp, a: $t, b: $t) -> $t {
            match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a * b,
                BinOp::Div => a / b,
                BinOp::Rem => a - b * (a / b).floor(),
                // As `rt::FloatOps::min_f`: NaN ignored, the first on ties.
                BinOp::Min => {
                    if b < a || a.is_nan() {
                        b
                    } else {
                        a
                    }
                }
                _ => {
                    if b > a || a.is_nan() {
                        b
                    } else {
                        a
                    }
                }
            }
        }
    };
}
arith!(f32_op, f32);
arith!(f64_op, f64);

/// Comparisons give `Err(bool)`, arithmetic `Ok(value)` computed by `arith`.
fn float_op(
    op: BinOp,
    a: f64,
    b: f64,
    arith: impl Fn(f64, f64, BinOp) -> f64,
) -> Result<f64, bool> {
    match op {
        BinOp::Eq => Err(a == b),
        BinOp::Ne => Err(a != b),
        BinOp::Lt => Err(a < b),
        BinOp::Le => Err(a <= b),
        BinOp::Gt => Err(a > b),
        BinOp::Ge => Err(a >= b),
        BinOp::Add
        | BinOp::Sub
        | BinOp::Mul
        | BinOp::Div
        | BinOp::Rem
        | BinOp::Min
        | BinOp::Max => Ok(arith(a, b, op)),
        _ => panic!("internal error (interp): {op:?} on floats"),
    }
}

/// The float built-ins, once per float type (both call Rust's own methods,
/// exactly as generated code does).
macro_rules! math {
    ($name:ident, $t:ty) => {
        fn $name(m: MathFn, x: $t, y: $t, z: $t) -> $t {
            match m {
                MathFn::Sqrt => x.sqrt(),
                MathFn::Exp | MathFn::FastExp => x.exp(),
                MathFn::Log | MathFn::FastLog => x.ln(),
                MathFn::Pow => x.powf(y),
                MathFn::Sin => x.sin(),
                MathFn::Cos => x.cos(),
                MathFn::Tan => x.tan(),
                MathFn::Atan2 => x.atan2(y),
                MathFn::Floor => x.floor(),
                MathFn::Ceil => x.ceil(),
                MathFn::Round => x.round(),
                MathFn::Trunc => x.trunc(),
                MathFn::Fma => x.mul_add(y, z),
            }
        }
    };
}
math!(math_f32, f32);
math!(math_f64, f64);

/// Rust `as` (and saturating_cast when `saturate`) between DSL types.
fn cast(to: Type, v: Value, saturate: bool) -> Value {
    match v {
        Value::Bool(b) => {
            if to.is_float() {
                float_value(to, b as i32 as f64)
            } else {
                Value::Int(b as i128)
            }
        }
        Value::Int(i) => {
            if to.is_float() {
                // Rust rounds integer-to-float conversions to nearest, from any width.
                if to == Type::F32 {
                    Value::F32(i as f32)
                } else {
                    Value::F64(i as f64)
                }
            } else if to == Type::Bool {
                Value::Bool(i != 0)
            } else if saturate {
                Value::Int(i.clamp(to.int_min(), to.int_max()))
            } else {
                Value::Int(to.wrap(i))
            }
        }
        Value::F32(f) => float_to(to, f as f64, Some(f), saturate),
        Value::F64(f) => float_to(to, f, None, saturate),
    }
}

fn float_to(to: Type, f: f64, as_f32: Option<f32>, saturate: bool) -> Value {
    match to {
        Type::F32 => {
            let v = match as_f32 {
                Some(x) => x,
                None if saturate && !f.is_nan() => f.clamp(f32::MIN as f64, f32::MAX as f64) as f32,
                None => f as f32,
            };
            Value::F32(v)
        }
        Type::F64 => Value::F64(f),
        // Float to int `as` saturates and maps NaN to 0 (so does saturating_cast).
        Type::U8 => Value::Int(f as u8 as i128),
        Type::U16 => Value::Int(f as u16 as i128),
        Type::U32 => Value::Int(f as u32 as i128),
        Type::U64 => Value::Int(f as u64 as i128),
        Type::I8 => Value::Int(f as i8 as i128),
        Type::I16 => Value::Int(f as i16 as i128),
        Type::I32 => Value::Int(f as i32 as i128),
        Type::I64 => Value::Int(f as i64 as i128),
        Type::Bool => Value::Bool(f != 0.0),
    }
}
