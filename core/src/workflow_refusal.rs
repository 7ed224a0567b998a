//! What starting a workflow refuses, as data: no state machine to start, a definition
//! that cannot be read or loaded (`workflow run`, a local run). Worded by
//! `core::view::command`.

use crate::run::RunKind;

/// Why no state machine of a kind can be started (docs/cli.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendRefusal {
    /// No flag, no environment variable `env_var`, and the backend stack gave none
    /// (`why`).
    NoStateMachine {
        kind: RunKind,
        env_var: String,
        why: NoMachineWhy,
    },
    /// The state machine named is not an ARN.
    NotAStateMachineArn { arn: String },
}

/// Why the backend stack named no state machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoMachineWhy {
    /// The backend stack has no such output.
    NoOutput { stack: String, output_key: String },
    /// The backend stack could not be read (its error).
    Error(String),
}

/// A definition of the local engine that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkflowRefusal {
    /// One of the project's definitions (`name`) does not load (`error`).
    DefinitionDoesNotLoad { name: String, error: String },
    /// A file of `workflow run` (`what`) cannot be read.
    Unreadable {
        what: WorkflowFile,
        path: String,
        error: String,
    },
    /// A definition file does not load; `missing`: the substitution it lacks, when that
    /// is why.
    DoesNotLoad {
        file: String,
        error: String,
        missing: Option<String>,
    },
    /// The execution ended failed with `error` and `cause`.
    ExecutionFailed { error: String, cause: String },
}

/// A file `workflow run` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkflowFile {
    /// A definition (`--definition`, `--machine NAME=FILE`).
    Definition,
    /// The input (`--input-file`).
    Input,
}
