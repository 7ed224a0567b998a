//! Why an export's templates could not be read (a template file, a cloud assembly, the
//! CDK app that synthesizes one, the upload): what and where, never the words, which
//! are the view's (`core::view::source_error`). The CLI reads the files; this is what it
//! returns when it cannot.

use std::path::PathBuf;

use super::template::AbsoluteAssetPath;

/// Why the templates could not be read. Every message names the stack and the file.
#[derive(Debug)]
pub enum SourceError {
    TemplateNeedsStack,
    ReadFile {
        path: PathBuf,
        cause: String,
    },
    FileJson {
        path: PathBuf,
        message: String,
    },
    ReadTemplate {
        stack: String,
        path: PathBuf,
        cause: String,
    },
    TemplateJson {
        stack: String,
        path: PathBuf,
        message: String,
    },
    /// `message` already names the line and column when the parser knows them.
    TemplateYaml {
        stack: String,
        path: PathBuf,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    TemplateUnsupported {
        stack: String,
        path: PathBuf,
        message: String,
    },
    NotATemplate {
        path: PathBuf,
        message: String,
    },
    NoManifest {
        dir: PathBuf,
    },
    BadManifest {
        path: PathBuf,
        problem: String,
    },
    NoStacks {
        dir: PathBuf,
    },
    StackNotFound {
        stack: String,
        dir: PathBuf,
        available: String,
    },
    StackNotNamed {
        dir: PathBuf,
        available: String,
    },
    StackAmbiguous {
        stack: String,
        dir: PathBuf,
        available: String,
    },
    NoTemplateFile {
        stack: String,
        manifest: PathBuf,
    },
    MissingTemplate {
        stack: String,
        path: PathBuf,
    },
    MissingNestedTemplate {
        child: String,
        parent: String,
        logical_id: String,
        path: PathBuf,
    },
    BadAssetPath {
        stack: String,
        refusal: AbsoluteAssetPath,
    },
    NestedCycle {
        child: String,
        path: PathBuf,
    },
    AppSpawn {
        command: String,
        cause: String,
    },
    AppFailed {
        command: String,
        status: String,
        tail: Vec<String>,
    },
    MissingContext {
        keys: String,
    },
    Synthesized {
        source: Box<SourceError>,
        kept: PathBuf,
    },
    Upload {
        stack: String,
        bucket: String,
        key: String,
        cause: String,
    },
}

impl std::error::Error for SourceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SourceError::Synthesized { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
