//! What the `export` command refuses around its runs, as data (docs/cli.md, "export"):
//! a run that failed or refused, a plan run that wrote no plan, a plan a real run would
//! refuse. Worded by `core::view::command`.

use crate::export::plan::PlanRefusal;
use crate::run::RunId;

/// A refusal of the `export` command.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportCommandRefusal {
    /// The run ended with `error` (`Refused`: a refusal) and `cause`.
    Failed {
        stack: String,
        error: String,
        cause: String,
    },
    /// The plan run `plan_run` ended without writing a plan.
    NoPlan { stack: String, plan_run: RunId },
    /// The plan reused is refused before the question (an SSM parameter, a gate).
    Reuse { stack: String, why: PlanRefusal },
}

impl ExportCommandRefusal {
    /// A run of `stack` that ended with `error` and `cause`.
    pub fn failed(stack: &str, error: &str, cause: &str) -> Self {
        ExportCommandRefusal::Failed {
            stack: stack.to_string(),
            error: error.to_string(),
            cause: cause.to_string(),
        }
    }
}
