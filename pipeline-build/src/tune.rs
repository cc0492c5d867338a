//! The tuner: hill climbing over schedules, a round of candidates per
//! benchmark build, and the winner written to the crate's schedule cache.
//!
//! Per pipeline:
//!
//! 1. Round 0 times the auto-scheduler's choices (`Tunable::seeds`, the
//!    macro's own choice first) and, when resuming, the cache's entry.
//! 2. Each further round times the best so far beside its untried
//!    neighbours (`Tunable::mutations`), at most `per_round` of them; the
//!    fastest replaces it only if it is faster (median and fastest run,
//!    by 2%) in the round and again in a second run of the same binary:
//!    times are only ever compared within one run.
//! 3. Before timing, every candidate runs once at a small odd size and its
//!    outputs are compared with the interpreter's; one that differs is
//!    dropped and reported (it would be a bug of the compiler).
//! 4. Steps that each made a round's incumbent faster are tried together
//!    in the next round (the four best, two at a time), before the new
//!    best's neighbours.
//! 5. Once the best has no untried neighbour, the neighbours of the
//!    closest runners-up (by time over their round's incumbent) fill the
//!    rounds. It stops when the budget would run out during the next
//!    round and the final run (from the slowest round so far) or when no
//!    neighbour is left; the final run times the winner beside the
//!    auto-scheduler's choice, and the winner goes to
//!    `pipeline-schedules.toml` with that time.

use crate::bench::{Crate, Harness};
use crate::progress::{Progress, Report};
use crate::scan::{self, Found};
use crate::verify;
use pipeline_core::interp::Value;
use pipeline_core::ir::{Pipeline, Type};
use pipeline_core::schedule::auto::Machine;
use pipeline_core::schedule::cache::{self, CacheFile, Entry};
use pipeline_core::tune::{normalized, Candidate, Tunable};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What `cargo pipeline tune` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// The directory of the crate's `Cargo.toml`.
    pub root: PathBuf,
    /// The pipelines to tune, `NAME` or `FILE:NAME` (all that read the
    /// cache, when empty).
    pub names: Vec<String>,
    /// Tuning time per pipeline.
    pub budget: Duration,
    /// Width and height of the inputs to time at (`None`: the block's
    /// estimate, else 1920x1080).
    pub size: Option<(usize, usize)>,
    /// Candidates per round, besides the best so far.
    pub per_round: usize,
    /// Values of scalar parameters, `name=value` (others: 1, 1.0, true).
    pub params: Vec<(String, String)>,
    /// Only time the cache's entries beside the auto-scheduler's choice.
    pub report: bool,
    /// Write entries for every processor at this level, not only for
    /// this processor (`pipeline::rt::processor()`).
    pub any_processor: bool,
    /// Rounds of timing, and milliseconds each candidate runs per round
    /// (the candidates alternate).
    pub timing: (usize, usize),
}

impl Options {
    /// The defaults for the crate in `root`.
    pub fn new(root: PathBuf) -> Options {
        Options {
            root,
            names: Vec::new(),
            budget: Duration::from_secs(600),
            size: None,
            per_round: 8,
            params: Vec::new(),
            report: false,
            any_processor: false,
            timing: (3, 100),
        }
    }
}

/// The outcome for one pipeline.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The pipeline.
    pub name: String,
    /// Median time of the auto-scheduler's choice, in ns.
    pub auto_ns: u128,
    /// Median time of the winner, in ns, in the same run.
    pub tuned_ns: u128,
    /// The auto-scheduler's choice's fastest run, in ns.
    pub auto_min: u128,
    /// The winner's fastest run, in ns.
    pub tuned_min: u128,
    /// The winner's schedule.
    pub schedule: String,
    /// Where it came from.
    pub origin: String,
    /// Rounds and candidates timed.
    pub rounds: usize,
    /// Candidates timed.
    pub timed: usize,
    /// Total build time of the benchmark crates.
    pub build: Duration,
    /// Total tuning time.
    pub total: Duration,
}

