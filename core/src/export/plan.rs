//! The plan as data (`<run>/plan.json`, docs/export.md, "Workflow") and the functions that
//! build it: [`plan_needs`] says what the step must gather, [`plan_tree`] decides.
//! Stacks are ordered leaf first (depth-first post-order, children in template order).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::blocked::BlockReason;
use super::drift::TemplateSource;
use super::iam::{PolicyTargets, TemplatePrincipals};
use super::names::{Destination, NameRefusal};
use super::params::{NestedRefusal, ParamRefusal, ParamSource, SsmRead, UnreadSsm};
use super::records::{self};
use super::refusal::{BlockedResource, ExportRefusal, GateRefusal};
use super::registry::TypeFacts;
use super::sg::SgLookup;
use super::template::Template;
use super::unmanaged::UnmanagedRow;
use super::warning::PlanWarning;
use crate::state::StateRecord;

/// One stack as the step loaded it.
#[derive(Clone, Debug)]
pub struct StackInput {
    /// The cdkd stack name of the record's key.
    pub stack: String,
    /// The record key's region (`None`: a legacy key).
    pub region: Option<String>,
    pub record: StateRecord,
    /// The quoted ETag `record` was read at (`None` in tests).
    pub etag: Option<String>,
    pub template: Template,
    /// Where the CLI uploaded this stack's template.
    pub template_key: String,
}

/// The root and every nested child that could be loaded, by cdkd name.
#[derive(Clone, Debug)]
pub struct TreeInput {
    pub root: StackInput,
    pub children: BTreeMap<String, StackInput>,
}

/// The command's planning options.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    pub include_non_importable: bool,
    pub no_recreate_import_unsupported: bool,
    pub skip_import_support_preflight: bool,
    pub dry_run: bool,
    pub cfn_stack_name: Option<String>,
    /// Raw `--cfn-child-stack-name` tokens (parsed only on a nested export).
    pub cfn_child_stack_names: Vec<String>,
    /// Raw `--parameter` tokens.
    pub parameters: Vec<String>,
    pub template_source: Option<TemplateSource>,
    /// The state prefix, to name a missing child record's key.
    pub state_prefix: String,
    /// `--leave-unmanaged`: a real run may leave the rows the template does not declare
    /// (docs/export.md, "Rows the template leaves out").
    pub leave_unmanaged: bool,
}

/// What the step gathered from AWS.
#[derive(Clone, Debug, Default)]
pub struct Gathered {
    /// `DescribeType` per type (once per distinct type of the whole plan).
    pub types: BTreeMap<String, TypeFacts>,
    /// `DescribeSecurityGroupRules` per group id.
    pub security_groups: BTreeMap<String, SgLookup>,
    /// `ssm:GetParameter` (`WithDecryption: false`) per name.
    pub ssm: BTreeMap<String, SsmRead>,
    /// `DescribeStacks` per destination name; a name not listed counts as absent.
    pub destinations: BTreeMap<String, Destination>,
}

/// What the step must gather before [`plan_tree`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanNeeds {
    pub types: Vec<String>,
    pub security_groups: Vec<String>,
    pub ssm_parameters: Vec<String>,
    pub destinations: Vec<String>,
}

/// A refusal of the whole plan (anything but blocked rows, which stay in the plan). Its
/// words are the refusal views' (`core::view::refusal`).
#[derive(Debug, Clone, PartialEq)]
pub enum PlanRefusal {
    /// A refusal the planner decides, as data.
    Export(Box<ExportRefusal>),
    /// A destination name or a `--cfn-child-stack-name` token (`names`).
    Name(NameRefusal),
    /// A parameter of the root or of a nested child (`params`).
    Param(ParamRefusal),
    /// A gate a real run meets without its flag ([`Plan::gates`]).
    Gate(GateRefusal),
}

impl From<NameRefusal> for PlanRefusal {
    fn from(r: NameRefusal) -> Self {
        PlanRefusal::Name(r)
    }
}

impl From<ParamRefusal> for PlanRefusal {
    fn from(r: ParamRefusal) -> Self {
        PlanRefusal::Param(r)
    }
}

