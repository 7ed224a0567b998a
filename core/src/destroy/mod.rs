//! Destroy decisions (docs/destroy.md): the delete graph, the next wave, per-record
//! decisions, plan-time refusals, the dry run's plan, the data the workflow steps carry, Cloud Control
//! identifiers, the custom-resource Delete request, and the crash-safety invariants.
//! Pure: inputs are records as JSON, outputs are plain data.

pub mod custom_resource;
pub mod decide;
pub mod dry_run;
pub mod graph;
pub mod handle;
pub mod identifiers;
pub mod invariant;
pub mod model;
pub mod next_step;
pub mod order;
pub mod refusals;
pub mod tree;
pub mod waves;
