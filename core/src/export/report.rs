//! The run's report (`report.json`, docs/export.md, "Failure (export-abort)"): how far each stack got, and on
//! a failure what must be redone by hand and the commands to do it. A value printed in a
//! command is a plain value or the placeholder of the printing rule.

use serde::{Deserialize, Serialize};

use crate::run::{Outcome, RunId, RunKind};

use super::execute::{ExportRun, InFlight, StackProgress, StackStage};
use super::plain::{is_plain, shown};
use super::plan::Plan;
use super::redo::{Absent, Redo, TemplateLeft};
use super::unmanaged::{report_entry, UnmanagedReport};

/// The report of an export run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportReport {
    pub run_id: RunId,
    /// `export`.
    pub kind: RunKind,
    /// `migrated`, `failed`, `refused`, `rejected` or `interrupted`.
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    pub stacks: Vec<StackReport>,
    /// What must be done by hand, in order: stored as words (docs/export.md, "Failure
    /// (export-abort)"), read back as [`Redo::Recorded`].
    #[serde(default)]
    pub redo: Vec<Redo>,
    /// Commands to paste, in order.
    #[serde(default)]
    pub commands: Vec<String>,
    /// Resources whose record the run deleted although the template did not declare
    /// them: nothing manages them now (docs/export.md, "Rows the template leaves out").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmanaged: Vec<UnmanagedReport>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackReport {
    pub stack: String,
    pub cfn_stack_name: String,
    pub stage: StackStage,
    pub imported_resources: usize,
    pub record_deleted: bool,
}

fn stack_report(s: &StackProgress) -> StackReport {
    StackReport {
        stack: s.stack.clone(),
        cfn_stack_name: s.cfn_stack_name.clone(),
        stage: s.stage,
        imported_resources: s.imported_resources,
        record_deleted: !s.deleted_keys.is_empty(),
    }
}

/// The rows the plan left out of each stack whose record the run deleted, each with how
/// to bring it back under management (docs/export.md, "Rows the template leaves out").
pub fn unmanaged(run: &ExportRun, plan: &Plan) -> Vec<UnmanagedReport> {
    run.stacks
        .iter()
        .filter(|s| s.stage == StackStage::Cleaned)
        .flat_map(|s| {
            plan.stacks
                .iter()
                .filter(|p| p.stack == s.stack)
                .flat_map(|p| p.unmanaged.iter())
                .map(|r| report_entry(&s.stack, &s.cfn_stack_name, &s.region, r))
        })
        .collect()
}

/// The report of a run that finished: every stack migrated and cleaned.
pub fn migrated(run: &ExportRun, plan: &Plan, left: &[TemplateLeft]) -> ExportReport {
    ExportReport {
        unmanaged: unmanaged(run, plan),
        run_id: run.run_id.clone(),
        kind: RunKind::Export,
        outcome: Outcome::Migrated,
        cause: None,
        stacks: run.stacks.iter().map(stack_report).collect(),
        redo: left.iter().cloned().map(Redo::TemplateLeft).collect(),
        commands: run
            .stacks
            .iter()
            .filter(|s| s.stage == StackStage::Cleaned && is_plain(&s.cfn_stack_name))
            .map(|s| {
                format!(
                    "aws cloudformation describe-stacks --stack-name {} --region {}",
                    s.cfn_stack_name,
                    shown(&s.region)
                )
            })
            .collect(),
    }
}

