//! The words of the typed refusals core's decisions return: each is its `Display`, a
//! pure function from the value to one message (the same words for the CLI, the
//! workflow steps and the deleters). The deciding modules build the values and word
//! nothing:
//!
//! - [`ExportRefusal`] (`export::refusal`: `execute::execution_refusal`,
//!   `execute::record_changed_refusal`, `names::destination_refusal`,
//!   `phases::size_refusal`, `Plan::blocked_refusal`, the planner's walk, the refusals
//!   of `export::resume`), [`TooLarge`] (`phases::delivery`) and [`PlanRefusal`]
//!   (`planner::plan_tree`);
//! - [`FinalSnapshotRefusal`] (`destroy::decide::final_snapshot_refusal`, a deleter's
//!   refusal of a delete that would lose its final snapshot), and [`RecordFailure`] /
//!   [`RecordSkip`] (`destroy::decide::decide`: a record failed or skipped before any
//!   call, the words of its row's outcome);
//! - [`Contention`] and [`LockRefusal`] (`contention`: a lock someone else holds, or
//!   one that cannot be read);
//! - [`Refusal`] (`destroy::refusals::check_plan`: a destroy refused before anything
//!   is deleted), and why an [`ExportHold`] refuses a destroy or a whole-stack orphan;
//! - [`DamagedRecord`] (`export::records::check_exportable`), [`CrossStackRefusal`]
//!   and its warning [`CrossStackReads`] (`export::consumers::verdict`);
//! - [`AnswerRefusal`] (`runs::answer_refusal`: `runs approve|reject --local` of a run
//!   that waits for nothing).
//!
//! The two repairs' refusals (`repair::refresh::ShapeRefusal`,
//! `repair::orphan::OrphanRefusal`) are worded by `view::repair`, `state::LegacyOnly`
//! and `state::ResolveRefusal` by `view::state::resolve`, the destroy dry run's
//! `destroy::dry_run::RunRefusal` by `view::plan`.
//!
//! A caller that turns one into an error takes its words here (the CLI through
//! `CliError::refused`, which accepts a [`TypedRefusal`] only). Untrusted values are
//! printed through the plain-value rule (`export::plain::shown`) or flattened, as each
//! message always did.

use std::fmt;

use crate::contention::{Contention, LockRefusal};
use crate::destroy::decide::{
    FinalSnapshot, FinalSnapshotRefusal, NoDeleter, RecordFailure, RecordSkip,
    FINAL_SNAPSHOT_UNSUPPORTED,
};
use crate::destroy::graph::DamagedResources;
use crate::destroy::refusals::{Damage, Refusal};
use crate::destroy::tree::{TreeRefusal, MAX_NESTING};
use crate::export::consumers::{ConsumerHit, CrossStackReads, CrossStackRefusal};
use crate::export::held::ExportHold;
use crate::export::phases::MAX_RESOURCES;
use crate::export::plain::{is_plain, shown};
use crate::export::plan::PlanRefusal;
use crate::export::records::{DamagedRecord, RecordChanges, CHANGES_NAMED};
use crate::export::refusal::{
    BlockedResource, ExportRefusal, LargePart, SizeWayOut, TemplatePart, TooLarge,
};
use crate::export::resume::RECORD_TAG;
use crate::lock::FlowHolder;
use crate::runs::{AnswerRefusal, NoWaiter};
use crate::state::RegionConflict;
use crate::text::{flatten_str, or_unrenderable, printable_str};
use crate::view::contention::contention_message;
use crate::view::runs::RESUME_UNPRINTABLE;

/// A refusal a decision returns as data, worded by this module (its `Display`). What
/// the CLI's `CliError::refused` takes: a message built anywhere else is not one.
pub trait TypedRefusal: fmt::Display {}

impl TypedRefusal for ExportRefusal {}
impl TypedRefusal for TooLarge {}
impl TypedRefusal for DamagedRecord {}
impl TypedRefusal for CrossStackRefusal {}
impl TypedRefusal for PlanRefusal {}
impl TypedRefusal for FinalSnapshotRefusal {}
impl TypedRefusal for Contention {}
impl TypedRefusal for LockRefusal {}
impl TypedRefusal for AnswerRefusal {}
impl TypedRefusal for Refusal {}
impl TypedRefusal for TreeRefusal {}

