//! Why an export is refused, as data (docs/export.md, "The lock (export-lock)",
//! "Change sets", "Interrupted and contested runs: resume, refusals, the lock first"):
//! what is refused, which stack, rows or run, and, by its kind, the way out. The
//! deciding modules return these (`execute::execution_refusal`,
//! `execute::record_changed_refusal`, `names::destination_refusal`,
//! `phases::size_refusal`, `Plan::blocked_refusal`, the planner's walk, the refusals
//! of `resume` before planning); they word nothing. The words are the refusal views'
//! (`core::view::refusal`), the same ones for the CLI, the steps and the plan summary.
//! Names are kept as read: a view prints each through the plain-value rule
//! ([`super::plain`]) or flattened.
//!
//! This module names only data (it imports no deciding module), so that every one of
//! them can return its refusals.

use super::blocked::BlockReason;
use super::phase::Phase;
use super::records::{DamagedRecord, RecordChanges};
use super::unmanaged::UnmanagedRow;
use crate::contention::Contention;
use crate::lock::FlowHolder;

/// An export refused before it changes anything.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportRefusal {
    /// A nested child (`nested`) of the tree of `stack` has children of its own:
    /// CloudFormation imports one level of nesting only, so there is no way on for this
    /// tree (decided before any lock).
    NestedTooDeep { stack: String, nested: String },
    /// No stack of the plan of `stack` has a resource to import: nothing for the
    /// phase-1 IMPORT, and nothing was changed.
    NothingToImport { stack: String },
    /// The record of `stack` read under the lock is not the one the plan of export
    /// `export` was made from (`changes`, by logical id): nothing was submitted and the
    /// locks were released; the way out is to plan again.
    RecordChanged {
        export: String,
        stack: String,
        changes: RecordChanges,
    },
    /// Another export run (`holder`) holds the lock of `stack` and runs (`known`), or
    /// cannot be checked from here; `phase`: its last logged step, when known. The way
    /// out is watching it, or (a run of another host that is gone) the same command
    /// again on that host or once the lock expires.
    LiveRun {
        stack: String,
        holder: FlowHolder,
        known: bool,
        phase: Option<String>,
    },
    /// Anyone but an export run holds the lock of `stack`, before planning: the
    /// contention names the holder and the way out.
    Locked {
        stack: String,
        contention: Box<Contention>,
    },
    /// The destination stack `cfn_stack` of `stack` exists (in `status`) and no export
    /// run of the record created it (it carries no record tag): the way out is another
    /// destination name, never deleting it (it may own resources).
    NotOurs {
        stack: String,
        cfn_stack: String,
        status: String,
    },
    /// The destination stack `cfn_stack` cannot be described (`error`, as CloudFormation
    /// said it): whether it is this record's run's cannot be told, so nothing is done.
    DestinationUnreadable { cfn_stack: String, error: String },
    /// The plan's destination `cfn_stack` for the cdkd stack `stack` exists (in
    /// `status`): the way out is another destination name.
    DestinationExists {
        stack: String,
        cfn_stack: String,
        status: String,
    },
    /// The full template of `stack` declares `count` resources, over CloudFormation's
    /// 500 (`phases::MAX_RESOURCES`): the way out is moving resources into nested
    /// stacks or another stack with cdkd. Nothing was locked or submitted.
    TooManyResources { stack: String, count: usize },
    /// A phase's template is over 1,000,000 bytes (what makes it large, and the way out,
    /// are in it). Nothing was locked or submitted.
    TemplateTooLarge(TooLarge),
    /// Resources the plan cannot export, one per logical id and stack (reasons folded
    /// under it, in the plan's order): the way out is destroying them or removing them
    /// from the app, then exporting again.
    Blocked { rows: Vec<BlockedResource> },
    /// A record of the tree the export refuses to read (the way out: repair it first).
    Damaged(DamagedRecord),
    /// The nested stack `child` has no state record (expected at `key`): redeploy the
    /// parent, or orphan its nested row.
    ChildWithoutRecord { child: String, key: String },
    /// The nested stack `child` is recorded in another region than its root `root`
    /// (`None`: a legacy record): cross-region nesting cannot be exported.
    ChildInOtherRegion {
        child: String,
        region: Option<String>,
        root: String,
        root_region: Option<String>,
    },
    /// The record of the nested stack `child` has no parent link (`parentStack`, schema
    /// 6): redeploy it with a current cdkd.
    ChildWithoutParentLink { child: String },
    /// The flat `stack` has resources for phase 2 but none to import: an IMPORT change
    /// set needs at least one.
    NoImportableResources { stack: String },
}

/// One resource the plan cannot export: its stack, logical id and type, and every
/// reason the plan gave for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedResource {
    pub stack: String,
    pub logical_id: String,
    pub resource_type: String,
    pub reasons: Vec<BlockReason>,
}

/// A phase's template over CloudFormation's 1,000,000 bytes (docs/export.md, "Change
/// sets"), refused before any call: which phase, which stack, its size, what makes it
/// large, and the way out that fits the largest part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub phase: Phase,
    pub cfn_stack: String,
    pub bytes: usize,
    /// What makes it large, largest first: up to ten parts of at least 4,096 bytes,
    /// else the three largest.
    pub parts: Vec<LargePart>,
    /// Parts of at least 4,096 bytes left unnamed beyond the ten.
    pub more: usize,
    pub way_out: SizeWayOut,
}

/// One part of an oversized template, with its serialized size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LargePart {
    pub bytes: usize,
    pub part: TemplatePart,
}

/// A part of a template a size refusal names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplatePart {
    /// One section of a resource (`Properties`, `Metadata`, `DependsOn` ...).
    Resource {
        logical_id: String,
        resource_type: String,
        section: String,
    },
    /// A top-level section other than `Resources` (`Mappings`, `Outputs` ...).
    Template { section: String },
}

/// The way out of an oversized template, by its largest part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeWayOut {
    /// The largest part is a resource's `Properties` (inline Lambda code, most often):
    /// move it to assets, or split the stack.
    MoveInlineCode,
    /// Another part: shrink the largest parts, or split the stack.
    ShrinkParts,
    /// Nothing to name: split the stack.
    Split,
}

/// A gate a planned export meets (docs/export.md, "Rows the template leaves out" and
/// "Warnings and printing"): a real run is refused on it before any lock unless its
/// flag is given; a dry run's plan shows it as a warning
/// (`PlanWarning::Gate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateRefusal {
    /// Rows of the record the template does not declare, with their stack: the export
    /// would delete their record and leave them running, owned by nothing
    /// (`--leave-unmanaged`).
    Unmanaged { rows: Vec<(String, UnmanagedRow)> },
    /// Custom Resources phase 2 creates again, re-running their create handlers
    /// (`--include-non-importable`).
    CustomResources { count: usize },
}
