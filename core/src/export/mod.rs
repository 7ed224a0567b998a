//! Export planning (docs/export.md, "Inputs" and "Resource identifiers" and "Parameters" and "Warnings and printing" and "Checks"): every decision the `export-plan`
//! step takes, as pure functions over JSON in memory. The step gathers the inputs
//! (records, templates, registry answers, security-group rules, SSM values, existing
//! CloudFormation stacks) and calls [`planner::plan_needs`] then [`planner::plan_tree`]; the
//! result is the `plan.json` data the execution steps consume unchanged.
//!
//! Module map: [`template`] (the CloudFormation template model), [`records`] (state rows
//! and the damaged-record refusal), [`classify`] (the per-resource categories), [`blocked`] (why a row is blocked, as data),
//! [`registry`] (DescribeType facts, fallback table, import-support preflight),
//! [`identifier`] and [`splitters`] (identifier resolution), [`sg`] (the
//! SecurityGroupIngress rule-id lookup), [`overlay`] (identifier values over template
//! literals), [`params`] (root and child parameters), [`iam`] (the AWS::IAM::Policy
//! principal check inputs), [`drift`] (the drift-baseline warning), [`consumers`] (the
//! cross-stack consumer scan), [`plain`] (the
//! printing rule), [`names`] (CloudFormation destination names), [`unmanaged`] (the rows the template
//! leaves out), [`plan`] (the plan as data), [`warning`] (its warnings, as data). The execution: [`phases`] (the phase templates and change sets), [`execute`]
//! (statuses, waits, what comes next, the run's record), [`report`] (`report.json`) and [`redo`] (its lines
//! to do by hand, as data),
//! [`approval`] (the approval gate's `approval.json` and its decisions), [`held`] (a record
//! whose resources a stopped export holds in CloudFormation: destroy and orphan refuse it).
//! The dry-run summary is a view: the export view renders it.

pub mod approval;
pub mod blocked;
pub mod classify;
pub mod command;
pub mod consumers;
pub mod drift;
pub mod execute;
pub mod held;
pub mod iam;
pub mod identifier;
pub mod names;
pub mod overlay;
pub mod params;
pub mod phase;
pub mod phases;
pub mod plain;
pub mod plan;
pub mod planner;
pub mod records;
pub mod redo;
pub mod refusal;
pub mod registry;
pub mod report;
pub mod resume;
pub mod sg;
pub mod sim;
pub mod source_error;
pub mod splitters;
pub mod template;
pub mod unmanaged;
pub mod warning;

/// The redaction mask cdkd writes in place of a value it will not store
/// (docs/export.md, "The redaction mask ***").
pub const MASK: &str = "***";