impl fmt::Display for ExportRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportRefusal::NestedTooDeep { stack, nested } => write!(
                f,
                "export of {}: its nested stack {} has nested stacks of its own; CloudFormation imports only one level of nesting (a stack with children cannot be adopted, nor a stack imported into a child), so this tree cannot be exported",
                shown(stack),
                shown(nested)
            ),
            ExportRefusal::NothingToImport { stack } => write!(
                f,
                "export of {}: no importable resources (nothing for the phase-1 IMPORT); nothing was changed",
                shown(stack)
            ),
            ExportRefusal::RecordChanged {
                export,
                stack,
                changes,
            } => write!(
                f,
                "export of {}: the cdkd record of {} changed after the plan was made (a cdkd deploy or destroy wrote it in between): {}. Nothing was submitted and the locks were released; exporting it as planned would have migrated a record the plan did not see, and deleted it. Run the export again to plan from the record as it is now (with --require-approval, the new plan is approved again)",
                shown(export),
                shown(stack),
                changes.describe()
            ),
            ExportRefusal::LiveRun {
                stack,
                holder,
                known,
                phase,
            } => live_run(f, stack, holder, *known, phase.as_deref()),
            ExportRefusal::Locked { stack, contention } => write!(
                f,
                "export of {} refused before planning: {contention}",
                shown(stack)
            ),
            ExportRefusal::NotOurs {
                stack,
                cfn_stack,
                status,
            } => write!(
                f,
                "export of {} refused: a CloudFormation stack named {} already exists (status {}) and no export run of {} created it (it has no {RECORD_TAG} tag naming this record); choose another destination with --cfn-stack-name (or --cfn-child-stack-name for a nested child)",
                shown(stack),
                shown(cfn_stack),
                or_unrenderable(printable_str(status)),
                shown(stack)
            ),
            ExportRefusal::DestinationUnreadable { cfn_stack, error } => write!(
                f,
                "cannot read CloudFormation stack {}: {error}",
                flatten_str(cfn_stack)
            ),
            ExportRefusal::DestinationExists {
                stack,
                cfn_stack,
                status,
            } => write!(
                f,
                "a CloudFormation stack named {} already exists (status {}); export creates that stack for {}, and no export run of this record created it (it may own resources): choose another destination with --cfn-stack-name / --cfn-child-stack-name",
                shown(cfn_stack),
                or_unrenderable(printable_str(status)),
                shown(stack)
            ),
            ExportRefusal::TooManyResources { stack, count } => write!(
                f,
                "the template of stack {} declares {count} resources; CloudFormation takes at most {MAX_RESOURCES} in one stack, so its change sets would be refused. Move resources into nested stacks (or another stack) with cdkd, then export; nothing was locked or submitted",
                flatten_str(stack)
            ),
            ExportRefusal::TemplateTooLarge(big) => {
                write!(f, "{big}; nothing was locked or submitted")
            }
            ExportRefusal::Blocked { rows } => blocked(f, rows),
            ExportRefusal::Damaged(d) => d.fmt(f),
            ExportRefusal::ChildWithoutRecord { child, key } => write!(
                f,
                "nested stack {} has no state record (expected {}); redeploy the parent, or orphan the parent's nested row, then export",
                shown(child),
                shown(key)
            ),
            ExportRefusal::ChildInOtherRegion {
                child,
                region,
                root,
                root_region,
            } => write!(
                f,
                "nested stack {} is recorded in region {} but its root {} in {}; cross-region nesting cannot be exported",
                shown(child),
                shown(region.as_deref().unwrap_or("(legacy)")),
                shown(root),
                shown(root_region.as_deref().unwrap_or("(legacy)"))
            ),
            ExportRefusal::ChildWithoutParentLink { child } => write!(
                f,
                "nested stack {} has a record without its parent link (parentStack, schema 6); redeploy the stack with a current cdkd, then export",
                shown(child)
            ),
            ExportRefusal::NoImportableResources { stack } => write!(
                f,
                "stack {} has no importable resources: an IMPORT change set needs at least one, and phase 2 cannot run without it",
                shown(stack)
            ),
        }
    }
}

/// A live run's refusal: who holds the stack, where it stands, and the command that
/// watches it (`--local` for a local run).
fn live_run(
    f: &mut fmt::Formatter<'_>,
    stack: &str,
    holder: &FlowHolder,
    known: bool,
    phase: Option<&str>,
) -> fmt::Result {
    let at = phase
        .map(|p| format!(", last step: {}", flatten_str(p)))
        .unwrap_or_default();
    match holder {
        FlowHolder::Deployed { run_id } => write!(
            f,
            "export of {} refused: run {} is exporting it now (a deployed run{at}); watch it with: cdkd-flow runs watch {}",
            shown(stack),
            shown(run_id),
            shown(run_id)
        ),
        FlowHolder::Local { run_id, pid, .. } if known => write!(
            f,
            "export of {} refused: run {} is exporting it now (process {pid} on this host{at}); watch it with: cdkd-flow runs watch {} --local",
            shown(stack),
            shown(run_id),
            shown(run_id)
        ),
        FlowHolder::Local { run_id, host, pid } => write!(
            f,
            "export of {} refused: run {} holds its lock from process {pid} on host {}{at}, which this host cannot check; if that process is gone, run the same command again on {} or once the lock expires, and it resumes the run; watch it with: cdkd-flow runs watch {} --local",
            shown(stack),
            shown(run_id),
            shown(host),
            shown(host),
            shown(run_id)
        ),
    }
}

