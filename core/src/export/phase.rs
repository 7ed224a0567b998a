//! The phases that submit a change set, by name: their own module, so that what names a
//! phase (the export refusals, `refusal`) needs nothing of the phase templates
//! (`phases`, which re-exports it).

use serde::{Deserialize, Serialize};

/// A phase that submits a change set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// Phase 1 (flat) / 1A (nested): an IMPORT change set creating the stack.
    Import,
    /// Phase 2: an UPDATE change set with the full template.
    Update,
    /// Phase 1B: an IMPORT change set on an existing parent adopting its children.
    Adopt,
    /// The tag-only update moving a child from IMPORT_COMPLETE to UPDATE_COMPLETE.
    Flip,
}

impl Phase {
    /// CloudFormation's `ChangeSetType`.
    pub fn change_set_type(self) -> &'static str {
        match self {
            Phase::Import | Phase::Adopt => "IMPORT",
            Phase::Update | Phase::Flip => "UPDATE",
        }
    }

    /// The word of the phase's template upload, `changesets/<stack>-<word>.json`: one
    /// per phase, so that phase 1B's upload of a parent never overwrites its phase-1 one
    /// and a child's flip never its phase-2 one.
    pub fn upload_word(self) -> &'static str {
        match self {
            Phase::Import => "import",
            Phase::Update => "update",
            Phase::Adopt => "adopt",
            Phase::Flip => "flip",
        }
    }

    /// The label messages use.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Import => "phase 1 (IMPORT)",
            Phase::Update => "phase 2 (UPDATE)",
            Phase::Adopt => "phase 1B (adopting the nested stacks)",
            Phase::Flip => "the flip (tag-only update)",
        }
    }

    /// The change set's name: one per run and phase (`cdkd-migrate-<ms>`,
    /// `cdkd-phase2-<ms>`, `<ms>` the run's start), so a retried step finds the change
    /// set it created instead of creating another.
    pub fn change_set_name(self, run_started_ms: i64) -> String {
        match self {
            Phase::Import => format!("cdkd-migrate-{run_started_ms}"),
            Phase::Update => format!("cdkd-phase2-{run_started_ms}"),
            Phase::Adopt => format!("cdkd-adopt-{run_started_ms}"),
            Phase::Flip => format!("cdkd-flip-{run_started_ms}"),
        }
    }
}
