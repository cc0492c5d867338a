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
//!    and stays in cache. Any other func (read at another resolution, at
//!    data-dependent coordinates, or by several groups) heads its own
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
pub mod model;

pub use model::{Estimates, Machine, MACHINE_ENV};

use crate::ir::{FuncId, Pipeline, Type};
use crate::lower::inline::{size, substitute_func};
use crate::schedule::{ComputeLevel, Schedule};
use access::Edge;
use std::fmt::Write;

/// The version of the auto-scheduler's rules. Any change of the schedules
/// it chooses comes with a new version (and reviewed golden files).
pub const VERSION: u32 = 1;

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

/// The funcs that read each func (each once), among `live`.
fn consumer_map(p: &Pipeline, live: &[FuncId]) -> Vec<Vec<FuncId>> {
    let mut out = vec![Vec::new(); p.funcs.len()];
    for &c in live {
        for g in p.callees(c) {
            out[g].push(c);
        }
    }
    out
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

/// Bytes of one value of a type in memory.
fn bytes(t: Type) -> usize {
    (t.bits() as usize).div_ceil(8)
}

/// A variable name for a new loop of `f`: `base`, or `base2`, ... when a
/// variable of `f` already has that name.
fn fresh(p: &Pipeline, f: FuncId, base: &str) -> String {
    let taken = |n: &str| p.funcs[f].vars.iter().any(|v| v == n);
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|k| format!("{base}{k}"))
        .find(|n| !taken(n))
        .expect("a free name")
}