/// The blocked rows' refusal: how many, the way out, then one bullet per resource,
/// its stack named, its reasons folded onto its line.
fn blocked(f: &mut fmt::Formatter<'_>, rows: &[BlockedResource]) -> fmt::Result {
    write!(
        f,
        "{} resource(s) cannot be exported; destroy them or remove them from the app, then export again:",
        rows.len()
    )?;
    for r in rows {
        let reasons: Vec<String> = r
            .reasons
            .iter()
            .map(|w| flatten_str(&w.to_string()))
            .collect();
        write!(
            f,
            "\n  - [{}] {} ({}): {}",
            shown(&r.stack),
            flatten_str(&r.logical_id),
            flatten_str(&r.resource_type),
            reasons.join(" / ")
        )?;
    }
    Ok(())
}

/// `State record for stack <s> (<region>) is damaged: ...` (names already shown) and
/// the way out.
/// Why a record whose body names another region is refused, and the way out (destroy's
/// and export's words alike).
struct RegionConflictWords<'a>(&'a RegionConflict, &'a str);

impl fmt::Display for RegionConflictWords<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = or_unrenderable(printable_str(self.1));
        write!(
            f,
            "the record's body names a different region ({}) than its key ({key}); it may describe resources in another region. Find where its resources are: if in {key}, a cdkd deploy of the stack there rewrites the record with that region; otherwise move the record under the key of the region that holds them",
            self.0.body_kind,
        )
    }
}

impl fmt::Display for DamagedRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const REPAIR: &str = "Export refuses it; repair the record first.";
        match self {
            DamagedRecord::Resources {
                stack,
                region,
                kind,
            } => write!(
                f,
                "State record for stack {stack} ({region}) is damaged: 'resources' is {kind}, not a JSON object. {REPAIR}"
            ),
            DamagedRecord::Properties {
                stack,
                region,
                logical_id,
                kind,
            } => write!(
                f,
                "State record for stack {stack} ({region}) is damaged: the 'properties' of resource {logical_id} is {kind}, not a JSON object. {REPAIR}"
            ),
            DamagedRecord::RegionConflict {
                stack,
                region,
                conflict,
                key_region,
            } => write!(
                f,
                "State record for stack {stack} ({region}): {}. Export refuses it, as destroy does; nothing was locked or written.",
                RegionConflictWords(conflict, key_region)
            ),
        }
    }
}

/// `the <phase> template of stack <s> is <n> bytes, over CloudFormation's 1,000,000;
/// the largest parts: ...`, then the way out.
impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self.parts.iter().map(large_part).collect();
        if self.more > 0 {
            parts.push(format!("+{} more", self.more));
        }
        let largest = if parts.is_empty() {
            String::new()
        } else {
            format!("; the largest parts: {}", parts.join(", "))
        };
        let way_out = match self.way_out {
            SizeWayOut::MoveInlineCode => {
                "Move inline Lambda code to assets, or split the stack into nested stacks, then export"
            }
            SizeWayOut::ShrinkParts => "Shrink the largest parts named (they are sent to CloudFormation with the template), or split the stack into nested stacks, then export",
            SizeWayOut::Split => "Split the stack into nested stacks, then export",
        };
        write!(
            f,
            "the {} template of stack {} is {} bytes, over CloudFormation's 1,000,000{largest}. {way_out}",
            self.phase.label(),
            flatten_str(&self.cfn_stack),
            self.bytes
        )
    }
}

/// `Metadata of Fn (AWS::Lambda::Function, 700123 bytes)`, `the template's Mappings
/// (5000 bytes)`.
fn large_part(p: &LargePart) -> String {
    let n = p.bytes;
    match &p.part {
        TemplatePart::Resource {
            logical_id,
            resource_type,
            section,
        } => format!(
            "{} of {} ({}, {n} bytes)",
            flatten_str(section),
            flatten_str(logical_id),
            flatten_str(resource_type)
        ),
        TemplatePart::Template { section } => {
            format!("the template's {} ({n} bytes)", flatten_str(section))
        }
    }
}

impl fmt::Display for PlanRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanRefusal::Export(r) => r.fmt(f),
            PlanRefusal::Name(r) => r.fmt(f),
            PlanRefusal::Param(r) => r.fmt(f),
            PlanRefusal::Gate(r) => r.fmt(f),
        }
    }
}

/// `FINAL_SNAPSHOT_UNSUPPORTED: <type> <logical id> in stack <stack> has DeletionPolicy
/// Snapshot (<the snapshot>), but <why>; nothing was deleted.` and the way out.
impl fmt::Display for NoDeleter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no deleter for {}: Cloud Control cannot delete it and cdkd-flow has no SDK deleter for it yet",
            self.resource_type
        )
    }
}