/// The report of a run that stopped on `cause`: per stack, what CloudFormation holds
/// now and what to redo. Records are only deleted after their stack migrated, so a stack
/// short of `Migrated` still has its cdkd record. A stack in `in_flight` had an operation
/// CloudFormation was still running (a sibling of the failed stack, or a wait past its
/// ceiling): it must settle before anything is done by hand, and an import in flight is
/// never told to delete its stack (once imported, deleting it deletes the resources).
pub fn failed(run: &ExportRun, cause: &str, in_flight: &[InFlight]) -> ExportReport {
    let mut redo = Vec::new();
    let mut commands = Vec::new();
    for f in in_flight {
        let Some(s) = run.stacks.iter().find(|s| s.stack == f.stack) else {
            continue;
        };
        redo.push(Redo::InFlight {
            stack: s.stack.clone(),
            cfn: s.cfn_stack_name.clone(),
            phase: f.pending.phase(),
        });
        commands.extend(cfn_command("describe-stacks", s, ""));
    }
    let submitted = run
        .stacks
        .iter()
        .any(|s| s.stage >= StackStage::Importing || s.withdrawn);
    // The stacks CloudFormation holds resources in: while they exist, the export cannot
    // be run again.
    let imported: Vec<&StackProgress> = run
        .stacks
        .iter()
        .filter(|s| s.stage >= StackStage::Imported)
        .collect();
    for s in &run.stacks {
        let (stack, cfn) = (s.stack.clone(), s.cfn_stack_name.clone());
        // A parent that must adopt children by hand: once CloudFormation holds its own
        // resources, the adoption (and before it the flip of any child still in
        // IMPORT_COMPLETE) comes before its own remaining steps, whose full template
        // names the children as nested stacks; before that, after them.
        let adoption = adoption_line(run, s);
        let adopt_first = s.stage >= StackStage::Imported;
        if adopt_first {
            if let Some(line) = &adoption {
                flips(run, s, &mut redo, &mut commands);
                redo.push(line.clone());
            }
        }
        match s.stage {
            StackStage::Planned | StackStage::Locked if s.withdrawn => {
                redo.push(Redo::Withdrawn { stack, cfn })
            }
            StackStage::Planned | StackStage::Locked if !submitted => {
                redo.push(Redo::NothingSubmitted { stack })
            }
            StackStage::Planned | StackStage::Locked => {
                redo.push(Redo::NothingSubmittedForIt { stack })
            }
            StackStage::Importing => {
                // The run's record may lag CloudFormation (the import may have completed
                // after the last save): never advise deleting the stack here.
                redo.push(Redo::ImportUnconfirmed { stack, cfn });
                commands.extend(cfn_command("describe-stacks", s, ""));
            }
            StackStage::Imported | StackStage::PreDeleted | StackStage::Updating => {
                // The same ways on a destroy or an orphan of the record names when it
                // refuses it (`super::held`).
                redo.push(Redo::Phase1Only {
                    stack,
                    cfn,
                    region: s.region.clone(),
                    imported: s.imported_resources,
                    phase2: s.phase2_resources,
                    pre_deleted: s.pre_deleted.clone(),
                });
                commands.extend(orphan_command(s, " --abandon-export"));
            }
            StackStage::Migrated => {
                redo.push(Redo::RecordKept { stack, cfn });
                commands.extend(orphan_command(s, ""));
            }
            StackStage::Cleaned => {}
        }
        if !adopt_first {
            if let Some(line) = adoption {
                flips(run, s, &mut redo, &mut commands);
                redo.push(line);
            }
        }
    }
    // Only while some stack is still short of its migration: once every one migrated, the
    // only work left is forgetting records, and exporting again is no remedy to mention.
    let unfinished = run.stacks.iter().any(|s| s.stage < StackStage::Migrated);
    if run.stacks.len() > 1 && !imported.is_empty() && unfinished {
        redo.push(Redo::ResumesThisRun {
            imported: imported
                .iter()
                .map(|s| (s.stack.clone(), s.cfn_stack_name.clone()))
                .collect(),
        });
    }
    ExportReport {
        run_id: run.run_id.clone(),
        kind: RunKind::Export,
        outcome: Outcome::Failed,
        cause: Some(cause.to_string()),
        stacks: run.stacks.iter().map(stack_report).collect(),
        redo,
        commands,
        unmanaged: Vec::new(),
    }
}

/// The report of a run refused before it locked anything (a held lock, a plan that
/// refuses, a record that changed since the plan): nothing was locked or changed.
pub fn refused(run_id: &str, run: Option<&ExportRun>, cause: &str) -> ExportReport {
    ExportReport {
        run_id: run_id.into(),
        kind: RunKind::Export,
        outcome: Outcome::Refused,
        cause: Some(cause.to_string()),
        stacks: run
            .map(|r| r.stacks.iter().map(stack_report).collect())
            .unwrap_or_default(),
        redo: vec![Redo::NothingLocked],
        commands: Vec::new(),
        unmanaged: Vec::new(),
    }
}

/// The error a rejected approval ends a run with (`cdkd-flow runs reject`).
pub const REJECTED: &str = "Rejected";

