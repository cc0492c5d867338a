//! The auto-scheduler: a schedule for the funcs a `schedule` block does not
//! name (all of them when a pipeline has no block), chosen by reuse
//! analysis in the manner of Sioutas et al. (*Schedule Synthesis for Halide
//! Pipelines through Reuse Analysis*, TACO 2019), without search and
//! without size estimates (`estimate(..)` refines them).
//!
//! The decisions, in order:
//!
//! 1. **Inlining** (producers first). A func is substituted into its
//!    consumers when nothing is recomputed (one consumer reads it, only at
//!    its own point), or when it is trivial: it reads its own
//!    producers only at its own point and does at most [`TRIVIAL_OPS`]
//!    operations (`ixx = ix * ix`), so that recomputing it costs less than
//!    storing and loading it.
//! 2. **Grouping** (consumers first). Every output, and every func with
//!    update definitions, heads a group. A func whose consumers all belong
//!    to one group, and which they read at their own point shifted by
//!    constants in every dimension (a stencil), joins that group: it is
//!    computed a row at a time inside the head's strips, sliding down them
//!    when its consumers read overlapping rows (`store_at` the strip loop,
//!    `compute_at` the row loop), so each row is computed once per strip
//!    and stays in cache. A func only the head reads, each coordinate a
//!    function of the head's own variable of its dimension at another
//!    resolution (`2 * y + k`, `y / 2 + k`: a pyramid level's horizontal
//!    pass), joins too, computed for each strip of the head (`compute_at`
//!    the strip loop): the rows the strip reads, a few of them again at
//!    the next strip. Any other func (read at data-dependent coordinates,
//!    or by several groups) heads its own
//!    group, computed at root, and so does a func that would make a group
//!    larger than [`MAX_GROUP_MEMBERS`] (a group is one function for LLVM,
//!    whose build time grows with the square of its size).
//! 3. **Strips.** A head is cut into strips of rows along its largest
//!    dimension after the first, in parallel; the strip height is the power
//!    of two that minimizes the modelled time (the rows the threads compute,
//!    the rows each strip recomputes at its top edge and a fixed cost per
//!    strip, and half a strip of imbalance), among heights giving each
//!    thread at least four strips where the image allows. A group whose sliding rows do not fit the machine's L2 is also
//!    cut into column tiles.
//! 4. **Vectors.** Every computed func's innermost dimension is vectorized
//!    with as many lanes as a register holds of its type.
//!
//! An update definition keeps its reduction loops in order; its pure first
//! dimension moves inside them and is vectorized, and its largest other
//! pure dimension runs in parallel. The choices, with the figures they rest
//! on, are printed by `PIPELINE_DEBUG=schedule`.

pub mod access;
mod loops;
pub mod model;

pub use model::{Estimates, Machine, MACHINE_ENV};

use crate::analysis::bounds::Inferred;
use crate::ir::{FuncId, Pipeline};
use crate::lower::inline::{size, substitute_func};
use crate::schedule::{ComputeLevel, Schedule};
use access::Edge;
use std::fmt::Write;

/// The version of the auto-scheduler's rules. Any change of the schedules
/// it chooses comes with a new version (and reviewed golden files).
pub const VERSION: u32 = 4;

/// A func doing at most this many operations on values it reads at its own
/// point is inlined even into consumers that read it at several points.
pub const TRIVIAL_OPS: usize = 4;

/// A group holds at most this many funcs besides its head: all of them are
/// computed inside one parallel loop, one function for LLVM, whose
/// optimization time grows with the square of its size (a chain of 3-tap
/// stencils fused whole built in 3.4 s at 8 stages, 19.5 s at 16 and 69 s at
/// 30, release). A longer chain is cut into groups, each at root.
pub const MAX_GROUP_MEMBERS: usize = 8;

/// Inlining never makes a consumer's definition larger than this, in nodes.
const MAX_INLINED_NODES: usize = 4000;

/// What the auto-scheduler decided for one func.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Substituted into its consumers.
    Inline,
    /// Heads a group: an output, or computed at root.
    Head,
    /// Computed inside the strips of the head of its group.
    Fused {
        /// The head.
        head: FuncId,
    },
}

/// The auto-scheduler's choice for one func.
#[derive(Clone, Debug)]
pub struct FuncPlan {
    /// Where it is computed.
    pub decision: Decision,
    /// The directives, as a `schedule` block would write them after the func's name.
    pub directives: Vec<String>,
    /// Why, for `PIPELINE_DEBUG=schedule`.
    pub why: String,
}

/// The auto-scheduler's result.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Per func: its plan, `None` for funcs the user scheduled or that no
    /// output reads.
    pub funcs: Vec<Option<FuncPlan>>,
    /// Everything it weighed, for `PIPELINE_DEBUG=schedule`.
    pub report: String,
    /// The bounds it inferred, of the pipeline with the funcs it inlines
    /// substituted (see [`Inferred`]).
    pub bounds: Inferred,
}