impl fmt::Display for FinalSnapshotRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let snapshot = match &self.snapshot {
            FinalSnapshot::Identifier(id) => format!("final snapshot {id}"),
            FinalSnapshot::SnapshotFirst => "a snapshot taken before the delete".to_string(),
        };
        write!(
            f,
            "{FINAL_SNAPSHOT_UNSUPPORTED}: {} {} in stack {} has DeletionPolicy Snapshot ({snapshot}), but {}; nothing was deleted. Snapshot and delete it by hand, or destroy with skipFinalSnapshot to delete it without a snapshot",
            self.resource_type, self.logical_id, self.stack, self.why
        )
    }
}

/// A record refused before any call: the words of its row's `failed` outcome.
impl fmt::Display for RecordFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordFailure::SnapshotThroughCloudControl { resource_type } => write!(
                f,
                "{FINAL_SNAPSHOT_UNSUPPORTED}: {resource_type} was created through Cloud Control, whose delete cannot take a final snapshot; delete it by hand or destroy with skipFinalSnapshot"
            ),
            RecordFailure::SnapshotUnsupported { resource_type } => write!(
                f,
                "{FINAL_SNAPSHOT_UNSUPPORTED}: DeletionPolicy Snapshot is not supported for {resource_type}; delete it by hand or destroy with skipFinalSnapshot"
            ),
            RecordFailure::ServiceTokenNotString => {
                f.write_str("custom resource ServiceToken is not a string")
            }
        }
    }
}

/// A record declined before any call: the words of its row's `skipped` outcome.
impl fmt::Display for RecordSkip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordSkip::NoProperties => {
                "custom resource has no recorded properties, so its handler cannot be called"
            }
            RecordSkip::NoServiceToken => {
                "custom resource has no ServiceToken, so its handler cannot be called"
            }
        })
    }
}

/// A deleter's error message takes the refusal's words (`DeleteError::new` takes any
/// `Into<String>`).
impl From<FinalSnapshotRefusal> for String {
    fn from(r: FinalSnapshotRefusal) -> String {
        r.to_string()
    }
}

/// The contention line ([`contention_message`]): holder, operation, since when, expiry,
/// and the recovery command or why none is shown.
impl fmt::Display for Contention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&contention_message(
            &self.context(),
            self.lock.as_ref(),
            self.now_ms,
        ))
    }
}

/// The contention line; for a lock that cannot be read, then `The lock of stack '<s>'
/// cannot be read: <error>`.
impl fmt::Display for LockRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockRefusal::Held(c) => c.fmt(f),
            LockRefusal::Unreadable { contention, error } => write!(
                f,
                "{contention} The lock of stack '{}' cannot be read: {}",
                or_unrenderable(printable_str(&contention.stack)),
                flatten_str(error)
            ),
        }
    }
}

/// `run <id> has ended (<outcome>)` or `run <id> is interrupted (<why>)`, what was
/// decided, why nothing would act on an answer, and an interrupted run's resume command.
impl fmt::Display for AnswerRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = &self.run_id;
        let decided = self
            .decided
            .as_deref()
            .map(|d| format!("; it was {}", flatten_str(d)))
            .unwrap_or_default();
        let nothing = format!(
            "no export process waits for a decision, so nothing would act on one; nothing to {}",
            self.verb
        );
        match &self.state {
            NoWaiter::Ended { outcome } => write!(
                f,
                "run {id} has ended ({}){decided}: {nothing}",
                flatten_str(outcome.as_str())
            ),
            NoWaiter::Interrupted { why, resume } => write!(
                f,
                "run {id} is interrupted ({}){decided}: {nothing}. Resume it with {}",
                flatten_str(&why.to_string()),
                resume.as_deref().unwrap_or(RESUME_UNPRINTABLE)
            ),
        }
    }
}

