//! The export workflow's steps (`statemachines/export.asl.json`). For now the workflow
//! plans and stops: `export-plan` reads the templates the CLI uploaded, loads the root
//! record and every nested child record, gathers what the plan needs from AWS (the type
//! registry, the destination stacks, SSM parameters, security-group rules) and writes
//! the plan to `<prefix>/_runs/<run-id>/plan.json` (docs/export.md, "Workflow"). Every decision
//! is `cdkd_core::export`'s; the execution phases come with the next steps.

pub mod abort;
pub mod adopt;
pub mod approval;
pub mod carry;
pub mod cleanup;
pub mod execute;
pub mod flip;
pub mod gather;
pub mod import;
pub mod load;
pub mod lock;
pub mod phase2;
pub mod plan;
pub mod poll;
pub mod resume;
pub mod take;

use std::collections::BTreeMap;

use cdkd_core::export::drift::TemplateSource;
use cdkd_core::export::plan::PlanOptions;
use serde::{Deserialize, Serialize};

/// The execution's input, as the CLI starts it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportInput {
    /// The cdkd stack to export.
    pub stack: String,
    /// Which region's record (docs/export.md, "Step details" S3); else the only region with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_region: Option<String>,
    pub state_bucket: String,
    #[serde(default = "crate::deps::default_prefix", alias = "prefix")]
    pub state_prefix: String,
    /// cdkd stack name (`<parent>~<LogicalId>` for a nested child) → the S3 key of the
    /// template the CLI uploaded for it.
    pub templates: BTreeMap<String, String>,
    #[serde(default)]
    pub options: ExportOptions,
    #[serde(default)]
    pub dry_run: bool,
    /// Wait for `cdkd-flow runs approve` after the plan, before the lock (the
    /// definition's `NeedsApproval` choice reads it; docs/export.md, "Approval (export-approval)").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_approval: bool,
    /// Resume the interrupted run of this id instead of planning a new one (the
    /// definition's `IsResume` choice reads it; docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// The run whose plan this run executes (the CLI's plan run, `<run-id>-plan`): the
    /// plan is read once per run, not made again; the lock step still checks under the
    /// locks that no record changed since (docs/export.md, "The lock (export-lock)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_from: Option<String>,
    /// Set on the CLI's plan run (`<run-id>-plan`) of a real run: the run whose folder
    /// the plan is written into, so that a plan is written once per run and the run
    /// reads it in place (docs/export.md, "Requests"). Unset: the run's own folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_for: Option<String>,
    /// Destination stacks the CLI described in the record's region just before it
    /// started the run (its checks before an export, docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): the plan
    /// takes them as read instead of describing them again. Every step that submits a
    /// change set checks its destination itself (docs/export.md, "Requests").
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub destinations_seen:
        std::collections::BTreeMap<String, cdkd_core::export::names::Destination>,
    /// The owners of the tree's locks whose runs the CLI found ended: the run replaces
    /// their locks. One owner is written as a string, as earlier versions wrote and read
    /// it, so that a backend not yet redeployed still reads the common case; several as a
    /// list.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "one_or_list",
        deserialize_with = "one_or_many"
    )]
    pub take_over: Vec<String>,
}

/// One string as a string, several as a list.
fn one_or_list<S: serde::Serializer>(v: &[String], s: S) -> Result<S::Ok, S::Error> {
    match v {
        [one] => s.serialize_str(one),
        many => many.serialize(s),
    }
}

/// A list of strings, or one string (a list of one), or null (none).
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// The command's planning options (docs/export.md, "Inputs").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExportOptions {
    pub include_non_importable: bool,
    pub no_recreate_import_unsupported: bool,
    pub skip_import_support_preflight: bool,
    /// Refuse instead of warning when another stack reads this one's outputs. The scan
    /// runs after the dry-run exit (docs/export.md, "Flat path"), so the plan does not read it:
    /// the execution phases do.
    pub strict_cross_stack: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cfn_stack_name: Option<String>,
    /// `--cfn-child-stack-name` tokens, `<cdkd>=<cfn>`, as given.
    pub cfn_child_stack_names: Vec<String>,
    /// `--parameter` tokens, `K=V`, as given.
    pub parameters: Vec<String>,
    /// A local run's `--fast`: poll every second.
    pub fast: bool,
    /// A CloudFormation service role the change sets are submitted with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_arn: Option<String>,
    /// Where the templates came from: the app (`synth`: `--app` or `--cdk-out`) or one
    /// file (`file`: `--template`). Absent: `synth`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_source: Option<TemplateFrom>,
    /// `--leave-unmanaged`: a real run may leave the record's rows the template does not
    /// declare running, owned by nothing (docs/export.md, "Rows the template leaves out").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub leave_unmanaged: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TemplateFrom {
    Synth,
    File,
}

impl ExportInput {
    /// The options `cdkd_core::export::plan` plans with.
    pub fn plan_options(&self) -> PlanOptions {
        let o = &self.options;
        PlanOptions {
            include_non_importable: o.include_non_importable,
            no_recreate_import_unsupported: o.no_recreate_import_unsupported,
            skip_import_support_preflight: o.skip_import_support_preflight,
            dry_run: self.dry_run,
            cfn_stack_name: o.cfn_stack_name.clone(),
            cfn_child_stack_names: o.cfn_child_stack_names.clone(),
            parameters: o.parameters.clone(),
            template_source: o.template_source.map(|t| match t {
                TemplateFrom::Synth => TemplateSource::Synth,
                TemplateFrom::File => TemplateSource::File,
            }),
            state_prefix: self.state_prefix.clone(),
            leave_unmanaged: o.leave_unmanaged,
        }
    }
}

/// `<prefix>/_runs/<run-id>/plan.json`.
pub fn plan_key(prefix: &str, run_id: &str) -> String {
    format!("{}/plan.json", crate::runs::run_prefix(prefix, run_id))
}
