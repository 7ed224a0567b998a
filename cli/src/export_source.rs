//! The templates `cdkd-flow export` migrates (docs/export.md §1, §2 S2, §5.4.2): read from
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

use std::collections::VecDeque;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use cdkd_aws::StateStore;
use cdkd_core::export::template::{child_template_path, Template};
use cdkd_core::keys::child_stack_name;
use cdkd_functions::runs;
use serde_json::{Map, Number, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use crate::error::CliError;

/// How many of the app's last output lines a failed synth reports.
const APP_TAIL_LINES: usize = 20;

/// The context the CDK CLI (and cdkd) always hands an app, below every other source.
fn default_context() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("aws:cdk:enable-path-metadata".into(), Value::Bool(true));
    m.insert("aws:cdk:enable-asset-metadata".into(), Value::Bool(true));
    m.insert("aws:cdk:version-reporting".into(), Value::Bool(true));
    m.insert(
        "aws:cdk:bundling-stacks".into(),
        Value::Array(vec![Value::String("**".into())]),
    );
    m
}

/// Context larger than this goes to a file named by `CONTEXT_OVERFLOW_LOCATION_ENV`
/// instead of the `CDK_CONTEXT_JSON` variable (environment size limits).
const CONTEXT_OVERFLOW_LIMIT: usize = 32 * 1024;
/// The cloud-assembly schema and CLI versions announced to the app, as cdkd does.
const CDK_CLI_ASM_VERSION: &str = "38.0.0";
const CDK_CLI_VERSION: &str = "2.1000.0";

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
    /// (docs/export.md §8.4); empty for `--template`. One that cannot be read is left
    /// out with a warning.
    pub others: Vec<(String, Value)>,
}

impl TemplateSet {
    /// The root, then the children in [`TemplateSet::children`] order.
    pub fn stacks(&self) -> impl Iterator<Item = &StackTemplate> {
        std::iter::once(&self.root).chain(self.children.iter())
    }
}

/// A template uploaded for a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadedTemplate {
    pub stack: String,
    pub key: String,
}

/// Why the templates could not be read. Every message names the stack and the file.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("--template needs the name of the stack to export")]
    TemplateNeedsStack,
    #[error("cannot read {path}: {cause}")]
    ReadFile { path: PathBuf, cause: String },
    #[error("{path} is not valid JSON: {message}")]
    FileJson { path: PathBuf, message: String },
    #[error("cannot read the template of stack {stack} ({path}): {cause}")]
    ReadTemplate {
        stack: String,
        path: PathBuf,
        cause: String,
    },
    #[error("the template of stack {stack} ({path}) is not valid JSON: {message}")]
    TemplateJson {
        stack: String,
        path: PathBuf,
        message: String,
    },
    /// `message` already names the line and column when the parser knows them.
    #[error("the template of stack {stack} ({path}) is not valid YAML: {message}")]
    TemplateYaml {
        stack: String,
        path: PathBuf,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    #[error("the template of stack {stack} ({path}) cannot be read as a template: {message}")]
    TemplateUnsupported {
        stack: String,
        path: PathBuf,
        message: String,
    },
    #[error("{message} ({path})")]
    NotATemplate { path: PathBuf, message: String },
    #[error("no cloud assembly at {dir}: {dir}/manifest.json does not exist (synthesize the app first, or pass --app)")]
    NoManifest { dir: PathBuf },
    #[error("the cloud assembly manifest {path} {problem}")]
    BadManifest { path: PathBuf, problem: String },
    #[error("the cloud assembly at {dir} has no stack")]
    NoStacks { dir: PathBuf },
    #[error("stack {stack} is not in the cloud assembly at {dir}; it has: {available}")]
    StackNotFound {
        stack: String,
        dir: PathBuf,
        available: String,
    },
    #[error(
        "the cloud assembly at {dir} has several stacks ({available}); name the one to export"
    )]
    StackNotNamed { dir: PathBuf, available: String },
    #[error("{stack} names several stacks of the cloud assembly at {dir} ({available}); name one by its stack name")]
    StackAmbiguous {
        stack: String,
        dir: PathBuf,
        available: String,
    },
    #[error("stack {stack}: the cloud assembly names no template file for it in {manifest}")]
    NoTemplateFile { stack: String, manifest: PathBuf },
    #[error("stack {stack}: its template file {path} does not exist")]
    MissingTemplate { stack: String, path: PathBuf },
    #[error("nested stack {child} (resource {logical_id} of stack {parent}): its template {path}, named by Metadata['aws:asset:path'], does not exist")]
    MissingNestedTemplate {
        child: String,
        parent: String,
        logical_id: String,
        path: PathBuf,
    },
    #[error("stack {stack}: {message}")]
    BadAssetPath { stack: String, message: String },
    #[error("nested stack {child}: its template {path} is already an ancestor of it (a nested-stack cycle)")]
    NestedCycle { child: String, path: PathBuf },
    #[error("cannot run the CDK app `{command}`: {cause}")]
    AppSpawn { command: String, cause: String },
    #[error("the CDK app `{command}` failed ({status}){}", tail_text(tail))]
    AppFailed {
        command: String,
        status: String,
        tail: Vec<String>,
    },
    #[error("the CDK app needs context lookups, which cdkd-flow does not perform (missing: {keys}); run `cdk synth` once so that cdk.context.json holds them, then retry")]
    MissingContext { keys: String },
    #[error("{source} (the synthesized cloud assembly is kept at {kept})")]
    Synthesized {
        source: Box<SourceError>,
        kept: PathBuf,
    },
    #[error("cannot upload the template of stack {stack} to s3://{bucket}/{key}: {cause}")]
    Upload {
        stack: String,
        bucket: String,
        key: String,
        cause: String,
    },
}

fn tail_text(tail: &[String]) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its last output: {}", tail.join(" | "))
    }
}

impl From<SourceError> for CliError {
    fn from(e: SourceError) -> Self {
        match e {
            SourceError::TemplateNeedsStack => CliError::Usage(e.to_string()),
            SourceError::Upload { .. } => CliError::Aws(e.to_string()),
            other => CliError::Refused(other.to_string()),
        }
    }
}

/// Reads the templates of `stack` from `source`. `stack` is required with `--template`;
/// with a cloud assembly it may be omitted when the assembly holds exactly one stack.
pub async fn read_templates(
    source: &TemplateSource,
    stack: Option<&str>,
) -> Result<TemplateSet, SourceError> {
    match source {
        TemplateSource::Template(path) => {
            let stack = stack
                .filter(|s| !s.is_empty())
                .ok_or(SourceError::TemplateNeedsStack)?;
            read_template_file(path, stack)
        }
        TemplateSource::CdkOut(dir) => read_cloud_assembly(dir, stack),
        TemplateSource::App(opts) => synthesize(opts, stack).await,
    }
}

// ---------------------------------------------------------------------------------------
// One template file

/// `--template PATH`: the root template only; every nested-stack resource in it is listed
/// in [`TemplateSet::nested_without_template`].
pub fn read_template_file(path: &Path, stack: &str) -> Result<TemplateSet, SourceError> {
    let (template, format) = read_template(stack, path)?;
    let (template, nested) = checked(stack, path, template)?;
    let nested_without_template = nested
        .into_iter()
        .map(|n| NestedLink {
            parent: stack.to_string(),
            logical_id: n.logical_id,
        })
        .collect();
    Ok(TemplateSet {
        root: StackTemplate {
            stack: stack.to_string(),
            template,
            source: path.to_path_buf(),
            format,
            parent: None,
        },
        children: Vec::new(),
        display_name: None,
        region: None,
        account: None,
        nested_without_template,
        others: Vec::new(),
    })
}

/// Reads and parses one template file (JSON or YAML, sniffed from the content).
fn read_template(stack: &str, path: &Path) -> Result<(Value, TemplateFormat), SourceError> {
    let bytes = std::fs::read(path).map_err(|e| SourceError::ReadTemplate {
        stack: stack.to_string(),
        path: path.to_path_buf(),
        cause: e.to_string(),
    })?;
    parse_template(&bytes).map_err(|p| p.into_error(stack, path))
}