/// `refusing to destroy stack '<s>' (<region>): ` and why: a nested child alone, exports
/// still imported, a damaged record, a body naming another region, a cycle, or an
/// export holding the resources (with the way on each names).
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head = |f: &mut fmt::Formatter<'_>, stack: &str, region: &str| {
            write!(
                f,
                "refusing to destroy stack '{}' ({}): ",
                or_unrenderable(flatten_str(stack)),
                or_unrenderable(printable_str(region))
            )
        };
        match self {
            Refusal::NestedChild {
                stack,
                region,
                parent,
                parent_logical_id,
            } => {
                head(f, stack, region)?;
                write!(f, "it is a nested stack of '{}'", flatten_str(parent))?;
                if let Some(l) = parent_logical_id {
                    write!(f, " (resource {})", flatten_str(l))?;
                }
                write!(
                    f,
                    "; destroying it alone would leave the parent pointing at nothing. Destroy '{}' instead",
                    flatten_str(parent)
                )
            }
            Refusal::ActiveImports {
                stack,
                region,
                consumers,
            } => {
                head(f, stack, region)?;
                f.write_str("its exports are still imported by ")?;
                let list: Vec<String> = consumers
                    .iter()
                    .map(|c| {
                        format!(
                            "'{}' ({}) importing '{}'",
                            flatten_str(&c.consumer_stack),
                            or_unrenderable(printable_str(&c.consumer_region)),
                            flatten_str(&c.export_name)
                        )
                    })
                    .collect();
                write!(
                    f,
                    "{}; destroy or update those stacks first",
                    list.join(", ")
                )
            }
            Refusal::Damaged {
                stack,
                region,
                damage,
            } => {
                head(f, stack, region)?;
                f.write_str("the state record is damaged: ")?;
                match damage {
                    Damage::ResourcesAbsent => f.write_str("it has no resources object"),
                    Damage::ResourcesNotObject { kind } => {
                        write!(f, "resources is {kind}, not an object")
                    }
                    Damage::Entry(DamagedResources::EntryNotObject { logical_id }) => {
                        write!(f, "resource '{}' is not an object", flatten_str(logical_id))
                    }
                    Damage::Entry(DamagedResources::EntryWithoutType { logical_id }) => write!(
                        f,
                        "resource '{}' has no resourceType",
                        flatten_str(logical_id)
                    ),
                }
            }
            Refusal::DivergentRegion {
                stack,
                region,
                body_kind,
            } => {
                head(f, stack, region)?;
                let c = RegionConflict { body_kind };
                write!(f, "{}", RegionConflictWords(&c, region))
            }
            Refusal::Cycle {
                stack,
                region,
                cycle,
            } => {
                head(f, stack, region)?;
                let paths: Vec<String> = cycle
                    .cycles
                    .iter()
                    .map(|c| {
                        c.iter()
                            .map(|s| flatten_str(s))
                            .collect::<Vec<_>>()
                            .join(" -> ")
                    })
                    .collect();
                write!(
                    f,
                    "dependency cycle: {}; nothing was deleted",
                    paths.join("; ")
                )
            }
            Refusal::HeldByExport {
                stack,
                region,
                hold,
                flags,
            } => {
                head(f, stack, region)?;
                f.write_str(&hold.destroy_reason(flags.as_deref()))
            }
        }
    }
}

/// `Consumer → Stack.Out at Resources.X.Properties.Y`, one per hit: the names by the
/// printing rule (`shown`), the path flattened.
pub fn hit_lines(stack: &str, hits: &[ConsumerHit]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            format!(
                "{} \u{2192} {}.{} at {}",
                shown(&h.consumer),
                shown(stack),
                shown(&h.output),
                flatten_str(&h.path)
            )
        })
        .collect()
}

/// `other stacks read the outputs of <stack> (<reads>); after the export those reads
/// resolve through CloudFormation's outputs of the migrated stack`.
impl fmt::Display for CrossStackReads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "other stacks read the outputs of {} ({}); after the export those reads resolve through CloudFormation's outputs of the migrated stack",
            shown(&self.stack),
            hit_lines(&self.stack, &self.hits).join("; ")
        )
    }
}

/// `export of <stack>: other stacks read its outputs (<reads>); refused under
/// --strict-cross-stack: nothing was changed`.
impl fmt::Display for CrossStackRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.0;
        write!(
            f,
            "export of {}: other stacks read its outputs ({}); refused under --strict-cross-stack: nothing was changed",
            shown(&r.stack),
            hit_lines(&r.stack, &r.hits).join("; ")
        )
    }
}

/// What changed in a record between the plan and the lock, for its refusal.
impl RecordChanges {
    /// `rows added: Topic; rows changed: Queue; fields changed: outputs` (`the record is
    /// gone`), each group naming at most ten, then how many more.
    pub fn describe(&self) -> String {
        if self.gone {
            return "the record is gone".into();
        }
        let list = |ids: &[String]| {
            let mut named: Vec<String> = ids
                .iter()
                .take(CHANGES_NAMED)
                .map(|id| or_unrenderable(flatten_str(id)))
                .collect();
            if ids.len() > CHANGES_NAMED {
                named.push(format!("and {} more", ids.len() - CHANGES_NAMED));
            }
            named.join(", ")
        };
        [
            ("rows added", &self.added),
            ("rows removed", &self.removed),
            ("rows changed", &self.changed),
            ("fields changed", &self.fields),
        ]
        .iter()
        .filter(|(_, ids)| !ids.is_empty())
        .map(|(what, ids)| format!("{what}: {}", list(ids)))
        .collect::<Vec<_>>()
        .join("; ")
    }
}

/// Why a record whose resources a stopped export holds in CloudFormation refuses a
/// destroy or a whole-stack orphan (`export::held`), with the ways on.
impl ExportHold {
    /// What holds what: `CloudFormation stack App (UPDATE_ROLLBACK_COMPLETE) holds its
    /// resources: export run r1 imported them and stopped before it finished`.
    fn holds(&self) -> String {
        let end = if self.migrated {
            "and finished the migration, but the record was not deleted"
        } else {
            "and stopped before it finished"
        };
        format!(
            "CloudFormation stack {} ({}) holds its resources: export run {} imported them {end}",
            shown(&self.cfn_stack),
            or_unrenderable(printable_str(&self.status)),
            shown(&self.run_id)
        )
    }

