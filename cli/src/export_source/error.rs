//! Why the templates could not be read, and how a parse failure becomes that.

use std::path::{Path, PathBuf};

use crate::error::CliError;

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
    #[error("stack {stack}: {refusal}")]
    BadAssetPath {
        stack: String,
        refusal: cdkd_core::export::template::AbsoluteAssetPath,
    },
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

/// Why a body did not parse (before the file is known).
#[derive(Debug)]
pub(super) enum ParseFailure {
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
    pub(super) fn into_error(self, stack: &str, path: &Path) -> SourceError {
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
