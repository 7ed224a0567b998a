//! Why the templates could not be read (`cdkd_core::export::source_error`, worded by its
//! view), how it reaches the CLI's error, and how a parse failure becomes that.

use std::path::Path;

use crate::error::CliError;

pub use cdkd_core::export::source_error::SourceError;

impl From<SourceError> for CliError {
    fn from(e: SourceError) -> Self {
        match e {
            SourceError::TemplateNeedsStack => CliError::Usage(e.to_string()),
            SourceError::Upload { .. } => CliError::Aws(e.to_string()),
            other => CliError::refused(&other),
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