    /// `cdkd-flow state orphan <stack> --stack-region <region>[ <extra>]<flags>`, when
    /// every value prints as itself; `flags`: the state bucket and prefix
    /// ([`state_flags`](crate::view::contention::state_flags)).
    fn orphan_command(&self, extra: &str, flags: Option<&str>) -> Option<String> {
        let flags = flags?;
        (is_plain(&self.record) && is_plain(&self.region)).then(|| {
            format!(
                "cdkd-flow state orphan {} --stack-region {}{extra}{flags}",
                self.record, self.region
            )
        })
    }

    /// The resume way on, the same for every refusal: the run finishes the migration
    /// and deletes the record itself.
    fn resume(&self) -> String {
        format!(
            "run the same cdkd-flow export command again: it resumes run {} and finishes the migration (the record is deleted then)",
            shown(&self.run_id)
        )
    }

    /// Why a destroy of the record is refused, after `refusing to destroy stack '<s>'
    /// (<r>): ` (docs/destroy.md, "Refusals before anything is deleted" step 8). A finished migration: forget the record
    /// (the run's own advice, docs/export.md, "Cleanup (export-cleanup)"). Otherwise: resume the run, or give
    /// the resources back to the record (DeletionPolicy Retain on each, then the
    /// CloudFormation stack deleted) and destroy again. No command deletes anything:
    /// CloudFormation keeps a resource on a stack delete only under DeletionPolicy
    /// Retain (RetainResources applies to a stack in DELETE_FAILED only), and phase 1
    /// gave every resource without a policy DeletionPolicy Delete.
    pub fn destroy_reason(&self, flags: Option<&str>) -> String {
        let cfn = shown(&self.cfn_stack);
        let head = format!(
            "{}; destroying the record would delete resources CloudFormation now owns",
            self.holds()
        );
        if self.migrated {
            let forget = match self.orphan_command("", flags) {
                Some(c) => format!(": {c}"),
                None => " with cdkd-flow state orphan".to_string(),
            };
            return format!(
                "{head}. Forget the record instead (CloudFormation keeps the resources){forget}"
            );
        }
        format!(
            "{head}. Either {}; or give the resources back to the record: update {cfn} so that every resource in it has DeletionPolicy Retain, delete {cfn} once that update is complete (its resources stay), then run this destroy again",
            self.resume()
        )
    }

    /// Why a whole-stack orphan of the record is refused (docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]"): the
    /// migration is half done. Resume the run, or finish it by hand, then forget the
    /// record with `--abandon-export`. A finished migration is never refused: forgetting
    /// the record is then what is left to do.
    pub fn orphan_reason(&self, flags: Option<&str>) -> String {
        let forget = match self.orphan_command(" --abandon-export", flags) {
            Some(c) => format!(": {c}"),
            None => " with cdkd-flow state orphan and --abandon-export".to_string(),
        };
        format!(
            "{}; forgetting the record now would leave the migration half done. Either {}; or finish it by hand (the full template applied to {} with an UPDATE change set), then forget the record{forget}",
            self.holds(),
            self.resume(),
            shown(&self.cfn_stack)
        )
    }
}

