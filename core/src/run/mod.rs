//! The words of a run, in one place: its id ([`RunId`]), what kind of run it is
//! ([`RunKind`]), how it ended ([`Outcome`]), where its execution stands
//! ([`ExecutionStatus`]) and which step a destroy's delete in flight resumes
//! ([`HandlePhase`]).
//!
//! Each is an enum whose serde writes exactly the word cdkd-flow has always written in
//! `run.json`, `report.json`, `progress.json` and the step payloads, and reads any other
//! word (one an older or a newer cdkd-flow wrote, or a hand edit) as its `Other` variant,
//! which keeps the word and writes it back unchanged: reading a run never fails on a
//! word it does not know, and never panics.
//!
//! Domain modules (`runs`, `retention`, `notify`, the export and destroy records) and the
//! views alike import these from here; nothing here imports a view.

mod id;
mod vocab;

pub use id::{InvalidRunId, RunId};
pub use vocab::{ExecutionStatus, HandlePhase, Outcome, RunKind};