/// Why a body did not parse (before the file is known).
#[derive(Debug)]
enum ParseFailure {
    NotUtf8(String),
    Json(String),
    Yaml {
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    Unsupported(String),
}

impl ParseFailure {
    fn into_error(self, stack: &str, path: &Path) -> SourceError {
        let path = path.to_path_buf();
        let stack = stack.to_string();
        match self {
            ParseFailure::NotUtf8(cause) => SourceError::ReadTemplate { stack, path, cause },
            ParseFailure::Json(message) => SourceError::TemplateJson {
                stack,
                path,
                message,
            },
            ParseFailure::Yaml {
                line,
                column,
                message,
            } => SourceError::TemplateYaml {
                stack,
                path,
                line,
                column,
                message,
            },
            ParseFailure::Unsupported(message) => SourceError::TemplateUnsupported {
                stack,
                path,
                message,
            },
        }
    }
}

/// Parses a template body: JSON when it starts with `{` or `[`, YAML otherwise. A leading
/// UTF-8 byte-order mark is skipped.
fn parse_template(bytes: &[u8]) -> Result<(Value, TemplateFormat), ParseFailure> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ParseFailure::NotUtf8(format!("it is not UTF-8 text ({e})")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with(['{', '[']) {
        return cdkd_core::json::parse_json_unique_keys(text.as_bytes())
            .map(|v| (v, TemplateFormat::Json))
            .map_err(ParseFailure::Json);
    }
    parse_yaml(text).map(|v| (v, TemplateFormat::Yaml))
}

fn parse_yaml(text: &str) -> Result<Value, ParseFailure> {
    let failure = |e: serde_yaml_ng::Error| {
        let loc = e.location();
        ParseFailure::Yaml {
            line: loc.as_ref().map(|l| l.line()),
            column: loc.as_ref().map(|l| l.column()),
            message: e.to_string(),
        }
    };
    // A duplicate key is named with its path, as in a JSON template
    // (`cdkd_core::json::check_unique_keys`); any other problem is the parse's to tell.
    use cdkd_core::json::{check_unique_keys, KeyCheck};
    if let KeyCheck::Duplicate(dup, e) =
        check_unique_keys(serde_yaml_ng::Deserializer::from_str(text))
    {
        let loc = e.location();
        let at = loc
            .as_ref()
            .map(|l| format!(" at line {} column {}", l.line(), l.column()))
            .unwrap_or_default();
        return Err(ParseFailure::Yaml {
            line: loc.as_ref().map(|l| l.line()),
            column: loc.as_ref().map(|l| l.column()),
            message: format!("{dup}{at}"),
        });
    }
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(failure)?;
    let mut path = Vec::new();
    yaml_to_json(doc, &mut path).map_err(ParseFailure::Unsupported)
}

/// One step of the position a YAML conversion error names.
enum Step {
    Key(String),
    Index(usize),
}

fn position(path: &[Step]) -> String {
    if path.is_empty() {
        return "the document".to_string();
    }
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Converts a YAML document to JSON, turning CloudFormation's short-form tags into their
/// long forms. Fails on what JSON cannot hold (a non-finite number, a key that is not a
/// scalar) and on a tag CloudFormation does not define.
fn yaml_to_json(v: serde_yaml_ng::Value, path: &mut Vec<Step>) -> Result<Value, String> {
    use serde_yaml_ng::Value as Y;
    Ok(match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => yaml_number(&n).ok_or_else(|| {
            format!(
                "the number {n} at {} cannot be represented in JSON",
                position(path)
            )
        })?,
        Y::String(s) => Value::String(s),
        Y::Sequence(seq) => {
            let mut out = Vec::with_capacity(seq.len());
            for (i, item) in seq.into_iter().enumerate() {
                path.push(Step::Index(i));
                out.push(yaml_to_json(item, path)?);
                path.pop();
            }
            Value::Array(out)
        }
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, item) in m {
                let key = yaml_key(&k).ok_or_else(|| {
                    format!(
                        "a mapping key at {} is not a string, number or boolean",
                        position(path)
                    )
                })?;
                path.push(Step::Key(key.clone()));
                let value = yaml_to_json(item, path)?;
                path.pop();
                out.insert(key, value);
            }
            Value::Object(out)
        }
        Y::Tagged(tagged) => {
            let tag = tagged.tag.to_string();
            let inner = yaml_to_json(tagged.value, path)?;
            long_form(&tag, inner).map_err(|m| format!("{m} (at {})", position(path)))?
        }
    })
}

fn yaml_number(n: &serde_yaml_ng::Number) -> Option<Value> {
    if let Some(u) = n.as_u64() {
        Some(Value::Number(u.into()))
    } else if let Some(i) = n.as_i64() {
        Some(Value::Number(i.into()))
    } else {
        n.as_f64().and_then(Number::from_f64).map(Value::Number)
    }
}

