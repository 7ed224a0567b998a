//! The two state repairs (docs/repairs.md): `state refresh-observed`, which stores a
//! fresh, redacted AWS readback as each resource's drift baseline, and `state orphan
//! --resource`, which drops resource records from a stack and rewrites every reference
//! the survivors hold to them. Pure: the caller reads records and AWS, hands the answers
//! in as data, and writes what these functions return.
//!
//! Module map:
//! - [`dynref`]: `{{resolve:...}}` dynamic references in strings (the one detector);
//! - [`secret`]: what counts as a credential (names, attribute classes, values);
//! - [`redact`]: redaction of a readback by position against the record's properties;
//! - [`ssm`]: the public-SSM rule for references embedded in a longer string;
//! - [`refresh`]: refresh-observed's shape refusals, per-resource outcomes, tallies;
//! - [`reading`]: which reader (SDK, Cloud Control, none) re-reads a record, and the
//!   context a reader needs from the rest of the record;
//! - [`orphan`]: orphan's record refusals and the plan of a `--resource` run;
//! - [`rewrite`]: the reference rewrite and the `--force` cached-value fallback (with the
//!   private helpers `intrinsic`, reading `Ref` / `Fn::GetAtt` / `Fn::Sub`, and
//!   `removed`, the snapshot of the removed records and the live reads they need).
//!
//! Texts are rendered in the repair view.

pub mod dynref;
mod intrinsic;
pub mod orphan;
pub mod orphan_command;
pub mod reading;
pub mod redact;
pub mod refresh;
mod removed;
pub mod rewrite;
pub mod secret;
pub mod ssm;

/// The redaction mask, shared with export (docs/repairs.md, "Redaction by position").
pub use crate::export::MASK;

use crate::text::{or_unrenderable, printable_str};

/// A stack name inside a refusal: flattened onto one line.
pub(crate) use crate::text::flattened as shown_stack;
/// A logical id inside a refusal: flattened onto one line.
pub(crate) use crate::text::flattened as shown_id;

/// A region inside a refusal: printable (docs/state-views.md, "Printable (stack names and regions in diagnostics)").
pub(crate) fn shown_region(region: &str) -> String {
    or_unrenderable(printable_str(region))
}
