//! Random valid schedules of a pipeline, as `schedule` block text: the
//! property tests run pipelines under them and compare with the interpreter.

use super::Rng;
use pipeline_core::ir::{ExprKind, FuncId, Pipeline, Source};
use pipeline_core::schedule::update::update_vars;
use pipeline_core::schedule::{LoopKind, StageSchedule};

/// How many generated schedules scheduled an update stage.
pub static WITH_UPDATE_DIRECTIVES: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// How many generated schedules inlined too much to be compiled.
pub static TOO_LARGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Generates a random valid schedule for pipeline `name` of `source`.
pub fn random_schedule(source: &str, name: &str, p: &Pipeline, rng: &mut Rng) -> String {
    let live = p.live_funcs();
    let mut chains: Vec<(FuncId, String)> = Vec::new();
    let mut placement: Vec<Option<&'static str>> = vec![None; p.funcs.len()];
    let mut at: Vec<Option<(FuncId, String)>> = vec![None; p.funcs.len()];
    let text = |chains: &[(FuncId, String)]| {
        let mut s = format!("schedule {name} {{\n");
        for (f, c) in chains {
            if !c.is_empty() {
                s += &format!("    {}.{};\n", p.funcs[*f].name, c);
            }
        }
        s + "}\n"
    };
    let stage_of = |chains: &[(FuncId, String)], f: FuncId| -> StageSchedule {
        let full = format!("{source}\n{}", text(chains));
        let (_, sched) = pipeline_core::scheduled_from_source(&full, name)
            .unwrap_or_else(|e| panic!("generated an invalid schedule: {e}\n{}", text(chains)));
        sched.funcs[f].pure.clone()
    };
    let mut fresh = 0;
    for &f in live.iter().rev() {
        let func = &p.funcs[f];
        if func.name.contains('#') {
            // A template's own funcs have no name a schedule can use.
            continue;
        }
        let mut parts: Vec<String> = Vec::new();
        let consumers = p.consumers(f);
        let output = p.outputs.contains(&f);
        if !output {
            // (Not where the consumer's updates read it: they run outside
            // the consumer's pure loops.)
            let read_by_updates = |c: FuncId| {
                p.funcs[c].updates.iter().any(|u| {
                    u.value.any(&mut |n| {
                        matches!(&n.kind, ExprKind::Load { source: Source::Func(g), .. } if *g == f)
                    })
                })
            };
            let host = (consumers.len() == 1
                && placement[consumers[0]] != Some("inline")
                && !p.funcs[consumers[0]].name.contains('#')
                && !read_by_updates(consumers[0]))
            .then(|| consumers[0]);
            let choice = rng.below(if host.is_some() { 4 } else { 2 });
            if choice == 1 && func.updates.is_empty() {
                parts.push("compute_inline()".into());
                placement[f] = Some("inline");
                chains.push((f, parts.join(".")));
                continue;
            } else if choice >= 2 {
                // At a loop of the consumer, or at the loop the consumer
                // itself is computed in (where it and its consumer both run).
                let c = host.unwrap();
                let (c, st, v) = match &at[c] {
                    Some((h, var)) if rng.chance(50) => {
                        let st = stage_of(&chains, *h);
                        let v = st.position(var).unwrap();
                        (*h, st, v)
                    }
                    _ => {
                        let st = stage_of(&chains, c);
                        let v = rng.below(st.dims.len());
                        (c, st, v)
                    }
                };
                parts.push(format!(
                    "compute_at({}, {})",
                    p.funcs[c].name, st.dims[v].name
                ));
                placement[f] = Some("at");
                at[f] = Some((c, st.dims[v].name.clone()));
                // Store at or outside, with no parallel loop in between.
                if rng.chance(50) {
                    let mut w = v;
                    while w + 1 < st.dims.len()
                        && rng.chance(60)
                        && st.dims[w].kind != LoopKind::Parallel
                    {
                        w += 1;
                    }
                    if st.dims[v..w].iter().all(|d| d.kind != LoopKind::Parallel) {
                        parts.push(format!(
                            "store_at({}, {})",
                            p.funcs[c].name, st.dims[w].name
                        ));
                    }
                }
            } else {
                parts.push("compute_root()".into());
                placement[f] = Some("root");
            }
        }
        if func.dims() == 0 {
            chains.push((f, parts.join(".")));
            continue;
        }
        // Loop structure.
        let mut names: Vec<String> = func.vars.clone();
        for _ in 0..rng.below(4) {
            fresh += 1;
            let factor = *rng.pick(&[2, 3, 4, 5, 8, 16]);
            match rng.below(5) {
                0 | 1 => {
                    let old = rng.pick(&names).clone();
                    let (o, i) = (format!("{old}o{fresh}"), format!("{old}i{fresh}"));
                    parts.push(format!("split({old}, {o}, {i}, {factor})"));
                    names.retain(|n| *n != old);
                    names.push(o);
                    names.push(i);
                }
                2 if names.len() >= 2 => {
                    let mut order = names.clone();
                    for k in (1..order.len()).rev() {
                        order.swap(k, rng.below(k + 1));
                    }
                    parts.push(format!("reorder({})", order.join(", ")));
                }
                3 => {
                    let v = rng.pick(&names).clone();
                    parts.push(format!("vectorize({v}, {factor})"));
                }
                _ => {
                    let v = rng.pick(&names).clone();
                    parts.push(format!("unroll({v}, {})", factor.min(4)));
                }
            }
        }
        chains.push((f, parts.join(".")));
        let pure_chain = chains.len() - 1;
        // Update stages: random directives, kept where the schedule checks
        // (reordering or vectorizing a reduction whose order matters, or a
        // parallel loop that would race, is rejected).
        for k in 0..func.updates.len() {
            let mut names: Vec<String> = update_vars(p, f, k).into_iter().map(|(n, _)| n).collect();
            if names.is_empty() {
                // An update at one constant point has no loop to schedule.
                continue;
            }
            for _ in 0..rng.below(4) {
                fresh += 1;
                let factor = *rng.pick(&[2, 3, 4, 8]);
                let v = rng.pick(&names).clone();
                let (directive, split) = match rng.below(5) {
                    0 => {
                        let (o, i) = (format!("{v}o{fresh}"), format!("{v}i{fresh}"));
                        (format!("split({v}, {o}, {i}, {factor})"), Some((o, i)))
                    }
                    1 => {
                        let mut order = names.clone();
                        for j in (1..order.len()).rev() {
                            order.swap(j, rng.below(j + 1));
                        }
                        (format!("reorder({})", order.join(", ")), None)
                    }
                    2 => (format!("vectorize({v}, {factor})"), None),
                    3 => (format!("unroll({v}, {})", factor.min(4)), None),
                    _ => (format!("parallel({v})"), None),
                };
                let mut trial = chains.clone();
                trial.push((f, format!("update({k}).{directive}")));
                let full = format!("{source}\n{}", text(&trial));
                if pipeline_core::scheduled_from_source(&full, name).is_ok() {
                    chains = trial;
                    if let Some((o, i)) = split {
                        names.retain(|n| *n != v);
                        names.push(o);
                        names.push(i);
                    }
                }
            }
        }
        // A parallel loop where its iterations write disjoint slabs.
        if rng.chance(60) {
            let st = stage_of(&chains, f);
            let candidates: Vec<&str> = st
                .dims
                .iter()
                .map(|d| d.name.as_str())
                .filter(|n| {
                    st.roots.iter().any(|r| r == n)
                        || st
                            .split_creating_outer(n)
                            .is_some_and(|s| st.roots.contains(&s.old))
                })
                .collect();
            if !candidates.is_empty() {
                let v = rng.pick(&candidates).to_string();
                let last = &mut chains[pure_chain];
                if !last.1.is_empty() {
                    last.1.push('.');
                }
                last.1.push_str(&format!("parallel({v})"));
            }
        }
    }
    if chains.iter().any(|(_, c)| c.starts_with("update(")) {
        WITH_UPDATE_DIRECTIVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    // Producers placed after consumers are fine: the block is unordered.
    text(&chains)
}