fn yaml_key(k: &serde_yaml_ng::Value) -> Option<String> {
    use serde_yaml_ng::Value as Y;
    match k {
        Y::String(s) => Some(s.clone()),
        Y::Number(n) => Some(n.to_string()),
        Y::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The intrinsic functions whose short form `!Name` is `{"Fn::Name": value}`.
const FN_SHORT_FORMS: &[&str] = &[
    "And",
    "Base64",
    "Cidr",
    "Equals",
    "FindInMap",
    "GetAZs",
    "If",
    "ImportValue",
    "Join",
    "Length",
    "Not",
    "Or",
    "Select",
    "Split",
    "Sub",
    "ToJsonString",
    "Transform",
];

/// The long form of one short-form tag (`tag` includes its `!`).
fn long_form(tag: &str, value: Value) -> Result<Value, String> {
    let name = tag.strip_prefix('!').unwrap_or(tag);
    let single = |key: String, value: Value| {
        let mut m = Map::new();
        m.insert(key, value);
        Value::Object(m)
    };
    match name {
        "Ref" | "Condition" => Ok(single(name.to_string(), value)),
        // `!GetAtt Resource.Attribute`: split at the first dot only (attribute names such
        // as `Outputs.X` or `Endpoint.Address` contain dots); the list form passes as is.
        "GetAtt" => match value {
            Value::String(s) => match s.split_once('.') {
                Some((resource, attribute)) if !resource.is_empty() && !attribute.is_empty() => {
                    Ok(single(
                        "Fn::GetAtt".into(),
                        Value::Array(vec![resource.into(), attribute.into()]),
                    ))
                }
                _ => Err(format!("!GetAtt {s} is not of the form Resource.Attribute")),
            },
            list @ Value::Array(_) => Ok(single("Fn::GetAtt".into(), list)),
            other => Err(format!(
                "!GetAtt takes Resource.Attribute or [Resource, Attribute], not {}",
                cdkd_core::state::kind_of(&other)
            )),
        },
        // `!GetAZs` with no value is the current region, as `!GetAZs ''`.
        "GetAZs" if value.is_null() => {
            Ok(single("Fn::GetAZs".into(), Value::String(String::new())))
        }
        n if FN_SHORT_FORMS.contains(&n) => Ok(single(format!("Fn::{n}"), value)),
        _ => Err(format!(
            "{tag} is not a CloudFormation intrinsic function tag"
        )),
    }
}

/// The template's nested-stack resources, as read by core's template model.
struct NestedRow {
    logical_id: String,
    asset_path: Result<Option<String>, String>,
}

/// Checks that `value` is a template (a JSON object with an object `Resources`) and lists
/// its nested-stack resources.
fn checked(stack: &str, path: &Path, value: Value) -> Result<(Value, Vec<NestedRow>), SourceError> {
    let template = Template::from_value(stack, value).map_err(|e| SourceError::NotATemplate {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let nested = template
        .nested_stacks()
        .iter()
        .map(|r| NestedRow {
            logical_id: r.logical_id.to_string(),
            asset_path: child_template_path(r).map(|p| p.map(str::to_string)),
        })
        .collect();
    Ok((Value::Object(template.body), nested))
}

// ---------------------------------------------------------------------------------------
// Cloud assembly

/// A stack artifact of a cloud assembly (possibly inside a stage's nested assembly).
#[derive(Debug, Clone)]
struct AssemblyStack {
    name: String,
    display_name: String,
    /// The assembly directory holding the manifest that declares it.
    dir: PathBuf,
    manifest: PathBuf,
    template_file: Option<String>,
    region: Option<String>,
    account: Option<String>,
}

impl AssemblyStack {
    fn label(&self) -> String {
        if self.display_name == self.name {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.display_name)
        }
    }
}

fn read_manifest(dir: &Path) -> Result<(PathBuf, Map<String, Value>), SourceError> {
    let path = dir.join("manifest.json");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(SourceError::NoManifest {
                dir: dir.to_path_buf(),
            })
        }
        Err(e) => {
            return Err(SourceError::ReadFile {
                path,
                cause: e.to_string(),
            })
        }
    };
    match cdkd_core::json::parse_json(&bytes) {
        Ok(Value::Object(m)) => Ok((path, m)),
        Ok(other) => Err(SourceError::BadManifest {
            path,
            problem: format!(
                "is {}, not a JSON object",
                cdkd_core::state::kind_of(&other)
            ),
        }),
        Err(message) => Err(SourceError::FileJson { path, message }),
    }
}

/// `aws://account/region`, with CDK's `unknown-account` / `unknown-region` as absent.
fn parse_environment(env: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(rest) = env.and_then(|e| e.strip_prefix("aws://")) else {
        return (None, None);
    };
    let (account, region) = rest.split_once('/').unwrap_or((rest, ""));
    let known = |v: &str, unknown: &str| (!v.is_empty() && v != unknown).then(|| v.to_string());
    (
        known(account, "unknown-account"),
        known(region, "unknown-region"),
    )
}

/// Every stack artifact of the assembly at `dir`, stages' nested assemblies included (in
/// manifest order). A stage whose assembly cannot be read is skipped with a warning.
fn assembly_stacks(
    dir: &Path,
    out: &mut Vec<AssemblyStack>,
    depth: usize,
) -> Result<(), SourceError> {
    let (manifest, m) = read_manifest(dir)?;
    let artifacts = match m.get("artifacts") {
        None => return Ok(()),
        Some(Value::Object(a)) => a,
        Some(other) => {
            return Err(SourceError::BadManifest {
                path: manifest,
                problem: format!(
                    "has an 'artifacts' entry that is {}, not an object",
                    cdkd_core::state::kind_of(other)
                ),
            })
        }
    };
    for (id, artifact) in artifacts {
        let Some(artifact) = artifact.as_object() else {
            continue;
        };
        let props = artifact.get("properties").and_then(Value::as_object);
        let prop = |k: &str| props.and_then(|p| p.get(k)).and_then(Value::as_str);
        match artifact.get("type").and_then(Value::as_str) {
            Some("aws:cloudformation:stack") => {
                let name = prop("stackName")
                    .filter(|s| !s.is_empty())
                    .unwrap_or(id)
                    .to_string();
                let (account, region) =
                    parse_environment(artifact.get("environment").and_then(Value::as_str));
                out.push(AssemblyStack {
                    display_name: artifact
                        .get("displayName")
                        .and_then(Value::as_str)
                        .unwrap_or(&name)
                        .to_string(),
                    name,
                    dir: dir.to_path_buf(),
                    manifest: manifest.clone(),
                    template_file: prop("templateFile").map(str::to_string),
                    region,
                    account,
                });
            }
            // A stage: its stacks live in a nested assembly in a subdirectory.
            Some("cdk:cloud-assembly") if depth < 16 => {
                if let Some(sub) = prop("directoryName") {
                    if let Err(e) = assembly_stacks(&dir.join(sub), out, depth + 1) {
                        tracing::warn!("skipping the nested cloud assembly {sub}: {e}");
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn select_stack<'a>(
    dir: &Path,
    stacks: &'a [AssemblyStack],
    wanted: Option<&str>,
) -> Result<&'a AssemblyStack, SourceError> {
    let available = || {
        stacks
            .iter()
            .map(AssemblyStack::label)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if stacks.is_empty() {
        return Err(SourceError::NoStacks {
            dir: dir.to_path_buf(),
        });
    }
    let Some(wanted) = wanted.filter(|w| !w.is_empty()) else {
        return match stacks {
            [only] => Ok(only),
            _ => Err(SourceError::StackNotNamed {
                dir: dir.to_path_buf(),
                available: available(),
            }),
        };
    };
    let by_name: Vec<_> = stacks.iter().filter(|s| s.name == wanted).collect();
    let matches = if by_name.is_empty() {
        stacks.iter().filter(|s| s.display_name == wanted).collect()
    } else {
        by_name
    };
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(SourceError::StackNotFound {
            stack: wanted.to_string(),
            dir: dir.to_path_buf(),
            available: available(),
        }),
        several => Err(SourceError::StackAmbiguous {
            stack: wanted.to_string(),
            dir: dir.to_path_buf(),
            available: several
                .iter()
                .map(|s| format!("{} in {}", s.label(), s.manifest.display()))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// `--cdk-out DIR`: the stack's template and every nested template below it.
pub fn read_cloud_assembly(dir: &Path, stack: Option<&str>) -> Result<TemplateSet, SourceError> {
    let mut stacks = Vec::new();
    assembly_stacks(dir, &mut stacks, 0)?;
    let chosen = select_stack(dir, &stacks, stack)?;
    let file = chosen
        .template_file
        .as_deref()
        .filter(|f| !f.is_empty())
        .ok_or_else(|| SourceError::NoTemplateFile {
            stack: chosen.name.clone(),
            manifest: chosen.manifest.clone(),
        })?;
    let path = chosen.dir.join(file);
    if !path.exists() {
        return Err(SourceError::MissingTemplate {
            stack: chosen.name.clone(),
            path,
        });
    }
    let (template, format) = read_template(&chosen.name, &path)?;
    let (template, nested) = checked(&chosen.name, &path, template)?;
    let mut set = TemplateSet {
        root: StackTemplate {
            stack: chosen.name.clone(),
            template,
            source: path.clone(),
            format,
            parent: None,
        },
        children: Vec::new(),
        display_name: Some(chosen.display_name.clone()),
        region: chosen.region.clone(),
        account: chosen.account.clone(),
        nested_without_template: Vec::new(),
        others: other_templates(&stacks, chosen),
    };
    let mut chain = vec![canonical(&path)];
    walk_nested(&chosen.name, &path, nested, &mut set, &mut chain)?;
    Ok(set)
}

/// Every stack of the assembly but `chosen`, with its template (for the consumer scan).
fn other_templates(stacks: &[AssemblyStack], chosen: &AssemblyStack) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for s in stacks {
        if s.name == chosen.name && s.manifest == chosen.manifest {
            continue;
        }
        let Some(file) = s.template_file.as_deref().filter(|f| !f.is_empty()) else {
            continue;
        };
        match read_template(&s.name, &s.dir.join(file)) {
            Ok((t, _)) => out.push((s.name.clone(), t)),
            Err(e) => tracing::warn!("the cross-stack scan skips stack {}: {e}", s.name),
        }
    }
    out
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Follows the nested-stack resources of `parent` (whose template is `parent_path`),
/// depth first, appending each child after its parent.
fn walk_nested(
    parent: &str,
    parent_path: &Path,
    nested: Vec<NestedRow>,
    set: &mut TemplateSet,
    chain: &mut Vec<PathBuf>,
) -> Result<(), SourceError> {
    let base = parent_path.parent().unwrap_or(Path::new("."));
    for row in nested {
        let link = NestedLink {
            parent: parent.to_string(),
            logical_id: row.logical_id.clone(),
        };
        let rel = match row.asset_path {
            Err(message) => {
                return Err(SourceError::BadAssetPath {
                    stack: parent.to_string(),
                    message,
                })
            }
            // An empty path names nothing, like an absent one.
            Ok(None) => None,
            Ok(Some(p)) if p.is_empty() => None,
            Ok(Some(p)) => Some(p),
        };
        let Some(rel) = rel else {
            set.nested_without_template.push(link);
            continue;
        };
        let child = child_stack_name(parent, &row.logical_id);
        let path = base.join(&rel);
        if !path.is_file() {
            return Err(SourceError::MissingNestedTemplate {
                child,
                parent: parent.to_string(),
                logical_id: row.logical_id,
                path,
            });
        }
        let canon = canonical(&path);
        if chain.contains(&canon) {
            return Err(SourceError::NestedCycle { child, path });
        }
        let (template, format) = read_template(&child, &path)?;
        let (template, grandchildren) = checked(&child, &path, template)?;
        set.children.push(StackTemplate {
            stack: child.clone(),
            template,
            source: path.clone(),
            format,
            parent: Some(link),
        });
        chain.push(canon);
        walk_nested(&child, &path, grandchildren, set, chain)?;
        chain.pop();
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// --app

/// The context handed to the app: CDK's defaults < `~/.cdk.json` < `cdk.json` <
/// `cdk.context.json` < `-c` values (later layers win, key by key).
fn app_context(opts: &AppOptions) -> Result<Map<String, Value>, SourceError> {
    let mut ctx = default_context();
    let file_layer = |path: &Path, key: Option<&str>| -> Result<Map<String, Value>, SourceError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => {
                return Err(SourceError::ReadFile {
                    path: path.to_path_buf(),
                    cause: e.to_string(),
                })
            }
        };
        let v = cdkd_core::json::parse_json(&bytes).map_err(|message| SourceError::FileJson {
            path: path.to_path_buf(),
            message,
        })?;
        let v = match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v,
        };
        Ok(match v {
            Value::Object(m) => m,
            _ => Map::new(),
        })
    };
    let mut layers = Vec::new();
    if let Some(user) = &opts.user_config {
        layers.push(file_layer(user, Some("context"))?);
    }
    layers.push(file_layer(&opts.cwd.join("cdk.json"), Some("context"))?);
    layers.push(file_layer(&opts.cwd.join("cdk.context.json"), None)?);
    layers.push(opts.context.clone());
    for layer in layers {
        for (k, v) in layer {
            ctx.insert(k, v);
        }
    }
    Ok(ctx)
}

/// A fresh, empty directory under the system temp directory.
fn fresh_dir(prefix: &str) -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut last = None;
    for _ in 0..100 {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("{prefix}-{}-{nanos}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free directory name")))
}

/// The command line run through `sh -c`: a bare `.js` entry point runs under node.
fn app_command_line(command: &str) -> String {
    let trimmed = command.trim();
    match trimmed.split_whitespace().next() {
        Some(first) if first.ends_with(".js") => format!("node {trimmed}"),
        _ => trimmed.to_string(),
    }
}

/// Reads `stream` line by line, keeping the last [`APP_TAIL_LINES`]; each line is passed
/// to `sink` as it arrives.
async fn collect_lines<R: AsyncRead + Unpin>(
    stream: Option<R>,
    mut sink: impl FnMut(&str),
) -> VecDeque<String> {
    let mut tail = VecDeque::new();
    let Some(stream) = stream else {
        return tail;
    };
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim_end_matches(['\n', '\r']);
                sink(line);
                if !line.trim().is_empty() {
                    if tail.len() == APP_TAIL_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line.to_string());
                }
            }
        }
    }
    tail
}

fn describe_status(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    status.to_string()
}

/// Runs the app into `outdir`.
async fn run_app(opts: &AppOptions, outdir: &Path) -> Result<(), SourceError> {
    let spawn_error = |cause: String| SourceError::AppSpawn {
        command: opts.command.clone(),
        cause,
    };
    let context = app_context(opts)?;
    let context_json = serde_json::to_string(&Value::Object(context))
        .map_err(|e| spawn_error(format!("cannot serialize the context: {e}")))?;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(app_command_line(&opts.command))
        .current_dir(&opts.cwd)
        .env("CDK_OUTDIR", outdir)
        .env("CDK_CLI_ASM_VERSION", CDK_CLI_ASM_VERSION)
        .env("CDK_CLI_VERSION", CDK_CLI_VERSION)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(region) = opts.region.as_deref().filter(|r| !r.is_empty()) {
        cmd.env("CDK_DEFAULT_REGION", region);
    }
    if let Some(account) = opts.account.as_deref().filter(|a| !a.is_empty()) {
        cmd.env("CDK_DEFAULT_ACCOUNT", account);
    }
    let context_dir = if context_json.len() > CONTEXT_OVERFLOW_LIMIT {
        let dir = fresh_dir("cdkd-flow-context")
            .map_err(|e| spawn_error(format!("cannot create a context directory: {e}")))?;
        let file = dir.join("context.json");
        std::fs::write(&file, &context_json)
            .map_err(|e| spawn_error(format!("cannot write {}: {e}", file.display())))?;
        cmd.env("CONTEXT_OVERFLOW_LOCATION_ENV", &file);
        Some(dir)
    } else {
        cmd.env("CDK_CONTEXT_JSON", &context_json);
        None
    };
    let result = async {
        let mut child = cmd.spawn().map_err(|e| spawn_error(e.to_string()))?;
        let echo = opts.echo_stderr;
        let (out_tail, err_tail, status) = tokio::join!(
            collect_lines(child.stdout.take(), |l| tracing::debug!("[app stdout] {l}")),
            collect_lines(child.stderr.take(), move |l| {
                if echo {
                    // A closed stderr is no reason to stop the synth.
                    let _ = writeln!(std::io::stderr(), "{l}");
                }
            }),
            child.wait(),
        );
        let status = status.map_err(|e| spawn_error(e.to_string()))?;
        if status.success() {
            return Ok(());
        }
        // stderr is where a CDK app reports; stdout only when stderr said nothing.
        let tail = if err_tail.is_empty() {
            out_tail
        } else {
            err_tail
        };
        Err(SourceError::AppFailed {
            command: opts.command.clone(),
            status: describe_status(status),
            tail: tail.into_iter().collect(),
        })
    }
    .await;
    if let Some(dir) = context_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

/// `--app CMD`: synthesizes into a fresh temporary directory and reads it as a cloud
/// assembly. A command naming an existing directory is that assembly (as the CDK CLI
/// reads it). The directory is removed once read; it is kept, and named, when reading it
/// fails.
pub async fn synthesize(
    opts: &AppOptions,
    stack: Option<&str>,
) -> Result<TemplateSet, SourceError> {
    let as_dir = opts.cwd.join(opts.command.trim());
    if !opts.command.trim().is_empty() && as_dir.is_dir() {
        return read_cloud_assembly(&as_dir, stack);
    }
    let outdir = fresh_dir("cdkd-flow-synth").map_err(|e| SourceError::AppSpawn {
        command: opts.command.clone(),
        cause: format!("cannot create the output directory: {e}"),
    })?;
    if let Err(e) = run_app(opts, &outdir).await {
        let _ = std::fs::remove_dir_all(&outdir);
        return Err(e);
    }
    match missing_context(&outdir).and_then(|()| read_cloud_assembly(&outdir, stack)) {
        Ok(set) => {
            let _ = std::fs::remove_dir_all(&outdir);
            Ok(set)
        }
        Err(e) => Err(SourceError::Synthesized {
            source: Box::new(e),
            kept: outdir,
        }),
    }
}

/// Refuses an assembly whose manifest lists context the app could not look up itself.
fn missing_context(dir: &Path) -> Result<(), SourceError> {
    let (_, m) = read_manifest(dir)?;
    let keys: Vec<String> = m
        .get("missing")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| e.get("key").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if keys.is_empty() {
        Ok(())
    } else {
        Err(SourceError::MissingContext {
            keys: keys.join(", "),
        })
    }
}

// ---------------------------------------------------------------------------------------
// Upload

/// `<prefix>/_runs/<run-id>/templates/<stack>.json`.
pub fn template_key(prefix: &str, run_id: &str, stack: &str) -> String {
    format!(
        "{}/templates/{stack}.json",
        runs::run_prefix(prefix, run_id)
    )
}

/// Uploads every template of `set` as JSON under the run's prefix in the state bucket
/// (`store.prefix`), root first; returns the keys in that order.
pub async fn upload_templates(
    cache: &runs::ArtifactCache,
    store: &StateStore,
    run_id: &str,
    set: &TemplateSet,
) -> Result<Vec<UploadedTemplate>, SourceError> {
    let mut keys = Vec::new();
    for st in set.stacks() {
        let key = template_key(&store.prefix, run_id, &st.stack);
        // Through the run's artifact cache: a local run's steps read it from memory.
        runs::write_immutable(cache, store, &key, &st.template)
            .await
            .map_err(|e| SourceError::Upload {
                stack: st.stack.clone(),
                bucket: store.bucket.clone(),
                key: key.clone(),
                cause: e.message,
            })?;
        keys.push(UploadedTemplate {
            stack: st.stack.clone(),
            key,
        });
    }
    Ok(keys)
}

impl fmt::Display for TemplateFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TemplateFormat::Json => "JSON",
            TemplateFormat::Yaml => "YAML",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export")
    }

    const ROOT: &str = "ExportNested";
    const MIDDLE_ID: &str = "MiddleNestedStackMiddleNestedStackResource9C3D5E7F";
    const LEAF_ID: &str = "LeafNestedStackLeafNestedStackResource7B9D1F3A";
    const MIDDLE_FILE: &str = "ExportNestedMiddle2A4C6E8B.nested.template.json";
    const LEAF_FILE: &str = "ExportNestedMiddleLeaf5E7A9C1D.nested.template.json";

    /// A scratch directory removed when dropped.
    struct Scratch(PathBuf);
    impl Scratch {
        fn new() -> Self {
            Scratch(fresh_dir("cdkd-flow-test").expect("temp dir"))
        }
        fn path(&self) -> &Path {
            &self.0
        }
        fn write(&self, name: &str, body: &str) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, body).expect("write");
            p
        }
    }
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for e in std::fs::read_dir(from).expect("read_dir") {
            let e = e.expect("entry");
            let target = to.join(e.file_name());
            if e.file_type().expect("type").is_dir() {
                copy_dir(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), target).expect("copy");
            }
        }
    }

    /// A copy of the nested fixture assembly to break.
    fn nested_copy() -> Scratch {
        let s = Scratch::new();
        copy_dir(&fixtures().join("nested.out"), s.path());
        s
    }

    fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
        let mut v: Value =
            serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
        f(&mut v);
        std::fs::write(path, serde_json::to_vec_pretty(&v).expect("ser")).expect("write");
    }

    /// `V: <src>` read as YAML, `V` taken out.
    fn yaml_value(src: &str) -> Result<Value, ParseFailure> {
        parse_yaml(&format!("V: {src}\n")).map(|v| v["V"].clone())
    }

    fn y(src: &str) -> Value {
        yaml_value(src).unwrap_or_else(|e| panic!("{src}: {e:?}"))
    }

    // --- YAML short-form tags -----------------------------------------------------------

    #[test]
    fn export_source_yaml_each_short_tag_becomes_its_long_form() {
        let cases = [
            ("!Ref MyBucket", json!({"Ref": "MyBucket"})),
            ("!Condition IsProd", json!({"Condition": "IsProd"})),
            (
                "!GetAtt MyQueue.Arn",
                json!({"Fn::GetAtt": ["MyQueue", "Arn"]}),
            ),
            (
                "!GetAtt [MyQueue, Arn]",
                json!({"Fn::GetAtt": ["MyQueue", "Arn"]}),
            ),
            (
                "!Sub 'arn:${AWS::Partition}:s3:::${B}'",
                json!({"Fn::Sub": "arn:${AWS::Partition}:s3:::${B}"}),
            ),
            (
                "!Sub ['${A}-x', {A: !Ref P}]",
                json!({"Fn::Sub": ["${A}-x", {"A": {"Ref": "P"}}]}),
            ),
            ("!Join ['', [a, b]]", json!({"Fn::Join": ["", ["a", "b"]]})),
            (
                "!If [C, yes-value, !Ref AWS::NoValue]",
                json!({"Fn::If": ["C", "yes-value", {"Ref": "AWS::NoValue"}]}),
            ),
            ("!Equals [a, b]", json!({"Fn::Equals": ["a", "b"]})),
            (
                "!Not [!Condition C]",
                json!({"Fn::Not": [{"Condition": "C"}]}),
            ),
            (
                "!And [!Condition A, !Condition B]",
                json!({"Fn::And": [{"Condition": "A"}, {"Condition": "B"}]}),
            ),
            (
                "!Or [!Condition A, !Condition B]",
                json!({"Fn::Or": [{"Condition": "A"}, {"Condition": "B"}]}),
            ),
            (
                "!FindInMap [M, !Ref AWS::Region, Ami]",
                json!({"Fn::FindInMap": ["M", {"Ref": "AWS::Region"}, "Ami"]}),
            ),
            ("!Base64 hello", json!({"Fn::Base64": "hello"})),
            (
                "!Cidr [10.0.0.0/16, 6, 5]",
                json!({"Fn::Cidr": ["10.0.0.0/16", 6, 5]}),
            ),
            (
                "!ImportValue SharedVpcId",
                json!({"Fn::ImportValue": "SharedVpcId"}),
            ),
            (
                "!Select [1, [a, b]]",
                json!({"Fn::Select": [1, ["a", "b"]]}),
            ),
            ("!Split [',', 'a,b']", json!({"Fn::Split": [",", "a,b"]})),
            ("!GetAZs ''", json!({"Fn::GetAZs": ""})),
            ("!GetAZs us-east-1", json!({"Fn::GetAZs": "us-east-1"})),
            (
                "!Transform {Name: AWS::Include, Parameters: {Location: s3://b/k}}",
                json!({"Fn::Transform": {"Name": "AWS::Include", "Parameters": {"Location": "s3://b/k"}}}),
            ),
            (
                "!ToJsonString {a: 1}",
                json!({"Fn::ToJsonString": {"a": 1}}),
            ),
            ("!Length [a, b]", json!({"Fn::Length": ["a", "b"]})),
        ];
        for (src, want) in cases {
            assert_eq!(y(src), want, "{src}");
        }
    }

    #[test]
    fn export_source_yaml_bare_getazs_is_the_current_region() {
        assert_eq!(y("!GetAZs"), json!({"Fn::GetAZs": ""}));
    }

    #[test]
    fn export_source_yaml_getatt_splits_on_the_first_dot_only() {
        assert_eq!(
            y("!GetAtt Child.Outputs.BucketName"),
            json!({"Fn::GetAtt": ["Child", "Outputs.BucketName"]})
        );
        assert_eq!(
            y("!GetAtt Db.Endpoint.Address"),
            json!({"Fn::GetAtt": ["Db", "Endpoint.Address"]})
        );
        // The list form is passed as written, attribute dots included.
        assert_eq!(
            y("!GetAtt [Db, Endpoint.Address]"),
            json!({"Fn::GetAtt": ["Db", "Endpoint.Address"]})
        );
        // An attribute name given by a Ref in the list form.
        assert_eq!(
            y("!GetAtt [Db, !Ref AttrName]"),
            json!({"Fn::GetAtt": ["Db", {"Ref": "AttrName"}]})
        );
    }

    #[test]
    fn export_source_yaml_getatt_without_an_attribute_is_refused() {
        for src in [
            "!GetAtt NoDot",
            "!GetAtt .Arn",
            "!GetAtt Res.",
            "!GetAtt {a: 1}",
        ] {
            match yaml_value(src) {
                Err(ParseFailure::Unsupported(m)) => assert!(m.contains("!GetAtt"), "{src}: {m}"),
                other => panic!("{src}: {other:?}"),
            }
        }
    }

    #[test]
    fn export_source_yaml_nested_tags_convert_at_every_depth() {
        let v = y("!Join ['', [!Sub '${AWS::StackName}-', !Select [0, !Split ['/', !GetAtt Bucket.Arn]], !If [C, !Base64 {Ref: P}, !Ref AWS::NoValue]]]");
        assert_eq!(
            v,
            json!({"Fn::Join": ["", [
                {"Fn::Sub": "${AWS::StackName}-"},
                {"Fn::Select": [0, {"Fn::Split": ["/", {"Fn::GetAtt": ["Bucket", "Arn"]}]}]},
                {"Fn::If": ["C", {"Fn::Base64": {"Ref": "P"}}, {"Ref": "AWS::NoValue"}]}
            ]]})
        );
        // Block style, tags inside mappings inside sequences.
        let doc = "Resources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      Tags:\n        - Key: k\n          Value: !Sub\n            - '${X}'\n            - X: !GetAtt [Q, QueueName]\n";
        let v = parse_yaml(doc).expect("yaml");
        assert_eq!(
            v["Resources"]["R"]["Properties"]["Tags"][0]["Value"],
            json!({"Fn::Sub": ["${X}", {"X": {"Fn::GetAtt": ["Q", "QueueName"]}}]})
        );
    }

    #[test]
    fn export_source_yaml_unknown_tag_is_refused_with_its_position() {
        match parse_yaml("Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Bogus x\n") {
            Err(ParseFailure::Unsupported(m)) => {
                assert!(m.contains("!Bogus"), "{m}");
                assert!(m.contains("Resources.B.Properties.BucketName"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn export_source_yaml_scalars_keep_cloudformation_string_semantics() {
        let v = parse_yaml(
            "AWSTemplateFormatVersion: 2010-09-09\nVersion: 2012-10-17\nA: Yes\nB: No\nC: on\nD: off\nE: y\nAccount: 012345678901\nQuoted: \"123\"\nN: 300\nF: 1.5\nT: true\nZ: ~\nEmpty:\n80: port\ntrue: flag\n",
        )
        .expect("yaml");
        assert_eq!(v["AWSTemplateFormatVersion"], json!("2010-09-09"));
        assert_eq!(v["Version"], json!("2012-10-17"));
        for (k, s) in [
            ("A", "Yes"),
            ("B", "No"),
            ("C", "on"),
            ("D", "off"),
            ("E", "y"),
        ] {
            assert_eq!(v[k], json!(s), "{k}");
        }
        // A leading zero is not a number: the account id keeps its digits.
        assert_eq!(v["Account"], json!("012345678901"));
        assert_eq!(v["Quoted"], json!("123"));
        assert_eq!(v["N"], json!(300));
        assert_eq!(v["F"], json!(1.5));
        assert_eq!(v["T"], json!(true));
        assert_eq!(v["Z"], Value::Null);
        assert_eq!(v["Empty"], Value::Null);
        assert_eq!(v["80"], json!("port"));
        assert_eq!(v["true"], json!("flag"));
    }

    #[test]
    fn export_source_statement_108_a_duplicate_key_is_refused_naming_the_key_and_its_path_in_json_and_yaml(
    ) {
        let json = "{\"Resources\": {\"A\": {\"Type\": \"AWS::SNS::Topic\"}},\n \"Resources\": {}}";
        match parse_template(json.as_bytes()) {
            Err(ParseFailure::Json(m)) => assert_eq!(
                m,
                "duplicate key \"Resources\" in the document at line 2 column 12"
            ),
            other => panic!("{other:?}"),
        }
        let yaml = "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Ref Name\n      BucketName: other\n";
        match parse_template(yaml.as_bytes()) {
            Err(ParseFailure::Yaml { message, line, .. }) => {
                assert!(
                    message.starts_with(
                        "duplicate key \"BucketName\" in Resources.B.Properties at line 6 column"
                    ),
                    "{message}"
                );
                // The line of the repeat, as JSON's.
                assert_eq!(line, Some(6), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // Inside a short-form tag too.
        let tagged = "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !If\n        - C\n        - {a: 1, a: 2}\n        - x\n";
        match parse_template(tagged.as_bytes()) {
            Err(ParseFailure::Yaml { message, .. }) => assert!(
                message.starts_with(
                    "duplicate key \"a\" in Resources.B.Properties.BucketName[1] at line"
                ),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        // The same key in two mappings is no duplicate.
        let fine = "Resources:\n  A:\n    Type: T\n  B:\n    Type: T\n";
        assert!(parse_template(fine.as_bytes()).is_ok());
    }

    #[test]
    fn export_source_yaml_values_json_cannot_hold_are_refused() {
        assert!(
            matches!(parse_yaml("A: .inf\n"), Err(ParseFailure::Unsupported(m)) if m.contains("A"))
        );
        assert!(matches!(
            parse_yaml("? [a, b]\n: x\n"),
            Err(ParseFailure::Unsupported(_))
        ));
    }

    // --- --template ---------------------------------------------------------------------

    #[test]
    fn export_source_flat_json_and_yaml_fixtures_read_to_the_same_template() {
        let json_set =
            read_template_file(&fixtures().join("flat.template.json"), "ExportFlat").expect("json");
        let yaml_set =
            read_template_file(&fixtures().join("flat.template.yaml"), "ExportFlat").expect("yaml");
        assert_eq!(json_set.root.format, TemplateFormat::Json);
        assert_eq!(yaml_set.root.format, TemplateFormat::Yaml);
        assert_eq!(json_set.root.template, yaml_set.root.template);
        // Same key order too (the uploaded JSON is the same bytes).
        assert_eq!(
            serde_json::to_string(&json_set.root.template).expect("ser"),
            serde_json::to_string(&yaml_set.root.template).expect("ser")
        );
        let t = &yaml_set.root.template;
        assert_eq!(
            t["Resources"]["WorkerRoleD4C1B7A2"]["Properties"]["AssumeRolePolicyDocument"]
                ["Version"],
            json!("2012-10-17")
        );
        assert_eq!(yaml_set.root.stack, "ExportFlat");
        assert!(yaml_set.root.parent.is_none());
        assert!(yaml_set.children.is_empty() && yaml_set.nested_without_template.is_empty());
        assert_eq!(yaml_set.region, None);
    }

    #[test]
    fn export_source_format_is_sniffed_from_content_not_extension() {
        let s = Scratch::new();
        let yaml = std::fs::read_to_string(fixtures().join("flat.template.yaml")).expect("read");
        let as_txt = s.write("template.txt", &yaml);
        let as_json_name = s.write("template.json", &yaml);
        for p in [as_txt, as_json_name] {
            let set = read_template_file(&p, "ExportFlat").expect("yaml body");
            assert_eq!(set.root.format, TemplateFormat::Yaml, "{}", p.display());
        }
        let json = std::fs::read_to_string(fixtures().join("flat.template.json")).expect("read");
        let p = s.write("template.yaml", &format!("\u{feff}\n  {json}"));
        assert_eq!(
            read_template_file(&p, "ExportFlat")
                .expect("json")
                .root
                .format,
            TemplateFormat::Json
        );
        // A body that starts like JSON is JSON: a JSON typo that YAML would accept (here
        // a trailing comma) is an error, not a flow-style YAML template.
        let p = s.write(
            "typo.yml",
            "{\"Resources\": {\"Q\": {\"Type\": \"AWS::SQS::Queue\",}}}",
        );
        let e = read_template_file(&p, "S").expect_err("json typo");
        assert!(matches!(e, SourceError::TemplateJson { .. }), "{e}");
    }

    #[test]
    fn export_source_malformed_json_names_stack_file_line_and_column() {
        let s = Scratch::new();
        let p = s.write(
            "bad.json",
            "{\n  \"Resources\": {\n    \"A\": {\"Type\": \"AWS::SQS::Queue\",}\n  }\n}\n",
        );
        let e = read_template_file(&p, "MyStack").expect_err("bad json");
        let msg = e.to_string();
        assert!(matches!(e, SourceError::TemplateJson { .. }), "{msg}");
        assert!(msg.contains("MyStack") && msg.contains("bad.json"), "{msg}");
        assert!(msg.contains("line 3 column"), "{msg}");
    }

    #[test]
    fn export_source_malformed_yaml_names_stack_file_line_and_column() {
        let s = Scratch::new();
        let p = s.write(
            "bad.yaml",
            "Resources:\n  A:\n    Type: AWS::SQS::Queue\n   Properties: {}\n",
        );
        let e = read_template_file(&p, "MyStack").expect_err("bad yaml");
        let msg = e.to_string();
        match &e {
            SourceError::TemplateYaml { line, column, .. } => {
                assert_eq!(*line, Some(4), "{msg}");
                assert!(column.is_some(), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            msg.contains("MyStack") && msg.contains("bad.yaml") && msg.contains("line 4"),
            "{msg}"
        );
    }

    #[test]
    fn export_source_a_body_that_is_no_template_is_refused() {
        let s = Scratch::new();
        for (name, body) in [
            ("list.yaml", "- a\n- b\n"),
            ("empty.yaml", ""),
            ("res.json", "{\"Resources\": []}"),
        ] {
            let p = s.write(name, body);
            let e = read_template_file(&p, "MyStack").expect_err(name);
            assert!(matches!(e, SourceError::NotATemplate { .. }), "{name}: {e}");
            assert!(e.to_string().contains(name), "{e}");
        }
        let e = read_template_file(&s.0.join("absent.json"), "MyStack").expect_err("absent");
        assert!(matches!(e, SourceError::ReadTemplate { .. }), "{e}");
        assert!(e.to_string().contains("MyStack"), "{e}");
    }

    #[test]
    fn export_source_template_file_does_not_follow_nested_stacks() {
        let root = fixtures()
            .join("nested.out")
            .join("ExportNested.template.json");
        let set = read_template_file(&root, ROOT).expect("root");
        assert!(set.children.is_empty());
        assert_eq!(
            set.nested_without_template,
            vec![NestedLink {
                parent: ROOT.into(),
                logical_id: MIDDLE_ID.into()
            }]
        );
    }

    #[tokio::test]
    async fn export_source_template_needs_a_stack_name() {
        let src = TemplateSource::Template(fixtures().join("flat.template.json"));
        let e = read_templates(&src, None).await.expect_err("no stack");
        assert!(matches!(e, SourceError::TemplateNeedsStack));
        assert!(matches!(CliError::from(e), CliError::Usage(_)));
        let set = read_templates(&src, Some("ExportFlat"))
            .await
            .expect("named");
        assert_eq!(set.root.stack, "ExportFlat");
    }

    // --- --cdk-out ----------------------------------------------------------------------

    fn assert_nested_fixture(set: &TemplateSet, dir: &Path) {
        let middle = format!("{ROOT}~{MIDDLE_ID}");
        let leaf = format!("{middle}~{LEAF_ID}");
        assert_eq!(set.root.stack, ROOT);
        assert_eq!(set.root.source, dir.join("ExportNested.template.json"));
        assert_eq!(set.display_name.as_deref(), Some(ROOT));
        assert_eq!(set.region.as_deref(), Some("us-east-1"));
        assert_eq!(set.account.as_deref(), Some("123456789012"));
        let names: Vec<_> = set.stacks().map(|s| s.stack.as_str()).collect();
        assert_eq!(names, [ROOT, middle.as_str(), leaf.as_str()]);
        assert_eq!(
            set.children[0].parent,
            Some(NestedLink {
                parent: ROOT.into(),
                logical_id: MIDDLE_ID.into()
            })
        );
        assert_eq!(
            set.children[1].parent,
            Some(NestedLink {
                parent: middle.clone(),
                logical_id: LEAF_ID.into()
            })
        );
        assert_eq!(set.children[0].source, dir.join(MIDDLE_FILE));
        assert_eq!(set.children[1].source, dir.join(LEAF_FILE));
        assert!(set.nested_without_template.is_empty());
        assert!(set.root.template["Resources"]["DataBucketE3889A50"].is_object());
        assert!(set.children[0].template["Resources"]["WorkQueue6B4B0D5A"].is_object());
        assert!(set.children[1].template["Resources"]["QueueUrlParameter2F3E8A6B"].is_object());
        assert!(set.stacks().all(|s| s.format == TemplateFormat::Json));
    }

    #[test]
    fn export_source_cloud_assembly_walks_three_levels_with_child_names() {
        let dir = fixtures().join("nested.out");
        let set = read_cloud_assembly(&dir, Some(ROOT)).expect("assembly");
        assert_nested_fixture(&set, &dir);
        // One stack in the assembly: it is chosen without a name.
        let set = read_cloud_assembly(&dir, None).expect("only stack");
        assert_nested_fixture(&set, &dir);
    }

    #[test]
    fn export_source_nested_fixture_parameters_match_their_parents() {
        // The fixture's Parameters passed by each nested resource are the child's declared
        // parameters, and each Ref/GetAtt names something of the parent.
        let set =
            read_cloud_assembly(&fixtures().join("nested.out"), Some(ROOT)).expect("assembly");
        for child in &set.children {
            let link = child.parent.as_ref().expect("parent");
            let parent = set
                .stacks()
                .find(|s| s.stack == link.parent)
                .expect("parent template");
            let row = &parent.template["Resources"][&link.logical_id];
            let passed = row["Properties"]["Parameters"]
                .as_object()
                .expect("parameters");
            let declared = child.template["Parameters"].as_object().expect("declared");
            let mut a: Vec<_> = passed.keys().collect();
            let mut b: Vec<_> = declared.keys().collect();
            a.sort();
            b.sort();
            assert_eq!(a, b, "{}", child.stack);
            for v in passed.values() {
                let target = v
                    .get("Ref")
                    .or_else(|| v["Fn::GetAtt"].get(0))
                    .and_then(Value::as_str)
                    .expect("ref");
                assert!(
                    parent.template["Resources"].get(target).is_some()
                        || parent.template["Parameters"].get(target).is_some(),
                    "{target} in {}",
                    parent.stack
                );
            }
        }
    }

    #[test]
    fn export_source_stack_is_matched_by_name_or_display_name() {
        let s = nested_copy();
        edit_json(&s.0.join("manifest.json"), |m| {
            let art = &mut m["artifacts"]["ExportNested"];
            art["properties"]["stackName"] = json!("export-nested-prod");
            art["displayName"] = json!("Prod/ExportNested");
            art["environment"] = json!("aws://unknown-account/unknown-region");
        });
        for wanted in ["export-nested-prod", "Prod/ExportNested"] {
            let set = read_cloud_assembly(s.path(), Some(wanted)).expect(wanted);
            assert_eq!(set.root.stack, "export-nested-prod");
            assert_eq!(set.display_name.as_deref(), Some("Prod/ExportNested"));
            assert!(set.children[0].stack.starts_with("export-nested-prod~"));
            assert_eq!(
                (set.region.as_deref(), set.account.as_deref()),
                (None, None)
            );
        }
        // The artifact id is not a name once stackName differs.
        let e = read_cloud_assembly(s.path(), Some("ExportNested")).expect_err("artifact id");
        assert!(matches!(e, SourceError::StackNotFound { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("export-nested-prod (Prod/ExportNested)"),
            "{e}"
        );
    }

    #[test]
    fn export_source_stage_assemblies_are_searched() {
        let s = Scratch::new();
        copy_dir(&fixtures().join("nested.out"), &s.0.join("assembly-Prod"));
        edit_json(&s.0.join("assembly-Prod/manifest.json"), |m| {
            m["artifacts"]["ExportNested"]["properties"]["stackName"] = json!("Prod-ExportNested");
        });
        s.write(
            "manifest.json",
            &json!({"version": "38.0.1", "artifacts": {
                "assembly-Prod": {"type": "cdk:cloud-assembly",
                                  "properties": {"directoryName": "assembly-Prod", "displayName": "Prod"}},
                "Tree": {"type": "cdk:tree", "properties": {"file": "tree.json"}}
            }})
            .to_string(),
        );
        let set = read_cloud_assembly(s.path(), Some("Prod-ExportNested")).expect("stage stack");
        assert_eq!(set.stacks().count(), 3);
        assert_eq!(
            set.children[1].source,
            s.0.join("assembly-Prod").join(LEAF_FILE)
        );
    }

    #[test]
    fn export_source_no_manifest_is_refused_naming_the_directory() {
        let s = Scratch::new();
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("no manifest");
        assert!(matches!(e, SourceError::NoManifest { .. }), "{e}");
        assert!(e.to_string().contains("manifest.json"), "{e}");
        s.write("manifest.json", "{\"artifacts\": ");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("bad manifest");
        assert!(matches!(e, SourceError::FileJson { .. }), "{e}");
        s.write(
            "manifest.json",
            "{\"version\": \"38.0.1\", \"artifacts\": {}}",
        );
        let e = read_cloud_assembly(s.path(), None).expect_err("no stacks");
        assert!(matches!(e, SourceError::NoStacks { .. }), "{e}");
    }

    #[test]
    fn export_source_stack_not_in_the_assembly_lists_the_stacks_there() {
        let e =
            read_cloud_assembly(&fixtures().join("nested.out"), Some("Other")).expect_err("absent");
        assert!(matches!(e, SourceError::StackNotFound { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("Other") && msg.contains("it has: ExportNested"),
            "{msg}"
        );
    }

    #[test]
    fn export_source_several_stacks_need_a_name() {
        let s = nested_copy();
        edit_json(&s.0.join("manifest.json"), |m| {
            let mut other = m["artifacts"]["ExportNested"].clone();
            other["displayName"] = json!("Second");
            m["artifacts"]["Second"] = other;
        });
        let e = read_cloud_assembly(s.path(), None).expect_err("two stacks");
        assert!(matches!(e, SourceError::StackNotNamed { .. }), "{e}");
        assert!(e.to_string().contains("ExportNested, Second"), "{e}");
        assert_eq!(
            read_cloud_assembly(s.path(), Some("Second"))
                .expect("named")
                .root
                .stack,
            "Second"
        );
    }

    #[test]
    fn export_source_missing_stack_template_names_stack_and_file() {
        let s = nested_copy();
        std::fs::remove_file(s.0.join("ExportNested.template.json")).expect("rm");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("missing");
        assert!(matches!(e, SourceError::MissingTemplate { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("ExportNested") && msg.contains("ExportNested.template.json"),
            "{msg}"
        );
    }

    #[test]
    fn export_source_missing_nested_template_names_child_parent_and_file() {
        let s = nested_copy();
        std::fs::remove_file(s.0.join(LEAF_FILE)).expect("rm");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("missing leaf");
        match &e {
            SourceError::MissingNestedTemplate {
                child,
                parent,
                logical_id,
                path,
            } => {
                assert_eq!(child, &format!("{ROOT}~{MIDDLE_ID}~{LEAF_ID}"));
                assert_eq!(parent, &format!("{ROOT}~{MIDDLE_ID}"));
                assert_eq!(logical_id, LEAF_ID);
                assert_eq!(path, &s.0.join(LEAF_FILE));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("aws:asset:path"), "{e}");
    }

    #[test]
    fn export_source_malformed_nested_template_names_the_child_and_line() {
        let s = nested_copy();
        s.write(MIDDLE_FILE, "{\n \"Resources\": {\n  \"Q\": \n }\n}\n");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("bad middle");
        assert!(matches!(e, SourceError::TemplateJson { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("{ROOT}~{MIDDLE_ID}")) && msg.contains(MIDDLE_FILE),
            "{msg}"
        );
        assert!(msg.contains("line 4"), "{msg}");
        // A nested template may be YAML too, and is then parsed as YAML.
        let leaf_yaml = "Parameters:\n  P: {Type: String}\nResources:\n  Param:\n    Type: AWS::SSM::Parameter\n    Properties: {Type: String, Value: !Ref P}\n";
        let s = nested_copy();
        s.write(LEAF_FILE, leaf_yaml);
        let set = read_cloud_assembly(s.path(), Some(ROOT)).expect("yaml leaf");
        assert_eq!(set.children[1].format, TemplateFormat::Yaml);
        assert_eq!(
            set.children[1].template["Resources"]["Param"]["Properties"]["Value"],
            json!({"Ref": "P"})
        );
        s.write(LEAF_FILE, "Resources:\n  A: [\n");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("bad yaml leaf");
        assert!(
            matches!(e, SourceError::TemplateYaml { line: Some(_), .. }),
            "{e}"
        );
        assert!(e.to_string().contains(LEAF_ID), "{e}");
    }

    #[test]
    fn export_source_nested_stack_without_asset_path_is_listed_not_followed() {
        let s = nested_copy();
        edit_json(&s.0.join(MIDDLE_FILE), |t| {
            t["Resources"][LEAF_ID]["Metadata"]
                .as_object_mut()
                .expect("metadata")
                .remove("aws:asset:path");
        });
        let set = read_cloud_assembly(s.path(), Some(ROOT)).expect("assembly");
        assert_eq!(set.children.len(), 1);
        assert_eq!(
            set.nested_without_template,
            vec![NestedLink {
                parent: format!("{ROOT}~{MIDDLE_ID}"),
                logical_id: LEAF_ID.into()
            }]
        );
    }

    #[test]
    fn export_source_absolute_asset_path_is_refused() {
        let s = nested_copy();
        let abs = s.0.join(LEAF_FILE);
        edit_json(&s.0.join(MIDDLE_FILE), |t| {
            t["Resources"][LEAF_ID]["Metadata"]["aws:asset:path"] = json!(abs.to_string_lossy());
        });
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("absolute");
        assert!(matches!(e, SourceError::BadAssetPath { .. }), "{e}");
        assert!(e.to_string().contains(LEAF_ID), "{e}");
    }

    #[test]
    fn export_source_nested_cycle_is_refused() {
        let s = nested_copy();
        edit_json(&s.0.join(LEAF_FILE), |t| {
            t["Resources"]["Again"] = json!({
                "Type": "AWS::CloudFormation::Stack",
                "Metadata": {"aws:asset:path": MIDDLE_FILE}
            });
        });
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("cycle");
        assert!(matches!(e, SourceError::NestedCycle { .. }), "{e}");
    }

    // --- --app --------------------------------------------------------------------------

    fn app(command: String, cwd: &Path) -> AppOptions {
        AppOptions {
            command,
            cwd: cwd.to_path_buf(),
            user_config: None,
            context: Map::new(),
            region: Some("eu-west-1".into()),
            account: Some("111122223333".into()),
            echo_stderr: false,
        }
    }

    fn sh_quote(p: &Path) -> String {
        format!("'{}'", p.to_string_lossy().replace('\'', "'\\''"))
    }

    #[tokio::test]
    async fn export_source_app_writes_the_assembly_into_cdk_outdir() {
        let cwd = Scratch::new();
        let fixture = fixtures().join("nested.out");
        let cmd = format!(
            "cp -R {}/. \"$CDK_OUTDIR\" && printf '%s' \"$CDK_OUTDIR\" > outdir.txt",
            sh_quote(&fixture)
        );
        let set = read_templates(&TemplateSource::App(app(cmd, cwd.path())), Some(ROOT))
            .await
            .expect("synth");
        let outdir =
            PathBuf::from(std::fs::read_to_string(cwd.0.join("outdir.txt")).expect("outdir"));
        assert_nested_fixture(&set, &outdir);
        // The fresh directory is removed once read.
        assert!(!outdir.exists(), "{}", outdir.display());
    }

    #[tokio::test]
    async fn export_source_app_gets_the_environment_cdkd_sets() {
        let cwd = Scratch::new();
        cwd.write("cdk.json", r#"{"app": "x", "context": {"a": "cdk.json", "b": "cdk.json", "@aws-cdk/core:flag": true}}"#);
        cwd.write(
            "cdk.context.json",
            r#"{"b": "cdk.context.json", "c": "cdk.context.json"}"#,
        );
        let user = cwd.write(
            "user.cdk.json",
            r#"{"context": {"a": "user", "u": "user"}}"#,
        );
        let fixture = fixtures().join("nested.out");
        let cmd = format!(
            "cp -R {}/. \"$CDK_OUTDIR\" && printf '%s' \"$CDK_CONTEXT_JSON\" > ctx.json && printf '%s %s %s' \"$CDK_DEFAULT_REGION\" \"$CDK_DEFAULT_ACCOUNT\" \"$CDK_CLI_ASM_VERSION\" > env.txt",
            sh_quote(&fixture)
        );
        let mut opts = app(cmd, cwd.path());
        opts.user_config = Some(user);
        opts.context.insert("c".into(), json!("cli"));
        synthesize(&opts, Some(ROOT)).await.expect("synth");
        let ctx: Value =
            serde_json::from_slice(&std::fs::read(cwd.0.join("ctx.json")).expect("ctx"))
                .expect("json");
        assert_eq!(ctx["a"], json!("cdk.json"));
        assert_eq!(ctx["b"], json!("cdk.context.json"));
        assert_eq!(ctx["c"], json!("cli"));
        assert_eq!(ctx["u"], json!("user"));
        assert_eq!(ctx["@aws-cdk/core:flag"], json!(true));
        assert_eq!(ctx["aws:cdk:enable-path-metadata"], json!(true));
        assert_eq!(ctx["aws:cdk:bundling-stacks"], json!(["**"]));
        assert_eq!(
            std::fs::read_to_string(cwd.0.join("env.txt")).expect("env"),
            "eu-west-1 111122223333 38.0.0"
        );
    }

    #[tokio::test]
    async fn export_source_failing_app_reports_its_status_and_last_lines() {
        let cwd = Scratch::new();
        let cmd =
            "echo out-line; for i in $(seq 1 30); do echo \"err $i\" >&2; done; exit 3".to_string();
        let e = synthesize(&app(cmd, cwd.path()), Some(ROOT))
            .await
            .expect_err("fails");
        match &e {
            SourceError::AppFailed { status, tail, .. } => {
                assert_eq!(status, "exit status 3");
                assert_eq!(tail.len(), APP_TAIL_LINES);
                assert_eq!(tail.first().map(String::as_str), Some("err 11"));
                assert_eq!(tail.last().map(String::as_str), Some("err 30"));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("err 30"), "{e}");
        // Nothing on stderr: stdout's last lines are reported.
        let e = synthesize(&app("echo only-stdout; exit 1".into(), cwd.path()), None)
            .await
            .expect_err("fails");
        assert!(
            e.to_string().contains("only-stdout") && e.to_string().contains("exit status 1"),
            "{e}"
        );
        assert!(matches!(CliError::from(e), CliError::Refused(_)));
    }

    #[tokio::test]
    async fn export_source_app_writing_no_assembly_is_refused_and_its_directory_kept() {
        let cwd = Scratch::new();
        let e = synthesize(&app("true".into(), cwd.path()), Some(ROOT))
            .await
            .expect_err("empty");
        match e {
            SourceError::Synthesized { source, kept } => {
                assert!(
                    matches!(*source, SourceError::NoManifest { .. }),
                    "{source}"
                );
                assert!(kept.is_dir());
                let _ = std::fs::remove_dir_all(kept);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn export_source_app_needing_context_lookups_is_refused() {
        let cwd = Scratch::new();
        let cmd = r#"printf '%s' '{"version":"38.0.1","artifacts":{},"missing":[{"key":"vpc-provider:account=1:filter.isDefault=true","provider":"vpc-provider","props":{}}]}' > "$CDK_OUTDIR/manifest.json""#;
        let e = synthesize(&app(cmd.into(), cwd.path()), None)
            .await
            .expect_err("missing");
        match e {
            SourceError::Synthesized { source, kept } => {
                assert!(
                    source.to_string().contains("vpc-provider:account=1"),
                    "{source}"
                );
                assert!(matches!(*source, SourceError::MissingContext { .. }));
                let _ = std::fs::remove_dir_all(kept);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn export_source_app_naming_a_directory_reads_it_as_the_assembly() {
        let dir = fixtures().join("nested.out");
        let opts = app(dir.to_string_lossy().into_owned(), Path::new("/"));
        let set = synthesize(&opts, Some(ROOT)).await.expect("directory");
        assert_nested_fixture(&set, &dir);
    }

    #[test]
    fn export_source_app_js_entry_point_runs_under_node() {
        assert_eq!(app_command_line(" bin/app.js --x "), "node bin/app.js --x");
        assert_eq!(
            app_command_line("npx ts-node bin/app.ts"),
            "npx ts-node bin/app.ts"
        );
    }

    // --- upload -------------------------------------------------------------------------

    #[test]
    fn export_source_template_key_is_under_the_run() {
        assert_eq!(
            template_key("cdkd", "r-1", "Root~Child"),
            "cdkd/_runs/r-1/templates/Root~Child.json"
        );
    }
}
