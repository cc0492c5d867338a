//! What the auto-scheduler assumes: the machine it cuts work for and the
//! sizes of the images.
//!
//! Nothing here reads the build machine: the same source and the same
//! `PIPELINE_MACHINE` give the same schedule on any computer, so builds stay
//! reproducible. Sizes are unknown at compile time; without an
//! `estimate(..)` every input is taken to be a large image (3840x2160, 3
//! channels) and every func's region follows from bounds inference.

use crate::analysis::bounds::BoundsProgram;
use crate::analysis::simplify::{fold_comparison, fold_constants, fold_int};
use crate::ir::{BinOp, Expr, ExprKind, FuncId, Pipeline, Type, UnOp};

/// The machine the schedule is cut for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// How many threads the parallel loops should keep busy: strips are cut
    /// so that each thread gets at least four (the thread pool itself is
    /// sized at run time).
    pub threads: usize,
    /// The width of the vector registers the kernels are written for, in
    /// bytes (64: AVX-512, whose kernel is built beside the AVX2 one; 32:
    /// AVX2 alone, which builds faster).
    pub vector_bytes: usize,
    /// The cache a fused group's rows should stay in, in bytes (a per-core
    /// L2): a group whose rows need more is cut into column tiles.
    pub l2_bytes: usize,
}

impl Default for Machine {
    /// A current x86 server core: AVX-512 registers, 1 MiB of L2, 16
    /// threads. Lanes for 64-byte registers also serve AVX2-only
    /// processors (a vector is two registers there): timed on a Xeon
    /// against 32-byte lanes, the comparison's eight pipelines ran at
    /// 0.93-1.06 of that time at its AVX2 level and 0.83-0.99 at its
    /// AVX-512 level, save the bilateral grid (1.10). A release build
    /// pays for the AVX-512 kernel (a 30-func chain: 3.0 s, not 2.0 s).
    fn default() -> Machine {
        Machine {
            threads: 16,
            vector_bytes: 64,
            l2_bytes: 1 << 20,
        }
    }
}

/// The environment variable that overrides the machine model at build time.
pub const MACHINE_ENV: &str = "PIPELINE_MACHINE";

impl Machine {
    /// Parses `threads=16,vector_bytes=32,l2=1M` (any subset, in any order;
    /// sizes take a `K` or `M` suffix) over the defaults.
    pub fn parse(spec: &str) -> Result<Machine, String> {
        let mut m = Machine::default();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!("`{part}` is not `key=value`"));
            };
            let number = parse_size(value.trim())
                .ok_or_else(|| format!("`{value}` is not a size (e.g. `16`, `512K`, `1M`)"))?;
            match key.trim() {
                "threads" if (1..=4096).contains(&number) => m.threads = number,
                "vector_bytes" if [16, 32, 64].contains(&number) => m.vector_bytes = number,
                "l2" if (16 << 10..=1 << 30).contains(&number) => m.l2_bytes = number,
                "threads" => return Err("`threads` is between 1 and 4096".into()),
                "vector_bytes" => return Err("`vector_bytes` is 16, 32 or 64".into()),
                "l2" => return Err("`l2` is between 16K and 1024M".into()),
                other => {
                    return Err(format!(
                        "unknown key `{other}`; the keys are threads, vector_bytes and l2"
                    ))
                }
            }
        }
        Ok(m)
    }

    /// The model `PIPELINE_MACHINE` describes, or the default when it is unset.
    pub fn from_env() -> Result<Machine, String> {
        match std::env::var(MACHINE_ENV) {
            Ok(spec) => Machine::parse(&spec).map_err(|e| format!("{MACHINE_ENV}=\"{spec}\": {e}")),
            Err(_) => Ok(Machine::default()),
        }
    }

    /// The model in `PIPELINE_MACHINE` syntax.
    pub fn describe(&self) -> String {
        format!(
            "threads={},vector_bytes={},l2={}K",
            self.threads,
            self.vector_bytes,
            self.l2_bytes >> 10
        )
    }
}

fn parse_size(s: &str) -> Option<usize> {
    let (digits, scale) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(scale)
}

/// The sizes the user states with `estimate(name, extents..)`, by input and
/// by func.
#[derive(Clone, Debug, Default)]
pub struct Estimates {
    /// Per input: its extents, when estimated.
    pub inputs: Vec<Option<Vec<i64>>>,
    /// Per func (outputs): its extents, when estimated.
    pub funcs: Vec<Option<Vec<i64>>>,
}

/// The extents assumed of an input of `dims` dimensions nobody estimated: a
/// 4K image, 3 channels, or a million samples.
fn default_input(dims: usize) -> Vec<i64> {
    match dims {
        1 => vec![1 << 20],
        _ => (0..dims).map(|d| [3840, 2160, 3, 1][d.min(3)]).collect(),
    }
}

/// Estimated regions: per func, the extent of each dimension it is realized
/// over (0 where it is not live or the size cannot be told).
pub struct Regions {
    /// Per func, per dimension.
    pub extents: Vec<Vec<i64>>,
}

