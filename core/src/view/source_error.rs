//! The words of [`SourceError`]: why an export's templates could not be read. Every
//! message names the stack and the file.

use std::fmt;

use crate::export::source_error::SourceError;
use crate::view::refusal::TypedRefusal;

impl TypedRefusal for SourceError {}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::TemplateNeedsStack => write!(f, "--template needs the name of the stack to export"),
            SourceError::ReadFile { path, cause } => {
                let path = path.display();
                write!(f, "cannot read {path}: {cause}")
            }
            SourceError::FileJson { path, message } => {
                let path = path.display();
                write!(f, "{path} is not valid JSON: {message}")
            }
            SourceError::ReadTemplate { stack, path, cause } => {
                let path = path.display();
                write!(f, "cannot read the template of stack {stack} ({path}): {cause}")
            }
            SourceError::TemplateJson { stack, path, message } => {
                let path = path.display();
                write!(f, "the template of stack {stack} ({path}) is not valid JSON: {message}")
            }
            SourceError::TemplateYaml { stack, path, message, .. } => {
                let path = path.display();
                write!(f, "the template of stack {stack} ({path}) is not valid YAML: {message}")
            }
            SourceError::TemplateUnsupported { stack, path, message } => {
                let path = path.display();
                write!(f, "the template of stack {stack} ({path}) cannot be read as a template: {message}")
            }
            SourceError::NotATemplate { path, message } => {
                let path = path.display();
                write!(f, "{message} ({path})")
            }
            SourceError::NoManifest { dir } => {
                let dir = dir.display();
                write!(f, "no cloud assembly at {dir}: {dir}/manifest.json does not exist (synthesize the app first, or pass --app)")
            }
            SourceError::BadManifest { path, problem } => {
                let path = path.display();
                write!(f, "the cloud assembly manifest {path} {problem}")
            }
            SourceError::NoStacks { dir } => {
                let dir = dir.display();
                write!(f, "the cloud assembly at {dir} has no stack")
            }
            SourceError::StackNotFound { stack, dir, available } => {
                let dir = dir.display();
                write!(f, "stack {stack} is not in the cloud assembly at {dir}; it has: {available}")
            }
            SourceError::StackNotNamed { dir, available } => {
                let dir = dir.display();
                write!(f, "the cloud assembly at {dir} has several stacks ({available}); name the one to export")
            }
            SourceError::StackAmbiguous { stack, dir, available } => {
                let dir = dir.display();
                write!(f, "{stack} names several stacks of the cloud assembly at {dir} ({available}); name one by its stack name")
            }
            SourceError::NoTemplateFile { stack, manifest } => {
                let manifest = manifest.display();
                write!(f, "stack {stack}: the cloud assembly names no template file for it in {manifest}")
            }
            SourceError::MissingTemplate { stack, path } => {
                let path = path.display();
                write!(f, "stack {stack}: its template file {path} does not exist")
            }
            SourceError::MissingNestedTemplate { child, parent, logical_id, path } => {
                let path = path.display();
                write!(f, "nested stack {child} (resource {logical_id} of stack {parent}): its template {path}, named by Metadata['aws:asset:path'], does not exist")
            }
            SourceError::BadAssetPath { stack, refusal } => write!(f, "stack {stack}: {refusal}"),
            SourceError::NestedCycle { child, path } => {
                let path = path.display();
                write!(f, "nested stack {child}: its template {path} is already an ancestor of it (a nested-stack cycle)")
            }
            SourceError::AppSpawn { command, cause } => write!(f, "cannot run the CDK app `{command}`: {cause}"),
            SourceError::AppFailed { command, status, tail } => write!(f, "the CDK app `{command}` failed ({status}){}", tail_text(tail)),
            SourceError::MissingContext { keys } => write!(f, "the CDK app needs context lookups, which cdkd-flow does not perform (missing: {keys}); run `cdk synth` once so that cdk.context.json holds them, then retry"),
            SourceError::Synthesized { source, kept } => {
                let kept = kept.display();
                write!(f, "{source} (the synthesized cloud assembly is kept at {kept})")
            }
            SourceError::Upload { stack, bucket, key, cause } => write!(f, "cannot upload the template of stack {stack} to s3://{bucket}/{key}: {cause}"),
        }
    }
}

fn tail_text(tail: &[String]) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its last output: {}", tail.join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::export::source_error::SourceError;
    use crate::export::template::AbsoluteAssetPath;

    fn all_source_errors() -> Vec<SourceError> {
        let p = || PathBuf::from("/tmp/a b/\u{1b}[2Jt\nx.json");
        let h = "App\n\u{1b}[31mX".to_string();
        let inner = SourceError::NoStacks { dir: p() };
        vec![
            SourceError::TemplateNeedsStack,
            SourceError::ReadFile {
                path: p(),
                cause: h.clone(),
            },
            SourceError::FileJson {
                path: p(),
                message: h.clone(),
            },
            SourceError::ReadTemplate {
                stack: h.clone(),
                path: p(),
                cause: h.clone(),
            },
            SourceError::TemplateJson {
                stack: h.clone(),
                path: p(),
                message: h.clone(),
            },
            SourceError::TemplateYaml {
                stack: h.clone(),
                path: p(),
                line: Some(3),
                column: Some(4),
                message: h.clone(),
            },
            SourceError::TemplateUnsupported {
                stack: h.clone(),
                path: p(),
                message: h.clone(),
            },
            SourceError::NotATemplate {
                path: p(),
                message: h.clone(),
            },
            SourceError::NoManifest { dir: p() },
            SourceError::BadManifest {
                path: p(),
                problem: h.clone(),
            },
            SourceError::NoStacks { dir: p() },
            SourceError::StackNotFound {
                stack: h.clone(),
                dir: p(),
                available: h.clone(),
            },
            SourceError::StackNotNamed {
                dir: p(),
                available: h.clone(),
            },
            SourceError::StackAmbiguous {
                stack: h.clone(),
                dir: p(),
                available: h.clone(),
            },
            SourceError::NoTemplateFile {
                stack: h.clone(),
                manifest: p(),
            },
            SourceError::MissingTemplate {
                stack: h.clone(),
                path: p(),
            },
            SourceError::MissingNestedTemplate {
                child: h.clone(),
                parent: h.clone(),
                logical_id: h.clone(),
                path: p(),
            },
            SourceError::BadAssetPath {
                stack: h.clone(),
                refusal: AbsoluteAssetPath {
                    logical_id: h.clone(),
                },
            },
            SourceError::NestedCycle {
                child: h.clone(),
                path: p(),
            },
            SourceError::AppSpawn {
                command: h.clone(),
                cause: h.clone(),
            },
            SourceError::AppFailed {
                command: h.clone(),
                status: h.clone(),
                tail: vec![],
            },
            SourceError::AppFailed {
                command: h.clone(),
                status: h.clone(),
                tail: vec![h.clone(), "b".into()],
            },
            SourceError::MissingContext { keys: h.clone() },
            SourceError::Synthesized {
                source: Box::new(inner),
                kept: p(),
            },
            SourceError::Upload {
                stack: h.clone(),
                bucket: h.clone(),
                key: h.clone(),
                cause: h.clone(),
            },
        ]
    }

    /// Every reason the templates could not be read, with hostile values (a path and
    /// names holding a newline and an escape: the CLI's error line flattens them).
    #[test]
    fn source_error_words_of_every_variant() {
        let lines: Vec<String> = all_source_errors().iter().map(|e| e.to_string()).collect();
        insta::assert_snapshot!(lines.join("\n---\n"));
    }
}
