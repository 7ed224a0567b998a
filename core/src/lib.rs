//! cdkd-core: the domain of cdkd-flow. Pure: no AWS SDK, no tokio, no I/O.
//!
//! Decisions live here and are tested with plain unit tests; `cdkd-aws` moves bytes,
//! `cdkd-functions` wires steps, the CLI prints what the renderers return.

pub mod cleanup;
pub mod contention;
pub mod continuation;
pub mod destroy;
pub mod destroy_command;
pub mod export;
pub mod exports;
pub mod force_unlock;
pub mod js;
pub mod json;
pub mod keys;
pub mod lock;
pub mod notify;
pub mod ref_value;
pub mod repair;
pub mod retention;
pub mod run;
pub mod runs;
pub mod runs_note;
pub mod runs_refusal;
pub mod state;
pub mod state_refusal;
pub mod text;
pub mod time;
pub mod usage;
pub mod view;
pub mod workflow_refusal;
