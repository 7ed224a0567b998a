//! What the state views refuse when a record is missing, as data (docs/state-views.md);
//! worded by `core::view::command` through `view::state::resolve`.

/// A record the command needs is not in the state bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateRefusal {
    /// No record of `stack` in `region` under `s3://bucket/prefix/`.
    NoRecord {
        stack: String,
        region: String,
        bucket: String,
        prefix: String,
    },
    /// `--show-nested`: the parent lists a child whose record does not exist.
    MissingNestedChild {
        parent: String,
        logical_id: String,
        child: String,
        region: String,
    },
}