/// The report of an export that ended before any step wrote one (docs/export.md, "Failure (export-abort)"):
/// its plan or lock refused, its approval rejected (outcome `rejected`) or never
/// answered, or, with `resumed` (the run it was to resume), its resume refused. `why`:
/// the run's `error` and its cause, `<error>: <cause>` on one line, without a contention
/// refusal's force-unlock advice (as `core::view::contention::refused_cause` words it):
/// nothing here advises unlocking or deleting anything. `run`: the progress of the run
/// (the resumed one's), when it has any; a run with progress of its own took its locks,
/// and is reported `failed` with the same command as the way on (a local run whose abort
/// failed too).
pub fn ended_early(
    run_id: &str,
    run: Option<&ExportRun>,
    error: &str,
    why: &str,
    resumed: Option<&str>,
) -> ExportReport {
    let mut r = refused(run_id, run, why);
    if error == REJECTED {
        r.outcome = Outcome::Rejected;
    }
    if let (None, Some(run)) = (resumed, run) {
        // It took its locks (it has progress) and no step wrote its report: a local run
        // whose abort failed too. Something may have reached CloudFormation.
        r.outcome = Outcome::Failed;
        r.redo = took_locks_redo(run);
        return r;
    }
    if let Some(from) = resumed {
        r.redo = vec![
            Redo::NotResumed {
                run: from.to_string(),
            },
            Redo::FixThenResume,
        ];
    }
    r
}

/// What to do after a run that took its locks ended without its report: leave the
/// destination stacks when anything was submitted, the locks stay until a resume or
/// their expiry, and the same command is the way on.
fn took_locks_redo(run: &ExportRun) -> Vec<Redo> {
    let mut redo = Vec::new();
    if run.stacks.iter().any(|s| s.stage >= StackStage::Importing) {
        redo.push(Redo::MayHoldSubmitted);
    }
    redo.extend(pre_deleted_lines(run, None));
    redo.push(Redo::LocksMayStay);
    redo.push(Redo::FixThenResumeOrAnew);
    redo
}

/// The report of a deployed export stopped from outside (`runs stop --now`, its time
/// limit; docs/notifications.md, "What is published, and when"): outcome `failed`, never "nothing was locked". With
/// progress, where each stack stood and the way on of a run that took its locks; without,
/// a step still running when the execution stopped may yet take the locks, which the same
/// command takes over once that run has ended.
pub fn stopped_from_outside(
    run_id: &str,
    run: Option<&ExportRun>,
    error: &str,
    cause: &str,
) -> ExportReport {
    let why = format!(
        "{}: {}",
        crate::text::flatten_str(error),
        crate::text::flatten_str(cause)
    );
    let mut r = refused(run_id, run, &why);
    r.outcome = Outcome::Failed;
    r.redo = match run {
        Some(run) => took_locks_redo(run),
        None => vec![Redo::StoppedBeforeLocks, Redo::PlansAnew],
    };
    r
}

/// The report of a local run stopped by Ctrl-C (docs/cli.md, `runs --local`): where
/// each stack stood, and the command that resumes it. Nothing is to be done by hand:
/// the locks the run took stay held by it (so no deploy touches a half-migrated stack)
/// until it is resumed or they expire, and CloudFormation may still be working on a
/// change set it executed.
pub fn interrupted(
    run_id: &str,
    run: Option<&ExportRun>,
    plan: Option<&Plan>,
    cause: &str,
    resume: Option<&str>,
) -> ExportReport {
    let stacks: Vec<StackReport> = run
        .map(|r| r.stacks.iter().map(stack_report).collect())
        .unwrap_or_default();
    let submitted = stacks.iter().any(|s| s.stage >= StackStage::Importing);
    let mut redo = Vec::new();
    if submitted {
        redo.push(Redo::MayStillBeWorking);
    }
    if let Some(run) = run {
        redo.extend(pre_deleted_lines(run, plan));
    }
    if stacks.iter().any(|s| s.stage >= StackStage::Locked) {
        redo.push(Redo::LocksStay);
    }
    redo.push(Redo::RunAgainToResume {
        same: resume.is_some(),
    });
    ExportReport {
        run_id: run_id.into(),
        kind: RunKind::Export,
        outcome: Outcome::Interrupted,
        cause: Some(cause.to_string()),
        stacks,
        redo,
        commands: resume.map(str::to_string).into_iter().collect(),
        unmanaged: Vec::new(),
    }
}

/// For each stack stopped between its pre-deletes and the end of its phase 2
/// (docs/export.md, "Failure (export-abort)"): the IMPORT-unsupported resources the run deleted, which phase
/// 2 re-creates, are absent until the run is resumed and that phase completes. `plan`
/// gives their types (and what their absence means), when it could be read.
fn pre_deleted_lines(run: &ExportRun, plan: Option<&Plan>) -> Vec<Redo> {
    run.stacks
        .iter()
        .filter(|s| !s.pre_deleted.is_empty() && s.stage < StackStage::Migrated)
        .map(|s| {
            let type_of = |id: &str| {
                plan.and_then(|p| p.stacks.iter().find(|p| p.stack == s.stack))
                    .and_then(|p| p.phase2.pre_delete.iter().find(|r| r.logical_id == id))
                    .map(|r| r.resource_type.clone())
            };
            let rows: Vec<(String, Option<String>)> = s
                .pre_deleted
                .iter()
                .map(|id| (id.clone(), type_of(id)))
                .collect();
            let has = |ty: &str| rows.iter().any(|(_, t)| t.as_deref() == Some(ty));
            let mut meanwhile = Vec::new();
            if has("AWS::IAM::Policy") {
                meanwhile.push(Absent::IamPermissions);
            }
            if has("AWS::ApiGatewayV2::Stage") {
                meanwhile.push(Absent::ApiRequests);
            }
            if rows.iter().any(|(_, t)| t.is_none()) {
                meanwhile.push(Absent::Unknown);
            }
            Redo::PreDeleted {
                stack: s.stack.clone(),
                rows,
                meanwhile,
            }
        })
        .collect()
}