/// A destroy's tree that cannot be loaded (`destroy::tree::record_region`,
/// `check_depth`): no single record (the state views' words), only the legacy record, or
/// too deep a nesting.
impl fmt::Display for TreeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |s: &str| or_unrenderable(printable_str(s));
        match self {
            TreeRefusal::Resolve(r) => r.fmt(f),
            TreeRefusal::LegacyOnly { stack } => write!(
                f,
                "Stack '{}' has only a legacy state record without a region. A cdkd write migrates it to the region-scoped layout; re-run the destroy after it.",
                name(stack)
            ),
            TreeRefusal::TooDeep { stack, region } => write!(
                f,
                "Stack '{}' ({region}) is nested more than {MAX_NESTING} levels deep; refusing to destroy",
                name(stack)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contention::{ContentionContext, Subject};
    use crate::export::blocked::BlockReason;
    use crate::export::phase::Phase;
    use crate::lock::parse_lock;
    use crate::run::Outcome;
    use crate::runs::Interruption;

    /// A consumer hit's line: the names by the printing rule, the path flattened.
    #[test]
    fn the_words_of_consumer_hits() {
        let hit = |consumer: &str, output: &str, path: &str| ConsumerHit {
            consumer: consumer.into(),
            output: output.into(),
            path: path.into(),
        };
        let hits = [
            hit(
                "Web",
                "QueueUrl",
                "Resources.Fn.Properties.Environment.Variables.Q",
            ),
            hit("We\nb", "Out\u{1b}[2J", "Resources.A\nB[0]\u{7}"),
            hit("", "x y", ""),
        ];
        let mut lines = hit_lines("App", &hits);
        lines.extend(hit_lines("App\r\n", &hits[..1]));
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// Every export refusal a decision returns, one line each (a blank line between
    /// them), with a value that is not plain where the message prints one.
    #[test]
    fn export_refusals_each_name_what_which_and_the_way_out() {
        let contention = Contention::new(
            &ContentionContext {
                subject: Subject::Stack,
                stack: "Orders",
                region: Some("us-east-1"),
                profile: None,
                bucket: Some("state-bucket"),
                prefix: "cdkd",
            },
            None,
            0,
        );
        let changes = RecordChanges {
            added: vec!["NewTopic".into()],
            fields: vec!["outputs".into()],
            ..Default::default()
        };
        let all = [
            ExportRefusal::NestedTooDeep {
                stack: "App".into(),
                nested: "App~Db".into(),
            },
            ExportRefusal::NothingToImport {
                stack: "App".into(),
            },
            ExportRefusal::RecordChanged {
                export: "App".into(),
                stack: "App~Db".into(),
                changes,
            },
            ExportRefusal::LiveRun {
                stack: "Orders".into(),
                holder: FlowHolder::Deployed {
                    run_id: "export-Orders-1".into(),
                },
                known: true,
                phase: Some("import: created change set".into()),
            },
            ExportRefusal::LiveRun {
                stack: "Orders".into(),
                holder: FlowHolder::Local {
                    run_id: "r1".into(),
                    host: "laptop".into(),
                    pid: 42,
                },
                known: true,
                phase: None,
            },
            ExportRefusal::LiveRun {
                stack: "Orders".into(),
                holder: FlowHolder::Local {
                    run_id: "r1".into(),
                    host: "other host".into(),
                    pid: 42,
                },
                known: false,
                phase: Some("lock".into()),
            },
            ExportRefusal::Locked {
                stack: "Orders".into(),
                contention: Box::new(contention),
            },
            ExportRefusal::NotOurs {
                stack: "Orders".into(),
                cfn_stack: "Orders".into(),
                status: "UPDATE_COMPLETE".into(),
            },
            ExportRefusal::DestinationUnreadable {
                cfn_stack: "Orders".into(),
                error: "Access denied".into(),
            },
            ExportRefusal::DestinationExists {
                stack: "App~Db".into(),
                cfn_stack: "App-Db".into(),
                status: "REVIEW_IN_PROGRESS\n".into(),
            },
            ExportRefusal::TooManyResources {
                stack: "Big".into(),
                count: 501,
            },
            ExportRefusal::TemplateTooLarge(TooLarge {
                phase: Phase::Import,
                cfn_stack: "Big".into(),
                bytes: 1_000_001,
                parts: Vec::new(),
                more: 0,
                way_out: SizeWayOut::Split,
            }),
            ExportRefusal::Blocked {
                rows: vec![
                    BlockedResource {
                        stack: "App".into(),
                        logical_id: "Queue".into(),
                        resource_type: "AWS::SQS::Queue".into(),
                        reasons: vec![
                            BlockReason::Recorded("first reason".into()),
                            BlockReason::Recorded("second\nreason".into()),
                        ],
                    },
                    BlockedResource {
                        stack: "App ~Db".into(),
                        logical_id: "Topic".into(),
                        resource_type: "AWS::SNS::Topic".into(),
                        reasons: vec![BlockReason::Recorded("why".into())],
                    },
                ],
            },
            ExportRefusal::ChildWithoutRecord {
                child: "App~Db".into(),
                key: "cdkd/App~Db/us-east-1/state.json".into(),
            },
            ExportRefusal::ChildInOtherRegion {
                child: "App~Db".into(),
                region: Some("eu-west-1".into()),
                root: "App".into(),
                root_region: None,
            },
            ExportRefusal::ChildWithoutParentLink {
                child: "App~Db".into(),
            },
            ExportRefusal::NoImportableResources {
                stack: "$(rm -rf)".into(),
            },
        ];
        let text: Vec<String> = all.iter().map(ToString::to_string).collect();
        insta::assert_snapshot!(text.join("\n\n"));
    }

    /// An oversized template names its largest parts (ten, then how many more) and the
    /// way out that fits its largest part.
    #[test]
    fn too_large_names_the_parts_the_count_beyond_ten_and_the_way_out() {
        let part = |i: usize| LargePart {
            bytes: 90_000 - i,
            part: TemplatePart::Resource {
                logical_id: format!("Fn{i}"),
                resource_type: "AWS::Lambda::Function".into(),
                section: "Properties".into(),
            },
        };
        let mut big = TooLarge {
            phase: Phase::Update,
            cfn_stack: "App".into(),
            bytes: 1_200_000,
            parts: (0..10).map(part).collect(),
            more: 2,
            way_out: SizeWayOut::MoveInlineCode,
        };
        let many = big.to_string();
        big.parts = vec![LargePart {
            bytes: 6000,
            part: TemplatePart::Template {
                section: "Mappings".into(),
            },
        }];
        big.more = 0;
        big.way_out = SizeWayOut::ShrinkParts;
        let one = ExportRefusal::TemplateTooLarge(big).to_string();
        insta::assert_snapshot!(format!("{many}\n---\n{one}"));
    }

    #[test]
    fn plan_refusal_is_the_words_of_the_refusal_it_carries() {
        let typed = PlanRefusal::from(ExportRefusal::NothingToImport {
            stack: "App".into(),
        });
        assert_eq!(
            typed.to_string(),
            "export of App: no importable resources (nothing for the phase-1 IMPORT); nothing was changed"
        );
        let gate = crate::export::refusal::GateRefusal::CustomResources { count: 1 };
        assert_eq!(
            PlanRefusal::Gate(gate.clone()).to_string(),
            gate.to_string()
        );
        let name = crate::export::names::NameRefusal::Twice { stack: "A".into() };
        assert_eq!(
            PlanRefusal::from(name.clone()).to_string(),
            name.to_string()
        );
        let param = crate::export::params::ParamRefusal::NoParametersSection;
        assert_eq!(
            PlanRefusal::from(param.clone()).to_string(),
            param.to_string()
        );
    }

    #[test]
    fn a_record_failed_or_skipped_before_any_call_is_worded_for_its_row_statements_19_20_42() {
        let ty = || "AWS::RDS::DBInstance".to_string();
        let lines = [
            RecordFailure::SnapshotThroughCloudControl {
                resource_type: ty(),
            }
            .to_string(),
            RecordFailure::SnapshotUnsupported {
                resource_type: ty(),
            }
            .to_string(),
            RecordFailure::ServiceTokenNotString.to_string(),
            RecordSkip::NoProperties.to_string(),
            RecordSkip::NoServiceToken.to_string(),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn final_snapshot_refusal_names_both_snapshot_kinds() {
        let mut r = FinalSnapshotRefusal {
            resource_type: "AWS::EC2::Volume".into(),
            logical_id: "Disk".into(),
            stack: "Shop".into(),
            snapshot: FinalSnapshot::SnapshotFirst,
            why: "no deleter for the type can take one".into(),
        };
        let first = String::from(r.clone());
        r.snapshot = FinalSnapshot::Identifier("db-final-1".into());
        insta::assert_snapshot!(format!("{first}\n---\n{r}"));
    }

    /// A held lock says the contention alone; an unreadable one says why after it.
    #[test]
    fn lock_refusals_are_the_contention_and_an_unreadable_lock_s_error() {
        let ctx = ContentionContext {
            subject: Subject::NestedStackChild,
            stack: "App~Db",
            region: Some("us-east-1"),
            profile: Some("dev"),
            bucket: Some("state-bucket"),
            prefix: "cdkd",
        };
        let body = br#"{"owner":"alice@laptop","operation":"deploy","timestamp":1767225000000,"expiresAt":1767226800000}"#;
        let lock = parse_lock(body).unwrap().unwrap();
        let now = 1_767_225_600_000;
        let held = LockRefusal::Held(Contention::new(&ctx, Some(&lock), now));
        assert_eq!(held.to_string(), contention_message(&ctx, Some(&lock), now));
        let unread = LockRefusal::Unreadable {
            contention: Contention::new(&ctx, None, now),
            error: "AccessDenied:\nnot allowed".into(),
        };
        insta::assert_snapshot!(format!("{held}\n---\n{unread}"));
    }

    #[test]
    fn answer_refusal_of_an_interrupted_run_without_a_printable_command() {
        let r = AnswerRefusal {
            run_id: "export-Orders-1".into(),
            verb: "approve".into(),
            decided: None,
            state: NoWaiter::Interrupted {
                why: Interruption::Recorded("its process is gone".into()),
                resume: None,
            },
        };
        assert_eq!(
            r.to_string(),
            format!("run export-Orders-1 is interrupted (its process is gone): no export process waits for a decision, so nothing would act on one; nothing to approve. Resume it with {RESUME_UNPRINTABLE}")
        );
        let ended = AnswerRefusal {
            state: NoWaiter::Ended {
                outcome: Outcome::Rejected,
            },
            decided: Some("rejected by bob".into()),
            verb: "reject".into(),
            ..r
        };
        assert_eq!(
            ended.to_string(),
            "run export-Orders-1 has ended (rejected); it was rejected by bob: no export process waits for a decision, so nothing would act on one; nothing to reject"
        );
    }

    /// No deleter for a type; a record whose body names another region, as export words
    /// it (destroy's words are pinned above), with a hostile key region.
    #[test]
    fn no_deleter_and_export_region_conflict_words() {
        let no = crate::destroy::decide::NoDeleter {
            resource_type: "AWS::IAM::User".into(),
        };
        let damaged = DamagedRecord::RegionConflict {
            stack: "App".into(),
            region: "eu-west-1".into(),
            conflict: RegionConflict {
                body_kind: "a string",
            },
            key_region: "eu-west-1\n\x1b[2J".into(),
        };
        insta::assert_snapshot!(format!("{no}\n---\n{damaged}"));
    }
}