/// The loops of `f`'s updates: a pure dimension 0 innermost and
/// vectorized (moving it inside the reduction loops keeps every point's
/// order of updates), the reduction loops in their order, and the largest
/// other pure dimension in parallel where there is work enough (its
/// iterations write disjoint slabs). `extents` are `f`'s estimated ones.
fn update_directives(
    q: &Pipeline,
    f: FuncId,
    lanes: usize,
    extents: &[i64],
    m: &Machine,
) -> (Vec<String>, String) {
    use crate::schedule::update::{update_vars, UpdateVar};
    let mut out = Vec::new();
    let mut why = String::new();
    let extent = |d: usize| extents.get(d).copied().unwrap_or(0);
    for k in 0..q.funcs[f].updates.len() {
        let vars = update_vars(q, f, k);
        let mut chain = vec![format!("update({k})")];
        let mut said = Vec::new();
        let x = vars.iter().find(|(_, v)| *v == UpdateVar::Pure(0));
        if let Some((x, _)) = x.filter(|_| extent(0) >= lanes as i64) {
            let reductions: Vec<&str> = vars
                .iter()
                .filter(|(_, v)| matches!(v, UpdateVar::Reduction(_)))
                .map(|(n, _)| n.as_str())
                .collect();
            if !reductions.is_empty() {
                chain.push(format!("reorder({x}, {})", reductions.join(", ")));
            }
            chain.push(format!("vectorize({x}, {lanes})"));
            said.push(format!("`{x}` innermost, {lanes} lanes"));
        }
        let outer = vars
            .iter()
            .filter_map(|(n, v)| match v {
                UpdateVar::Pure(d) if *d > 0 => Some((n, extent(*d))),
                _ => None,
            })
            .max_by_key(|&(_, e)| e);
        let points: i64 = extents.iter().product();
        if let Some((y, e)) = outer.filter(|&(_, e)| e >= 2 * m.threads as i64 && points >= 1 << 14)
        {
            chain.push(format!("parallel({y})"));
            said.push(format!("`{y}` ({e}) in parallel"));
        }
        if said.is_empty() {
            let _ = write!(why, "; update {k} serial");
        } else {
            out.push(chain.join("."));
            let _ = write!(why, "; update {k}: {}", said.join(", "));
        }
    }
    (out, why)
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
    let live = p.live_funcs();

    // 1. Inlining, producers first, on a copy of the pipeline that follows
    // the decisions (a func's reads change when its producers are inlined).
    let mut q = p.clone();
    let mut consumers_q = consumer_map(&q, &live);
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
        } else if trivial {
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

    // 2. Grouping, consumers first.
    let live_q = q.live_funcs();
    let consumers = consumer_map(&q, &live_q);
    let fixed: Vec<Vec<(usize, i64, i64)>> = base.funcs.iter().map(|f| f.bounds.clone()).collect();
    let regions = model::estimate_regions(&q, &fixed, opts.estimates);
    let extent = |f: FuncId, d: usize| regions.extents[f].get(d).copied().unwrap_or(0);
    let mut head_of: Vec<Option<FuncId>> = vec![None; p.funcs.len()];
    let mut edges_of: Vec<Vec<Edge>> = vec![Vec::new(); p.funcs.len()];
    let mut members_of = vec![0usize; p.funcs.len()];
    for &f in live_q.iter().rev() {
        let func = &q.funcs[f];
        if pinned(f) || p.outputs.contains(&f) || !func.updates.is_empty() {
            head_of[f] = Some(f);
            continue;
        }
        let edges = access::edges(&q, f, &consumers[f]);
        let heads: Vec<Option<FuncId>> = consumers[f].iter().map(|&c| head_of[c]).collect();
        let head = heads.first().copied().flatten();
        let joins = opts.fuse
            && head.is_some_and(|h| {
                heads.iter().all(|&g| g == Some(h))
                    && !pinned(h)
                    && q.funcs[h].updates.is_empty()
                    && q.funcs[h].dims() >= 2
                    && q.funcs[h].dims() == func.dims()
                    && consumers[f].iter().all(|&c| !pinned(c))
                    && edges.iter().all(Edge::stencil)
            });
        let joins = joins && head.is_some_and(|h| members_of[h] < MAX_GROUP_MEMBERS);
        if let (true, Some(h)) = (joins, head) {
            members_of[h] += 1;
        }
        head_of[f] = if joins { head } else { Some(f) };
        edges_of[f] = edges;
    }

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
        let hf = &q.funcs[h];
        let mut directives = Vec::new();
        let mut why = String::new();
        if !p.outputs.contains(&h) {
            directives.push("compute_root()".to_string());
            why += if hf.updates.is_empty() {
                "computed at root (read by several groups, at another resolution or at computed coordinates); "
            } else {
                "computed at root (it has update definitions); "
            };
        }
        let lanes = |f: FuncId| (m.vector_bytes / bytes(q.funcs[f].ty)).clamp(4, 64);
        let x = hf.vars[0].clone();
        if hf.dims() == 1 {
            let n = extent(h, 0);
            let w = lanes(h);
            if n >= 1 << 16 {
                let (xo, xi) = (
                    fresh(&q, h, &format!("{x}o")),
                    fresh(&q, h, &format!("{x}i")),
                );
                directives.push(format!("split({x}, {xo}, {xi}, 8192)"));
                directives.push(format!("parallel({xo})"));
                directives.push(format!("vectorize({xi}, {w})"));
                let _ = write!(why, "{n} points: chunks of 8192 in parallel, {w} lanes");
            } else if n >= w as i64 {
                directives.push(format!("vectorize({x}, {w})"));
                let _ = write!(why, "{n} points: {w} lanes");
            } else {
                let _ = write!(why, "{n} points: serial");
            }
            let (u, uwhy) = update_directives(&q, h, w, &regions.extents[h], m);
            directives.extend(u);
            why += &uwhy;
            funcs[h] = Some(FuncPlan {
                decision: Decision::Head,
                directives,
                why,
            });
            continue;
        }
        // The strip dimension: the largest after the first.
        let s = (1..hf.dims())
            .max_by_key(|&d| (extent(h, d), std::cmp::Reverse(d)))
            .expect("two dimensions or more");
        let rows = extent(h, s);
        let width = extent(h, 0);
        // Rows each member computes beyond a strip's: offsets of its first
        // and last row relative to the strip's, through its consumers.
        let mut offsets: Vec<(i64, i64)> = vec![(0, 0); p.funcs.len()];
        for &f in &members {
            let mut off = (i64::MAX, i64::MIN);
            for e in &edges_of[f] {
                if let Some((lo, hi)) = e.shifts[s] {
                    let c = offsets[e.consumer];
                    off = (off.0.min(c.0 + lo), off.1.max(c.1 + hi));
                }
            }
            offsets[f] = if off.0 > off.1 { (0, 0) } else { off };
        }
        let halo = |f: FuncId| offsets[f].1 - offsets[f].0;
        let row_cost =
            |f: FuncId| access::cost(&q.funcs[f].pure).max(1) as f64 * extent(f, 0).max(1) as f64;
        let group: Vec<FuncId> = std::iter::once(h).chain(members.iter().copied()).collect();
        // The modelled time of strips of `strip` rows: the work of all
        // strips shared by the threads, plus half a strip for the last
        // thread to finish. Each strip computes its members' halo rows again
        // and costs about two rows more (its sliding windows start afresh,
        // its buffers are taken and given back).
        let strip_time = |strip: i64| -> f64 {
            let tasks = (rows + strip - 1) / strip;
            let per_strip: f64 = group
                .iter()
                .map(|&f| row_cost(f) * (strip + halo(f) + 2) as f64)
                .sum::<f64>();
            tasks as f64 * per_strip / m.threads as f64 + per_strip / 2.0
        };
        let candidates: Vec<i64> = [8i64, 16, 32, 64, 128, 256]
            .into_iter()
            .filter(|&c| c == 8 || c <= rows)
            .collect();
        let wanted_tasks = (4 * m.threads as i64).min(rows / 8).max(1);
        let strip = candidates
            .iter()
            .copied()
            .filter(|&c| (rows + c - 1) / c >= wanted_tasks)
            .min_by(|&a, &b| strip_time(a).total_cmp(&strip_time(b)).then(b.cmp(&a)))
            .unwrap_or(8);
        let _ = writeln!(
            report,
            "group `{}` ({} rows of {} along `{}`, members: {}): strip heights {}",
            hf.name,
            rows,
            width,
            hf.vars[s],
            if members.is_empty() {
                "none".to_string()
            } else {
                members
                    .iter()
                    .map(|&f| format!("{} (+{} rows)", q.funcs[f].name, halo(f)))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            candidates
                .iter()
                .map(|&c| format!(
                    "{c}: {} strips, cost {:.3e}{}",
                    (rows + c - 1) / c,
                    strip_time(c),
                    if c == strip { " (chosen)" } else { "" }
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
        let parallel = rows as f64 * width as f64 >= (1 << 14) as f64 && rows > strip;
        // Bytes of rows the members keep per column: the rows one row of
        // their consumers reads, folded to a power of two.
        let column_bytes: i64 = members
            .iter()
            .map(|&f| {
                let rows = edges_of[f]
                    .iter()
                    .map(|e| e.overlap(s) + 1)
                    .max()
                    .unwrap_or(1);
                (rows as u64).next_power_of_two() as i64 * bytes(q.funcs[f].ty) as i64
            })
            .sum();
        let tile = if column_bytes > 0 && column_bytes * width > m.l2_bytes as i64 / 2 {
            let w = lanes(h) as i64 * 4;
            Some((((m.l2_bytes as i64 / 2) / column_bytes) / w * w).max(w))
        } else {
            None
        };
        let y = hf.vars[s].clone();
        let (yo, yi) = (
            fresh(&q, h, &format!("{y}o")),
            fresh(&q, h, &format!("{y}i")),
        );
        let (xo, xi) = (
            fresh(&q, h, &format!("{x}o")),
            fresh(&q, h, &format!("{x}i")),
        );
        // (Also where a func the user placed is computed at the head's loops,
        // which may name `yi`.)
        if parallel || !members.is_empty() || base.is_compute_target(h) {
            directives.push(format!("split({y}, {yo}, {yi}, {strip})"));
        }
        let (store_loop, inner_x) = match tile {
            Some(t) => {
                directives.push(format!("split({x}, {xo}, {xi}, {t})"));
                directives.push(format!("reorder({xi}, {yi}, {xo}, {yo})"));
                (xo.clone(), xi.clone())
            }
            None => (yo.clone(), x.clone()),
        };
        if parallel {
            directives.push(format!("parallel({yo})"));
        }
        let w = lanes(h);
        if width >= w as i64 {
            directives.push(format!("vectorize({inner_x}, {w})"));
        }
        let _ = write!(
            why,
            "{}{}{}",
            match (parallel, members.is_empty()) {
                (true, _) => format!("strips of {strip} rows along `{y}`, in parallel"),
                (false, false) =>
                    format!("strips of {strip} rows along `{y}`, serial (little work)"),
                (false, true) => "serial (little work)".to_string(),
            },
            match tile {
                Some(t) => format!(
                    ", columns of {t} (the sliding rows take {column_bytes} bytes per column)"
                ),
                None => String::new(),
            },
            if width >= w as i64 {
                format!(", {w} lanes")
            } else {
                String::new()
            }
        );
        let (u, uwhy) = update_directives(&q, h, w, &regions.extents[h], m);
        directives.extend(u);
        why += &uwhy;
        funcs[h] = Some(FuncPlan {
            decision: Decision::Head,
            directives,
            why,
        });
        for &f in &members {
            let name = &q.funcs[h].name;
            let mut d = Vec::new();
            let why = if halo(f) > 0 {
                d.push(format!("store_at({name}, {store_loop})"));
                d.push(format!("compute_at({name}, {yi})"));
                format!(
                    "a stencil of its consumers in `{name}`'s group: slides down each strip, {} rows at its top edge",
                    halo(f)
                )
            } else {
                d.push(format!("compute_at({name}, {yi})"));
                format!("read by its consumers in `{name}`'s group row by row: computed a row at a time")
            };
            let w = lanes(f);
            if extent(f, 0) >= w as i64 {
                d.push(format!("vectorize({}, {w})", q.funcs[f].vars[0]));
            }
            funcs[f] = Some(FuncPlan {
                decision: Decision::Fused { head: h },
                directives: d,
                why,
            });
        }
    }
    for (f, plan) in funcs.iter().enumerate() {
        if let Some(plan) = plan {
            let _ = writeln!(report, "  {}: {}", p.funcs[f].name, plan.why);
        } else if pinned(f) && live.contains(&f) {
            let _ = writeln!(report, "  {}: as the schedule block says", p.funcs[f].name);
        }
    }
    Plan { funcs, report }
}
