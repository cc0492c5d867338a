//! GPU schedules lowered for the CUDA emitter: every pipeline of the
//! repository under its default GPU schedule (and hand-written `for cuda`
//! blocks), run by the lowered executor, gives the interpreter's results
//! at odd sizes, 1x1 included; and the loops that run on the GPU are
//! where the schedule put them.

use pipeline_core::interp;
use pipeline_core::ir::Stmt;
use pipeline_core::schedule::LoopKind;
use pipeline_core::Lowered;

mod corpus;
use corpus::*;
mod cuda;

/// The lowered executor against the interpreter at several sizes.
fn agrees(lowered: &Lowered, what: &str, rng: &mut Rng) {
    let p = &lowered.pipeline;
    for (w, h) in [(1usize, 1usize), (7, 5), (37, 11), (67, 45)] {
        let (inputs, outputs) = images(p, w, h, rng);
        let params = params_of(p);
        let (mut want, mut got) = (outputs.clone(), outputs);
        let expected = interp::run(p, &inputs, &params, &mut want);
        let actual = pipeline_core::exec::run_lowered(lowered, &inputs, &params, &mut got);
        match (expected, actual) {
            (Ok(()), Ok(())) => {
                if let Some(k) = (0..got.len()).find(|&k| !same_bits(&got[k], &want[k])) {
                    panic!(
                        "{what}: output {k} at {w}x{h} differs from the interpreter\n{}",
                        lowered.text()
                    );
                }
            }
            (Err(_), Err(_)) => {}
            (e, a) => panic!("{what} at {w}x{h}: the interpreter {e:?}, the executor {a:?}"),
        }
    }
}

/// The kinds of the loops of `s`, outermost first along each path.
fn kinds(s: &Stmt, out: &mut Vec<LoopKind>) {
    if let Stmt::For { kind, .. } = s {
        out.push(*kind);
    }
    for c in s.children() {
        kinds(c, out);
    }
}

#[test]
fn every_pipeline_under_its_default_gpu_schedule_agrees_with_the_interpreter() {
    let mut rng = Rng(0x6a75);
    let mut count = 0;
    for (source, name) in sources() {
        let bare = without_schedules(&source);
        let lowered = pipeline_core::cuda_lowered_from_source(&bare, &name)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut k = Vec::new();
        kinds(&lowered.body, &mut k);
        assert!(
            k.contains(&LoopKind::GpuThread) && k.contains(&LoopKind::GpuBlock),
            "{name}: no GPU loops\n{}",
            lowered.text()
        );
        agrees(&lowered, &name, &mut rng);
        count += 1;
    }
    assert!(count > 10, "only {count} pipelines");
}

#[test]
fn hand_written_gpu_schedules_agree_with_the_interpreter() {
    let mut rng = Rng(0x6a76);
    for (source, name, block) in cuda::hand_written() {
        let lowered = pipeline_core::cuda_lowered_from_source(&source, name)
            .unwrap_or_else(|e| panic!("{block}: {e}"));
        agrees(&lowered, block, &mut rng);
    }
}

#[test]
fn gpu_directives_that_cannot_be_honoured_are_errors() {
    let hist = "fn hist(input: Image<u8, 2>) -> Image<u32, 1> {
        h(i) = 0u32;
        for (rx, ry) in rdom(0..input.width(), 0..input.height()) {
            h(input(rx, ry) as i32) += 1;
        }
        h
    }";
    let source = format!("{hist}\nschedule hist for cuda {{ h.update(0).gpu_threads(ry); }}");
    let Err(e) = pipeline_core::cuda_lowered_from_source(&source, "hist") else {
        panic!("a scattering update ran on GPU threads");
    };
    assert!(e.contains("cannot run in parallel"), "{e}");
}
