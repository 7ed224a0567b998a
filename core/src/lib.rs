//! cdkd-core: the domain of cdkd-flow. Pure: no AWS SDK, no tokio, no I/O.
//!
//! Decisions live here and are tested with plain unit tests; `cdkd-aws` moves bytes,
//! `cdkd-functions` wires steps, the CLI prints what the renderers return.

pub mod cleanup;
pub mod cleanup_view;
pub mod contention;
pub mod destroy;
pub mod exports;
pub mod json;
pub mod keys;
pub mod lock;
pub mod plan_view;
pub mod progress_view;
pub mod render;
pub mod runview;
pub mod state;
pub mod text;
