//! The schedule of a pipeline: per func, where it is computed and the loop
//! nest of its pure stage (splits and the order and kind of every loop).
//!
//! Loop dimensions are listed innermost first, as in Halide's `reorder`.
//!
//! ```text
//! out.split(y, yo, yi, 32).parallel(yo)
//!   => out: splits [y -> yo, yi by 32], dims [x serial, yi serial, yo parallel]
//! ```

use crate::ir::{FuncId, Pipeline};

/// How a loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    /// In order.
    Serial,
    /// Iterations on rayon's threads.
    Parallel,
    /// A vector loop (its extent is constant; codegen/rust/vector.rs).
    Vectorized,
    /// An unrolled loop (its extent is constant).
    Unrolled,
    /// Iterations on the blocks of a CUDA grid (a `for cuda` schedule):
    /// the innermost such loop of a kernel is `blockIdx.x`, the next `y`,
    /// then `z`.
    GpuBlock,
    /// Iterations on the threads of a CUDA block, innermost `threadIdx.x`.
    GpuThread,
}

impl LoopKind {
    /// The directive that asks for this kind.
    pub fn directive(self) -> &'static str {
        match self {
            LoopKind::Serial => "serial",
            LoopKind::Parallel => "parallel",
            LoopKind::Vectorized => "vectorize",
            LoopKind::Unrolled => "unroll",
            LoopKind::GpuBlock => "gpu_blocks",
            LoopKind::GpuThread => "gpu_threads",
        }
    }

    /// Whether the loop runs on a GPU.
    pub fn is_gpu(self) -> bool {
        matches!(self, LoopKind::GpuBlock | LoopKind::GpuThread)
    }

    /// Whether its iterations may run at the same time (on threads or
    /// a GPU): no sliding window across it, and a split of it is not
    /// shifted inwards (two iterations would write the same points).
    pub fn is_concurrent(self) -> bool {
        self == LoopKind::Parallel || self.is_gpu()
    }
}

/// `split(old, outer, inner, factor)`: `old = outer * factor + inner` (plus
/// the tail handling of loop synthesis).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// The dimension split.
    pub old: String,
    /// The new outer dimension.
    pub outer: String,
    /// The new inner dimension, `0..factor`.
    pub inner: String,
    /// The inner extent.
    pub factor: i64,
}

/// One loop of a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    /// Its variable.
    pub name: String,
    /// How it runs.
    pub kind: LoopKind,
}

/// The loop nest of one stage.
///
/// **Invariant:** every name is unique within the stage: when a split reuses
/// the old variable's name for its outer loop (`vectorize(x, 8)` splits `x`
/// into `x` and `x_v`), the old variable is renamed (`x#1`) everywhere before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageSchedule {
    /// The variable standing for each dimension of the func before any split.
    pub roots: Vec<String>,
    /// Splits in the order they were applied.
    pub splits: Vec<Split>,
    /// The loops, innermost first.
    pub dims: Vec<Dim>,
}

impl StageSchedule {
    /// Loops over `vars` (innermost first), all serial.
    pub fn serial(vars: &[String]) -> StageSchedule {
        StageSchedule {
            roots: vars.to_vec(),
            splits: Vec::new(),
            dims: vars
                .iter()
                .map(|v| Dim {
                    name: v.clone(),
                    kind: LoopKind::Serial,
                })
                .collect(),
        }
    }