/// Where the crate's dependencies and target directory are.
struct Metadata {
    target: PathBuf,
    pipeline: PathBuf,
}

fn metadata(root: &Path) -> Result<Metadata, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .map_err(|e| format!("cargo metadata does not start: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let target = json["target_directory"]
        .as_str()
        .ok_or("cargo metadata gave no target directory")?;
    let pipeline = json["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "pipeline")
        .and_then(|p| p["manifest_path"].as_str())
        .ok_or("the crate does not depend on `pipeline`")?;
    Ok(Metadata {
        target: PathBuf::from(target),
        pipeline: Path::new(pipeline).parent().unwrap().to_path_buf(),
    })
}

/// The value of each scalar parameter: `given` by name, else 1 (1.0, true).
fn param_values(p: &Pipeline, given: &[(String, String)]) -> Result<Vec<Value>, String> {
    p.params
        .iter()
        .map(|q| {
            let text = given
                .iter()
                .find(|(n, _)| *n == q.name)
                .map(|(_, v)| v.as_str());
            let bad = |v: &str| format!("`{v}` is not a value of `{}: {}`", q.name, q.ty.name());
            Ok(match (q.ty, text) {
                (Type::Bool, None) => Value::Bool(true),
                (Type::Bool, Some(v)) => Value::Bool(v.parse().map_err(|_| bad(v))?),
                (Type::F32, None) => Value::F32(1.0),
                (Type::F32, Some(v)) => Value::F32(v.parse().map_err(|_| bad(v))?),
                (Type::F64, None) => Value::F64(1.0),
                (Type::F64, Some(v)) => Value::F64(v.parse().map_err(|_| bad(v))?),
                (_, None) => Value::Int(1),
                (t, Some(v)) => {
                    let i: i128 = v.parse().map_err(|_| bad(v))?;
                    if i < t.int_min() || i > t.int_max() {
                        return Err(bad(v));
                    }
                    Value::Int(i)
                }
            })
        })
        .collect()
}

/// The size to time at: `--size`, else the first estimate's first two
/// extents, else 1920x1080.
fn timing_size(opts: &Options, size_class: &str) -> (usize, usize) {
    if let Some(s) = opts.size {
        return s;
    }
    let first = size_class.split(',').next().and_then(|p| p.split_once('='));
    if let Some((_, extents)) = first {
        let e: Vec<usize> = extents.split('x').filter_map(|x| x.parse().ok()).collect();
        if e.len() >= 2 && e[0] > 0 && e[1] > 0 {
            return (e[0], e[1]);
        }
    }
    (1920, 1080)
}

/// The origin of the cache's entry among the candidates.
const CACHED: &str = "the cache's entry";

/// The size every candidate is checked at: odd, so that split tails and
/// boundary conditions are exercised.
const VERIFY_SIZE: (usize, usize) = (67, 45);

/// One pipeline's tuning session.
struct Session {
    tunable: Tunable,
    found: Found,
    params: Vec<Value>,
    dir: PathBuf,
    target: PathBuf,
    pipeline_dir: PathBuf,
    size: (usize, usize),
    build: Duration,
    /// The level and processor the benchmarks ran on, as they report them.
    isa: String,
    processor: String,
    /// Rounds and milliseconds per candidate of this run's timing.
    timing: (usize, usize),
    /// For the progress bar: when this pipeline's tuning started, its
    /// budget, the round running, and the fastest runs of the best so far
    /// and of the auto-scheduler's choice (round 0's).
    start: Instant,
    budget: Duration,
    label: String,
    best_ns: Option<u128>,
    auto_ns: Option<u128>,
}

/// A timed candidate.
#[derive(Clone, Debug)]
struct Timed {
    candidate: Candidate,
    median: u128,
    min: u128,
}

/// A candidate replaces the best only when both its median and its
/// fastest run are faster by more than this fraction, so that noise does
/// not walk the search (a memory-bound kernel's fastest run alone is
/// luck: one chose 3 strips for 2 threads).
const MARGIN: f64 = 0.02;

/// The timing of the final run, whose figure is written and reported:
/// twice the rounds, three times the time per round (identical code timed
/// 3 x 100 ms apart read 0.88-1.16 of itself on a shared 2-core machine).
fn final_timing((rounds, millis): (usize, usize)) -> (usize, usize) {
    (rounds * 2, millis * 3)
}

fn faster(a: &Timed, b: &Timed) -> bool {
    let below = |x: u128, y: u128| (x as f64) < y as f64 * (1.0 - MARGIN);
    below(a.min, b.min) && below(a.median, b.median)
}

impl Session {
    /// Tells `log` what runs now.
    fn step(&self, log: &mut dyn Report, what: &str) {
        log.progress(Some(&Progress {
            pipeline: self.found.name.clone(),
            step: format!("{}: {what}", self.label),
            elapsed: self.start.elapsed(),
            budget: self.budget,
            best_ns: self.best_ns,
            auto_ns: self.auto_ns,
        }));
    }

    /// Builds, verifies and times `candidates`, the first the incumbent:
    /// the ones that ran and agreed with the interpreter, with their times,
    /// the winner (the incumbent unless another beat it twice) and the
    /// incumbent as timed in the same run as the winner (a challenger's
    /// win is timed in a second run, and times of two runs are never
    /// compared).
    fn round(
        &mut self,
        candidates: &[Candidate],
        log: &mut dyn Report,
    ) -> Result<(Vec<Timed>, Timed, Timed), String> {
        let invocations: Vec<String> = candidates
            .iter()
            .map(|c| self.tunable.invocation_with(&c.schedule))
            .collect();
        let harness = Harness {
            pipeline: self.tunable.pipeline(),
            strides: self.tunable.input_strides(),
            params: &self.params,
        };
        let main = harness.main_rs(&self.tunable.name(), &invocations)?;
        let krate = Crate::write(&self.dir, &self.target, &self.pipeline_dir, &main)
            .map_err(|e| format!("{}: {e}", self.dir.display()))?;
        self.step(log, &format!("building {} candidates", candidates.len()));
        let start = Instant::now();
        krate.build().map_err(|e| {
            format!(
                "the benchmark crate in {} does not build (a bug of the tuner or the macro; please report it):\n{e}",
                self.dir.display()
            )
        })?;
        let built = start.elapsed();
        self.build += built;
        // Verify at a small size against the interpreter.
        let dump = self.dir.join("verify");
        let _ = std::fs::remove_dir_all(&dump);
        std::fs::create_dir_all(&dump).map_err(|e| e.to_string())?;
        self.step(log, "checking outputs against the interpreter");
        let out = krate.run(&[
            "verify".into(),
            dump.display().to_string(),
            VERIFY_SIZE.0.to_string(),
            VERIFY_SIZE.1.to_string(),
        ])?;
        let mut good = vec![false; candidates.len()];
        let mut expected = None;
        for line in out.lines() {
            if let Some(isa) = line.strip_prefix("isa ") {
                self.isa = isa.to_string();
            }
            if let Some(p) = line.strip_prefix("processor ") {
                self.processor = p.to_string();
            }
            let words: Vec<&str> = line.splitn(4, ' ').collect();
            let (Some(k), Some(what)) = (
                words.get(1).and_then(|k| k.parse::<usize>().ok()),
                words.get(2),
            ) else {
                continue;
            };
            if k >= candidates.len() {
                continue;
            }
            match *what {
                "ran" => {
                    if expected.is_none() {
                        expected = Some(verify::expected(
                            self.tunable.pipeline(),
                            &self.params,
                            &dump,
                            k,
                        )?);
                    }
                    match verify::compare(self.tunable.pipeline(), &dump, k, expected.as_ref().unwrap()) {
                        Ok(()) => good[k] = true,
                        Err(e) => log.line(&format!(
                            "  candidate ({}) disagrees with the interpreter, dropped: {e}\n  (a bug of pipeline: please report it with this schedule)\n{}",
                            candidates[k].origin, candidates[k].schedule
                        )),
                    }
                }
                _ => log.line(&format!(
                    "  candidate ({}) failed to run: {}",
                    candidates[k].origin,
                    words.get(3).unwrap_or(&"")
                )),
            }
        }
        // Time at the size class; a challenger that beats the incumbent
        // must do it again in a second run of the same binary.
        self.step(
            log,
            &format!("timing {}", good.iter().filter(|&&g| g).count()),
        );
        let timed = self.time(&krate, candidates, &good, None)?;
        let incumbent = timed
            .iter()
            .find(|t| t.candidate == candidates[0])
            .cloned()
            .ok_or_else(|| format!("`{}` did not run", candidates[0].origin))?;
        let mut winner = (incumbent.clone(), incumbent.clone());
        let challenger = timed.iter().min_by_key(|t| t.min);
        if let Some(c) = challenger.filter(|c| faster(c, &incumbent)) {
            let k = candidates.iter().position(|x| *x == c.candidate).unwrap();
            self.step(
                log,
                &format!("timing {} again beside the best", c.candidate.origin),
            );
            let again = self.time(&krate, candidates, &good, Some(&[0, k]))?;
            let get = |x: &Candidate| again.iter().find(|t| t.candidate == *x).cloned();
            if let (Some(i), Some(c)) = (get(&candidates[0]), get(&c.candidate)) {
                if faster(&c, &i) {
                    winner = (c, i);
                } else {
                    log.line(&format!(
                        "  ({} was faster once, not in the second run)",
                        c.candidate.origin
                    ));
                }
            }
        }
        log.line(&format!(
            "  built {} candidates in {:.1} s, verified and timed {} in {:.1} s",
            candidates.len(),
            built.as_secs_f64(),
            timed.len(),
            (start.elapsed() - built).as_secs_f64()
        ));
        Ok((timed, winner.0, winner.1))
    }

    /// Times the candidates that agreed with the interpreter (`good`), or
    /// only those of `only`.
    fn time(
        &self,
        krate: &Crate,
        candidates: &[Candidate],
        good: &[bool],
        only: Option<&[usize]>,
    ) -> Result<Vec<Timed>, String> {
        let (rounds, millis) = self.timing;
        let mut args = vec![
            "time".to_string(),
            self.size.0.to_string(),
            self.size.1.to_string(),
            rounds.to_string(),
            millis.to_string(),
        ];
        if let Some(o) = only {
            let list: Vec<String> = o.iter().map(|k| k.to_string()).collect();
            args.push(list.join(","));
        }
        let out = krate.run(&args)?;
        let mut timed = Vec::new();
        for line in out.lines() {
            let words: Vec<&str> = line.split(' ').collect();
            if let ["cand", k, "time", median, min] = words[..] {
                let (Ok(k), Ok(median), Ok(min)) = (
                    k.parse::<usize>(),
                    median.parse::<u128>(),
                    min.parse::<u128>(),
                ) else {
                    continue;
                };
                if k < candidates.len() && good[k] {
                    timed.push(Timed {
                        candidate: candidates[k].clone(),
                        median,
                        min,
                    });
                }
            }
        }
        Ok(timed)
    }
}

/// Adds the candidates of a round but its incumbent to `runners`, scored
/// by fastest run over the incumbent's, best first.
fn score(runners: &mut Vec<(f64, Candidate)>, timed: &[Timed], incumbent: &Candidate) {
    if let Some(i) = timed.iter().find(|t| t.candidate == *incumbent) {
        for t in timed.iter().filter(|t| t.candidate != *incumbent) {
            runners.push((t.min as f64 / i.min as f64, t.candidate.clone()));
        }
        runners.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
}

/// How many of a round's candidates that beat its incumbent are paired.
const PAIRED: usize = 4;

/// The combinations, two at a time, of the steps of a round that made
/// `incumbent` faster (fastest run below its fastest; the best first),
/// checked.
fn improvements_paired(
    s: &Session,
    timed: &[Timed],
    incumbent: &Candidate,
) -> Vec<Result<Candidate, pipeline_core::tune::Rejected>> {
    let Some(base) = timed.iter().find(|t| t.candidate == *incumbent) else {
        return Vec::new();
    };
    let mut better: Vec<&Timed> = timed.iter().filter(|t| t.min < base.min).collect();
    better.sort_by_key(|t| t.min);
    better.truncate(PAIRED);
    let mut out = Vec::new();
    for (i, a) in better.iter().enumerate() {
        for b in &better[i + 1..] {
            out.extend(s.tunable.combination(incumbent, &a.candidate, &b.candidate));
        }
    }
    out
}

/// The search (steps 1, 2, 4 and 5 of the module's docs) from the
/// candidates of round 0, the auto-scheduler's choice first: the best
/// found, and how many rounds and candidates it took.
fn search(
    s: &mut Session,
    opts: &Options,
    first: &[Candidate],
    log: &mut dyn Report,
) -> Result<(Candidate, usize, usize), String> {
    let start = s.start;
    let mut tried: HashSet<String> = first.iter().map(|c| normalized(&c.schedule)).collect();
    log.line(&format!("  round 0: {} candidates", first.len()));
    s.label = "round 0".into();
    let round_start = Instant::now();
    let (timed, mut best, _) = s.round(first, log)?;
    let last_round = round_start.elapsed();
    let auto_first = timed
        .iter()
        .find(|t| t.candidate == first[0])
        .map(|t| t.min);
    s.auto_ns = auto_first;
    s.best_ns = Some(best.min);
    log.line(&format!(
        "  best so far {} ({}){}",
        ms(best.min),
        best.candidate.origin,
        auto_first
            .map(|a| format!(", auto {}", ms(a)))
            .unwrap_or_default()
    ));
    let mut rounds = 1;
    let mut count = first.len();
    let mut said = HashSet::new();
    // The next round's cost, from the slowest round so far per
    // candidate (builds of the same pipeline vary with what changed).
    let mut per_candidate = last_round / first.len().max(1) as u32;
    let next_round = |per: Duration| per * (opts.per_round as u32 + 1);
    // Every candidate timed so far with its time over its round's
    // incumbent's (times of different runs are never compared): once
    // the best has no untried neighbour, those of the closest runners-up
    // are tried, so the budget goes on searching.
    let mut runners: Vec<(f64, Candidate)> = Vec::new();
    let mut expanded: HashSet<String> = HashSet::new();
    score(&mut runners, &timed, &first[0]);
    // Pairs of steps that each made the last round's incumbent faster,
    // taken together: tried first in the next round.
    let mut pairs: Vec<Candidate> = Vec::new();
    // The final run (the winner beside auto, at `final_timing`, and again
    // if the winner wins) comes out of the budget too: a build of two
    // candidates and two timings of both.
    let (rounds_of, millis) = final_timing(opts.timing);
    let final_timings = Duration::from_millis((2 * 2 * rounds_of * millis) as u64);
    let final_run = |per: Duration| per * 2 + final_timings;
    while start.elapsed() + next_round(per_candidate) + final_run(per_candidate) < opts.budget {
        let mut fresh: Vec<Candidate> = Vec::new();
        for c in pairs.drain(..) {
            if fresh.len() < opts.per_round && tried.insert(normalized(&c.schedule)) {
                fresh.push(c);
            }
        }
        let sources = std::iter::once(&best.candidate).chain(runners.iter().map(|(_, c)| c));
        let mut from = Vec::new();
        for source in sources {
            if fresh.len() >= opts.per_round {
                break;
            }
            if expanded.contains(&normalized(&source.schedule)) {
                continue;
            }
            let (neighbours, rejected) = s.tunable.mutations(&source.schedule);
            // Each kind of step is said once: the same step from the
            // next best fails for the same reason.
            for r in rejected {
                if tried.insert(normalized(&r.schedule)) && said.insert(r.origin.clone()) {
                    log.line(&format!("  rejected ({}): {}", r.origin, r.reason));
                }
            }
            let untried: Vec<Candidate> = neighbours
                .into_iter()
                .filter(|c| !tried.contains(&normalized(&c.schedule)))
                .collect();
            let room = opts.per_round - fresh.len();
            if untried.len() <= room {
                expanded.insert(normalized(&source.schedule));
            }
            if !untried.is_empty() && source != &best.candidate {
                from.push(source.origin.clone());
            }
            for c in untried.into_iter().take(room) {
                tried.insert(normalized(&c.schedule));
                fresh.push(c);
            }
        }
        if fresh.is_empty() {
            log.line("  no untried neighbour of the best or the runners-up: done");
            break;
        }
        let mut candidates = vec![best.candidate.clone()];
        candidates.extend(fresh);
        count += candidates.len() - 1;
        log.line(&format!(
            "  round {rounds} ({:.0} s of {} s): the best and {} neighbours{}",
            start.elapsed().as_secs_f64(),
            opts.budget.as_secs(),
            candidates.len() - 1,
            if from.is_empty() {
                String::new()
            } else {
                format!(" (also of: {})", from.join("; "))
            }
        ));
        s.label = format!("round {rounds}");
        let round_start = Instant::now();
        let (timed, winner, _) = s.round(&candidates, log)?;
        per_candidate = per_candidate.max(round_start.elapsed() / candidates.len() as u32);
        rounds += 1;
        score(&mut runners, &timed, &candidates[0]);
        for p in improvements_paired(s, &timed, &candidates[0]) {
            match p {
                Ok(c) => pairs.push(c),
                Err(r) => {
                    if tried.insert(normalized(&r.schedule)) && said.insert(r.origin.clone()) {
                        log.line(&format!("  rejected ({}): {}", r.origin, r.reason));
                    }
                }
            }
        }
        if winner.candidate != best.candidate {
            log.line(&format!(
                "  best so far {} ({})",
                ms(winner.min),
                winner.candidate.origin
            ));
        }
        best = winner;
        s.best_ns = Some(best.min);
    }
    Ok((best.candidate, rounds, count))
}

/// Milliseconds, for messages.
fn ms(ns: u128) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// Tunes the crate's pipelines (or, with `opts.report`, times their cache
/// entries beside the auto-scheduler's choices), writing the winners to
/// its schedule cache; `log` receives the progress.
pub fn tune(opts: &Options, log: &mut dyn Report) -> Result<Vec<Outcome>, String> {
    let meta = metadata(&opts.root)?;
    let (found, skipped) = scan::pipelines(&opts.root);
    if !skipped.is_empty() {
        log.line(&format!(
            "skipped {} invocations that do not parse (their crate's build shows why):\n  {}",
            skipped.len(),
            skipped.join("\n  ")
        ));
    }
    // `NAME`, or `FILE:NAME` for the one in a file whose path ends so.
    let wanted = |f: &Found, n: &str| match n.rsplit_once(':') {
        Some((file, name)) => f.name == name && f.file.ends_with(file),
        None => f.name == n,
    };
    let selected: Vec<Found> = found
        .into_iter()
        .filter(|f| opts.names.is_empty() || opts.names.iter().any(|n| wanted(f, n)))
        .collect();
    for n in &opts.names {
        if !selected.iter().any(|f| wanted(f, n)) {
            return Err(format!("no pipeline `{n}` in {}", opts.root.display()));
        }
    }
    // A `--param` that no selected pipeline has is a mistake (a typo would
    // otherwise tune with the default value).
    for (name, _) in &opts.params {
        let known = selected.iter().any(|f| {
            pipeline_core::pipeline_from_source(&f.source, &f.name)
                .is_ok_and(|p| p.params.iter().any(|q| &q.name == name))
        });
        if !known {
            return Err(format!("no pipeline to tune has a parameter `{name}`"));
        }
    }
    // Where the macro reads the cache: PIPELINE_SCHEDULE_CACHE (relative to
    // the crate), else pipeline-schedules.toml beside Cargo.toml.
    let cache_path = match std::env::var_os(cache::CACHE_ENV) {
        Some(v) if v.is_empty() => {
            return Err(format!(
                "{} is empty: the cache is turned off",
                cache::CACHE_ENV
            ))
        }
        Some(v) => opts.root.join(v),
        None => opts.root.join(cache::FILE_NAME),
    };
    let created = !cache_path.exists();
    let mut file = match std::fs::read_to_string(&cache_path) {
        Ok(text) => CacheFile::parse(&text)
            .map_err(|(line, e)| format!("{}:{line}: {e}", cache_path.display()))?,
        Err(_) => CacheFile::default(),
    };
    // The entry written is for this processor's level (lowered by
    // PIPELINE_ISA), which the benchmarks run at and which the macro's
    // code dispatches on, and for this processor unless asked otherwise.
    let at = (std::env::consts::ARCH, pipeline::rt::isa().name());
    let processor = match opts.any_processor {
        true => "",
        false => pipeline::rt::processor(),
    };
    let machine = Machine::from_env()?;
    let mut outcomes = Vec::new();
    let mut done = Vec::new();
    for found in selected {
        let tunable = Tunable::from_source(&found.source, &found.name)?;
        let mut key = tunable.key(at);
        key.processor = processor.to_string();
        // The same algorithm in several files (an example a bench
        // includes) is one entry: tuned once.
        if done.contains(&key) {
            continue;
        }
        done.push(key.clone());
        if !tunable.consults_cache() {
            log.line(&format!(
                "{} ({}): its schedule block names funcs, and a block wins over the cache: not tuned",
                found.name,
                found.file.display()
            ));
            continue;
        }
        let params = param_values(tunable.pipeline(), &opts.params)?;
        let size = timing_size(opts, &key.size);
        let start = Instant::now();
        let mut s = Session {
            params,
            dir: meta.target.join("pipeline-tune").join(&found.name),
            target: meta.target.join("pipeline-tune").join("target"),
            pipeline_dir: meta.pipeline.clone(),
            size,
            build: Duration::ZERO,
            isa: String::new(),
            processor: String::new(),
            timing: opts.timing,
            tunable,
            found,
            start,
            budget: opts.budget,
            label: String::new(),
            best_ns: None,
            auto_ns: None,
        };
        log.line(&format!(
            "{} ({}): inputs {}x{}, size class `{}`, budget {} s",
            s.found.name,
            s.found.file.display(),
            size.0,
            size.1,
            key.size,
            opts.budget.as_secs()
        ));
        let (seeds, rejected) = s.tunable.seeds(&machine);
        for r in rejected {
            log.line(&format!("  rejected ({}): {}", r.origin, r.reason));
        }
        let auto = seeds
            .first()
            .cloned()
            .ok_or("the auto-scheduler's choice does not check")?;
        // It starts from the entry this processor runs now: its own, else
        // its level's.
        let fresh = file.lookup(&key).fresh;
        let serving = |processor: &str| {
            fresh.iter().find(|e| {
                e.key.arch == key.arch && e.key.isa == key.isa && e.key.processor == processor
            })
        };
        let cached = serving(&key.processor)
            .or_else(|| serving(""))
            .map(|e| e.schedule.clone());
        let mut first: Vec<Candidate> = seeds;
        let mut resumed = false;
        if let Some(text) = &cached {
            match s.tunable.check(text) {
                Ok(()) => {
                    first.insert(
                        1,
                        Candidate {
                            schedule: text.clone(),
                            origin: CACHED.into(),
                        },
                    );
                    resumed = true;
                }
                Err(e) => log.line(&format!("  the cache's entry is rejected: {e}")),
            }
        }
        if opts.report && !resumed {
            log.line("  no usable cache entry: nothing to report");
            continue;
        }
        // `--report` times the entry beside auto in the final run alone.
        let (mut best, rounds, count) = if opts.report {
            (first[1].clone(), 0, 0)
        } else {
            search(&mut s, opts, &first, log)?
        };
        // The final run: the winner beside the auto-scheduler's choice,
        // which stays unless the winner beats it again (twice, as in
        // every round).
        let pair: Vec<Candidate> = if best == auto {
            vec![auto.clone()]
        } else {
            vec![auto.clone(), best.clone()]
        };
        s.timing = final_timing(opts.timing);
        s.label = "final run beside auto".into();
        let (t, winner, beside) = s.round(&pair, log)?;
        log.progress(None);
        let get = |c: &Candidate| t.iter().find(|x| x.candidate == *c).cloned();
        // Both figures from one run: the winner's, where it won.
        let auto_t = match opts.report {
            true => get(&auto).ok_or("the auto-scheduler's choice did not run")?,
            false => beside,
        };
        let tuned_t = if opts.report {
            get(&best).ok_or("the cache's entry did not run")?
        } else {
            if winner.candidate != best {
                log.line(&format!(
                    "  the winner ({}) did not beat the auto-scheduler's choice in the final run: keeping auto",
                    best.origin
                ));
                best = auto.clone();
            }
            winner
        };
        let (auto_ns, tuned_ns) = (auto_t.median, tuned_t.median);
        let (auto_min, tuned_min) = (auto_t.min, tuned_t.min);
        let outcome = Outcome {
            name: s.found.name.clone(),
            auto_ns,
            tuned_ns,
            auto_min,
            tuned_min,
            schedule: best.schedule.clone(),
            origin: best.origin.clone(),
            rounds,
            timed: count,
            build: s.build,
            total: start.elapsed(),
        };
        log.line(&format!(
            "  auto {} (fastest {}), tuned {} (fastest {}): {:.2}x, {} rounds, {} candidates, {:.0} s ({:.0} s building)",
            ms(auto_ns),
            ms(auto_min),
            ms(tuned_ns),
            ms(tuned_min),
            tuned_ns as f64 / auto_ns as f64,
            rounds,
            count,
            outcome.total.as_secs_f64(),
            outcome.build.as_secs_f64()
        ));
        if s.isa != key.isa {
            return Err(format!(
                "the benchmarks ran at level `{}`, and the tuner at `{}`",
                s.isa, key.isa
            ));
        }
        if s.processor != pipeline::rt::processor() {
            return Err(format!(
                "the benchmarks ran on `{}`, and the tuner on `{}`",
                s.processor,
                pipeline::rt::processor()
            ));
        }
        if !opts.report {
            let entry = Entry {
                key: key.clone(),
                schedule: best.schedule.clone(),
                time_ns: Some(tuned_ns as u64),
                date: Some(today()),
                machine: machine_name(),
                line: 0,
            };
            file.entries.retain(|e| !cache::same_slot(&e.key, &key));
            file.entries.push(entry);
            std::fs::write(&cache_path, file.to_text())
                .map_err(|e| format!("{}: {e}", cache_path.display()))?;
            log.line(&format!("  written to {}", cache_path.display()));
            // A cache file the crate's last build did not see is not yet
            // an input of it: touching the pipeline's file rebuilds it.
            if created {
                touch(&s.found.file).map_err(|e| format!("{}: {e}", s.found.file.display()))?;
            }
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// Sets a file's modification time to now.
fn touch(path: &Path) -> std::io::Result<()> {
    std::fs::File::options()
        .append(true)
        .open(path)?
        .set_modified(std::time::SystemTime::now())
}

/// Today's date (UTC), `YYYY-MM-DD`.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_date(secs / 86400);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The calendar date of day `days` since 1970-01-01 (proleptic
/// Gregorian, in 400-year eras).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// The processor's name, where the system says it.
fn machine_name() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(20_418), (2025, 11, 26));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
    }

    #[test]
    fn sizes_from_estimates() {
        let o = Options::new(PathBuf::new());
        assert_eq!(timing_size(&o, "large"), (1920, 1080));
        assert_eq!(timing_size(&o, "input=640x480x3,out=640x480"), (640, 480));
    }
}
