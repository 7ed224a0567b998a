//! A plan's warnings, as data (docs/export.md, "Warnings and printing" and
//! "Drift-baseline warning"): one [`PlanWarning`] per warning of a stack's plan or of
//! the tree's, decided by the planning modules, worded by `core::view::plan_warning`.
//! Non-blocking: the plan still runs.
//!
//! `plan.json` keeps each warning as its words, as it always did, so a CLI or a backend
//! of another version reads it: a warning read back is [`PlanWarning::Recorded`], the
//! words as the plan wrote them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::iam::UnconfirmedPrincipal;
use super::params::UnresolvedParameters;
use super::refusal::GateRefusal;
use super::splitters::SplitWarning;

/// One warning of a plan. The values are as the planner holds them (untrusted names and
/// ids raw); the view sanitises them where it prints them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum PlanWarning {
    /// Rows of `stack`'s record that are not objects or carry no resource type: left out
    /// of the baseline tally.
    MalformedRows { stack: String, ids: Vec<String> },
    /// `stack`'s record is of a state schema older than drift baselines (version < 3)
    /// and some of its rows have none.
    SchemaPredatesBaselines {
        stack: String,
        advice: RefreshAdvice,
    },
    /// `missing` of the `total` well-formed rows of `stack`'s record have no drift
    /// baseline.
    MissingBaselines {
        stack: String,
        missing: Vec<String>,
        total: usize,
        advice: RefreshAdvice,
    },
    /// Rows of `stack`'s record whose baseline `cdkd import` refused, grouped by what
    /// clears it.
    RefusedBaselines {
        stack: String,
        ids: Vec<String>,
        remedy: RefusedRemedy,
    },
    /// The overlay rewrote a non-string literal at `Properties.<field>` of `logical_id`
    /// (it was `was`) with the identifier's scalar `value`.
    OverlayScalar {
        logical_id: String,
        field: String,
        was: Value,
        value: String,
    },
    /// A nested child's parameters that could not be resolved while planning.
    ChildParametersUnresolved(UnresolvedParameters),
    /// A warning of the identifier's resolution for the row `logical_id`.
    Identifier {
        logical_id: String,
        warning: SplitWarning,
    },
    /// The principals phase 2 attaches the IAM policy `logical_id` to could not all be
    /// confirmed against the record: the unconfirmed ones, as the check names them.
    PrincipalsUnconfirmed {
        logical_id: String,
        unconfirmed: Vec<UnconfirmedPrincipal>,
    },
    /// A gate a real run would be refused on, shown by a dry run's plan.
    Gate(GateRefusal),
    /// A warning read back from `plan.json`: the words as the plan wrote them.
    Recorded(String),
}

/// Which of three remedies clears a refused baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusedRemedy {
    /// Deploying a change to the resource restores it.
    DeployFixes,
    /// Refused over a template parameter whose deployed value could not be proved: only
    /// replacing or re-importing the resource clears it.
    ParameterBound,
    /// Recorded without its reason, and the template cannot tell which.
    CannotTell,
}

/// What the missing-baselines warning advises, decided by the record and the commands
/// that render (docs/export.md, "Commands in that warning").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefreshAdvice {
    /// The record holds malformed rows: repair it first.
    RepairFirst { show: Option<ShowCommand> },
    /// A legacy record (no region): migrate it first.
    LegacyRecord { show: Option<ShowCommand> },
    /// Capture the baselines with this command.
    Capture { command: RefreshCommand },
    /// Capture them; no command is printed (the name or region does not render exactly).
    NoCommand { show: Option<ShowCommand> },
}

/// `cdkd-flow state refresh-observed <stack> --stack-region <region>`: the values render
/// exactly as loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefreshCommand {
    pub stack: String,
    pub region: String,
}

/// `cdkd-flow state show <name> [--stack-region <region>]`: `name` and `region` already
/// rendered (printable), `region` left out when it does not render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShowCommand {
    pub name: String,
    pub region: Option<String>,
}

impl From<UnresolvedParameters> for PlanWarning {
    fn from(u: UnresolvedParameters) -> Self {
        PlanWarning::ChildParametersUnresolved(u)
    }
}

impl From<String> for PlanWarning {
    fn from(words: String) -> Self {
        PlanWarning::Recorded(words)
    }
}
