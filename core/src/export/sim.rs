//! A simulated CloudFormation for the export's execution decisions (`make
//! bench-export-sim`, `make bench-export`; docs/export.md, "Waiting (export-poll)" and "Nested stacks (export-flip, export-adopt)"): drives
//! [`next_action`], [`phase_done`] and [`wait_seconds`] exactly as the export steps drive
//! them, against change sets and stack operations that take fixed simulated times, and
//! says how long the run takes (its makespan), against the critical path
//! CloudFormation's own operations set, and how many state transitions it pays.

use crate::export::execute::{
    next_action, phase_done, wait_seconds, ExportRun, InFlight, Next, Pending, StackProgress,
    StackStage,
};
use crate::export::phases::Phase;
use crate::export::plan::{NestedRow, Plan, StackPlan};
use crate::run::RunKind;

/// An export's shape: a root with `children` nested children (0: a flat stack), and the
/// resources each holds (an import takes longer with more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub children: usize,
    pub root_resources: u64,
    pub child_resources: u64,
}

impl Sim {
    /// Every Task, Wait and Choice entered is a state transition; before the lock come
    /// the Plan task and the dry-run Choice, after the cleanup the final state.
    pub fn transitions(&self) -> u64 {
        self.tasks + self.waits + self.choices + 3
    }
}

/// Simulated latencies (milliseconds).
pub struct Latency {
    /// A Lambda step's invocation (the step's own calls included).
    pub step_ms: u64,
    /// A change set being created.
    pub change_set_ms: u64,
    /// An IMPORT executing, per stack (resources add `per_resource_ms` each).
    pub import_ms: u64,
    pub per_resource_ms: u64,
    /// An UPDATE executing (phase 2, or phase 1B's adoption).
    pub update_ms: u64,
    /// The flip's tag-only update.
    pub flip_ms: u64,
}

pub const LAT: Latency = Latency {
    step_ms: 400,
    change_set_ms: 12_000,
    import_ms: 25_000,
    per_resource_ms: 1_000,
    update_ms: 30_000,
    flip_ms: 20_000,
};

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
        kind: RunKind::Export,
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

/// How long a stack operation of `phase` runs once executed, on a stack of `resources`.
fn operation_ms(phase: Phase, resources: u64) -> u64 {
    match phase {
        Phase::Import => LAT.import_ms + resources * LAT.per_resource_ms,
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

/// What one simulated export took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sim {
    pub makespan_ms: u64,
    pub tasks: u64,
    pub waits: u64,
    pub choices: u64,
}

/// One export of `shape` under the simulated CloudFormation, at most `bound` stacks in
/// flight.
pub fn simulate(shape: Shape, bound: usize) -> Sim {
    let (plan, mut run) = tree(shape.children);
    let resources = |stack: &str| {
        if stack.contains('~') {
            shape.child_resources
        } else {
            shape.root_resources
        }
    };
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
                let until = now + operation_ms(phase, resources(&stack));
                flying[i] = (
                    InFlight {
                        stack,
                        pending: Pending::Stack { phase },
                        since_ms: now as i64,
                        ready: false,
                        polls: 0,
                    },
                    until,
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
                        Phase::Flip => operation_ms(Phase::Flip, 0),
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
pub fn critical_path_ms(shape: Shape) -> u64 {
    let child = LAT.change_set_ms
        + operation_ms(Phase::Import, shape.child_resources)
        + LAT.change_set_ms
        + operation_ms(Phase::Update, shape.child_resources);
    let root_adopt = if shape.children > 0 {
        LAT.change_set_ms + operation_ms(Phase::Adopt, shape.root_resources)
    } else {
        0
    };
    let root = LAT.change_set_ms
        + operation_ms(Phase::Import, shape.root_resources)
        + root_adopt
        + LAT.change_set_ms
        + operation_ms(Phase::Update, shape.root_resources);
    if shape.children > 0 {
        child + root
    } else {
        root
    }
}