/// For a parent that did not finish: the children it must adopt by hand, which are
/// already imported (a by-hand IMPORT of the parent, or its redone adoption, must adopt
/// them, naming each by its StackId).
fn adoption_line(run: &ExportRun, p: &StackProgress) -> Option<Redo> {
    if p.stage >= StackStage::Migrated || p.adopted {
        return None;
    }
    let children = imported_children(run, p);
    if children.is_empty() {
        return None;
    }
    Some(Redo::Adoption {
        stack: p.stack.clone(),
        cfn: p.cfn_stack_name.clone(),
        own_imported: p.stage >= StackStage::Imported,
        children: children.iter().map(|c| c.cfn_stack_name.clone()).collect(),
    })
}

fn imported_children<'a>(run: &'a ExportRun, p: &StackProgress) -> Vec<&'a StackProgress> {
    run.stacks
        .iter()
        .filter(|c| {
            c.parent.as_deref() == Some(p.stack.as_str()) && c.stage >= StackStage::Imported
        })
        .collect()
}

/// The children of `p` to flip by hand before it can adopt them: migrated but still in
/// IMPORT_COMPLETE, which CloudFormation refuses to adopt (docs/export.md, "Nested stacks (export-flip, export-adopt)"). The flip
/// is the tag-only update the run could not do.
fn flips(run: &ExportRun, p: &StackProgress, redo: &mut Vec<Redo>, commands: &mut Vec<String>) {
    for c in imported_children(run, p) {
        if c.stage < StackStage::Migrated || c.flipped {
            continue;
        }
        redo.push(Redo::Flip {
            stack: c.stack.clone(),
            cfn: c.cfn_stack_name.clone(),
        });
        commands.extend(cfn_command(
            "update-stack",
            c,
            " --use-previous-template --tags Key=cdkd:nested-export-flip,Value=by-hand --capabilities CAPABILITY_IAM CAPABILITY_NAMED_IAM CAPABILITY_AUTO_EXPAND",
        ));
    }
}

/// `aws cloudformation <what> --stack-name <cfn> --region <region><rest>` for a stack,
/// only when its CloudFormation name and region are plain values (docs/export.md, "Values printed in messages").
fn cfn_command(what: &str, s: &StackProgress, rest: &str) -> Option<String> {
    (is_plain(&s.cfn_stack_name) && is_plain(&s.region)).then(|| {
        format!(
            "aws cloudformation {what} --stack-name {} --region {}{rest}",
            s.cfn_stack_name, s.region
        )
    })
}

/// The report's `cdkd-flow` commands with the state bucket (and the prefix, when not the
/// default) the run used: a message reaches people whose default bucket may be another
/// one, where `state orphan` would forget a record of the same name
/// (docs/notifications.md, "The SNS message"). A command whose values would not print as themselves is
/// left out.
pub fn with_state_location(mut r: ExportReport, bucket: &str, prefix: &str) -> ExportReport {
    let flags = crate::contention::state_location(bucket, prefix);
    r.commands = r
        .commands
        .into_iter()
        .filter_map(|c| {
            if !c.starts_with("cdkd-flow ") || c.contains(" --state-bucket ") {
                return Some(c);
            }
            flags.as_ref().map(|f| format!("{c}{f}"))
        })
        .collect();
    r
}

/// `cdkd-flow state orphan <stack> --stack-region <region><extra>`, only when both are
/// plain. `extra`: ` --abandon-export` for a stack that did not migrate (a whole-stack
/// orphan refuses it otherwise, `super::held`).
fn orphan_command(s: &StackProgress, extra: &str) -> Option<String> {
    (is_plain(&s.stack) && is_plain(&s.region)).then(|| {
        format!(
            "cdkd-flow state orphan {} --stack-region {}{extra}",
            s.stack, s.region
        )
    })
}