/// A value [`evaluate`] computed.
enum Known {
    Int(i128),
    Bool(bool),
}

/// `e` with every symbol known (`syms`), input extents from `inputs` and
/// input minima and parameters 0, evaluated exactly as substituting them
/// and folding constants would; `None` where that would not give a
/// constant by those rules alone (a symbol unknown, an overflow, a float),
/// which the caller then folds.
fn evaluate(e: &Expr, syms: &[Option<i64>], inputs: &[Vec<i64>]) -> Option<Known> {
    crate::deep(|| evaluate_here(e, syms, inputs))
}

fn evaluate_here(e: &Expr, syms: &[Option<i64>], inputs: &[Vec<i64>]) -> Option<Known> {
    let ty = e.ty;
    let int = |v: i128| ty.is_int().then(|| Known::Int(ty.wrap(v)));
    let int_of = |e: &Expr| match evaluate(e, syms, inputs)? {
        Known::Int(v) => Some(v),
        Known::Bool(_) => None,
    };
    match &e.kind {
        ExprKind::Int(v) => int(*v),
        ExprKind::Bool(b) => Some(Known::Bool(*b)),
        ExprKind::Sym(s) => int(syms.get(*s).copied().flatten()? as i128),
        ExprKind::InputExtent(i, d) => int(inputs[*i][*d] as i128),
        ExprKind::InputMin(..) | ExprKind::Param(_) => int(0),
        ExprKind::Binary(op, a, b) if a.ty.is_int() => {
            let (x, y) = (int_of(a)?, int_of(b)?);
            if ty.is_int() {
                return fold_int(*op, ty, x, y).map(Known::Int);
            }
            fold_comparison(*op, x, y).map(Known::Bool)
        }
        ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) if ty == Type::Bool => {
            match (evaluate(a, syms, inputs)?, evaluate(b, syms, inputs)?) {
                (Known::Bool(x), Known::Bool(y)) => {
                    Some(Known::Bool(if *op == BinOp::And { x && y } else { x || y }))
                }
                _ => None,
            }
        }
        // Substitution fails on an unknown symbol in either branch.
        ExprKind::Select(c, a, b) => {
            let (taken, other) = match evaluate(c, syms, inputs)? {
                Known::Bool(true) => (a, b),
                Known::Bool(false) => (b, a),
                Known::Int(_) => return None,
            };
            if reads_unknown(other, syms) {
                return None;
            }
            evaluate(taken, syms, inputs)
        }
        ExprKind::Cast(a) if a.ty.is_int() => int(int_of(a)?),
        ExprKind::Unary(UnOp::Neg, a) => int(-int_of(a)?),
        _ => None,
    }
}

/// The value of `e` with every symbol known (`syms`), input extents from
/// `inputs` and input minima and parameters 0: `None` when a symbol it
/// reads is unknown or it does not fold to an `i64`.
fn value_of(e: &Expr, syms: &[Option<i64>], inputs: &[Vec<i64>]) -> Option<i64> {
    // Most values are integer arithmetic on known symbols: evaluated
    // directly, as folding would, without rewriting the tree.
    match evaluate(e, syms, inputs) {
        Some(Known::Int(v)) => i64::try_from(v).ok(),
        Some(Known::Bool(_)) => None,
        // Substitution would fail too, after rebuilding the whole tree.
        None if reads_unknown(e, syms) => None,
        None => substitute_and_fold(e, syms, inputs),
    }
}

/// Whether `e` reads a symbol whose value is unknown.
fn reads_unknown(e: &Expr, syms: &[Option<i64>]) -> bool {
    e.any(&mut |n| matches!(n.kind, ExprKind::Sym(s) if syms.get(s).copied().flatten().is_none()))
}

/// [`value_of`] by substituting the values and folding constants.
fn substitute_and_fold(e: &Expr, syms: &[Option<i64>], inputs: &[Vec<i64>]) -> Option<i64> {
    let mut unknown = false;
    let e = e.rewrite(&mut |n| match &n.kind {
        ExprKind::Sym(s) => match syms.get(*s).copied().flatten() {
            Some(v) => Expr::int(n.ty, v as i128),
            None => {
                unknown = true;
                n
            }
        },
        ExprKind::InputExtent(i, d) => Expr::int(n.ty, inputs[*i][*d] as i128),
        ExprKind::InputMin(..) | ExprKind::Param(_) => Expr::int(n.ty, 0),
        _ => n,
    });
    if unknown {
        return None;
    }
    fold_constants(&e)
        .as_int()
        .and_then(|v| i64::try_from(v).ok())
}