impl Plan {
    /// The plan as the statements of a `schedule` block.
    pub fn text(&self, p: &Pipeline) -> String {
        let mut s = String::new();
        for (f, plan) in self.funcs.iter().enumerate() {
            if let Some(plan) = plan {
                if !plan.directives.is_empty() {
                    let _ = writeln!(s, "{}.{};", p.funcs[f].name, plan.directives.join("."));
                }
            }
        }
        s
    }
}

/// The options that shape a plan besides the pipeline.
pub struct Options<'a> {
    /// The machine model.
    pub machine: &'a Machine,
    /// The sizes the user estimated.
    pub estimates: &'a Estimates,
    /// Funcs the user's block names: their schedule is kept as written.
    pub pinned: &'a [bool],
    /// Whether funcs may join their consumers' groups (off: every computed
    /// func at root, the fallback if a fused schedule ever fails to lower).
    pub fuse: bool,
}

/// Substitutes `f` into its consumers in place, unless a definition would
/// grow past [`MAX_INLINED_NODES`] (then nothing changes), and moves `f`'s
/// producers' consumer lists from `f` to its consumers.
fn inline_into(q: &mut Pipeline, f: FuncId, consumers: &mut [Vec<FuncId>]) -> bool {
    let body = q.funcs[f].pure.clone();
    let readers = consumers[f].clone();
    let mut before = Vec::new();
    for &c in &readers {
        before.push((c, q.funcs[c].pure.clone(), q.funcs[c].updates.clone()));
        substitute_func(&mut q.funcs[c], f, &body);
        let grown = q
            .definition_exprs(c)
            .iter()
            .any(|(_, e)| size(e) > MAX_INLINED_NODES);
        if grown {
            for (c, pure, updates) in before {
                q.funcs[c].pure = pure;
                q.funcs[c].updates = updates;
            }
            return false;
        }
    }
    for g in q.callees(f) {
        consumers[g].retain(|&c| c != f);
        for &c in &readers {
            if c != g && !consumers[g].contains(&c) {
                consumers[g].push(c);
            }
        }
    }
    consumers[f].clear();
    true
}

/// Chooses the schedule of every live func the user did not pin.
pub fn choose(p: &Pipeline, base: &Schedule, opts: &Options) -> Plan {
    let m = opts.machine;
    let pinned = |f: FuncId| opts.pinned.get(f).copied().unwrap_or(false);
    let mut report = format!(
        "auto-scheduler v{VERSION} for `{}` (PIPELINE_MACHINE={})\n",
        p.name,
        m.describe()
    );
    let mut funcs: Vec<Option<FuncPlan>> = vec![None; p.funcs.len()];
    let q = inline(p, base, opts, &mut funcs);

    let live_q = q.live_funcs();
    let fixed: Vec<Vec<(usize, i64, i64)>> = base.funcs.iter().map(|f| f.bounds.clone()).collect();
    let bounds = Inferred::new(&q, &fixed);
    let regions = model::estimate_regions(&q, &bounds.program, opts.estimates);
    let Grouping {
        head_of,
        edges_of,
        per_strip,
    } = group(p, &q, opts);

    // 3 and 4. The loops of each group.
    for &h in live_q.iter().rev() {
        if head_of[h] != Some(h) || pinned(h) {
            continue;
        }
        let members: Vec<FuncId> = live_q
            .iter()
            .rev()
            .copied()
            .filter(|&f| f != h && head_of[f] == Some(h))
            .collect();
        let g = loops::Group {
            q: &q,
            head: h,
            members,
            edges_of: &edges_of,
            per_strip: &per_strip,
            extents: &regions.extents,
            output: p.outputs.contains(&h),
            hosts_pinned: base.is_compute_target(h),
            machine: m,
        };
        for (f, plan) in loops::plan_group(&g, &mut report) {
            funcs[f] = Some(plan);
        }
    }
    let live = p.live_funcs();
    for (f, plan) in funcs.iter().enumerate() {
        if let Some(plan) = plan {
            let _ = writeln!(report, "  {}: {}", p.funcs[f].name, plan.why);
        } else if pinned(f) && live.contains(&f) {
            let _ = writeln!(report, "  {}: as the schedule block says", p.funcs[f].name);
        }
    }
    Plan {
        funcs,
        report,
        bounds,
    }
}

