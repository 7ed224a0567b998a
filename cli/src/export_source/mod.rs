//! The templates `cdkd-flow export` migrates (docs/export.md, "Inputs" and "Step order" S2, "Child templates"): read from
//! `--template PATH` (one JSON or YAML file), `--cdk-out DIR` (a cloud assembly: the
//! stack's template and, through `Metadata['aws:asset:path']`, every nested template below
//! it) or `--app CMD` (the CDK app run with `CDK_OUTDIR` set, then read as `--cdk-out`),
//! and uploaded as JSON under `<prefix>/_runs/<run-id>/templates/` for the `export-plan`
//! step.
//!
//! - Format: sniffed from the content, never from the file name. A body whose first
//!   character is `{` or `[` is JSON, anything else YAML. A body that starts like JSON is
//!   not retried as flow-style YAML: YAML accepts what JSON refuses (a trailing comma, a
//!   missing value read as null), so a JSON typo would become a different template
//!   instead of an error naming its line and column. YAML short-form
//!   tags become CloudFormation's long forms (`!Ref X` -> `{"Ref": "X"}`, `!GetAtt A.B.C`
//!   -> `{"Fn::GetAtt": ["A", "B.C"]}`, `!Sub ...` -> `{"Fn::Sub": ...}`); scalars keep the
//!   types the YAML 1.2 core schema gives them, so `2010-09-09`, `yes` and `on` stay strings.
//! - Names: a cloud-assembly stack is the manifest's `properties.stackName`, else its
//!   artifact id, and is matched by that name or by its display name. A nested child is
//!   `<parent>~<LogicalId>` (docs/state-and-lock.md), the logical id being the
//!   `AWS::CloudFormation::Stack` resource in the parent's template.
//! - Nested templates: the child's file is the nested resource's `aws:asset:path`,
//!   relative to the parent template's directory; an absolute path is refused (the rule
//!   lives in `cdkd_core::export::template::child_template_path`). A nested resource with
//!   no path is not followed: it is listed in [`TemplateSet::nested_without_template`] and
//!   the plan refuses it when a child record exists. With `--template` no nested template
//!   is followed at all.

mod app;
mod assembly;
mod error;
mod file;
mod nested;
mod parse;
mod read;
#[cfg(test)]
mod test_support;
mod types;
mod upload;
mod yaml;

pub use error::SourceError;
pub use read::read_templates;
pub use types::{AppOptions, TemplateSet, TemplateSource};
pub use upload::upload_templates;