impl From<ExportRefusal> for PlanRefusal {
    fn from(r: ExportRefusal) -> Self {
        PlanRefusal::Export(Box::new(r))
    }
}

impl std::error::Error for PlanRefusal {}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub stacks: Vec<StackPlan>,
    /// Tree-wide warnings (Custom Resource gate in a dry run, unresolved child
    /// parameters).
    #[serde(default)]
    pub warnings: Vec<PlanWarning>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackPlan {
    pub stack: String,
    pub region: Option<String>,
    pub cfn_stack_name: String,
    pub template_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub import: Vec<ImportRow>,
    pub phase2: Phase2,
    pub nested: Vec<NestedRow>,
    /// Submitted values; a NoEcho value is stored as `***` and re-resolved by the step
    /// that submits it (docs/export.md, "Parameters").
    pub parameters: Vec<PlanParameter>,
    pub blocked: Vec<BlockedRow>,
    pub warnings: Vec<PlanWarning>,
    /// Rows of the record the template does not declare: left running, owned by nothing
    /// (docs/export.md, "Rows the template leaves out").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmanaged: Vec<UnmanagedRow>,
    /// A nested child's stack tags: its parent row's `Tags`, resolved. Every change set
    /// of the child carries them, so the adopting row, which keeps them, matches the
    /// child (docs/export.md, "Nested stacks (export-flip, export-adopt)").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack_tags: Vec<(String, String)>,
    /// The SSM parameters a dry run could not read for this nested child's values, and
    /// planned without (docs/export.md, "Children"): a real run reusing this plan is
    /// refused on them as a real run planning itself is ([`Plan::ssm_refusal`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssm_unread: Vec<UnreadSsm>,
    /// The record this plan was made from, as the lock compares it (docs/export.md
    /// "The lock (export-lock)"). Absent in a plan written before it was kept: the lock then compares the
    /// import rows' physical ids only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<records::PlannedRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportRow {
    pub logical_id: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub physical_id: String,
    pub identifier: Map<String, Value>,
    /// The identifier fields written over template literals (docs/export.md, "The identifier overlay").
    pub overlay: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Phase2 {
    pub create: Vec<TypedRow>,
    pub recreate: Vec<RecreateRow>,
    pub pre_delete: Vec<PreDeleteRow>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypedRow {
    pub logical_id: String,
    #[serde(rename = "type")]
    pub resource_type: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecreateRow {
    pub logical_id: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub physical_id: String,
    pub properties: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "action"
)]
pub enum PreDeleteAction {
    DeleteStage {
        api_id: String,
        stage_name: String,
    },
    DetachPolicy {
        recorded: PolicyTargets,
        template: TemplatePrincipals,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreDeleteRow {
    pub logical_id: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    #[serde(flatten)]
    pub action: PreDeleteAction,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NestedRow {
    pub logical_id: String,
    pub child_stack: String,
    pub cfn_stack_name: String,
}

/// A row the plan cannot export, and why. `plan.json` stores it as a
/// [`StoredBlockedRow`]: the reason as its words, so that older and newer cdkd-flows
/// read each other's plans; read back, the reason is [`BlockReason::Recorded`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "StoredBlockedRow", from = "StoredBlockedRow")]
pub struct BlockedRow {
    pub logical_id: String,
    pub resource_type: String,
    pub reason: BlockReason,
}

/// A blocked row as `plan.json` holds it: `reason` is the words of its [`BlockReason`]
/// (`core::view::blocked` converts a [`BlockedRow`] into it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredBlockedRow {
    pub logical_id: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub reason: String,
}

impl From<StoredBlockedRow> for BlockedRow {
    fn from(r: StoredBlockedRow) -> Self {
        BlockedRow {
            logical_id: r.logical_id,
            resource_type: r.resource_type,
            reason: BlockReason::Recorded(r.reason),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanParameter {
    pub key: String,
    /// `None`: unresolved; `***` for a NoEcho value.
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_echo: bool,
    pub source: ParamSource,
}

impl Plan {
    /// The refusal for blocked rows: one entry per logical id and stack (reasons folded
    /// under it, in the plan's order), each stack named (docs/export.md, "Step details"
    /// S7). `None`: nothing is blocked.
    pub fn blocked_refusal(&self) -> Option<ExportRefusal> {
        let mut rows: Vec<BlockedResource> = Vec::new();
        for s in &self.stacks {
            let first = rows.len();
            for b in &s.blocked {
                match rows[first..]
                    .iter_mut()
                    .find(|r| r.logical_id == b.logical_id)
                {
                    Some(r) => r.reasons.push(b.reason.clone()),
                    None => rows.push(BlockedResource {
                        stack: s.stack.clone(),
                        logical_id: b.logical_id.clone(),
                        resource_type: b.resource_type.clone(),
                        reasons: vec![b.reason.clone()],
                    }),
                }
            }
        }
        (!rows.is_empty()).then_some(ExportRefusal::Blocked { rows })
    }

    /// Every row left unmanaged, with its stack.
    pub fn unmanaged(&self) -> Vec<(&str, &UnmanagedRow)> {
        self.stacks
            .iter()
            .flat_map(|s| s.unmanaged.iter().map(move |r| (s.stack.as_str(), r)))
            .collect()
    }

    /// The gates a run over this plan meets, in order (docs/export.md, "Rows the
    /// template leaves out" and "Warnings and printing"): rows left unmanaged without
    /// `--leave-unmanaged`, then Custom Resources phase 2 creates again without
    /// `--include-non-importable`. A real run is refused on the first, the planner's
    /// and again before any lock when it reuses a dry run's plan; a dry run's plan
    /// shows each as a warning. None for a plan with blocked rows (its refusal says
    /// why it cannot run), and no rows left unmanaged for a plan with nothing to
    /// migrate (it keeps the record).
    pub fn gates(&self, leave_unmanaged: bool, include_non_importable: bool) -> Vec<GateRefusal> {
        if self.blocked_refusal().is_some() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let rows = self.unmanaged();
        if !rows.is_empty() && !leave_unmanaged && !self.is_empty() {
            out.push(GateRefusal::Unmanaged {
                rows: rows
                    .into_iter()
                    .map(|(stack, r)| (stack.to_string(), r.clone()))
                    .collect(),
            });
        }
        let count: usize = self.stacks.iter().map(|s| s.phase2.create.len()).sum();
        if count > 0 && !include_non_importable {
            out.push(GateRefusal::CustomResources { count });
        }
        out
    }

    /// The refusal a real run meets on an SSM parameter its plan, a dry run's, could not
    /// read: the first one, of the first stack (leaf first) that has one.
    pub fn ssm_refusal(&self) -> Option<ParamRefusal> {
        self.stacks.iter().find_map(|s| {
            s.ssm_unread.first().map(|u| ParamRefusal::Nested {
                child_stack: s.stack.clone(),
                why: NestedRefusal::SsmUnreadable(u.clone()),
            })
        })
    }

    /// What a real run that reuses this plan, its dry plan run's, is refused on before
    /// its lock, as it would be planning itself: an SSM parameter the plan could not read
    /// ([`Plan::ssm_refusal`]), then the first gate ([`Plan::gates`]). The CLI asks it
    /// before its question, the plan step before reusing the plan.
    pub fn reuse_refusal(
        &self,
        leave_unmanaged: bool,
        include_non_importable: bool,
    ) -> Option<PlanRefusal> {
        if let Some(r) = self.ssm_refusal() {
            return Some(r.into());
        }
        self.gates(leave_unmanaged, include_non_importable)
            .into_iter()
            .next()
            .map(PlanRefusal::Gate)
    }

    /// All three lists empty on a flat stack: nothing to migrate (exit 0, state kept).
    pub fn is_empty(&self) -> bool {
        self.stacks.iter().all(|s| {
            s.import.is_empty()
                && s.nested.is_empty()
                && s.phase2.create.is_empty()
                && s.phase2.recreate.is_empty()
        })
    }
}