/// Evaluates `p`'s bounds program `b` for the estimated sizes.
pub fn estimate_regions(p: &Pipeline, b: &BoundsProgram, est: &Estimates) -> Regions {
    let inputs: Vec<Vec<i64>> = p
        .inputs
        .iter()
        .enumerate()
        .map(|(i, inp)| {
            est.inputs
                .get(i)
                .cloned()
                .flatten()
                .unwrap_or_else(|| default_input(inp.dims))
        })
        .collect();
    let leaves = |e: &Expr, syms: &[Option<i64>]| value_of(e, syms, &inputs);
    let mut syms: Vec<Option<i64>> = vec![None; b.syms.len()];
    // The outputs' regions: estimated, else their natural extents.
    for (k, region) in b.outputs.iter().enumerate() {
        let f = p.outputs[k];
        let func = &p.funcs[f];
        for (d, &(lo, hi)) in region.iter().enumerate() {
            let extent = est
                .funcs
                .get(f)
                .cloned()
                .flatten()
                .map(|e| e[d])
                .or_else(|| {
                    func.natural_extent
                        .get(d)
                        .cloned()
                        .flatten()
                        .and_then(|e| leaves(&e, &syms))
                })
                .or_else(|| inputs.iter().find(|i| i.len() > d).map(|i| i[d]))
                .unwrap_or(1)
                .max(0);
            syms[lo] = Some(0);
            syms[hi] = Some(extent - 1);
        }
    }
    for (s, def) in b.syms.iter().enumerate() {
        if let Some(v) = &def.value {
            syms[s] = leaves(v, &syms);
        }
    }
    let extents = (0..p.funcs.len())
        .map(|f: FuncId| {
            b.realized[f]
                .iter()
                .map(|&(lo, hi)| match (syms[lo], syms[hi]) {
                    (Some(a), Some(z)) if z >= a => z.saturating_sub(a).saturating_add(1),
                    _ => 0,
                })
                .collect()
        })
        .collect();
    Regions { extents }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// An integer expression of `depth` levels over symbols 0..4 (symbol 3
    /// unknown), the first input's extents, a parameter, and constants
    /// large enough to overflow and to wrap a cast to `i32`.
    fn random_expr(r: &mut Rng, depth: u32) -> Expr {
        let ty = Type::I64;
        if depth == 0 || r.next(4) == 0 {
            return match r.next(5) {
                0 => Expr::sym(r.next(4) as usize),
                1 => Expr::new(ExprKind::InputExtent(0, r.next(2) as usize), ty),
                2 => Expr::new(ExprKind::Param(0), ty),
                3 => Expr::int(
                    ty,
                    [0, 1, -3, 7, 1 << 40, i64::MAX as i128][r.next(6) as usize],
                ),
                _ => Expr::new(ExprKind::InputMin(0, 0), ty),
            };
        }
        let (a, b) = (random_expr(r, depth - 1), random_expr(r, depth - 1));
        match r.next(12) {
            0 => Expr::binary(BinOp::Add, a, b),
            1 => Expr::binary(BinOp::Sub, a, b),
            2 => Expr::binary(BinOp::Mul, a, b),
            3 => Expr::binary(BinOp::Div, a, b),
            4 => Expr::binary(BinOp::Rem, a, b),
            5 => Expr::binary(BinOp::Min, a, b),
            6 => Expr::binary(BinOp::Max, a, b),
            7 => {
                let op = [BinOp::Lt, BinOp::Ge, BinOp::Eq][r.next(3) as usize];
                let c = Expr::binary(op, a.clone(), b.clone());
                let c = match r.next(3) {
                    0 => Expr::binary(BinOp::And, c, Expr::binary(BinOp::Le, b.clone(), a.clone())),
                    _ => c,
                };
                Expr::select(c, a, b)
            }
            8 => Expr::cast(Type::I64, Expr::cast(Type::I32, a)),
            9 => Expr::new(ExprKind::Unary(UnOp::Neg, Arc::new(a)), ty),
            10 => Expr::cast(Type::I64, Expr::cast(Type::F32, a)),
            _ => Expr::binary(BinOp::Max, Expr::binary(BinOp::Min, a, b), Expr::int(ty, 0)),
        }
    }

    /// The direct evaluation gives what substituting and folding gives,
    /// or leaves the expression to it.
    #[test]
    fn evaluation_agrees_with_folding() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let syms = [Some(5), Some(-2), Some(i64::MAX - 3), None];
        let inputs = vec![vec![640, 480]];
        let (mut direct, mut total) = (0, 0);
        for _ in 0..20_000 {
            let e = random_expr(&mut r, 5);
            let folded = substitute_and_fold(&e, &syms, &inputs);
            match evaluate(&e, &syms, &inputs) {
                Some(Known::Int(v)) => {
                    assert_eq!(i64::try_from(v).ok(), folded, "{e:?}");
                    direct += 1;
                }
                Some(Known::Bool(_)) => unreachable!("an i64 expression"),
                None => {}
            }
            assert_eq!(value_of(&e, &syms, &inputs), folded, "{e:?}");
            total += 1;
        }
        // Most are evaluated directly (the rest read the unknown symbol, a
        // float, or overflow).
        assert!(direct * 4 > total, "{direct} of {total}");
    }
}
