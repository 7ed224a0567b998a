//! What `state orphan` refuses around its locks and records, as data (docs/repairs.md,
//! "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]" and "Resources of
//! one stack: state orphan <stack> --resource <id> [...]"). Worded by
//! `core::view::command` through `view::repair`'s orphan words.

use crate::contention::ContentionContext;
use crate::export::held::ExportHold;
use crate::lock::LockInfo;
use crate::repair::rewrite::OrphanAborted;

/// A refusal of `state orphan`, borrowing the lock's context it names.
#[derive(Debug, Clone)]
pub enum OrphanCommandRefusal<'a> {
    /// The lock is held: the contention refusal as the lock store worded it.
    Held { message: String },
    /// The lock object is not a lock (`detail`: how); `force_removes`: whole stacks,
    /// where `--force` removes it.
    LockMalformed {
        ctx: ContentionContext<'a>,
        detail: String,
        force_removes: bool,
    },
    /// `--force` read a lock (`was`: its holder) that changed before the takeover.
    LockChanged {
        ctx: ContentionContext<'a>,
        was: Option<Box<LockInfo>>,
    },
    /// A stopped export holds the record's resources in CloudFormation; `flags`: the
    /// state flags of a printed command.
    HeldByExport {
        hold: ExportHold,
        flags: Option<String>,
    },
    /// Whether an export holds the record could not be read (`error`).
    HoldUnknown { error: String },
    /// A target is a nested stack with a record of its own.
    ChildRecord {
        child: String,
        child_region: Option<String>,
        bucket: String,
        prefix: String,
    },
    /// The rewrite of references to the targets aborted.
    Aborted(OrphanAborted),
}
