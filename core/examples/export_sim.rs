//! `make bench-export-sim`: simulated exports of a root with 0–16 nested children, driven
//! by cdkd-core's execution decisions (`next_action`, `phase_done`, `wait_seconds`)
//! exactly as the export steps drive them, against a CloudFormation whose change sets
//! and stack operations take fixed simulated times. Prints, per tree, the makespan
//! against the critical path (the longest child's phases, then the root's), the same
//! export with one stack in flight at a time (siblings one after the other), and the
//! Step Functions state transitions (docs/export.md §10.6).
//!
//! Run: `cargo run -p cdkd-core --example export_sim`.

use cdkd_core::export::execute::{
    next_action, phase_done, wait_seconds, ExportRun, InFlight, Next, Pending, StackProgress,
    StackStage, MAX_IN_FLIGHT,
};
use cdkd_core::export::phases::Phase;
use cdkd_core::export::plan::{NestedRow, Plan, StackPlan};

/// Simulated latencies (milliseconds).
struct Latency {
    /// A Lambda step's invocation (the step's own calls included).
    step_ms: u64,
    /// A change set being created.
    change_set_ms: u64,
    /// An IMPORT executing, per stack (resources add `per_resource_ms` each).
    import_ms: u64,
    per_resource_ms: u64,
    /// An UPDATE executing (phase 2, or phase 1B's adoption).
    update_ms: u64,
    /// The flip's tag-only update.
    flip_ms: u64,
}

const LAT: Latency = Latency {
    step_ms: 400,
    change_set_ms: 12_000,
    import_ms: 25_000,
    per_resource_ms: 1_000,
    update_ms: 30_000,
    flip_ms: 20_000,
};

/// Resources per stack.
const RESOURCES: u64 = 10;

fn stack_plan(stack: &str, parent: Option<&str>) -> StackPlan {
    StackPlan {
        stack: stack.into(),
        cfn_stack_name: stack.replace('~', "-"),
        parent: parent.map(str::to_string),
        ..Default::default()
    }
}