/// Step 1, inlining, producers first, on a copy of the pipeline that follows
/// the decisions (a func's reads change when its producers are inlined):
/// the funcs the user inlined, then those that gain from it. Records the
/// latter in `funcs`; returns the copy.
fn inline(
    p: &Pipeline,
    base: &Schedule,
    opts: &Options,
    funcs: &mut [Option<FuncPlan>],
) -> Pipeline {
    let pinned = |f: FuncId| opts.pinned.get(f).copied().unwrap_or(false);
    let live = p.live_funcs();
    let mut q = p.clone();
    let mut consumers_q = q.consumer_lists(&live);
    for &f in &live {
        if pinned(f) && base.funcs[f].compute == ComputeLevel::Inline {
            inline_into(&mut q, f, &mut consumers_q);
        }
    }
    for &f in &live {
        if pinned(f) || p.outputs.contains(&f) || !q.funcs[f].updates.is_empty() {
            continue;
        }
        if consumers_q[f].is_empty() {
            continue;
        }
        let consumers = consumers_q[f].clone();
        let edges = access::edges(&q, f, &consumers);
        let reads: usize = edges.iter().map(|e| e.reads).sum();
        let same_point = edges.iter().all(Edge::pointwise);
        let ops = access::arithmetic(&q.funcs[f].pure);
        let trivial = ops <= TRIVIAL_OPS && access::reads_pointwise(&q, f);
        // A func whose loops host a func the user placed keeps them.
        let host = base.is_compute_target(f);
        let why = if same_point && reads == 1 {
            Some("read once, at its consumer's point: inlined".to_string())
        } else if same_point && consumers.len() == 1 {
            // Reads at one point are one value: the code generator's
            // expressions are pure, so LLVM evaluates the repeated
            // subexpression once (Harris: the structure tensor inlined into
            // the response runs 28% faster than computed a row at a time).
            Some(format!(
                "read {reads} times by one consumer, always at its point: one value, inlined"
            ))
        } else if trivial && !edges.iter().any(|e| e.in_update) {
            // Not into an update: it runs once per point of its reduction
            // domain, and the producer's boundary conditions would run in
            // every iteration (the bilateral grid's `intensity`, read by
            // the grid's 8x8 reductions: 0.84 of the time computed at
            // root, on a Xeon).
            Some(format!(
                "{ops} operation(s) on values read at its own point, read {reads} time(s): cheaper to recompute than to store, inlined"
            ))
        } else {
            None
        };
        let Some(why) = why.filter(|_| !host) else {
            continue;
        };
        if inline_into(&mut q, f, &mut consumers_q) {
            funcs[f] = Some(FuncPlan {
                decision: Decision::Inline,
                directives: vec!["compute_inline()".into()],
                why,
            });
        }
    }
    q
}

/// Step 2, grouping, consumers first, of the funcs of `q` (the pipeline after
/// inlining): the head of each func's group (itself for a head), how each
/// func's consumers read it, and which members are computed per strip
/// (read by their head at another resolution) rather than per row.
fn group(p: &Pipeline, q: &Pipeline, opts: &Options) -> Grouping {
    let pinned = |f: FuncId| opts.pinned.get(f).copied().unwrap_or(false);
    let live_q = q.live_funcs();
    let consumers = q.consumer_lists(&live_q);
    let mut head_of: Vec<Option<FuncId>> = vec![None; p.funcs.len()];
    let mut edges_of: Vec<Vec<Edge>> = vec![Vec::new(); p.funcs.len()];
    let mut members_of = vec![0usize; p.funcs.len()];
    let mut per_strip = vec![false; p.funcs.len()];
    for &f in live_q.iter().rev() {
        let func = &q.funcs[f];
        if pinned(f) || p.outputs.contains(&f) || !func.updates.is_empty() {
            head_of[f] = Some(f);
            continue;
        }
        let edges = access::edges(q, f, &consumers[f]);
        let heads: Vec<Option<FuncId>> = consumers[f].iter().map(|&c| head_of[c]).collect();
        let head = heads.first().copied().flatten();
        let fusable = opts.fuse
            && head.is_some_and(|h| {
                heads.iter().all(|&g| g == Some(h))
                    && !pinned(h)
                    && q.funcs[h].updates.is_empty()
                    && q.funcs[h].dims() >= 2
                    && q.funcs[h].dims() == func.dims()
                    && consumers[f].iter().all(|&c| !pinned(c) && !per_strip[c])
                    && members_of[h] < MAX_GROUP_MEMBERS
            });
        // A stencil of its consumers slides down the head's strips; a func
        // only the head reads, at another resolution, is computed for each
        // strip (a pyramid level's horizontal pass inside the level).
        let stencil = fusable && edges.iter().all(Edge::stencil);
        let resampled = fusable
            && !stencil
            && consumers[f].iter().all(|&c| Some(c) == head)
            && edges.iter().all(Edge::resampled);
        let joins = stencil || resampled;
        if let (true, Some(h)) = (joins, head) {
            members_of[h] += 1;
        }
        per_strip[f] = resampled;
        head_of[f] = if joins { head } else { Some(f) };
        edges_of[f] = edges;
    }
    Grouping {
        head_of,
        edges_of,
        per_strip,
    }
}

/// What step 2 decided.
struct Grouping {
    /// The head of each func's group (itself for a head).
    head_of: Vec<Option<FuncId>>,
    /// How each func's consumers read it.
    edges_of: Vec<Vec<Edge>>,
    /// The members computed for each strip of their head, not row by row.
    per_strip: Vec<bool>,
}
