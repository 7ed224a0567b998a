//! cdkd-aws: adapters over the AWS SDK. They move bytes and map SDK errors to typed
//! errors; every decision about the bytes lives in `cdkd-core`.
//!
//! - `config`: the SDK configuration and the S3 client (path-style under an endpoint).
//! - `bucket`: which state bucket, its owner account and its region.
//! - `store`: the state records in S3 (list, get, conditional put, delete, raw objects).
//! - `lock`: cdkd's stack lock, fenced by ETag; `clock`: S3's clock, which lock times
//!   are taken and judged on.
//! - `run_folders`: the run folders under `<prefix>/_runs/` (list, batch delete) and
//!   the lifecycle rule that expires them (docs/runs.md).
//! - `sfn`: Step Functions runs (start, describe, history, list, stop) and the backend stack's outputs.
//! - `cfn`, `ssm`, `ec2`: the reads of the export plan (type registry, destination
//!   stacks, SSM parameters, security-group rules); `calls` counts requests by operation,
//!   `throttle` retries a throttled call.
//! - `notify`: a run's message to an SNS topic and an EventBridge bus.
//! - `sdk_error`: the one classifier of AWS SDK errors (throttling, not found, a failed
//!   condition, denied, transient), for these adapters and the deleters.

pub mod bucket;
pub mod calls;
pub mod cfn;
pub mod changeset;
pub mod clock;
pub mod config;
pub mod ec2;
pub mod exports;
pub mod lock;
pub mod notify;
pub mod retry;
pub mod run_folders;
pub mod s3err;
pub mod sdk_error;
pub mod sdk_message;
pub mod sfn;
pub mod ssm;
pub mod store;
pub mod throttle;

pub use aws_config::SdkConfig;
pub use bucket::{BucketError, BucketSource, ResolvedBucket};
pub use clock::S3Clock;
pub use lock::{
    ForceReleased, HeldLock, LockContent, LockError, LockManager, ReadLock, ReadLockOutcome,
    ReleaseOutcome,
};
pub use store::{LoadedState, Precondition, StateStore, StoreError};