    /// The position of a loop variable.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.dims.iter().position(|d| d.name == name)
    }

    /// Splits loop `old` into `outer` and `inner` (innermost), both
    /// serial unless `old` was not: then `outer` keeps its kind.
    pub fn split(
        &mut self,
        old: &str,
        outer: &str,
        inner: &str,
        factor: i64,
    ) -> Result<(), String> {
        let Some(pos) = self.position(old) else {
            return Err(format!(
                "`{old}` is not a loop of this func (it may have been split already)"
            ));
        };
        for new in [outer, inner] {
            if new != old && self.position(new).is_some() {
                return Err(format!("`{new}` already names a loop of this func"));
            }
        }
        if outer == inner {
            return Err("the outer and inner variables of a split need different names".into());
        }
        let mut old = old.to_string();
        if outer == old || inner == old {
            let fresh = format!("{old}#{}", self.splits.len() + 1);
            for s in &mut self.splits {
                for n in [&mut s.outer, &mut s.inner] {
                    if *n == old {
                        *n = fresh.clone();
                    }
                }
            }
            for r in &mut self.roots {
                if *r == old {
                    *r = fresh.clone();
                }
            }
            old = fresh;
        }
        let kind = self.dims[pos].kind;
        self.dims[pos] = Dim {
            name: outer.to_string(),
            kind,
        };
        self.dims.insert(
            pos,
            Dim {
                name: inner.to_string(),
                kind: LoopKind::Serial,
            },
        );
        self.splits.push(Split {
            old,
            outer: outer.to_string(),
            inner: inner.to_string(),
            factor,
        });
        Ok(())
    }

    /// The split that created `name` as its outer variable, if any.
    pub fn split_creating_outer(&self, name: &str) -> Option<&Split> {
        self.splits.iter().find(|s| s.outer == name)
    }

    /// Whether split `s` is one that
    /// [`with_nested_splits_merged`](Self::with_nested_splits_merged) made,
    /// of a block or into one (blocks are named `inner.inner`, which no
    /// variable is).
    pub fn is_merged(s: &Split) -> bool {
        s.old.contains('.') || s.inner.contains('.')
    }

    /// The same loops with every split of an earlier split's outer loop
    /// rewritten as one split of the earlier one's variable by the product
    /// of the factors, whose inner part (of constant extent) the second
    /// split then cuts exactly:
    ///
    /// ```text
    /// vectorize(x, 32).unroll(x, 2):  x#1 -> (x#2, x_v, 32), x#2 -> (x, x_u, 2)
    ///                            =>   x#1 -> (x, x_u.x_v, 64), x_u.x_v -> (x_u, x_v, 32)
    /// ```
    ///
    /// Both cover the same points, but the first handles the ends twice
    /// (shifting the last vector inwards inside a last pair shifted
    /// inwards, or two guards), which loop synthesis cannot prove away;
    /// the second has one tail, at the granularity of the whole block, as a
    /// single split of 64 has. Lowering uses this form; schedules keep what
    /// the user wrote.
    pub fn with_nested_splits_merged(&self) -> std::borrow::Cow<'_, StageSchedule> {
        let nested = |st: &StageSchedule| {
            (0..st.splits.len()).find_map(|b| {
                let old = &st.splits[b].old;
                (0..b).find(|&a| st.splits[a].outer == *old).map(|a| (a, b))
            })
        };
        if nested(self).is_none() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut st = self.clone();
        while let Some((a, b)) = nested(&st) {
            let (first, second) = (st.splits[a].clone(), st.splits[b].clone());
            let block = format!("{}.{}", second.inner, first.inner);
            st.splits[a] = Split {
                old: first.old,
                outer: second.outer,
                inner: block.clone(),
                factor: first.factor * second.factor,
            };
            // Right after the block's split, before any split of
            // `first.inner` (loop synthesis takes extents in this order).
            st.splits.remove(b);
            st.splits.insert(
                a + 1,
                Split {
                    old: block,
                    outer: second.inner,
                    inner: first.inner,
                    factor: first.factor,
                },
            );
        }
        // Each step gives one split a fresh variable to split, which no
        // split creates as its outer loop: at most one step per split.
        std::borrow::Cow::Owned(st)
    }
}

/// Where a func is computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComputeLevel {
    /// Decided by the inlining pass (inlined if read once at the same point).
    Default,
    /// Substituted into its consumers.
    Inline,
    /// Computed entirely before its consumers.
    Root,
    /// Computed inside loop `var` of consumer `func`'s pure stage, over the
    /// region one iteration of that loop needs.
    At {
        /// The consumer.
        func: FuncId,
        /// The consumer's loop.
        var: String,
    },
}

/// The schedule of one func.
#[derive(Clone, Debug)]
pub struct FuncSchedule {
    /// Where it is computed.
    pub compute: ComputeLevel,
    /// The loop nest of its pure definition.
    pub pure: StageSchedule,
    /// The loop nest of each update definition (see [`super::update`]).
    pub updates: Vec<StageSchedule>,
    /// The directives a `schedule` block gave it, as written (for `SCHEDULE`).
    pub written: Vec<String>,
    /// `store_at(func, var)`, when given (checked against the compute level;
    /// storage then lives at the compute level until sliding windows land).
    pub store: Option<(FuncId, String)>,
    /// The tokens of its `compute_at` or `compute_inline` directive, for
    /// errors found in lowering.
    pub compute_tokens: Option<proc_macro2::TokenStream>,
    /// The tokens of its `store_at` directive.
    pub store_tokens: Option<proc_macro2::TokenStream>,
    /// The tokens of its last GPU directive (`gpu_tile`, `gpu_blocks`,
    /// `gpu_threads`), for errors found in CUDA emission.
    pub gpu_tokens: Option<proc_macro2::TokenStream>,
    /// `bound(var, min, extent)`: per dimension, the region it is computed
    /// over, whatever its consumers need (a call needing more is an error).
    pub bounds: Vec<(usize, i64, i64)>,
}

