//! What an export reads: where the templates come from and the templates themselves.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Where the templates come from.
#[derive(Debug, Clone)]
pub enum TemplateSource {
    /// `--template PATH`: one template; the stack name must be given.
    Template(PathBuf),
    /// `--cdk-out DIR`: a synthesized cloud assembly.
    CdkOut(PathBuf),
    /// `--app CMD`: synthesize, then read the assembly.
    App(AppOptions),
}

/// How `--app` runs the CDK app.
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// Run through `sh -c`.
    pub command: String,
    /// The app's working directory, where `cdk.json` and `cdk.context.json` are read.
    pub cwd: PathBuf,
    /// The user's `~/.cdk.json`, whose `context` is the lowest user-provided layer.
    pub user_config: Option<PathBuf>,
    /// `-c key=value` values: they win over every file.
    pub context: Map<String, Value>,
    /// `CDK_DEFAULT_REGION` / `CDK_DEFAULT_ACCOUNT` for environment-agnostic stacks.
    pub region: Option<String>,
    pub account: Option<String>,
    /// Copy the app's stderr to ours as it arrives (the CLI does; tests do not).
    pub echo_stderr: bool,
}

impl AppOptions {
    /// The command run from the current directory, `~/.cdk.json` from `HOME`, the region
    /// from `AWS_REGION` / `AWS_DEFAULT_REGION`.
    pub fn new(command: impl Into<String>) -> Self {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        AppOptions {
            command: command.into(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            user_config: env("HOME").map(|h| Path::new(&h).join(".cdk.json")),
            context: Map::new(),
            region: env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION")),
            account: None,
            echo_stderr: true,
        }
    }
}

/// The format a template file was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateFormat {
    Json,
    Yaml,
}

/// A nested stack's place in its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedLink {
    /// The parent's cdkd stack name.
    pub parent: String,
    /// The `AWS::CloudFormation::Stack` resource in the parent's template.
    pub logical_id: String,
}

/// One stack's template.
#[derive(Debug, Clone)]
pub struct StackTemplate {
    /// The cdkd stack name (`<parent>~<LogicalId>` for a nested child).
    pub stack: String,
    /// The template, long-form intrinsics only (a JSON object).
    pub template: Value,
    /// The file it was read from (for messages).
    pub source: PathBuf,
    pub format: TemplateFormat,
    /// `None` for the root.
    pub parent: Option<NestedLink>,
}

/// Every template an export reads: the root and its nested stacks at any depth.
#[derive(Debug, Clone)]
pub struct TemplateSet {
    pub root: StackTemplate,
    /// Pre-order: a parent before its children, siblings in template order.
    pub children: Vec<StackTemplate>,
    /// The assembly's display name of the root (`Stage/Stack`), when read from one.
    pub display_name: Option<String>,
    /// The environment the app pins (`aws://account/region`), when it pins one.
    pub region: Option<String>,
    pub account: Option<String>,
    /// Nested-stack resources whose template was not read: no `aws:asset:path`, or the
    /// root came from `--template`.
    pub nested_without_template: Vec<NestedLink>,
    /// The assembly's other stacks, by name, for the cross-stack consumer scan
    /// (docs/export.md, "Cross-stack consumers"); empty for `--template`. One that cannot be read is left
    /// out with a warning.
    pub others: Vec<(String, Value)>,
}

impl TemplateSet {
    /// The root, then the children in [`TemplateSet::children`] order.
    pub fn stacks(&self) -> impl Iterator<Item = &StackTemplate> {
        std::iter::once(&self.root).chain(self.children.iter())
    }
}

impl fmt::Display for TemplateFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TemplateFormat::Json => "JSON",
            TemplateFormat::Yaml => "YAML",
        })
    }
}
