//! What the auto-scheduler assumes: the machine it cuts work for and the
//! sizes of the images.
//!
//! Nothing here reads the build machine: the same source and the same
//! `PIPELINE_MACHINE` give the same schedule on any computer, so builds stay
//! reproducible. Sizes are unknown at compile time; without an
//! `estimate(..)` every input is taken to be a large image (3840x2160, 3
//! channels) and every func's region follows from bounds inference.

use crate::analysis::bounds::{infer_bounded, BoundsProgram};
use crate::analysis::simplify::fold_constants;
use crate::ir::{Expr, ExprKind, FuncId, Pipeline};

/// The machine the schedule is cut for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// How many threads the parallel loops should keep busy: strips are cut
    /// so that each thread gets at least four (the thread pool itself is
    /// sized at run time).
    pub threads: usize,
    /// The width of the vector registers the kernels are written for, in
    /// bytes (32: AVX2; 64 makes an AVX-512 kernel too).
    pub vector_bytes: usize,
    /// The cache a fused group's rows should stay in, in bytes (a per-core
    /// L2): a group whose rows need more is cut into column tiles.
    pub l2_bytes: usize,
}

impl Default for Machine {
    /// A current x86 server core: AVX2 registers, 1 MiB of L2, 16 threads.
    fn default() -> Machine {
        Machine {
            threads: 16,
            vector_bytes: 32,
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

/// Evaluates bounds inference for the estimated sizes.
pub fn estimate_regions(
    p: &Pipeline,
    fixed: &[Vec<(usize, i64, i64)>],
    est: &Estimates,
) -> Regions {
    let b: BoundsProgram = infer_bounded(p, fixed);
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
    let leaves = |e: &Expr, syms: &[Option<i64>]| -> Option<i64> {
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
    };
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