impl FuncSchedule {
    /// The loop nest of stage `k`: 0 is the pure definition, `k > 0` update
    /// `k - 1`.
    pub fn stage(&self, k: usize) -> &StageSchedule {
        match k {
            0 => &self.pure,
            _ => &self.updates[k - 1],
        }
    }

    /// The loop nest of stage `k`, to change it.
    pub fn stage_mut(&mut self, k: usize) -> &mut StageSchedule {
        match k {
            0 => &mut self.pure,
            _ => &mut self.updates[k - 1],
        }
    }
}

/// The schedule of a pipeline, indexed by func.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// One entry per func of the pipeline.
    pub funcs: Vec<FuncSchedule>,
    /// Per input, per dimension: the stride in elements that the schedule
    /// declares (Halide's `input.dim(d).set_stride(s)`), which the entry
    /// requires of the buffer it is given. A declared stride of dimension 0
    /// lets vector code read the input where it lies (interleaved RGB:
    /// `rgb.dim(0).set_stride(3)`) instead of a dense copy of it.
    pub input_strides: Vec<Vec<Option<usize>>>,
    /// A line that `SCHEDULE` prints first, as a comment (who chose it).
    pub note: Option<String>,
}

impl Schedule {
    /// The schedule used without a `schedule` block: funcs are inlined where
    /// the inlining pass finds it free, else computed at root with their
    /// outermost loop parallel.
    pub fn default_for(p: &Pipeline) -> Schedule {
        Schedule {
            funcs: p
                .funcs
                .iter()
                .enumerate()
                .map(|(f, func)| {
                    let mut pure = StageSchedule::serial(&func.vars);
                    if let Some(last) = pure.dims.last_mut() {
                        last.kind = LoopKind::Parallel;
                    }
                    FuncSchedule {
                        compute: ComputeLevel::Default,
                        pure,
                        updates: default_updates(p, f),
                        written: Vec::new(),
                        store: None,
                        compute_tokens: None,
                        store_tokens: None,
                        gpu_tokens: None,
                        bounds: Vec::new(),
                    }
                })
                .collect(),
            input_strides: p.inputs.iter().map(|i| vec![None; i.dims]).collect(),
            note: None,
        }
    }

    /// The GPU schedule used without a `for cuda` block (and the start of
    /// one): funcs are inlined where the inlining pass finds it free, else
    /// computed at root, each one kernel over its region: 32 x 8 threads
    /// a block over the two innermost dimensions (256 along a single
    /// one), blocks over the third; further dimensions loop on the host,
    /// and updates run in one thread.
    pub fn gpu_default(p: &Pipeline) -> Schedule {
        let mut s = Schedule::default_for(p);
        for (fs, func) in s.funcs.iter_mut().zip(&p.funcs) {
            let mut st = StageSchedule::serial(&func.vars);
            let tiles: &[i64] = if func.vars.len() == 1 {
                &[256]
            } else {
                &[32, 8]
            };
            for (v, &n) in func.vars.iter().zip(tiles) {
                let (b, t) = (format!("{v}#b"), format!("{v}#t"));
                st.split(v, &b, &t, n).expect("fresh names split");
                let at = |st: &StageSchedule, name: &str| st.position(name).expect("just split");
                let (bi, ti) = (at(&st, &b), at(&st, &t));
                st.dims[bi].kind = LoopKind::GpuBlock;
                st.dims[ti].kind = LoopKind::GpuThread;
            }
            // Threads innermost, then blocks: [x#t, y#t, x#b, y#b, ...].
            st.dims.sort_by_key(|d| match d.kind {
                LoopKind::GpuThread => 0,
                LoopKind::GpuBlock => 1,
                _ => 2,
            });
            if let Some(z) = st.dims.iter_mut().find(|d| d.kind == LoopKind::Serial) {
                z.kind = LoopKind::GpuBlock;
            }
            fs.pure = st;
        }
        s
    }

    /// The schedule of func `f`.
    pub fn func(&self, f: FuncId) -> &FuncSchedule {
        &self.funcs[f]
    }

    /// True when some func is computed at a loop of `f`.
    pub fn is_compute_target(&self, f: FuncId) -> bool {
        self.funcs
            .iter()
            .any(|s| matches!(&s.compute, ComputeLevel::At { func, .. } if *func == f))
    }
}

/// The loop nests of `f`'s updates without a schedule: serial, reduction
/// variables innermost.
pub fn default_updates(p: &Pipeline, f: FuncId) -> Vec<StageSchedule> {
    (0..p.funcs[f].updates.len())
        .map(|k| {
            let names: Vec<String> = super::update::update_vars(p, f, k)
                .into_iter()
                .map(|(n, _)| n)
                .collect();
            StageSchedule::serial(&names)
        })
        .collect()
}