/// A root with `children` nested children, leaf first as the plan lists them.
fn tree(children: usize) -> (Plan, ExportRun) {
    let mut stacks: Vec<StackPlan> = (0..children)
        .map(|i| stack_plan(&format!("App~C{i}"), Some("App")))
        .collect();
    let mut root = stack_plan("App", None);
    root.nested = (0..children)
        .map(|i| NestedRow {
            logical_id: format!("C{i}"),
            child_stack: format!("App~C{i}"),
            cfn_stack_name: format!("App-C{i}"),
        })
        .collect();
    stacks.push(root);
    let run = ExportRun {
        run_id: "sim".into(),
        kind: "export".into(),
        stacks: stacks
            .iter()
            .map(|s| StackProgress {
                stack: s.stack.clone(),
                cfn_stack_name: s.cfn_stack_name.clone(),
                parent: s.parent.clone(),
                stage: StackStage::Locked,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    (
        Plan {
            stacks,
            warnings: vec![],
        },
        run,
    )
}

/// How long a stack operation of `phase` runs once executed.
fn operation_ms(phase: Phase) -> u64 {
    match phase {
        Phase::Import => LAT.import_ms + RESOURCES * LAT.per_resource_ms,
        Phase::Update | Phase::Adopt => LAT.update_ms,
        Phase::Flip => LAT.flip_ms,
    }
}

/// The status a finished phase leaves its stack in.
fn status_after(phase: Phase) -> &'static str {
    match phase {
        Phase::Import | Phase::Adopt => "IMPORT_COMPLETE",
        Phase::Update | Phase::Flip => "UPDATE_COMPLETE",
    }
}

struct Sim {
    makespan_ms: u64,
    tasks: u64,
    waits: u64,
    choices: u64,
}

/// One export under the simulated CloudFormation, at most `bound` stacks in flight.
fn simulate(children: usize, bound: usize) -> Sim {
    let (plan, mut run) = tree(children);
    let mut now = 0u64;
    // In flight, with the time its current wait ends.
    let mut flying: Vec<(InFlight, u64)> = Vec::new();
    let (mut tasks, mut waits, mut choices) = (1u64, 0u64, 0u64); // the lock step
    now += LAT.step_ms;
    loop {
        let in_flight: Vec<InFlight> = flying.iter().map(|(f, _)| f.clone()).collect();
        let (next, stack) = next_action(&plan, &run, &in_flight, bound).expect("work");
        choices += 1; // Route
        let stack = stack.unwrap_or_default();
        match next {
            Next::Cleanup => {
                tasks += 1;
                now += LAT.step_ms;
                break;
            }
            Next::Wait => {
                waits += 1;
                now += wait_seconds(&in_flight, false) * 1000;
                tasks += 1; // the poll
                now += LAT.step_ms;
                let mut still = Vec::new();
                for (mut f, until) in flying {
                    if until > now {
                        f.polls += 1;
                        still.push((f, until));
                        continue;
                    }
                    match f.pending {
                        Pending::ChangeSet { .. } => {
                            f.ready = true;
                            still.push((f, until));
                        }
                        Pending::Stack { phase } => {
                            phase_done(&mut run, &f.stack, phase, status_after(phase));
                        }
                    }
                }
                flying = still;
            }
            Next::Execute => {
                tasks += 1;
                now += LAT.step_ms;
                let i = flying.iter().position(|(f, _)| f.stack == stack).unwrap();
                let phase = flying[i].0.pending.phase();
                flying[i] = (
                    InFlight {
                        stack,
                        pending: Pending::Stack { phase },
                        since_ms: now as i64,
                        ready: false,
                        polls: 0,
                    },
                    now + operation_ms(phase),
                );
            }
            Next::Import | Next::Phase2 | Next::Adopt | Next::Flip => {
                tasks += 1;
                now += LAT.step_ms;
                let (phase, pending) = match next {
                    Next::Flip => (Phase::Flip, Pending::Stack { phase: Phase::Flip }),
                    other => {
                        let phase = match other {
                            Next::Import => Phase::Import,
                            Next::Adopt => Phase::Adopt,
                            _ => Phase::Update,
                        };
                        (
                            phase,
                            Pending::ChangeSet {
                                phase,
                                arn: String::new(),
                            },
                        )
                    }
                };
                let until = now
                    + match phase {
                        Phase::Flip => operation_ms(Phase::Flip),
                        _ => LAT.change_set_ms,
                    };
                flying.push((
                    InFlight {
                        stack,
                        pending,
                        since_ms: now as i64,
                        ready: false,
                        polls: 0,
                    },
                    until,
                ));
            }
        }
    }
    Sim {
        makespan_ms: now,
        tasks,
        waits,
        choices,
    }
}

/// The critical path: a child's phases (1A, phase 2 with its Outputs, no flip needed),
/// then the root's (1A, 1B, phase 2); a flat stack only the root's without 1B.
fn critical_path_ms(children: usize) -> u64 {
    let child = LAT.change_set_ms
        + operation_ms(Phase::Import)
        + LAT.change_set_ms
        + operation_ms(Phase::Update);
    let root_adopt = if children > 0 {
        LAT.change_set_ms + operation_ms(Phase::Adopt)
    } else {
        0
    };
    let root = LAT.change_set_ms
        + operation_ms(Phase::Import)
        + root_adopt
        + LAT.change_set_ms
        + operation_ms(Phase::Update);
    if children > 0 {
        child + root
    } else {
        root
    }
}

fn main() {
    println!(
        "latencies: step {} ms, change set {} s, import {} s + {} s/resource ({} resources/stack), update {} s, flip {} s; in flight <= {}",
        LAT.step_ms,
        LAT.change_set_ms / 1000,
        LAT.import_ms / 1000,
        LAT.per_resource_ms / 1000,
        RESOURCES,
        LAT.update_ms / 1000,
        LAT.flip_ms / 1000,
        MAX_IN_FLIGHT
    );
    println!(
        "{:>8} {:>6} {:>8} {:>11} {:>7} {:>13} {:>7} {:>6} {:>6} {:>7}",
        "children",
        "stacks",
        "cp_s",
        "makespan_s",
        "ratio",
        "sequential_s",
        "ratio",
        "tasks",
        "waits",
        "trans"
    );
    for children in [0usize, 1, 2, 4, 8, 16] {
        let cp = critical_path_ms(children) as f64 / 1000.0;
        let par = simulate(children, MAX_IN_FLIGHT);
        let seq = simulate(children, 1);
        // Every Task, Wait and Choice entered is a state transition; before the lock
        // come the Plan task and the dry-run Choice, after the cleanup the final state.
        let trans = par.tasks + par.waits + par.choices + 3;
        println!(
            "{:>8} {:>6} {:>8.1} {:>11.1} {:>7.2} {:>13.1} {:>7.2} {:>6} {:>6} {:>7}",
            children,
            children + 1,
            cp,
            par.makespan_ms as f64 / 1000.0,
            par.makespan_ms as f64 / 1000.0 / cp,
            seq.makespan_ms as f64 / 1000.0,
            seq.makespan_ms as f64 / 1000.0 / cp,
            par.tasks,
            par.waits,
            trans
        );
    }
}
